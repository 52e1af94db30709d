"""Playing recorded episodes for the checker: every reply and every state, as JSON, with the
policy that chose the moves.

A policy sees the observation (typed by the game's declaration, where there is one), a random
source fixed by the episode's seed (but not seeded with it, which a game may do), and the
episode so far; it returns the action's fields.
Everything a check needs is in the record, so one episode serves several checks.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from clients.errors import ServerError
from clients.transports import Transport
from env_servers.core.spec import GameSpec

DEFAULT_STEP_CAP = 200
"""Steps after which an episode of a game that declares no ``max_steps`` is given up."""
UNCOMPARED_STATE_FIELDS = frozenset({"episode_id"})
"""State fields that may differ between two plays of one seed (a fresh uuid per episode)."""

Policy = Callable[[Any, random.Random, "Episode"], Any]
"""Observation, random source, the episode so far → the next action's fields."""


@dataclass(slots=True)
class Turn:
    """One step: the action sent, and the reply and state after it, or the error."""

    action: Any
    reply: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    error: ServerError | None = None


@dataclass(slots=True)
class Episode:
    policy: str
    seed: int
    reset: dict[str, Any]
    reset_state: dict[str, Any]
    turns: list[Turn] = field(default_factory=list)

    @property
    def replies(self) -> list[dict[str, Any]]:
        return [self.reset, *(turn.reply for turn in self.turns if turn.reply is not None)]

    @property
    def final(self) -> dict[str, Any]:
        return self.replies[-1]

    @property
    def final_state(self) -> dict[str, Any]:
        states = [turn.state for turn in self.turns if turn.state is not None]
        return states[-1] if states else self.reset_state

    @property
    def done(self) -> bool:
        return bool(self.final.get("done"))

    @property
    def steps(self) -> int:
        """Steps the server took (rejected actions are not steps)."""
        return sum(turn.reply is not None for turn in self.turns)

    @property
    def error(self) -> ServerError | None:
        return next((turn.error for turn in self.turns if turn.error is not None), None)

    @property
    def rewards(self) -> list[Any]:
        return [reply.get("reward") for reply in self.replies]

    @property
    def score(self) -> float:
        """The episode's return: the sum of its rewards."""
        return float(sum(r for r in self.rewards if isinstance(r, int | float)))

    def running(self) -> Iterator[tuple[str, Any]]:
        """``(where, JSON)`` of every observation and state sent before the episode ended."""
        if self.reset.get("done"):
            return
        yield "reset observation", self.reset
        yield "state after reset", self.reset_state
        for number, turn in enumerate(self.turns, start=1):
            if turn.reply is None or turn.reply.get("done"):
                return
            yield f"observation after step {number}", turn.reply
            if turn.state is not None:
                yield f"state after step {number}", turn.state

    def trace(self) -> list[Any]:
        """What two plays of one seed with one policy must agree on."""
        items: list[Any] = [self.reset, comparable(self.reset_state)]
        for turn in self.turns:
            error = None if turn.error is None else str(turn.error.code)
            items += [turn.action, turn.reply, comparable(turn.state), error]
        return items

    def where(self) -> str:
        return f"seed {self.seed} ({self.policy} moves)"


def comparable(state: dict[str, Any] | None) -> dict[str, Any] | None:
    if state is None:
        return None
    return {k: v for k, v in state.items() if k not in UNCOMPARED_STATE_FIELDS}


def observation_of(spec: GameSpec | None, reply: dict[str, Any]) -> Any:
    """A reply's observation as a policy reads it: the game's model, or plain JSON."""
    fields = {**reply.get("observation", {}), "reward": reply.get("reward"), "done": reply["done"]}
    return fields if spec is None else spec.observation_type.model_validate(fields)


def _reply(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply without the transport's bookkeeping (the session id)."""
    return {key: value for key, value in reply.items() if key != "session_id"}


def play(
    session: Transport,
    spec: GameSpec | None,
    name: str,
    policy: Policy | None,
    seed: int,
    cap: int,
) -> Episode:
    """One episode from ``reset(seed=seed)``: ``policy`` moves until the episode ends, a step
    is refused (recorded, then the episode is left), or ``cap`` steps were taken. Without a
    policy the episode is only reset."""
    reply = _reply(session.reset({"seed": seed}))
    episode = Episode(name, seed, reply, session.state())
    rng = random.Random(f"policy {seed}")  # not the game's own draw from the same seed
    while policy is not None and not reply.get("done") and len(episode.turns) < cap:
        action = policy(observation_of(spec, reply), rng, episode)
        try:
            reply = _reply(session.step(action))
        except ServerError as error:
            episode.turns.append(Turn(action, error=error))
            break
        episode.turns.append(Turn(action, reply, session.state()))
    return episode


def play_all(
    open_session: Callable[[], Transport],
    spec: GameSpec | None,
    name: str,
    policy: Policy | None,
    seeds: list[int],
    cap: int,
) -> list[Episode]:
    """One episode per seed, one after another in one session (so state left over from an
    episode shows in the next)."""
    with contextlib.closing(open_session()) as session:
        return [play(session, spec, name, policy, seed, cap) for seed in seeds]


# -- policies ------------------------------------------------------------------------------


def random_legal(spec: GameSpec) -> Policy:
    move = spec.random_move
    assert move is not None
    return lambda observation, rng, episode: move(observation, rng)


def constant(action: Any) -> Policy:
    return lambda observation, rng, episode: action


def repeat_first(spec: GameSpec) -> Policy:
    """A random legal first move, then that move again, every step."""
    first = random_legal(spec)

    def policy(observation: Any, rng: random.Random, episode: Episode) -> Any:
        return episode.turns[0].action if episode.turns else first(observation, rng, episode)

    return policy


def invalid_between(spec: GameSpec, count: int) -> Policy:
    """Random legal moves with an invalid move before each of the first ``count`` of them;
    the random source serves the legal moves alone, so they are the ones ``random_legal``
    plays from the same seed while the invalid moves are free."""
    assert spec.invalid_moves is not None
    invalid, legal = dict(spec.invalid_moves.example), random_legal(spec)

    def policy(observation: Any, rng: random.Random, episode: Episode) -> Any:
        sent = len(episode.turns)
        if sent % 2 == 0 and sent // 2 < count:
            return invalid
        return legal(observation, rng, episode)

    return policy


def empty_actions(spec: GameSpec) -> dict[str, Any]:
    """What empty output becomes, by name: an empty answer-mode reply, and an empty string in
    each text field of the action."""
    actions: dict[str, Any] = {}
    if spec.answer_action is not None:
        actions["empty reply"] = spec.answer_action("")
    for name, info in spec.action_type.model_fields.items():
        if name != "metadata" and info.annotation in (str, str | None):
            actions[f"empty {name}"] = {name: ""}
    return actions
