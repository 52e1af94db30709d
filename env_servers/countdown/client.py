"""Typed Countdown clients: the async one and its sync twin."""

from __future__ import annotations

from clients.base import AsyncEnvClient, EnvClient
from env_servers.countdown.models import CountdownAction, CountdownObservation, CountdownState


class AsyncCountdownClient(AsyncEnvClient[CountdownAction, CountdownObservation, CountdownState]):
    game = "countdown"
    action_type = CountdownAction
    observation_type = CountdownObservation
    state_type = CountdownState


class CountdownClient(EnvClient[CountdownAction, CountdownObservation, CountdownState]):
    async_type = AsyncCountdownClient
