"""Every registered game against the framework's contract, through ``arenagym check`` (as
gymnasium runs its env checker over every registered environment)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from env_servers.check import InProcessTarget, Report, check
from env_servers.core.environment import Environment
from env_servers.core.models import Action, Observation, ResetOptions, State
from env_servers.core.registry import load_environment, load_family, load_spec, registered
from env_servers.core.registry import registered_families as families

FAMILY_STRIDE = 4
"""A family's members share one adapter (tested with its members in the family's own
tests): every fourth listed member stands for it here, to keep this suite fast."""
GAMES = sorted(registered()) + [
    load_family(name).game_name(member)
    for name in families()
    for member in list(load_family(name).listed())[::FAMILY_STRIDE]
]
SHIPPED = ("wordle", "countdown")
"""Games that declare everything the checker reads, so only what needs a server is skipped."""


def test_the_shipped_games_are_registered() -> None:
    assert set(SHIPPED) <= set(registered()) <= set(GAMES)


@pytest.fixture(params=GAMES)
def env_type(request: pytest.FixtureRequest) -> type[Environment[Any, Any, Any, Any]]:
    return load_environment(request.param)


@pytest.fixture(scope="module", params=GAMES)
def report(request: pytest.FixtureRequest) -> Report:
    spec = load_spec(request.param)
    return check(InProcessTarget(spec.load_environment()), spec, episodes=6)


def test_the_checker_passes(report: Report) -> None:
    """Every check passes but those the declaration names as failing for a flaw of the game's
    own (``extras["check_failures"]``: a wrapped game's), and those fail."""
    known = load_spec(report.game).extras.get("check_failures", {})
    failures = "\n".join(f"{r.name}: {r.detail}" for r in report.failures if r.name not in known)
    assert not failures, f"arenagym check {report.game} failed:\n{failures}"
    assert {r.name for r in report.failures} == set(known), "a declared failure passes now"


def test_the_shipped_games_skip_nothing_in_process(report: Report) -> None:
    if report.game not in SHIPPED:
        pytest.skip(f"{report.game} is not one of the shipped games")
    skipped = [r.name for r in report.results if r.status == "skipped"]
    assert skipped == ["metadata"], skipped


def test_declares_its_models(env_type: type[Environment[Any, Any, Any, Any]]) -> None:
    assert env_type.name in GAMES and env_type.description
    assert issubclass(env_type.reset_type, ResetOptions)
    assert issubclass(env_type.action_type, Action)
    assert issubclass(env_type.observation_type, Observation)
    assert issubclass(env_type.state_type, State)


def test_models_import_without_fastapi(env_type: type[Environment[Any, Any, Any, Any]]) -> None:
    models = env_type.action_type.__module__
    code = f"import sys, {models}; assert 'fastapi' not in sys.modules and 'starlette' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_same_seed_same_episode_in_each_split(
    env_type: type[Environment[Any, Any, Any, Any]],
) -> None:
    """The checker replays the default split; the held-out one must replay too."""
    if "split" not in env_type.reset_type.model_fields:
        pytest.skip(f"{env_type.name} has no split")
    for split in ("train", "eval"):
        options = env_type.reset_type.model_validate({"seed": 11, "split": split})
        first = env_type().reset(options)
        second = env_type().reset(options)
        assert first.model_dump() == second.model_dump()
        assert first.done is False
