"""``arenagym warmup GAME``: a supervised warm-up before GRPO, for models that never answer in
the game's format (GRPO cannot reward what never happens).

Each registered game is a subcommand, made from its declaration when asked for; those that
declare demonstrations (``GameSpec.demonstrations``) are listed, and any other says so in one
line, naming the games that have a warm-up, and exits 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from clients.commands import HELP, GameCommands, option, parse_reset, reset_option
from env_servers.core.spec import GameSpec

SMALL_MODEL = "small"
"""``--model small``: build a ~24M-parameter Qwen3 model from scratch first."""
CORPUS_EXAMPLES = 4000
"""Demonstrations the small model's tokenizer is trained on."""


def _run(spec: GameSpec, reset: dict[str, Any], **options: Any) -> None:
    """``_warm_up``, with a known failure as one line on stderr, exit 1."""
    from transformers.utils import logging as transformers_logging

    from trainer.models import ModelLoadError
    from trainer.warmup import NoDemonstrations

    transformers_logging.disable_progress_bar()  # our bar is enough
    try:
        _warm_up(spec, reset, **options)
    except NoDemonstrations as error:
        offered = ", ".join(games_with_warmup()) or "none"
        click.echo(f"Error: {error} Games with one: {offered}.", err=True)
        raise click.exceptions.Exit(1) from None
    except (ModelLoadError, FileNotFoundError, ValueError) as error:
        click.echo(f"Error: {error}", err=True)
        raise click.exceptions.Exit(1) from None


def games_with_warmup() -> list[str]:
    """The registered games that declare demonstrations."""
    from env_servers.core.registry import game_names, load_spec

    return [name for name in game_names() if load_spec(name).demonstrations is not None]


def _warm_up(
    spec: GameSpec,
    reset: dict[str, Any],
    model: str,
    output_dir: Path,
    episodes: int,
    per_episode: int,
    validation: int,
    max_new_tokens: int,
    **settings: Any,
) -> None:
    """Check the input, make the demonstrations, pick validation episodes, warm up and save."""
    from pydantic import ValidationError

    from env_servers.core.errors import InvalidRequest
    from trainer.models import check_device, resolve_model
    from trainer.progress import step_bars
    from trainer.warmup import (
        WarmupConfig,
        answer_validator,
        demonstration_maker,
        demonstrations,
        supervised_warmup,
        validation_seeds,
    )

    demonstration_maker(spec)  # a game without demonstrations fails before anything else
    try:
        spec.reset_type.model_validate(reset)
    except ValidationError as error:
        raise ValueError(InvalidRequest.from_validation("--reset", error).message) from None
    config = WarmupConfig(**settings)
    if config.device is not None:
        check_device(config.device)
    source = model if model == SMALL_MODEL else resolve_model(model)
    if (Path(source) / "adapter_config.json").is_file():
        raise ValueError(f"{source} is a LoRA adapter: the warm-up trains a full model")
    shown = demonstrations(spec, config.seed, episodes, per_episode, reset)
    if not shown:
        raise ValueError(f"no demonstrations of {spec.name} with these settings")
    examples = [(d.prompt, d.reply) for d in shown]
    demonstrated = {d.episode for d in shown}
    seeds = validation_seeds(spec, config.seed, validation, reset, exclude=demonstrated)
    if model == SMALL_MODEL:
        from trainer.smallmodel import build_model

        source = str(output_dir / "initial")
        build_model(source, [p + r for p, r in examples[:CORPUS_EXAMPLES]], seed=config.seed)
    validate = answer_validator(spec, seeds, reset, max_new_tokens=max_new_tokens)
    with step_bars() as bars:
        task = bars.add_task(f"Warming up on {spec.name}", total=config.max_steps)
        record = supervised_warmup(
            source,
            output_dir,
            examples,
            validate,
            config,
            lambda line: bars.console.print(line, markup=False, highlight=False),
            extra={"distinct_episodes": len(demonstrated), "reset": reset},
            on_step=lambda step: bars.update(task, completed=step),
        )
    click.echo(f"Warmed up in {record['steps']} steps ({record['stopped']}): {output_dir}")


def game_command(spec: GameSpec) -> click.Command:
    """``arenagym warmup <game>``: the options of :func:`trainer.warmup.supervised_warmup`."""
    unit = spec.unit
    params: list[click.Parameter] = [
        click.Option(
            ["--model", "-m"],
            required=True,
            help=f"A model directory or Hub id with a chat template, or '{SMALL_MODEL}' to "
            "build a ~24M-parameter Qwen3 model from scratch first.",
        ),
        click.Option(
            ["--output-dir", "-o"],
            type=click.Path(path_type=Path, file_okay=False),
            required=True,
            help="Where the warmed-up model goes (with warmup.json).",
        ),
        option("--episodes", click.IntRange(1), 12000, f"Train-pool {unit} to learn from."),
        option("--per-episode", click.IntRange(1), 3, "Different worked replies per episode."),
        option(
            "--stop-at",
            click.FloatRange(0.0, 1.0, min_open=True),
            0.15,
            "Stop once greedy decoding solves this share of the validation episodes.",
        ),
        option("--max-steps", click.IntRange(1), 2500, "Optimiser steps at most."),
        option(
            "--learning-rate", click.FloatRange(0.0, min_open=True), 1e-3, "AdamW learning rate."
        ),
        option("--batch-size", click.IntRange(1), 256, "Demonstrations per step."),
        option("--eval-every", click.IntRange(1), 50, "Validate every N steps."),
        option(
            "--validation",
            click.IntRange(1),
            512,
            f"Validation {unit} (train pool, none of the demonstrated ones).",
        ),
        option("--max-new-tokens", click.IntRange(1), 64, "Longest validation reply."),
        option("--seed", int, 0, "Seed of the demonstrations and the run."),
        reset_option(),
        click.Option(["--device"], help="Torch device (default: cuda if available, else cpu)."),
    ]

    def callback(reset_pairs: tuple[str, ...], **options: Any) -> None:
        _run(spec, reset=parse_reset(reset_pairs), **options)

    return click.Command(
        spec.name,
        params=params,
        callback=callback,
        no_args_is_help=True,
        context_settings=HELP,
        hidden=spec.demonstrations is None,  # listed only where it can run
        help=f"Warm a model up on {spec.name} demonstrations: the game's answer-mode "
        "prompt and worked replies, stopped at a greedy solve rate on train-pool episodes "
        "(never the held-out split).",
    )


warmup_app = GameCommands(
    "warmup",
    game_command,
    no_args_is_help=True,
    help="Supervised warm-up on a game's demonstrations before GRPO, stopped at a validation "
    "solve rate.",
)
