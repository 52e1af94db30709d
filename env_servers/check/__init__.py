"""``arenagym check``: does a game behave as its declaration says?

Endpoints answering is not enough: the checker plays episodes and holds the game to its
``GameSpec`` (``env_servers.core.spec``): the same seed gives the same episode, hidden state
included; different seeds differ where declared; every reply fits the served ``/schema`` and
round-trips through the game's models; malformed actions are refused cleanly and invalid moves
cost what is declared; episodes end within the step limit; rewards stay in range; hidden
fields stay hidden until the end; and reward-hacking probes (invalid moves, empty output, one
move repeated) do not out-score random legal play. A check whose declaration is missing is
skipped, saying what would enable it. It runs in-process, behind the server's own session
layer, or against a running server by URL; a server not registered here (any OpenEnv server)
gets the checks that its ``/schema`` and ``/metadata`` allow.

    report = check(InProcessTarget(spec.load_environment()), spec)
    assert report.passed, report.failures
"""

from __future__ import annotations

from dataclasses import dataclass

from env_servers.check.checks import CHECKS, Check
from env_servers.check.run import DEFAULT_EPISODES, Result, Run
from env_servers.check.targets import InProcessTarget, Target, URLTarget
from env_servers.core.spec import GameSpec

__all__ = [
    "CHECKS",
    "DEFAULT_EPISODES",
    "InProcessTarget",
    "Report",
    "Result",
    "Target",
    "URLTarget",
    "check",
]


@dataclass(frozen=True, slots=True)
class Report:
    """Every check's result for one game on one target."""

    game: str
    target: str
    episodes: int
    seed: int
    results: tuple[Result, ...]

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[Result]:
        return [result for result in self.results if result.status == "failed"]

    def result(self, name: str) -> Result:
        return next(result for result in self.results if result.name == name)


def check(
    target: Target,
    spec: GameSpec | None,
    *,
    episodes: int = DEFAULT_EPISODES,
    seed: int = 0,
    checks: tuple[Check, ...] = CHECKS,
    game: str | None = None,
) -> Report:
    """Run ``checks`` on the game at ``target`` declared by ``spec`` (None: a server not
    registered here, named ``game``)."""
    run = Run(target, spec, episodes, seed)
    results = tuple(run.run(one) for one in checks)
    name = spec.name if spec is not None else (game or "unknown game")
    return Report(name, target.description, episodes, seed, results)
