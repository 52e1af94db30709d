"""Registry of games, fed by the ``arenagym.envs`` entry-point group.

A game registers one line in its package's ``pyproject.toml``::

    [project.entry-points."arenagym.envs"]
    wordle = "env_servers.wordle.environment:WordleEnvironment"

Nothing is imported until a game is asked for, so listing games is cheap and a broken
third-party game cannot break the others.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from env_servers.core.environment import Environment

ENTRY_POINT_GROUP = "arenagym.envs"


class UnknownGame(LookupError):
    """No game is registered under that name."""


@cache
def registered() -> dict[str, EntryPoint]:
    """Game id → entry point, sorted by id."""
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return dict(sorted(found.items()))


def load_environment(game: str) -> type[Environment[Any, Any, Any, Any]]:
    """The ``Environment`` subclass registered as ``game``."""
    games = registered()
    if game not in games:
        known = ", ".join(games) or "none (is arenagym installed with `pip install -e .`?)"
        raise UnknownGame(
            f"Unknown game '{game}'. Registered games: {known}. A package adds a game with an "
            f"entry point in the '{ENTRY_POINT_GROUP}' group."
        )
    try:
        env_type = games[game].load()
    except Exception as error:
        raise UnknownGame(
            f"Game '{game}' is registered as '{games[game].value}' but could not be loaded: "
            f"{type(error).__name__}: {error}"
        ) from error
    if not (isinstance(env_type, type) and issubclass(env_type, Environment)):
        raise TypeError(
            f"Entry point '{game}' = '{games[game].value}' must name an Environment subclass, "
            f"got {env_type!r}."
        )
    return env_type
