"""OpenEnv 0.10 (the current ``openenv`` release) against our servers, and ours against its.

Its clients, its validator and its stock server run under its own interpreter
(``tests/openenv10.py``); the ``openenv-core`` 0.3 tests stay in ``test_openenv_compat.py``.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

import pytest
from pydantic import ConfigDict, Field

from clients.base import AsyncEnvClient, EnvClient
from env_servers.check import URLTarget, check
from env_servers.core.models import Action, Observation, State
from env_servers.core.registry import game_names
from tests.live import LiveServer, live_server
from tests.openenv10 import openenv10_python, run_script, subprocess_env

pytestmark = pytest.mark.openenv

PLANS: dict[str, dict[str, Any]] = {
    "wordle": {
        "reset": {"word": "crane"},
        "tool": "guess",
        "calls": [{"word": "slate"}, {"word": "qqqqq"}, {"word": "trace"}, {"word": "crane"}],
    },
    "countdown": {
        "reset": {"numbers": [3, 9, 7], "target": 20, "attempts": 2},
        "tool": "submit",
        "calls": [{"expression": "3 + 9 + 7"}, {"expression": "3 * 9 - 7"}],
    },
    "textarena:GuessTheNumber-v0": {
        "reset": {"seed": 3},  # the number is 8
        "tool": "move",
        "calls": [{"move": "[10]"}, {"move": "ten"}, {"move": "[8]"}],
    },
}
"""A whole game per built-in game and one TextArena game, played through its declared tool."""
GAMES = list(PLANS)


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, LiveServer]]:
    with contextlib.ExitStack() as stack:
        yield {game: stack.enter_context(live_server(game)) for game in GAMES}


@pytest.fixture(scope="module")
def seen(servers: dict[str, LiveServer]) -> dict[tuple[str, str], Any]:
    """What OpenEnv 0.10's clients and validator saw, per (job, game): one subprocess."""
    jobs = [(kind, game) for game in servers for kind in ("mcp", "validate")]
    jobs.append(("generic", "wordle"))
    specs = [{"kind": k, "url": servers[g].url, "plan": PLANS.get(g)} for k, g in jobs]
    results = run_script("clients", json.dumps(specs), timeout=300)
    return dict(zip(jobs, results, strict=True))


def test_every_builtin_game_has_a_plan() -> None:
    assert {game for game in game_names() if ":" not in game} < set(PLANS)


@pytest.mark.parametrize("game", GAMES)
def test_mcp_tool_client_plays_a_whole_game(
    game: str, seen: dict[tuple[str, str], Any], servers: dict[str, LiveServer]
) -> None:
    plan, played = PLANS[game], seen["mcp", game]
    assert played["reset_done"] is False
    assert [tool["name"] for tool in played["tools"]] == [plan["tool"]]
    assert played["tools"][0]["input_schema"]["required"] == list(plan["calls"][0])
    results = played["results"]
    assert all(isinstance(text, str) for text in results), results
    assert played["step_count"] == len(plan["calls"])
    assert played["sync"] == results  # the same game through .sync()
    if game == "wordle":
        assert results[0] == "S L A T E\nX X G X G\n5 guesses left."
        assert "No guess used" in results[1] and results[-1].endswith("Solved!")
    elif game == "countdown":
        assert results[0].startswith("Wrong:") and "1 attempt(s) left" in results[0]
        assert results[-1] == "Correct: 3 * 9 - 7 = 20."
    else:
        assert "lower" in results[0] and "invalid move" in results[1]
        assert "Congratulations" in results[-1]
    # the client closed its session on exit, once its socket had let go of it
    assert played["session_id"] not in servers[game].sessions.sessions


@pytest.mark.parametrize("game", GAMES)
def test_openenv_validate_passes_every_criterion(
    game: str, seen: dict[tuple[str, str], Any]
) -> None:
    report = seen["validate", game]
    assert report["passed"] is True, report
    assert report["standard_profile"] == "openenv-http/1.x"
    assert report["summary"]["failed_criteria"] == []
    assert {c["id"] for c in report["criteria"]} >= {"mcp_endpoint", "mode_endpoint_consistency"}


