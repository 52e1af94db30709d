"""``arenagym warmup GAME``: a supervised warm-up before GRPO, for models that never answer in
the game's format (GRPO cannot reward what never happens).

Each registered game is a subcommand, made from its declaration when asked for; a game that
declares no demonstrations (``GameSpec.demonstrations``) says so in one line and exits 1.
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


def _run(
    spec: GameSpec,
    model: str,
    output_dir: Path,
    episodes: int,
    per_episode: int,
    validation: int,
    max_new_tokens: int,
    reset: dict[str, Any],
    **settings: Any,
) -> None:
    """Make the demonstrations, pick validation episodes, warm up and save."""
    from trainer.warmup import (
        NoDemonstrations,
        WarmupConfig,
        answer_validator,
        demonstrations,
        supervised_warmup,
        validation_seeds,
    )

    try:
        examples = demonstrations(spec, settings["seed"], episodes, per_episode, reset)
        config = WarmupConfig(**settings)
    except (NoDemonstrations, ValueError) as error:
        click.echo(f"Error: {error}", err=True)
        raise click.exceptions.Exit(1) from None
    if not examples:
        click.echo(f"Error: no demonstrations of {spec.name} with these settings", err=True)
        raise click.exceptions.Exit(1)
    source = model
    if model == SMALL_MODEL:
        from trainer.smallmodel import build_model

        source = str(output_dir / "initial")
        build_model(source, [p + r for p, r in examples[:CORPUS_EXAMPLES]], seed=config.seed)
    prompts = {prompt for prompt, _ in examples}
    seeds = validation_seeds(spec, config.seed, validation, reset, exclude=prompts)
    validate = answer_validator(spec, seeds, reset, max_new_tokens=max_new_tokens)
    record = supervised_warmup(
        source,
        output_dir,
        examples,
        validate,
        config,
        click.echo,
        extra={"distinct_prompts": len(prompts), "reset": reset},
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
            0.25,
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
            256,
            f"Validation {unit} (train pool, none of the demonstrated ones).",
        ),
        option("--max-new-tokens", click.IntRange(1), 64, "Longest validation reply."),
        option("--seed", int, 0, "Seed of the demonstrations and the run."),
        reset_option(),
        click.Option(["--device"], help="Torch device (default: cuda if available, else cpu)."),
    ]

    def callback(reset_pairs: tuple[str, ...], **options: Any) -> None:
        _run(spec, reset=parse_reset(reset_pairs), **options)

    offered = "" if spec.demonstrations else " (this game declares no demonstrations)"
    return click.Command(
        spec.name,
        params=params,
        callback=callback,
        no_args_is_help=True,
        context_settings=HELP,
        help=f"Warm a model up on {spec.name} demonstrations{offered}: the game's answer-mode "
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
