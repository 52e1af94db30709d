"""Our Wordle built the stock way on ``openenv-core``: the comparison server of the benchmark.

The game is ours (``env_servers.wordle``) so only the server framework differs: OpenEnv's
``create_app`` with its own ``Action`` / ``Observation`` / ``State`` base classes and its
per-session executors. The OpenEnv types carry the same fields as ours (copied from our
models, so they cannot drift), and converting between the two is ``model_construct`` (no
validation, a few microseconds), so the game costs the same on both servers.

OpenEnv serves one session at a time unless the environment class sets
``SUPPORTS_CONCURRENT_SESSIONS = True`` *and* ``create_app`` gets ``max_concurrent_envs``;
both are set here, as its docs ask.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from openenv.core.env_server import Action, Environment, Observation, State, create_app
from pydantic import BaseModel, create_model

from env_servers.wordle.environment import WordleEnvironment
from env_servers.wordle.models import (
    WordleAction,
    WordleObservation,
    WordleResetOptions,
    WordleState,
)


def _same_fields(name: str, ours: type[BaseModel], base: type[BaseModel]) -> Any:
    """A subclass of OpenEnv's ``base`` with the fields ``ours`` adds to our base class."""
    fields: dict[str, Any] = {
        field: (info.annotation, info)
        for field, info in ours.model_fields.items()
        if field not in base.model_fields
    }
    return create_model(name, __base__=base, __doc__=ours.__doc__, **fields)


StockWordleAction: type[Action] = _same_fields("WordleAction", WordleAction, Action)
StockWordleObservation: type[Observation] = _same_fields(
    "WordleObservation", WordleObservation, Observation
)
StockWordleState: type[State] = _same_fields("WordleState", WordleState, State)


class StockWordleEnvironment(Environment[Any, Any, Any]):
    """``WordleEnvironment`` behind OpenEnv's ``Environment`` interface."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._env = WordleEnvironment()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        options = WordleResetOptions.model_validate(
            {"seed": seed, "episode_id": episode_id, **kwargs}
        )
        return _stock(self._env.reset(options))

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        ours = WordleAction.model_construct(
            message=action.message, guess=action.guess, metadata=action.metadata
        )
        return _stock(self._env.step(ours))

    @property
    def state(self) -> State:
        state = self._env.state
        return StockWordleState.model_construct(state.model_fields_set, **state.__dict__)


def _stock(observation: WordleObservation) -> Observation:
    return StockWordleObservation.model_construct(
        observation.model_fields_set, **observation.__dict__
    )


def create_stock_app(max_sessions: int) -> FastAPI:
    """OpenEnv's app for Wordle, ``max_sessions`` concurrent WebSocket sessions at most."""
    return create_app(
        StockWordleEnvironment,
        StockWordleAction,
        StockWordleObservation,
        env_name="wordle",
        max_concurrent_envs=max_sessions,
    )
