"""``arenagym eval GAME``: evaluate a model, or a baseline and a trained model, on held-out
episodes of any registered game and write a report (``report.md``, PNG plots,
``results.json``) to ``--output-dir``.

Each registered game is a subcommand, made from its declaration when asked for; the options
are the same for every game (``--mode`` offers the game's own modes). A known failure is one
line on stderr (``Error: …``) and exit status 1, never a traceback.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from clients.commands import HELP, GameCommands, option, parse_reset, reset_option
from env_servers.core.spec import GameSpec
from trainer.views import rate_name

SPLITS = ("train", "eval", "all")


def _run(
    spec: GameSpec,
    models: Sequence[str],
    output_dir: Path,
    metrics: Path | None,
    **options: Any,
) -> None:
    """Evaluate, report and summarise; a known failure becomes one line on stderr, exit 1."""
    from transformers.utils import logging as transformers_logging

    from clients.errors import ClientError
    from trainer.evaluate import evaluate
    from trainer.models import ModelLoadError
    from trainer.report import find_metrics, has_training_curve, print_summary, write_eval_report

    if not 1 <= len(models) <= 2:
        raise click.BadParameter("give --model once, or twice (baseline, then trained)")
    if options["samples"] > 1 and options["temperature"] <= 0:
        raise click.BadParameter(
            "several samples per episode need --temperature above 0", param_hint="--samples"
        )
    if metrics is not None and not has_training_curve(metrics):
        raise click.BadParameter(
            f"{metrics} has no line with 'step' and 'reward'", param_hint="--metrics"
        )
    if metrics is None and (found := find_metrics(models)) and has_training_curve(found):
        metrics = found
    transformers_logging.disable_progress_bar()  # our bars are enough
    warnings.filterwarnings("ignore", category=FutureWarning)  # peft on transformers 5: noise
    try:
        result = evaluate(spec, list(models), **options)
        report = write_eval_report(result, output_dir, metrics=metrics)
    except (ModelLoadError, FileNotFoundError, ClientError, ValueError) as error:
        click.echo(f"Error: {error}", err=True)
        raise click.exceptions.Exit(1) from None
    print_summary(result)
    click.echo(f"Report: {report}")


def game_command(spec: GameSpec) -> click.Command:
    """``arenagym eval <game>``: every option of :func:`trainer.evaluate.evaluate`."""
    modes = list(spec.modes)
    params: list[click.Parameter] = [
        click.Option(
            ["--model", "-m", "models"],
            multiple=True,
            required=True,
            metavar="MODEL",
            help="'tiny', a model or LoRA adapter directory, a training output directory (its "
            "final model, else its newest checkpoint) or a Hub id. Give it twice to compare: "
            "the baseline first, then the trained model.",
        ),
        click.Option(
            ["--output-dir", "-o"],
            type=click.Path(path_type=Path, file_okay=False),
            default=Path(f"eval-{spec.file_name}"),
            show_default=True,
            help="Where the report goes.",
        ),
        option(
            "--split", click.Choice(SPLITS), "eval", "Episode pool: eval (held out), train or all."
        ),
        option("--episodes", click.IntRange(1), 60, "Episodes: seeds SEED .. SEED+N-1."),
        click.Option(
            ["--url"],
            envvar=spec.url_variable,
            help=f"Game server URL (env {spec.url_variable}); without one a local server is "
            "started for the run.",
        ),
        click.Option(["--seed"], type=int, default=0, show_default=True, help="First seed."),
        option(
            "--mode",
            click.Choice(modes),
            spec.default_mode,
            "tools: multi-turn through the game's tools; answer: one reply per episode, "
            "checked by the server.",
        ),
        option("--max-turns", click.IntRange(1), 12, "Replies per episode at most (tools mode)."),
        click.Option(
            ["--max-new-tokens"],
            type=click.IntRange(1),
            help="Longest reply (per turn in tools mode) [default: 320 answer, 256 tools].",
        ),
        click.Option(
            ["--instruction"],
            help="Tools mode: the prompt before the game's text (default: the game's; give the "
            "run's own `prompt` if it set one).",
        ),
        option(
            "--temperature",
            click.FloatRange(0.0),
            0.0,
            "0 decodes greedily (reproducible); above 0 samples (seeded).",
        ),
        option(
            "--samples",
            click.IntRange(1),
            1,
            "Plays per episode (needs --temperature above 0 when above 1): reports pass@1 "
            "and pass@K.",
        ),
        option("--batch-size", click.IntRange(1), 8, "Episodes generated as one batch."),
        reset_option(),
        click.Option(
            ["--metrics"],
            type=click.Path(path_type=Path, dir_okay=False),
            help="A training run's metrics.jsonl to plot in the report (default: the one next "
            "to the trained model, if any).",
        ),
        click.Option(["--device"], help="Torch device (default: cuda if available, else cpu)."),
    ]

    def callback(
        models: tuple[str, ...],
        output_dir: Path,
        metrics: Path | None,
        reset_pairs: tuple[str, ...],
        **options: Any,
    ) -> None:
        _run(spec, models, output_dir, metrics, reset=parse_reset(reset_pairs), **options)

    return click.Command(
        spec.name,
        params=params,
        callback=callback,
        no_args_is_help=True,
        context_settings=HELP,
        help=f"{spec.description} Reports the {rate_name(spec.solved_word)} on held-out "
        f"{spec.unit}; "
        "with two models, the fixed / both solved / both failed / regressed buckets.",
    )


eval_app = GameCommands(
    "eval",
    game_command,
    no_args_is_help=True,
    help="Evaluate models on held-out episodes of a game; every verdict comes from the game "
    "server.",
)
