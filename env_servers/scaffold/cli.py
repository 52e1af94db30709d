"""``arenagym new NAME [--dir DIR]``: write a new game's package and say what to do next."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import click
import typer

HELP = {"help_option_names": ["-h", "--help"]}

new_app = typer.Typer(add_completion=False, context_settings=HELP)


@new_app.command(
    help="Write DIR/arenagym-NAME: an installable package of a small, complete game (guess "
    "the number) registered as NAME, with its tests and a tiny training config, to edit into "
    "your own game."
)
def new(
    name: Annotated[str, typer.Argument(help="The new game's id, e.g. 'hilo' or 'number-guess'.")],
    directory: Annotated[
        Path,
        typer.Option("--dir", file_okay=False, help="Where the package folder is written."),
    ] = Path("."),
) -> None:
    from env_servers.scaffold.generate import ScaffoldError, write_game

    try:
        names, target = write_game(name, directory)
    except ScaffoldError as error:
        raise click.UsageError(str(error)) from None
    shown = str(target) if target.is_absolute() else f"./{target}"  # a path to pip, not a name
    typer.echo(
        f"Wrote {names.title} ({names.name}), a number-guessing game to make your own, in "
        f"{shown}/:\n"
        f"  {names.package}/  game.py (the rules), models.py, environment.py, agent.py (the "
        "tools), client.py, spec.py (the declaration)\n"
        "  tests/                its own tests\n"
        "  train-tiny.yaml       two training steps of a tiny offline model\n"
        "\nNext:\n"
        f"  pip install -e {shown}\n"
        f"  arenagym check {names.name}\n"
        f"  arenagym serve {names.name}\n"
        f"  arenagym play {names.name}\n"
        f"  arenagym train --config {shown}/train-tiny.yaml\n"
        f"  arenagym eval {names.name} --model outputs/{names.name}-tiny --episodes 4\n"
        "See docs/new-game.md in arenagym, and the package's README.md."
    )
