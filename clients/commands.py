"""Command-line pieces shared by every per-game command (``arenagym play|eval GAME``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import click

from env_servers.core.spec import GameSpec

HELP = {"help_option_names": ["-h", "--help"]}


class GameCommands(click.Group):
    """One subcommand per registered game, made by ``make(spec)`` when it is asked for, so a
    new game gets its command without anyone listing it."""

    def __init__(self, name: str, make: Callable[[GameSpec], click.Command], **kwargs: Any):
        super().__init__(name, context_settings=HELP, **kwargs)
        self.make = make

    def list_commands(self, ctx: click.Context) -> list[str]:
        from env_servers.core.registry import game_names

        return game_names()

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from env_servers.core.registry import UnknownGame, load_spec

        try:
            return self.make(load_spec(name))
        except UnknownGame as error:
            raise click.UsageError(str(error)) from None


def option(flag: str, kind: Any, default: Any, help: str) -> click.Option:
    """A ``--flag`` option of ``kind`` whose help shows its default."""
    return click.Option([flag], type=kind, default=default, show_default=True, help=help)


def reset_option() -> click.Option:
    return click.Option(
        ["--reset", "reset_pairs"],
        multiple=True,
        metavar="FIELD=VALUE",
        help="A reset field of the game for every episode (value read as JSON, e.g. "
        "n_numbers=4 or hard_mode=true); repeatable.",
    )


def parse_reset(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``["n_numbers=4", "hard_mode=true"]`` → ``{"n_numbers": 4, "hard_mode": True}``: values
    are read as JSON when they parse, else kept as text."""
    fields: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected FIELD=VALUE, got {pair!r}", param_hint="--reset")
        try:
            fields[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            fields[key.strip()] = value
    return fields
