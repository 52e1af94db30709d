"""Typed Wordle clients: the async one and its sync twin."""

from __future__ import annotations

from clients.base import AsyncEnvClient, EnvClient
from env_servers.wordle.models import WordleAction, WordleObservation, WordleState


class AsyncWordleClient(AsyncEnvClient[WordleAction, WordleObservation, WordleState]):
    game = "wordle"
    action_type = WordleAction
    observation_type = WordleObservation
    state_type = WordleState


class WordleClient(EnvClient[WordleAction, WordleObservation, WordleState]):
    async_type = AsyncWordleClient
