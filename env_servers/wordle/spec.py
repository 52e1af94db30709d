"""Wordle's declaration: what clients, trainers and reports know of the game."""

from __future__ import annotations

import random

from env_servers.core.spec import GameSpec, Reward, ToolCall
from env_servers.wordle.agent import WordleToolEnv
from env_servers.wordle.client import WordleClient
from env_servers.wordle.models import (
    WordleAction,
    WordleObservation,
    WordleResetOptions,
    WordleState,
)

INSTRUCTION = (
    "Play Wordle. Find the secret five-letter word by calling the `guess` tool, one word at a "
    "time, and use the feedback to choose the next guess."
)
OPENING_WORDS = ("crane", "slate", "audio", "trace", "adieu", "stare", "roate", "salet")


def correct(agent: WordleToolEnv) -> float:
    """1.0 when the word was found."""
    return 1.0 if agent.solved else 0.0


def greens(agent: WordleToolEnv) -> float:
    """Most greens in one guess, over 5."""
    return agent.best_greens / 5


def yellows(agent: WordleToolEnv) -> float:
    """Most yellows in one guess, over 5."""
    return agent.best_yellows / 5


def repetition(agent: WordleToolEnv) -> float:
    """Distinct words over all attempted guesses: 1.0 without repeats, 0.0 without guesses.
    (The published recipe counted valid guesses only, and repeats are invalid, so its term
    was always 1.0; here a repeat costs.)"""
    return float(agent.repetition_score)


def example_call(observation: WordleObservation, rng: random.Random) -> ToolCall:
    return ToolCall("guess", {"word": rng.choice(OPENING_WORDS)})


WORDLE = GameSpec(
    name="wordle",
    description="Find the secret five-letter word in six guesses, with TextArena Wordle-v0 text.",
    environment="env_servers.wordle.environment:WordleEnvironment",
    reset_type=WordleResetOptions,
    action_type=WordleAction,
    observation_type=WordleObservation,
    state_type=WordleState,
    client=WordleClient,
    agent=WordleToolEnv,
    instruction=INSTRUCTION,
    rewards={
        "correct": Reward(correct, 3.0, "1.0 when the word was found"),
        "greens": Reward(greens, 1.0, "most greens in one guess, over 5"),
        "yellows": Reward(yellows, 0.5, "most yellows in one guess, over 5"),
        "repetition": Reward(repetition, 1.5, "distinct words over attempted guesses"),
    },
    solved="correct",
    modes=("tools",),
    example_call=example_call,
    solved_word="won",
    unit="words",
    evaluation="env_servers.wordle.evaluation:VIEW",
    terminal="env_servers.wordle.terminal:WORDLE",
    web="env_servers.wordle:web",
)
"""The published Wordle recipe's rewards and weights: 3.0 / 1.0 / 0.5 / 1.5."""
