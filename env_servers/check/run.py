"""One run of the checker: the target, the declaration, and the episodes played for it.

Episodes are played on first need and kept, so the checks that read the same plays (the
random-legal baseline serves a dozen of them) cost one play.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, TypeVar

from env_servers.check import play
from env_servers.check.play import Episode, Policy
from env_servers.check.targets import Target
from env_servers.core.spec import GameSpec

Status = Literal["passed", "failed", "skipped"]
DEFAULT_EPISODES = 10
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Result:
    """The outcome of one check: its name, passed / failed / skipped, and why."""

    name: str
    status: Status
    detail: str


class Skip(Exception):
    """A check cannot run: what it needs is not declared, or not served."""


class Failed(AssertionError):
    """A check found the game wrong; the message says where and what to do."""


def need(value: T | None, reason: str) -> T:
    """``value``, or skip the check for ``reason`` when it is missing."""
    if value is None or value is False:
        raise Skip(reason)
    return value


def expect(condition: bool, problem: str) -> None:
    if not condition:
        raise Failed(problem)


NO_SPEC = "no declaration: a server not registered here"


class Run:
    """A target, its game's declaration (None for a foreign server), and lazily played
    episodes: ``episodes`` seeds from ``seed`` on."""

    def __init__(
        self,
        target: Target,
        spec: GameSpec | None,
        episodes: int = DEFAULT_EPISODES,
        seed: int = 0,
    ) -> None:
        if episodes < 2:
            raise ValueError(f"episodes must be 2 or more to compare seeds, got {episodes}.")
        if seed < 0:
            raise ValueError(f"seed must be 0 or more, got {seed}.")
        self.target = target
        self.spec = spec
        self.episodes = episodes
        self.seeds = [seed + i for i in range(episodes)]

    # -- what the declaration says ------------------------------------------------------

    def declared(self) -> GameSpec:
        return need(self.spec, NO_SPEC)

    @property
    def cap(self) -> int:
        """Steps before an episode is given up: one past the declared limit, so going past it
        shows."""
        limit = self.spec.max_steps if self.spec is not None else None
        return limit + 1 if limit is not None else play.DEFAULT_STEP_CAP

    def can_play(self) -> GameSpec:
        spec = self.declared()
        need(spec.random_move, "no random_move declared: the checker cannot make legal moves")
        return spec

    # -- what the server publishes ------------------------------------------------------

    @cached_property
    def schema(self) -> dict[str, Any]:
        return self.target.schema()

    @cached_property
    def metadata(self) -> dict[str, Any] | None:
        return self.target.metadata()

    # -- episodes -----------------------------------------------------------------------

    def play(
        self, name: str, policy: Policy | None, seeds: list[int] | None = None
    ) -> list[Episode]:
        seeds = self.seeds if seeds is None else seeds
        return play.play_all(self.target.session, self.spec, name, policy, seeds, self.cap)

    @cached_property
    def random_play(self) -> list[Episode]:
        """Random legal moves, or resets alone for a game the checker cannot play."""
        spec = self.spec
        if spec is None or spec.random_move is None:
            return self.play("no", None)
        return self.play("random legal", play.random_legal(spec))

    @cached_property
    def replay(self) -> list[Episode]:
        """The same seeds and moves again, in reverse order, in another session."""
        first = self.random_play[0].policy
        spec = self.spec
        policy = play.random_legal(spec) if spec is not None and spec.random_move else None
        return self.play(first, policy, self.seeds[::-1])[::-1]

    @cached_property
    def probes(self) -> dict[str, list[Episode]]:
        """Reward-hacking policies, by name: invalid moves, empty output, one move repeated."""
        spec = self.spec
        if spec is None:
            return {}
        policies: dict[str, Policy] = {}
        if spec.invalid_moves is not None:
            policies["invalid"] = play.constant(dict(spec.invalid_moves.example))
        for name, action in play.empty_actions(spec).items():
            policies[name] = play.constant(action)
        if spec.repeat_probe:
            policies["repeated"] = play.repeat_first(spec)
        return {name: self.play(name, policy) for name, policy in policies.items()}

    @cached_property
    def interleaved(self) -> list[Episode]:
        """Random legal moves with invalid moves between them (fewer than end an episode)."""
        spec = self.spec
        if spec is None or spec.random_move is None or spec.invalid_moves is None:
            return []
        ends_after = spec.invalid_moves.ends_after
        count = 3 if ends_after is None else ends_after - 1
        if count < 1:
            return []
        return self.play("legal and invalid", play.invalid_between(spec, count))

    def played(self) -> list[Episode]:
        """Every episode this run plays (playing what has not been played yet)."""
        episodes = [*self.random_play, *self.replay, *self.interleaved]
        for probe in self.probes.values():
            episodes += probe
        return episodes

    def run(self, check: Callable[[Run], str]) -> Result:
        """One check's result; an exception in it is the check's failure, never the run's."""
        name = check.__name__
        try:
            detail = check(self)
        except Skip as skip:
            return Result(name, "skipped", str(skip))
        except Failed as failure:
            return Result(name, "failed", str(failure))
        except Exception as error:
            return Result(name, "failed", f"{type(error).__name__}: {error}")
        return Result(name, "passed", detail)
