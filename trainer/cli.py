"""``arenagym train`` and ``arenagym tiny-model``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trainer.config import FIELDS, load_config, parse_override


def _fields_epilog() -> str:
    lines = ["Any config field can be overridden as --field-name VALUE (YAML-typed):", ""]
    lines += [
        f"  --{name.replace('_', '-')}: {f.metadata.get('help', '')}" for name, f in FIELDS.items()
    ]
    return "\n\n".join(lines)


train_app = typer.Typer(add_completion=False, rich_markup_mode=None)


@train_app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    epilog=_fields_epilog(),
)
def train(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="YAML config (configs/*.yaml).", exists=True),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Hub id, local path, or 'tiny'.")] = None,
    game: Annotated[
        str | None, typer.Option(help="A registered game (`arenagym serve --list`).")
    ] = None,
    max_steps: Annotated[int | None, typer.Option(help="Stop after N optimiser steps.")] = None,
    output_dir: Annotated[str | None, typer.Option(help="Checkpoints and metrics go here.")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the run.")] = None,
    episodes: Annotated[int | None, typer.Option(help="Training episodes.")] = None,
    url: Annotated[
        str | None, typer.Option(help="The game's server URL (--<game>-url in a mixed run).")
    ] = None,
) -> None:
    """Train a model with GRPO against game servers (started locally when no URL is given)."""
    overrides: dict[str, object] = {
        "model": model,
        "game": game,
        "max_steps": max_steps,
        "output_dir": output_dir,
        "seed": seed,
        "episodes": episodes,
        "url": url,
    }
    try:
        overrides |= _extra_overrides(ctx.args)
        settings = load_config(config, **overrides)
    except (ValueError, OSError) as error:
        typer.echo(f"Error: {error}", err=True)
        raise SystemExit(2) from None
    from trainer.train import train as run

    games = " + ".join(settings.game_list)
    typer.echo(f"Training {settings.model} on {games} → {settings.output_dir}")
    try:
        output = run(settings)
    except KeyboardInterrupt:
        typer.echo("Interrupted: start the same command again to resume from the last checkpoint.")
        raise SystemExit(130) from None
    typer.echo(f"Done. Final model, checkpoints and metrics.jsonl in {output}")


def _extra_overrides(args: list[str]) -> dict[str, object]:
    """``--field-name value`` pairs beyond the declared options."""
    overrides: dict[str, object] = {}
    items = iter(args)
    for flag in items:
        if not flag.startswith("--"):
            raise ValueError(
                f"Unexpected argument {flag!r}; overrides look like --field-name value."
            )
        name, _, value = flag[2:].partition("=")
        name = name.replace("-", "_")
        if not value:
            following = next(items, None)
            if following is None:
                raise ValueError(f"--{name.replace('_', '-')} needs a value.")
            value = following
        overrides[name] = parse_override(name, value)
    return overrides


tiny_model_app = typer.Typer(add_completion=False)


@tiny_model_app.command()
def tiny_model(
    directory: Annotated[Path, typer.Argument(help="Where to write the model.")],
) -> None:
    """Write the tiny offline model and tokenizer ('model: tiny') to DIRECTORY."""
    from trainer.tiny import write_tiny_model

    typer.echo(f"Wrote {write_tiny_model(directory)}")
