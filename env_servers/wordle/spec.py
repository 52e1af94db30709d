"""Wordle's declaration: what clients, trainers and reports know of the game."""

from __future__ import annotations

import random
from typing import Any

from env_servers.core.spec import GameSpec, InvalidMoves, Reward, ToolCall
from env_servers.wordle import game
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


def random_move(observation: WordleObservation, rng: random.Random) -> dict[str, Any]:
    """A random answer-list word not guessed yet (legal unless hard mode is on)."""
    guessed = {guess.word for guess in observation.guesses}
    words = game.answers()
    while (word := words[rng.randrange(len(words))]) in guessed:
        pass
    return {"guess": word}


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
    max_steps=game.MAX_GUESSES - 1 + game.MAX_INVALID_MOVES,
    reward_range=(0.0, 1.0),
    random_move=random_move,
    invalid_moves=InvalidMoves({"guess": "zzzzz"}, ends_after=game.MAX_INVALID_MOVES),
    hidden_fields=frozenset({"answer"}),
    repeat_probe=True,
    solved_word="won",
    unit="words",
    evaluation="env_servers.wordle.evaluation:VIEW",
    terminal="env_servers.wordle.terminal:WORDLE",
    web="env_servers.wordle:web",
)
"""The published Wordle recipe's rewards and weights: 3.0 / 1.0 / 0.5 / 1.5."""
