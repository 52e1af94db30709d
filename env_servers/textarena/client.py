"""Typed clients of TextArena games: one pair per game (made by :func:`client_type`), since a
client names its game."""

from __future__ import annotations

from clients.base import AsyncEnvClient, EnvClient
from env_servers.textarena.models import TextArenaAction, TextArenaObservation, TextArenaState


class AsyncTextArenaClient(AsyncEnvClient[TextArenaAction, TextArenaObservation, TextArenaState]):
    action_type = TextArenaAction
    observation_type = TextArenaObservation
    state_type = TextArenaState


class TextArenaClient(EnvClient[TextArenaAction, TextArenaObservation, TextArenaState]):
    pass


def client_type(game: str, class_name: str) -> type[TextArenaClient]:
    """The sync client of one game (``async_type`` its async twin), e.g.
    ``TextArenaMastermindV0Client`` for ``textarena:Mastermind-v0``."""
    twin = type(f"Async{class_name}", (AsyncTextArenaClient,), {"game": game})
    return type(class_name, (TextArenaClient,), {"async_type": twin})
