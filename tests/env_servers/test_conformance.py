"""Every registered game against the framework's contract (as gymnasium's env checker)."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest

from env_servers.core.config import ServerSettings
from env_servers.core.environment import Environment
from env_servers.core.errors import EnvServerError
from env_servers.core.models import Action, Observation, ResetOptions, State
from env_servers.core.registry import load_environment, load_family, registered
from env_servers.core.registry import registered_families as families
from env_servers.core.sessions import SessionManager

FAMILY_STRIDE = 4
"""A family's members share one adapter (tested with its members in the family's own
tests): every fourth listed member stands for it here, to keep this suite fast."""
GAMES = sorted(registered()) + [
    load_family(name).game_name(member)
    for name in families()
    for member in list(load_family(name).listed())[::FAMILY_STRIDE]
]


def test_the_shipped_games_are_registered() -> None:
    assert {"wordle", "countdown"} <= set(registered()) <= set(GAMES)


@pytest.fixture(params=GAMES)
def env_type(request: pytest.FixtureRequest) -> type[Environment[Any, Any, Any, Any]]:
    return load_environment(request.param)


def test_declares_its_models(env_type: type[Environment[Any, Any, Any, Any]]) -> None:
    assert env_type.name in GAMES and env_type.description
    assert issubclass(env_type.reset_type, ResetOptions)
    assert issubclass(env_type.action_type, Action)
    assert issubclass(env_type.observation_type, Observation)
    assert issubclass(env_type.state_type, State)
    for model in (env_type.reset_type, env_type.action_type, env_type.observation_type):
        model.model_json_schema()
    assert env_type.reset_type.model_fields.keys() >= env_type.reset_type.SECRET_FIELDS


def test_models_import_without_fastapi(env_type: type[Environment[Any, Any, Any, Any]]) -> None:
    models = env_type.action_type.__module__
    code = f"import sys, {models}; assert 'fastapi' not in sys.modules and 'starlette' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_same_seed_same_episode(env_type: type[Environment[Any, Any, Any, Any]]) -> None:
    splits = ("train", "eval") if "split" in env_type.reset_type.model_fields else (None,)
    for split in splits:
        fields = {"seed": 11} | ({"split": split} if split else {})
        options = env_type.reset_type.model_validate(fields)
        first = env_type().reset(options)
        second = env_type().reset(options)
        assert first.model_dump() == second.model_dump()
        assert first.done is False


def test_random_play_never_crashes(env_type: type[Environment[Any, Any, Any, Any]]) -> None:
    """Junk actions through the session layer: errors are EnvServerErrors, episodes end."""
    manager = SessionManager(env_type, ServerSettings())
    session = manager.open()
    rng = random.Random(0)
    junk: list[Any] = [{}, {"message": ""}, {"message": "x" * 3000}, {"message": "[]"}, 5, None]
    fields = list(env_type.action_type.model_fields)
    for episode in range(20):
        manager.reset(session, {"seed": episode})
        for _ in range(30):
            field = rng.choice(fields)
            value = rng.choice(["", "[crane]", "1 + 2", "(((", "crane", "[aaaaa]", 7, None])
            action = rng.choice([*junk, {field: value}])
            try:
                observation = manager.step(session, action)
            except EnvServerError:
                continue
            assert observation.reward is None or 0.0 <= observation.reward <= 1.0
            state = manager.state(session)
            state.model_dump_json()
            if observation.done:
                break
