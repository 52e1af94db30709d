"""Registry of games, fed by the ``arenagym.envs`` entry-point group.

A game registers its declaration (a ``GameSpec``) with one line in its package's
``pyproject.toml``::

    [project.entry-points."arenagym.envs"]
    wordle = "env_servers.wordle.spec:WORDLE"

Nothing is imported until a game is asked for, so listing games is cheap and a broken
third-party game cannot break the others. Importing a spec never imports FastAPI, so clients
and trainers read it too.
"""

from __future__ import annotations

import difflib
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from env_servers.core.environment import Environment
from env_servers.core.spec import GameSpec

ENTRY_POINT_GROUP = "arenagym.envs"


class UnknownGame(LookupError):
    """No game is registered under that name, or its registration is broken."""


@cache
def registered() -> dict[str, EntryPoint]:
    """Game id → entry point, sorted by id."""
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return dict(sorted(found.items()))


def game_names() -> list[str]:
    return list(registered())


@cache
def load_spec(game: str) -> GameSpec:
    """The declaration registered as ``game``."""
    games = registered()
    if game not in games:
        known = ", ".join(games) or "none (is arenagym installed with `pip install -e .`?)"
        close = difflib.get_close_matches(game, list(games), n=1)
        hint = f"Did you mean '{close[0]}'? " if close else ""
        raise UnknownGame(
            f"Unknown game '{game}'. {hint}Registered games: {known}. A package adds a game with "
            f"an entry point in the '{ENTRY_POINT_GROUP}' group."
        )
    try:
        spec = games[game].load()
    except Exception as error:
        raise UnknownGame(
            f"Game '{game}' is registered as '{games[game].value}' but could not be loaded: "
            f"{type(error).__name__}: {error}"
        ) from error
    if not isinstance(spec, GameSpec):
        raise UnknownGame(
            f"Entry point '{game}' = '{games[game].value}' must name a GameSpec (the game's "
            f"declaration, see env_servers.core.spec), got {spec!r}."
        )
    if spec.name != game:
        raise UnknownGame(
            f"Entry point '{game}' names the spec of '{spec.name}': register it as '{spec.name}'."
        )
    return spec


def load_environment(game: str) -> type[Environment[Any, Any, Any, Any]]:
    """The ``Environment`` subclass of the game registered as ``game``."""
    return environment_of(load_spec(game))


def environment_of(spec: GameSpec) -> type[Environment[Any, Any, Any, Any]]:
    """The ``Environment`` subclass a declaration names, registered or not."""
    game = spec.name
    try:
        env_type = spec.load_environment()
    except Exception as error:
        raise UnknownGame(
            f"Game '{game}' declares environment '{spec.environment}', which could not be "
            f"loaded: {type(error).__name__}: {error}"
        ) from error
    if not (isinstance(env_type, type) and issubclass(env_type, Environment)):
        raise UnknownGame(
            f"Game '{game}' declares environment '{spec.environment}', which is not an "
            f"Environment subclass: {env_type!r}."
        )
    return env_type
