"""The reply encoder: its fast path writes exactly what pydantic would."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import Field, field_serializer

from env_servers.core import wire
from env_servers.core.config import ServerSettings
from env_servers.core.models import Observation
from env_servers.core.registry import load_environment, registered
from env_servers.core.sessions import SessionManager

LIFTED = {"reward", "done", "metadata"}


@pytest.mark.parametrize("game", sorted(registered()))
def test_fast_path_matches_pydantic_for_every_game(game: str) -> None:
    env_type = load_environment(game)
    manager = SessionManager(env_type, ServerSettings())
    session = manager.open()
    actions: list[dict[str, Any]] = [
        {"guess": "crane"}, {"message": "[slate]"}, {"guess": "zzzzz"},
        {"expression": "1 + 2 + 3"}, {"message": "<answer>(1 + 2) * 3</answer>"},
    ]  # fmt: skip
    fields = env_type.action_type.model_fields
    for seed in range(5):
        observations = [manager.reset(session, {"seed": seed})]
        for action in actions:
            if set(action) <= fields.keys() and not session.done:
                observations.append(manager.step(session, action))
        for observation in observations:
            assert wire._plain(type(observation))
            expected = observation.model_dump(mode="json", exclude=LIFTED)
            assert orjson.loads(wire.observation_json(observation)) == expected


class Custom(Observation):
    secret: str = Field(default="x", exclude=True)
    value: int = 1

    @field_serializer("value")
    def _double(self, value: int) -> int:
        return value * 2


def test_models_with_custom_serialisation_take_pydantic_path() -> None:
    assert not wire._plain(Custom)
    assert orjson.loads(wire.observation_json(Custom())) == {"value": 2}
