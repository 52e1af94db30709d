"""Reward functions for GRPO, computed from what the game servers reported.

A game declares its rewards as functions of a finished episode's agent (its declaration's
``rewards``); here they become TRL reward functions, named ``<game>_<reward>`` (TRL logs
``rewards/<game>_<reward>/mean``). TRL calls each with the batch's completions and
``environments=`` (the agents, aligned with the completions); in a mixed run a game's reward is
``None`` for another game's rollouts, which TRL leaves out of its means.

In answer mode the completion itself is the answer: before any reward is read, each reply is
sent once to the game server as the game's answer action, so the extraction and the verifier
live in the game, not here. A single-game answer run has no environments: its rows' episodes
are then played here, on one session, one after another.

``<GAME>_REWARDS`` tables (name → (TRL function, weight)) remain
importable from this module for any registered game.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from clients.agent import GameAgent
from env_servers.core.spec import GameSpec, RewardFunction

TRLReward = Any
"""A callable TRL accepts as a reward function: ``(completions, **columns) -> list[float | None]``."""


def completion_text(completion: Any) -> str:
    """A completion's reply: the last message of a conversation, or the text itself."""
    if isinstance(completion, list):
        return str(completion[-1].get("content") or "") if completion else ""
    return str(completion or "")


class AnswerJudge:
    """Has every answer-mode reply of a batch judged by its game server, once.

    ``agent``: for a single-game answer run (no environments), the agent whose session plays
    each row's episode in turn; its bookkeeping is copied per completion. With environments,
    the agents are TRL's, one per rollout."""

    def __init__(self, agent: GameAgent | None = None) -> None:
        self.agent = agent
        self._completions: Sequence[Any] | None = None
        self._agents: list[GameAgent] = []

    def __call__(
        self,
        completions: Sequence[Any],
        environments: Sequence[Any] | None,
        columns: dict[str, Any],
    ) -> list[GameAgent]:
        if completions is self._completions:
            return self._agents
        if environments is None:
            agents = list(self._play_rows(completions, columns))
        else:
            agents = list(environments)
            for agent, completion in zip(agents, completions, strict=True):
                if agent._mode == "answer" and not agent.answered:
                    agent._answer(completion_text(completion))
        self._completions, self._agents = completions, agents
        return agents

    def _play_rows(self, completions: Sequence[Any], columns: dict[str, Any]) -> Any:
        if self.agent is None:
            raise ValueError("An answer-mode reward needs environments or a judging agent.")
        fields = self.agent._game_spec.reset_fields
        for index, completion in enumerate(completions):
            row = {
                name: values[index]
                for name, values in columns.items()
                if name in fields and isinstance(values, Sequence)
            }
            self.agent._reset(row)
            self.agent._answer(completion_text(completion))
            yield copy.copy(self.agent)


def trl_reward(
    spec: GameSpec, name: str, function: RewardFunction, judge: AnswerJudge | None = None
) -> TRLReward:
    """The game's reward ``name`` as a TRL reward function named ``<game>_<name>``."""
    judge = judge or AnswerJudge()

    def reward(
        completions: Sequence[Any], environments: Sequence[Any] | None = None, **columns: Any
    ) -> list[float | None]:
        agents = judge(completions, environments, columns)
        return [
            float(function(agent)) if agent._game_spec.name == spec.name else None
            for agent in agents
        ]

    reward.__name__ = reward.__qualname__ = f"{spec.name}_{name}"
    reward.__doc__ = function.__doc__
    return reward


def server_reward(agent: GameAgent) -> float:
    """The sum of the rewards the game server gave in the episode."""
    return agent.server_reward


def reward_functions(
    spec: GameSpec, weights: dict[str, float], judge: AnswerJudge | None = None
) -> tuple[list[TRLReward], list[float]]:
    """The configured rewards of one game as TRL functions and their weights, in the game's
    order; ``server`` is the server's own reward."""
    available: dict[str, RewardFunction] = {n: r.function for n, r in spec.rewards.items()}
    available["server"] = server_reward
    names = [name for name in available if name in weights]
    functions = [trl_reward(spec, name, available[name], judge) for name in names]
    return functions, [weights[name] for name in names]


def __getattr__(name: str) -> Any:
    """``<GAME>_REWARDS``: a registered game's rewards as (TRL function, weight)."""
    if name.endswith("_REWARDS"):
        from env_servers.core.registry import game_names, load_spec

        game = name.removesuffix("_REWARDS").lower().replace("_", "-")
        if game in game_names():
            spec = load_spec(game)
            return {
                reward_name: (trl_reward(spec, reward_name, reward.function), reward.weight)
                for reward_name, reward in spec.rewards.items()
            }
    raise AttributeError(f"module 'trainer.rewards' has no attribute {name!r}")
