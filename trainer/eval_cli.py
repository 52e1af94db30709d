"""``arenagym eval``: evaluate a model, or a baseline and a trained model, on held-out episodes
and write a report (``report.md``, PNG plots, ``results.json``) to ``--output-dir``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

eval_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Evaluate models on held-out episodes; every verdict comes from the game server.",
)

SPLITS = ("train", "eval", "all")

ModelOption = Annotated[
    list[str],
    typer.Option(
        "--model",
        "-m",
        metavar="MODEL",
        help="'tiny', a model or LoRA adapter directory, a training output directory (its "
        "final model, else its newest checkpoint) or a Hub id. Give it twice to compare: "
        "the baseline first, then the trained model.",
        show_default=False,
    ),
]
SplitOption = Annotated[str, typer.Option(help="Episode pool: eval (held out), train or all.")]
EpisodesOption = Annotated[int, typer.Option(min=1, help="Episodes: seeds SEED .. SEED+N-1.")]
SeedOption = Annotated[int, typer.Option(help="First episode's seed.")]
TemperatureOption = Annotated[
    float, typer.Option(min=0.0, help="0 decodes greedily (reproducible); above 0 samples.")
]
BatchOption = Annotated[int, typer.Option(min=1, help="Episodes generated as one batch.")]
MetricsOption = Annotated[
    Path | None,
    typer.Option(
        help="A training run's metrics.jsonl to plot in the report (default: the one next to "
        "the trained model, if any).",
        show_default=False,
    ),
]
ResetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--reset",
        metavar="FIELD=VALUE",
        help="A game reset field for every episode, as in the training config's `reset` (e.g. "
        "n_numbers=4, hard_mode=true); repeatable.",
        show_default=False,
    ),
]
DeviceOption = Annotated[
    str | None, typer.Option(help="Torch device (default: cuda if available, else cpu).")
]


def _url_option(variable: str) -> Any:
    return typer.Option(
        envvar=variable,
        help="Game server URL; without one a local server is started for the run.",
        show_default=False,
    )


def _output_option() -> Any:
    return typer.Option("--output-dir", "-o", help="Where the report goes.")


def parse_reset(pairs: list[str] | None) -> dict[str, Any]:
    """``["n_numbers=4", "hard_mode=true"]`` → ``{"n_numbers": 4, "hard_mode": True}``: values
    are read as JSON when they parse, else kept as text."""
    fields: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected FIELD=VALUE, got {pair!r}", param_hint="--reset")
        try:
            fields[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            fields[key.strip()] = value
    return fields


def _run(
    game: str, models: list[str], output_dir: Path, metrics: Path | None, **options: Any
) -> None:
    """Evaluate, report and summarise; a known failure becomes one line on stderr, exit 1."""
    from transformers.utils import logging as transformers_logging

    from clients.errors import ClientError
    from trainer.evaluate import evaluate_countdown, evaluate_wordle
    from trainer.models import ModelLoadError
    from trainer.report import find_metrics, has_training_curve, print_summary, write_eval_report

    if not 1 <= len(models) <= 2:
        raise typer.BadParameter("give --model once, or twice (baseline, then trained)")
    if options["split"] not in SPLITS:
        raise typer.BadParameter(f"choose one of {', '.join(SPLITS)}", param_hint="--split")
    if metrics is not None and not has_training_curve(metrics):
        raise typer.BadParameter(
            f"{metrics} has no line with 'step' and 'reward'", param_hint="--metrics"
        )
    if metrics is None and (found := find_metrics(models)) and has_training_curve(found):
        metrics = found
    transformers_logging.disable_progress_bar()  # our bars are enough
    warnings.filterwarnings("ignore", category=FutureWarning)  # peft on transformers 5: noise
    evaluate = evaluate_countdown if game == "countdown" else evaluate_wordle
    try:
        result = evaluate(models, **options)
        report = write_eval_report(result, output_dir, metrics=metrics)
    except (ModelLoadError, FileNotFoundError, ClientError, ValueError) as error:
        typer.echo(f"Error: {error}", err=True)
        raise typer.Exit(1) from None
    print_summary(result)
    typer.echo(f"Report: {report}")


@eval_app.command(
    no_args_is_help=True,
    help="Solve rate on held-out Countdown puzzles; with two models, the fixed / both solved / "
    "both failed / regressed buckets and the answers side by side.",
)
def countdown(
    model: ModelOption,
    output_dir: Annotated[Path, _output_option()] = Path("eval-countdown"),
    split: SplitOption = "eval",
    episodes: EpisodesOption = 60,
    url: Annotated[str | None, _url_option("ARENAGYM_COUNTDOWN_URL")] = None,
    seed: SeedOption = 0,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Longest reply.")] = 320,
    temperature: TemperatureOption = 0.0,
    batch_size: BatchOption = 8,
    reset: ResetOption = None,
    metrics: MetricsOption = None,
    device: DeviceOption = None,
    samples: Annotated[
        int,
        typer.Option(
            min=1,
            help="Replies sampled per puzzle (with --temperature > 0): reports pass@1 and "
            "pass@K in results.json.",
        ),
    ] = 1,
) -> None:
    _run(
        "countdown",
        model,
        output_dir,
        metrics,
        url=url,
        split=split,
        episodes=episodes,
        seed=seed,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        batch_size=batch_size,
        reset=parse_reset(reset),
        device=device,
        samples=samples,
    )


@eval_app.command(
    no_args_is_help=True,
    help="Win rate, mean guesses on wins, guess distribution and invalid moves on held-out "
    "Wordle words, played through the `guess` tool as in training.",
)
def wordle(
    model: ModelOption,
    output_dir: Annotated[Path, _output_option()] = Path("eval-wordle"),
    split: SplitOption = "eval",
    episodes: EpisodesOption = 60,
    url: Annotated[str | None, _url_option("ARENAGYM_WORDLE_URL")] = None,
    seed: SeedOption = 0,
    max_turns: Annotated[int, typer.Option(min=1, help="Replies per game at most.")] = 12,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Longest reply (per turn).")] = 256,
    instruction: Annotated[
        str | None,
        typer.Option(
            help="The prompt before the game's text (default: the training default; give the "
            "run's own `prompt` if it set one).",
            show_default=False,
        ),
    ] = None,
    temperature: TemperatureOption = 0.0,
    batch_size: BatchOption = 8,
    reset: ResetOption = None,
    metrics: MetricsOption = None,
    device: DeviceOption = None,
) -> None:
    _run(
        "wordle",
        model,
        output_dir,
        metrics,
        url=url,
        split=split,
        episodes=episodes,
        seed=seed,
        max_turns=max_turns,
        max_new_tokens=max_new_tokens,
        **({"instruction": instruction} if instruction else {}),
        temperature=temperature,
        batch_size=batch_size,
        reset=parse_reset(reset),
        device=device,
    )
