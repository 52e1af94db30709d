"""Typed clients for arenagym game servers (and plain OpenEnv servers), and TRL adapters.

Nothing under ``clients`` imports FastAPI: a trainer talks to games over the network only. The
typed client of each registered game is re-exported here by its class name (``from clients
import <Game>Client``), found through the game registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "AsyncEnvClient",
    "ClientError",
    "EnvClient",
    "Episode",
    "GameAgent",
    "PlayedEpisode",
    "StepResult",
]

_WHERE = {
    "AsyncEnvClient": "clients.base",
    "EnvClient": "clients.base",
    "StepResult": "clients.base",
    "Episode": "clients.base",
    "PlayedEpisode": "clients.base",
    "ClientError": "clients.errors",
    "GameAgent": "clients.agent",
}

if TYPE_CHECKING:
    from clients.agent import GameAgent
    from clients.base import AsyncEnvClient, EnvClient, Episode, PlayedEpisode, StepResult
    from clients.errors import ClientError


def game_clients() -> dict[str, type[Any]]:
    """Every registered game's typed clients by class name, sync and async."""
    from env_servers.core.registry import game_names, load_spec

    found: dict[str, type[Any]] = {}
    for game in game_names():
        client = load_spec(game).client
        found[client.__name__] = client
        found[client.async_type.__name__] = client.async_type
    return found


def __getattr__(name: str) -> Any:
    import importlib

    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    if name.endswith("Client") and name in (clients := game_clients()):
        return clients[name]
    raise AttributeError(f"module 'clients' has no attribute {name!r}")