def test_generic_env_client_plays(seen: dict[tuple[str, str], Any]) -> None:
    played = seen["generic", "wordle"]
    assert any("SESSION_ERROR" in error for error in played["errors"])  # step before reset
    slate, invalid, crane = played["moves"]
    assert "[slate]" in slate["new"] and "X X G X G" in slate["new"]
    assert "You attempted an invalid move" in invalid["new"] and invalid["done"] is False
    assert "G G G G G" in crane["new"] and crane["done"] is True and crane["reward"] == 1.0
    assert played["step_count"] == 3
    assert played["sync"] == {"same_seed_same_game": True, "guesses": 1}


# -- our client against OpenEnv 0.10's own server -------------------------------------------


@pytest.fixture(scope="module")
def stock_servers() -> Iterator[dict[str, str]]:
    process = subprocess.Popen(
        [str(openenv10_python()), "tests/env_servers/openenv10/stock_server.py"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            pytest.fail(f"the stock OpenEnv 0.10 server did not start:\n{process.stderr}")
        yield json.loads(line)
    finally:
        process.kill()
        process.wait(timeout=10)


class PlainObservation(Observation):
    payload: dict[str, Any] = Field(default_factory=dict)


class ToolObservation(Observation):
    """OpenEnv's ``CallToolObservation`` as plain data."""

    model_config = ConfigDict(extra="allow")

    tool_name: str = ""
    result: Any = None
    error: Any = None


class ToolAction(Action):
    type: str = "call_tool"
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class AsyncPlainClient(AsyncEnvClient[Action, PlainObservation, State]):
    game = "stock-openenv"
    action_type = Action
    observation_type = PlainObservation
    state_type = State


class PlainClient(EnvClient[Action, PlainObservation, State]):
    async_type: ClassVar[type[AsyncEnvClient[Any, Any, Any]]] = AsyncPlainClient


class AsyncToolClient(AsyncEnvClient[ToolAction, ToolObservation, State]):
    game = "stock-openenv-mcp"
    action_type = ToolAction
    observation_type = ToolObservation
    state_type = State


class ToolClient(EnvClient[ToolAction, ToolObservation, State]):
    async_type: ClassVar[type[AsyncEnvClient[Any, Any, Any]]] = AsyncToolClient


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_our_client_plays_a_stock_openenv_010_server(
    stock_servers: dict[str, str], transport: str
) -> None:
    with PlainClient.from_url(stock_servers["plain"], transport=transport) as client:  # type: ignore[arg-type]
        if transport == "websocket":
            assert client.transport.extensions == frozenset()  # type: ignore[attr-defined]
        result = client.reset(seed=5)
        assert result.observation.payload["guesses_left"] == 6
        if transport == "websocket":  # OpenEnv's HTTP builds a fresh env per request
            result = client.step({"guess": "crane"})
            assert result.observation.payload["guesses_left"] == 5
            assert client.state().step_count == 1


def test_our_client_calls_tools_of_a_stock_mcp_environment(stock_servers: dict[str, str]) -> None:
    with ToolClient.from_url(stock_servers["mcp"]) as client:
        client.reset(seed=5)
        result = client.step(ToolAction(tool_name="guess", arguments={"word": "crane"}))
        assert result.observation.tool_name == "guess" and result.observation.error is None
        text = result.observation.result["data"]
        assert text.startswith("crane ") and len(text.split()[1]) == 5
        assert client.state().step_count == 1


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_arenagym_check_runs_what_a_stock_server_allows(
    stock_servers: dict[str, str], transport: Literal["websocket", "http"]
) -> None:
    """No declaration: only what /schema and /metadata allow runs; the rest skips, saying so."""
    target = URLTarget(stock_servers["plain"], transport)
    report = check(target, None, episodes=2, game="stock")
    found = {result.name: result for result in report.results}
    assert report.passed, report.failures
    for name in ("metadata", "schema", "replies_match_schema", "bad_actions_rejected"):
        assert found[name].status == "passed", found[name]
    assert found["same_seed_same_episode"].status == "passed"
    assert found["hidden_stays_hidden"].status == "skipped"
    assert "no declaration" in found["probe_invalid_moves"].detail
