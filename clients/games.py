"""Typed clients of the shipped games: an async client and its sync twin per game."""

from __future__ import annotations

from clients.base import AsyncEnvClient, EnvClient
from env_servers.countdown.models import CountdownAction, CountdownObservation, CountdownState
from env_servers.wordle.models import WordleAction, WordleObservation, WordleState


class AsyncWordleClient(AsyncEnvClient[WordleAction, WordleObservation, WordleState]):
    game = "wordle"
    action_type = WordleAction
    observation_type = WordleObservation
    state_type = WordleState


class WordleClient(EnvClient[WordleAction, WordleObservation, WordleState]):
    async_type = AsyncWordleClient


class AsyncCountdownClient(AsyncEnvClient[CountdownAction, CountdownObservation, CountdownState]):
    game = "countdown"
    action_type = CountdownAction
    observation_type = CountdownObservation
    state_type = CountdownState


class CountdownClient(EnvClient[CountdownAction, CountdownObservation, CountdownState]):
    async_type = AsyncCountdownClient
