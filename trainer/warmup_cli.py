"""``arenagym warmup``: a supervised warm-up before GRPO, for models that never answer in the
game's format (GRPO cannot reward what never happens)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trainer.eval_cli import ResetOption, parse_reset

warmup_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Supervised warm-up on generated demonstrations, stopped at a validation solve rate.",
)

SMALL_MODEL = "small"


@warmup_app.callback()
def _group() -> None:
    """One subcommand per game."""


VALIDATION_SEED_BASE = 10**9


@warmup_app.command(no_args_is_help=True)
def countdown(
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="A model directory or Hub id with a chat template, or 'small' to build a "
            "~24M-parameter Qwen3 model from scratch first.",
        ),
    ],
    output_dir: Annotated[Path, typer.Option("--output-dir", "-o", help="The warmed-up model.")],
    puzzles: Annotated[int, typer.Option(min=1, help="Train-pool puzzles to learn from.")] = 12000,
    solutions: Annotated[int, typer.Option(min=1, help="Different solutions per puzzle.")] = 3,
    stop_at: Annotated[
        float, typer.Option(help="Stop once greedy solves this share of validation puzzles.")
    ] = 0.25,
    max_steps: Annotated[int, typer.Option(min=1, help="Optimiser steps at most.")] = 2500,
    learning_rate: Annotated[float, typer.Option(help="AdamW learning rate.")] = 1e-3,
    batch_size: Annotated[int, typer.Option(min=1, help="Demonstrations per step.")] = 256,
    eval_every: Annotated[int, typer.Option(min=1, help="Validate every N steps.")] = 50,
    validation: Annotated[int, typer.Option(min=1, help="Validation puzzles.")] = 256,
    seed: Annotated[int, typer.Option(help="Seed of the demonstrations and the run.")] = 0,
    reset: ResetOption = None,
    device: Annotated[str | None, typer.Option(help="Torch device (default: cuda if any).")] = None,
) -> None:
    """Warm a model up on Countdown demonstrations (the game's prompt, worked steps, the
    answer tag). Validation puzzles come from the train pool, never from the held-out split."""
    from env_servers.countdown.game import generate_puzzle, render_prompt
    from env_servers.countdown.solutions import demonstrations
    from trainer.smallmodel import build_model
    from trainer.warmup import WarmupConfig, countdown_validator, supervised_warmup

    fields = parse_reset(reset) or {"n_numbers": 4, "max_num": 9}
    sizes = {k: int(v) for k, v in fields.items() if k in ("n_numbers", "max_num")}
    pairs = demonstrations(seed, puzzles, solutions, first_puzzle_seed=seed * 10**7, **sizes)
    examples = [(render_prompt(p.numbers, p.target), reply) for p, reply in pairs]
    source = model
    if model == SMALL_MODEL:
        source = str(output_dir / "initial")
        corpus = [prompt + reply for prompt, reply in examples[:4000]]
        build_model(source, corpus, seed=seed)
    seen = {p.key for p, _ in pairs}
    seeds: list[int] = []
    candidate = VALIDATION_SEED_BASE + seed * 10**6
    while len(seeds) < validation:
        puzzle = generate_puzzle(split="train", seed=candidate, **sizes)
        if puzzle.key not in seen:
            seen.add(puzzle.key)
            seeds.append(candidate)
        candidate += 1
    config = WarmupConfig(
        learning_rate=learning_rate,
        batch_size=batch_size,
        max_steps=max_steps,
        eval_every=eval_every,
        stop_at=stop_at,
        seed=seed,
        device=device,
    )
    record = supervised_warmup(
        source, output_dir, examples, countdown_validator(seeds, fields), config, typer.echo
    )
    typer.echo(f"Warmed up in {record['steps']} steps ({record['stopped']}): {output_dir}")
