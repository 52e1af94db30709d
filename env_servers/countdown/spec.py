"""Countdown's declaration: what clients, trainers and reports know of the game."""

from __future__ import annotations

import random
from typing import Any

from env_servers.core.spec import GameSpec, InvalidMoves, Reward, ToolCall
from env_servers.countdown.agent import CountdownToolEnv
from env_servers.countdown.client import CountdownClient
from env_servers.countdown.game import MAX_INVALID_MOVES
from env_servers.countdown.models import (
    MAX_MESSAGE_CHARS,
    CountdownAction,
    CountdownObservation,
    CountdownResetOptions,
    CountdownState,
)

INSTRUCTION = (
    "Solve the Countdown puzzle: call the `submit` tool with an arithmetic expression that "
    "makes the target."
)


def correct(agent: CountdownToolEnv) -> float:
    """1.0 when an answer made the target with each number used once."""
    return 1.0 if agent.solved else 0.0


def answer_prompt(observation: CountdownObservation) -> str:
    """The server's own prompt for the puzzle: the published recipe's."""
    return observation.prompt


def answer_action(text: str) -> dict[str, Any]:
    """A whole reply, for the server to extract the answer from (the last tag or expression,
    so an overlong reply keeps its end)."""
    return {"message": text[-MAX_MESSAGE_CHARS:]}


def _example_expression(observation: CountdownObservation) -> str:
    a, b, c = observation.numbers[:3]
    return f"{a} + {b} * {c}"


def example_call(observation: CountdownObservation, rng: random.Random) -> ToolCall:
    return ToolCall("submit", {"expression": _example_expression(observation)})


def example_answer(observation: CountdownObservation, rng: random.Random) -> str:
    return f"<answer>{_example_expression(observation)}</answer>"


def random_move(observation: CountdownObservation, rng: random.Random) -> dict[str, Any]:
    """Every number once, in a random order, joined by random + - * (never a division, which
    could divide by zero)."""
    numbers = [str(n) for n in observation.numbers]
    rng.shuffle(numbers)
    expression = numbers[0]
    for number in numbers[1:]:
        expression += f" {rng.choice('+-*')} {number}"
    return {"expression": expression}


def episode_key(observation: CountdownObservation) -> tuple[tuple[int, ...], int]:
    """A puzzle is its numbers (in any order) and its target."""
    return tuple(sorted(observation.numbers)), observation.target


COUNTDOWN = GameSpec(
    name="countdown",
    description="Make the target number from the given numbers with + - * / and parentheses.",
    environment="env_servers.countdown.environment:CountdownEnvironment",
    reset_type=CountdownResetOptions,
    action_type=CountdownAction,
    observation_type=CountdownObservation,
    state_type=CountdownState,
    client=CountdownClient,
    agent=CountdownToolEnv,
    instruction=INSTRUCTION,
    rewards={"correct": Reward(correct, 1.0, "1.0 when the answer makes the target")},
    solved="correct",
    modes=("answer", "tools"),
    answer_prompt=answer_prompt,
    answer_action=answer_action,
    example_call=example_call,
    example_answer=example_answer,
    demonstrations="env_servers.countdown.solutions:worked_replies",
    episode_key=episode_key,
    max_steps=MAX_INVALID_MOVES,
    reward_range=(0.0, 1.0),
    random_move=random_move,
    invalid_moves=InvalidMoves({"message": "I give up."}, ends_after=MAX_INVALID_MOVES),
    hidden_fields=frozenset({"solution"}),
    repeat_probe=True,
    unit="puzzles",
    evaluation="env_servers.countdown.evaluation:VIEW",
    terminal="env_servers.countdown.terminal:COUNTDOWN",
    web="env_servers.countdown:web",
)
