"""``arenagym train`` and ``arenagym tiny-model``."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from trainer.config import FIELDS, GROUPS, load_config, parse_override
from trainer.tiny import TINY_MODEL


def _fields_epilog() -> str:
    """Every config field, grouped, with its default: the flags beyond the ones above."""
    lines = ["Any config field can be overridden as --field-name VALUE (YAML-typed)."]
    for name, field in FIELDS.items():
        if name in GROUPS:
            lines.append(f"{GROUPS[name]}:")
        default = field.default if field.default is not dataclasses.MISSING else None
        shown = "" if default is None else f" [default: {default}]"
        lines.append(f"  --{name.replace('_', '-')}  {field.metadata.get('help', '')}{shown}")
    return "\n\n".join(lines)


def shipped_configs() -> list[Path]:
    """The configs a newcomer can start from: ``configs/*.yaml`` here."""
    return sorted(Path("configs").glob("*.yaml"))


HELP = {"help_option_names": ["-h", "--help"]}
train_app = typer.Typer(add_completion=False, rich_markup_mode=None, context_settings=HELP)


@train_app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, **HELP},
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
    if config is None:
        listed = (
            ", ".join(str(path) for path in shipped_configs()) or "configs/*.yaml in the repository"
        )
        typer.echo(
            f"Error: give a config with --config (e.g. {listed}); flags then override its fields.",
            err=True,
        )
        raise SystemExit(2)
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
        from trainer.checkpoints import last_complete_checkpoint

        checkpoint = last_complete_checkpoint(Path(settings.output_dir))
        typer.echo()  # off the progress bar's line
        if checkpoint is not None:
            typer.echo(f"Interrupted: start the same command again to resume from {checkpoint}.")
        else:
            typer.echo("Interrupted before the first checkpoint: a new run starts from scratch.")
        raise SystemExit(130) from None
    typer.echo(f"Done. Final model, checkpoints and metrics.jsonl in {output}")
    if settings.model == TINY_MODEL:
        typer.echo(
            "The tiny model checks the pipeline end to end; it is not expected to learn, so "
            "rewards near 0 are what this run shows."
        )


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


tiny_model_app = typer.Typer(add_completion=False, context_settings=HELP)


@tiny_model_app.command()
def tiny_model(
    directory: Annotated[Path, typer.Argument(help="Where to write the model.")],
) -> None:
    """Write the tiny offline model and tokenizer ('model: tiny') to DIRECTORY."""
    from trainer.tiny import write_tiny_model

    typer.echo(f"Wrote {write_tiny_model(directory)}")
