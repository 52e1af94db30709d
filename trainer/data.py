"""Training episodes: one dataset row per episode, derived from the run's seed.

Each row carries the game's ``seed`` and ``split``; TRL gives every rollout of a prompt the
same row, so all completions of a GRPO group play the same word or puzzle, and the same run
seed gives the same episodes.
"""

from __future__ import annotations

import random
from typing import Any

from clients.base import EnvClient

WORDLE_INSTRUCTION = (
    "Play Wordle. Find the secret five-letter word by calling the `guess` tool, one word at a "
    "time, and use the feedback to choose the next guess."
)
COUNTDOWN_TOOL_INSTRUCTION = (
    "Solve the Countdown puzzle: call the `submit` tool with an arithmetic expression that "
    "makes the target."
)
SEED_SPACE = 2**31
MAX_DRAWS_PER_EPISODE = 50


def episode_seeds(run_seed: int) -> random.Random:
    """The stream of game seeds of a run."""
    return random.Random(f"arenagym-episodes-{run_seed}")


def wordle_rows(
    run_seed: int, episodes: int, instruction: str | None = None
) -> list[dict[str, Any]]:
    """Rows for tool-calling Wordle: the adapter's ``reset`` adds the game's opening text."""
    rng = episode_seeds(run_seed)
    prompt = [{"role": "user", "content": instruction or WORDLE_INSTRUCTION}]
    return [
        {"prompt": prompt, "seed": rng.randrange(SEED_SPACE), "split": "train"}
        for _ in range(episodes)
    ]


def countdown_rows(
    client: EnvClient[Any, Any, Any], run_seed: int, episodes: int, reset: dict[str, Any]
) -> list[dict[str, Any]]:
    """Rows for single-turn Countdown, each with the server's own prompt for its puzzle;
    puzzles are de-duplicated (small settings have few distinct puzzles)."""
    rng = episode_seeds(run_seed)
    rows: list[dict[str, Any]] = []
    seen: set[tuple[tuple[int, ...], int]] = set()
    for _ in range(episodes * MAX_DRAWS_PER_EPISODE):
        seed = rng.randrange(SEED_SPACE)
        observation = client.reset(seed=seed, split="train", **reset).observation
        key = (tuple(sorted(observation.numbers)), observation.target)
        if key in seen:
            continue
        seen.add(key)
        prompt = [{"role": "user", "content": observation.prompt}]
        rows.append({"prompt": prompt, "seed": seed, "split": "train"})
        if len(rows) == episodes:
            return rows
    raise ValueError(
        f"Only {len(rows)} distinct Countdown puzzles exist for these settings ({reset or 'defaults'}); "
        "lower `episodes` or raise n_numbers / max_num."
    )
