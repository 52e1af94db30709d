"""``arenagym check`` over every offline TextArena game: each passes, but the checks its
declaration names as failing for a flaw of TextArena's (and those fail); most skip nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from env_servers.check import InProcessTarget, Report, URLTarget, check
from env_servers.check.targets import TransportName
from env_servers.core.registry import load_spec
from env_servers.textarena.games import CHECK_FAILURES, OFFLINE
from tests.live import LiveServer, live_server

EPISODES = 2
NOTHING_SKIPPED = (
    "2048-v0",
    "FifteenPuzzle-v0",
    "FrozenLake-v0",
    "LightsOut-v0",
    "LogicPuzzle-v0",
    "Mastermind-v0",
    "Slitherlink-v0",
    "Sudoku-v0",
)
"""Games that skip no check in-process but ``metadata`` (no server to ask)."""
LIVE = "textarena:FrozenLake-v0"


@pytest.fixture(scope="module", params=list(OFFLINE))
def report(request: pytest.FixtureRequest) -> Report:
    spec = load_spec(f"textarena:{request.param}")
    return check(InProcessTarget(spec.load_environment()), spec, episodes=EPISODES)


def test_every_game_passes_but_its_declared_failures(report: Report) -> None:
    known = CHECK_FAILURES.get(report.game.partition(":")[2], {})
    unexpected = "\n".join(f"{r.name}: {r.detail}" for r in report.failures if r.name not in known)
    assert not unexpected, f"arenagym check {report.game} failed:\n{unexpected}"
    assert {r.name for r in report.failures} == set(known), "a declared failure passes now"


def test_the_declared_games_skip_nothing_but_metadata(report: Report) -> None:
    if report.game.partition(":")[2] not in NOTHING_SKIPPED:
        pytest.skip(f"{report.game} does not declare everything the checker reads")
    skipped = {r.name: r.detail for r in report.results if r.status == "skipped"}
    assert set(skipped) == {"metadata"}, skipped


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live_server(LIVE) as running:
        yield running


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_a_live_server_passes_by_url(server: LiveServer, transport: TransportName) -> None:
    spec = load_spec(LIVE)
    report = check(URLTarget(server.url, transport), spec, episodes=EPISODES)
    failures = "\n".join(f"{r.name}: {r.detail}" for r in report.failures)
    assert report.passed, failures
    assert report.result("metadata").status == "passed"
