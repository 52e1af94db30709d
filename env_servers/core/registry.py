"""Registry of games, fed by the ``arenagym.envs`` entry-point group.

A game registers its declaration (a ``GameSpec``) with one line in its package's
``pyproject.toml``::

    [project.entry-points."arenagym.envs"]
    wordle = "env_servers.wordle.spec:WORDLE"

A family of games made by one adapter registers under ``arenagym.families`` instead (see
``env_servers.core.family``); its members are named ``<family>:<member>``.

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
from env_servers.core.family import GameFamily, split_name
from env_servers.core.spec import GameSpec

ENTRY_POINT_GROUP = "arenagym.envs"
FAMILY_GROUP = "arenagym.families"


class UnknownGame(LookupError):
    """No game is registered under that name, or its registration is broken."""


@cache
def registered() -> dict[str, EntryPoint]:
    """Game id → entry point, sorted by id."""
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return dict(sorted(found.items()))


@cache
def registered_families() -> dict[str, EntryPoint]:
    """Family name → entry point, sorted by name."""
    found = {ep.name: ep for ep in entry_points(group=FAMILY_GROUP)}
    return dict(sorted(found.items()))


def game_names() -> list[str]:
    """The registered games, then each family's listed members (a broken family lists none)."""
    names = list(registered())
    for family_name in registered_families():
        try:
            family = load_family(family_name)
        except UnknownGame:
            continue
        names += [family.game_name(member) for member in family.listed()]
    return names


def entry_point(game: str) -> EntryPoint | None:
    """The entry point that declares ``game``: its own, or its family's."""
    parts = split_name(game)
    if parts is not None and parts[0] in registered_families():
        return registered_families()[parts[0]]
    return registered().get(game)


@cache
def load_family(name: str) -> GameFamily:
    """The family registered as ``name``."""
    families = registered_families()
    if name not in families:
        raise UnknownGame(
            f"Unknown game family '{name}'. Registered families: {', '.join(families) or 'none'}. "
            f"A package adds one with an entry point in the '{FAMILY_GROUP}' group."
        )
    family = _load("Game family", name, families[name])
    if not isinstance(family, GameFamily) or family.name != name:
        raise UnknownGame(
            f"Entry point '{name}' = '{families[name].value}' must name the GameFamily "
            f"'{name}' (see env_servers.core.family), got {family!r}."
        )
    return family


def _family_spec(family_name: str, member: str) -> GameSpec:
    family = load_family(family_name)
    game = family.game_name(member)
    try:
        spec = family.spec(member)
    except (LookupError, ValueError) as error:
        listed = ", ".join(family.game_name(name) for name in family.listed())
        close = difflib.get_close_matches(member, list(family.listed()), n=1)
        hint = f" Did you mean '{family.game_name(close[0])}'?" if close else ""
        raise UnknownGame(
            f"No game '{game}': {error}.{hint} Known to work: {listed or 'none listed'}."
        ) from error
    if spec.name != game:
        raise UnknownGame(f"Family '{family_name}' made the spec of '{spec.name}' for '{game}'.")
    return spec


def _load(kind: str, name: str, entry: EntryPoint) -> Any:
    """What ``entry`` names, imported now; a failure says which registration broke."""
    try:
        return entry.load()
    except Exception as error:
        raise UnknownGame(
            f"{kind} '{name}' is registered as '{entry.value}' but could not be loaded: "
            f"{type(error).__name__}: {error}"
        ) from error


@cache
def load_spec(game: str) -> GameSpec:
    """The declaration registered as ``game`` (or made by its family, for ``family:member``)."""
    games = registered()
    parts = split_name(game)
    if game not in games and parts is not None and parts[0] in registered_families():
        return _family_spec(*parts)
    if game not in games:
        known = ", ".join(games) or "none (is arenagym installed with `pip install -e .`?)"
        close = difflib.get_close_matches(game, list(games), n=1)
        hint = f"Did you mean '{close[0]}'? " if close else ""
        raise UnknownGame(
            f"Unknown game '{game}'. {hint}Registered games: {known}{_families_note()}. A "
            f"package adds a game with an entry point in the '{ENTRY_POINT_GROUP}' group."
        )
    spec = _load("Game", game, games[game])
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


def _families_note() -> str:
    families = registered_families()
    return f"; families: {', '.join(f'{name}:<game>' for name in families)}" if families else ""


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
