"""Reward functions for GRPO, computed from what the game servers reported.

TRL calls each with the batch's completions and ``environments=`` (the adapter instances of
``clients.trl``, aligned with the completions); they read the attributes the adapters keep
from the server's ``reward_signals``, so no reward re-implements a game rule.

Wordle's four shaped rewards are the published recipe's, weighted 3.0 / 1.0 / 0.5 / 1.5. The
recipe's repetition term only counted valid guesses, and repeats are invalid, so it was always
1.0; ours divides distinct words by *all* attempted guesses, so a repeat costs (and a rollout
that never guesses scores 0.0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

RewardFunction = Callable[..., list[float]]


def wordle_correct(
    completions: Sequence[Any], environments: Sequence[Any], **_: Any
) -> list[float]:
    """1.0 when the word was found."""
    return [1.0 if env.solved else 0.0 for env in environments]


def wordle_greens(completions: Sequence[Any], environments: Sequence[Any], **_: Any) -> list[float]:
    """Most greens in one guess, over 5."""
    return [env.best_greens / 5 for env in environments]


def wordle_yellows(
    completions: Sequence[Any], environments: Sequence[Any], **_: Any
) -> list[float]:
    """Most yellows in one guess, over 5."""
    return [env.best_yellows / 5 for env in environments]


def wordle_repetition(
    completions: Sequence[Any], environments: Sequence[Any], **_: Any
) -> list[float]:
    """Distinct words over all attempted guesses: 1.0 without repeats."""
    return [float(env.repetition_score) for env in environments]


def countdown_solved(
    completions: Sequence[Any], environments: Sequence[Any], **_: Any
) -> list[float]:
    """1.0 when a submitted expression made the target (tool-calling Countdown)."""
    return [1.0 if env.solved else 0.0 for env in environments]


WORDLE_REWARDS: dict[str, tuple[RewardFunction, float]] = {
    "correct": (wordle_correct, 3.0),
    "greens": (wordle_greens, 1.0),
    "yellows": (wordle_yellows, 0.5),
    "repetition": (wordle_repetition, 1.5),
}
"""The published Wordle recipe's rewards and weights."""


class CountdownVerifier:
    """Binary reward for single-turn Countdown, verified by the Countdown server: each
    completion is sent as the ``message`` answer of its row's puzzle (``seed``, ``split``), so
    the extraction and the verifier live in the game, not here."""

    __name__ = "countdown_correct"

    def __init__(self, client: Any, reset: dict[str, Any] | None = None) -> None:
        self.client = client
        self.reset = dict(reset or {})

    def __call__(
        self, completions: Sequence[Any], seed: Sequence[int], split: Sequence[str], **_: Any
    ) -> list[float]:
        rewards = []
        for completion, row_seed, row_split in zip(completions, seed, split, strict=True):
            text = completion[-1]["content"] if isinstance(completion, list) else completion
            self.client.reset(seed=row_seed, split=row_split, **self.reset)
            result = self.client.step({"message": text or ""})
            rewards.append(1.0 if result.observation.correct else 0.0)
        return rewards


def reward_functions(
    game: str, weights: dict[str, float], verifier: Any = None
) -> tuple[list[RewardFunction], list[float]]:
    """The configured reward functions and their weights, in a stable order."""
    available: dict[str, RewardFunction] = (
        {name: function for name, (function, _) in WORDLE_REWARDS.items()}
        if game == "wordle"
        else {"correct": verifier}
    )
    names = [name for name in available if name in weights]
    return [available[name] for name in names], [weights[name] for name in names]
