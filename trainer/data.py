"""Training episodes: one dataset row per episode, derived from the run's seed.

Each row carries the game's ``seed`` and ``split``; TRL gives every rollout of a prompt the
same row, so all completions of a GRPO group play the same episode, and the same run seed gives
the same episodes. In tools mode the prompt is the game's instruction (the agent's ``reset``
appends the episode's opening text); in answer mode it is the game's own prompt for the
episode, read from the server. Games that declare an ``episode_key`` get no duplicate episodes
(small settings of a puzzle game have few distinct puzzles). In a mixed run, rows alternate between
the games and name theirs in an ``environment`` column.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from clients.agent import GameAgent

SEED_SPACE = 2**31
MAX_DRAWS_PER_EPISODE = 50


def episode_seeds(run_seed: int) -> random.Random:
    """The stream of game seeds of a run."""
    return random.Random(f"arenagym-episodes-{run_seed}")


def game_rows(
    agent: GameAgent, run_seed: int, episodes: int, instruction: str | None = None
) -> list[dict[str, Any]]:
    """``episodes`` rows of the agent's game in the agent's mode (its class's reset defaults
    apply). The server is asked only when the rows need it: answer mode, or de-duplication."""
    spec = agent._game_spec
    rng = episode_seeds(run_seed)
    answer = agent._mode == "answer"
    if not answer and spec.episode_key is None:
        prompt = [{"role": "user", "content": instruction or spec.instruction}]
        return [
            {"prompt": prompt, "seed": rng.randrange(SEED_SPACE), "split": "train"}
            for _ in range(episodes)
        ]
    rows: list[dict[str, Any]] = []
    seen: set[Any] = set()
    for _ in range(episodes * MAX_DRAWS_PER_EPISODE):
        seed = rng.randrange(SEED_SPACE)
        observation = agent._reset({"seed": seed, "split": "train"}).observation
        if spec.episode_key is not None:
            key = spec.episode_key(observation)
            if key in seen:
                continue
            seen.add(key)
        if answer:
            assert spec.answer_prompt is not None  # the spec checks it for answer mode
            text = spec.answer_prompt(observation)
        else:
            text = instruction or spec.instruction
        rows.append({"prompt": [{"role": "user", "content": text}], "seed": seed, "split": "train"})
        if len(rows) == episodes:
            return rows
    settings = agent._reset_defaults or "defaults"
    raise ValueError(
        f"Only {len(rows)} distinct {spec.name} episodes exist for these settings ({settings}); "
        "lower `episodes` or widen the game's settings."
    )


def mixed_rows(rows: Mapping[str, Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rows of several games, alternating, each naming its game in ``environment``."""
    mixed = []
    longest = max(len(game_rows) for game_rows in rows.values())
    for index in range(longest):
        for game, game_rows in rows.items():
            if index < len(game_rows):
                mixed.append({**game_rows[index], "environment": game})
    return mixed


def split_episodes(episodes: int, games: Sequence[str]) -> dict[str, int]:
    """``episodes`` shared between the games, the first ones taking the remainder."""
    share, extra = divmod(episodes, len(games))
    return {game: share + (index < extra) for index, game in enumerate(games)}
