"""Reward functions for GRPO, computed from what the game servers reported.

A game declares its rewards as functions of a finished episode's agent (its declaration's
``rewards``); here they become TRL reward functions, named ``<game>_<reward>`` (TRL logs
``rewards/<game>_<reward>/mean``). TRL calls each with the batch's completions and
``environments=`` (the agents, aligned with the completions); in a mixed run a game's reward is
``None`` for another game's rollouts, which TRL leaves out of its means.

In answer mode the completion itself is the answer: before any reward is read, each reply is
sent once to the game server as the game's answer action, so the extraction and the verifier
live in the game, not here. A single-game answer run has no environments: its rows' episodes
are then played here, over one or several sessions (``verify_connections``).

An episode lost with its server (``GameAgent.lost``) scores 0 on every reward; the reward
``lost`` (1.0 for such an episode, given weight 0 by the trainer) makes TRL log their share
as ``rewards/<game>_lost/mean``.

``<GAME>_REWARDS`` tables (name → (TRL function, weight)) remain
importable from this module for any registered game.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
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

    ``agents``: for a single-game answer run (no environments), the agents whose sessions play
    the rows' episodes; with several, the batch is split among them and judged on a thread
    pool (the round trips overlap), the verdicts in the batch's order. Each episode's agent is
    copied per completion. With environments, the agents are TRL's, one per rollout.

    ``start`` begins judging a batch in the background as soon as its replies exist, so the
    round trips overlap the trainer's own work before it asks for the rewards; the reward
    functions then collect those verdicts instead of judging again."""

    def __init__(self, agents: GameAgent | Sequence[GameAgent] | None = None) -> None:
        if agents is None:
            agents = []
        self.agents: list[GameAgent] = [agents] if isinstance(agents, GameAgent) else list(agents)
        self._pool = (
            ThreadPoolExecutor(len(self.agents), thread_name_prefix="judge")
            if self.agents
            else None
        )
        self._completions: Sequence[Any] | None = None
        self._agents: list[GameAgent] = []
        self._started: tuple[Sequence[Any], list[tuple[range, Future[list[GameAgent]]]]] | None
        self._started = None

    @property
    def agent(self) -> GameAgent | None:
        """The first judging agent, if any."""
        return self.agents[0] if self.agents else None

    def __call__(
        self,
        completions: Sequence[Any],
        environments: Sequence[Any] | None,
        columns: dict[str, Any],
    ) -> list[GameAgent]:
        if completions is self._completions:
            return self._agents
        if environments is None:
            agents = self._collect(completions) or self._play_rows(completions, columns)
        else:
            agents = list(environments)
            for agent, completion in zip(agents, completions, strict=True):
                if agent._mode == "answer" and not agent.answered:
                    agent._answer(completion_text(completion))
        self._completions, self._agents = completions, agents
        return agents

    def close(self) -> None:
        """Stop the judging threads (the agents close their own sessions)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)

    def start(self, completions: Sequence[Any], columns: dict[str, Any]) -> None:
        """Begin judging ``completions`` (rows ``columns``) on the judging threads; the reward
        call for the same completions collects the verdicts. No-op without judging agents."""
        if self._pool is None:
            return
        self._settle()
        self._started = (completions, self._submit(completions, columns))

    def _settle(self) -> None:
        """Wait for judging begun and never collected: its sessions must be free again."""
        started, self._started = self._started, None
        for _, job in started[1] if started else []:
            job.result()

    def _collect(self, completions: Sequence[Any]) -> list[GameAgent] | None:
        """The verdicts ``start`` began for these completions, or None if it began none."""
        if self._started is None:
            return None
        begun, jobs = self._started
        if begun is not completions and [completion_text(c) for c in begun] != [
            completion_text(c) for c in completions
        ]:
            self._settle()
            return None
        self._started = None
        return self._gather(len(completions), jobs)

    def _submit(
        self, completions: Sequence[Any], columns: dict[str, Any]
    ) -> list[tuple[range, Future[list[GameAgent]]]]:
        assert self._pool is not None
        n = len(self.agents)
        parts = [range(i, len(completions), n) for i in range(n)]
        return [
            (part, self._pool.submit(self._play, agent, part, completions, columns))
            for agent, part in zip(self.agents, parts, strict=True)
        ]

    def _play_rows(self, completions: Sequence[Any], columns: dict[str, Any]) -> list[GameAgent]:
        if not self.agents:
            raise ValueError("An answer-mode reward needs environments or a judging agent.")
        if len(self.agents) == 1:
            return self._play(self.agents[0], range(len(completions)), completions, columns)
        return self._gather(len(completions), self._submit(completions, columns))

    @staticmethod
    def _gather(size: int, jobs: list[tuple[range, Future[list[GameAgent]]]]) -> list[GameAgent]:
        """The verdicts of the parts, in the batch's order."""
        judged: list[GameAgent | None] = [None] * size
        for part, job in jobs:
            for index, agent in zip(part, job.result(), strict=True):
                judged[index] = agent
        return [agent for agent in judged if agent is not None]

    @staticmethod
    def _play(
        agent: GameAgent, indices: range, completions: Sequence[Any], columns: dict[str, Any]
    ) -> list[GameAgent]:
        """Play the episodes of rows ``indices`` on ``agent``'s session, in batches."""
        fields = agent._game_spec.reset_fields
        rows = [
            {
                name: values[index]
                for name, values in columns.items()
                if name in fields and isinstance(values, Sequence)
            }
            for index in indices
        ]
        return agent._answer_all(rows, [completion_text(completions[i]) for i in indices])


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
            (0.0 if agent.lost and function is not episode_lost else float(function(agent)))
            if agent._game_spec.name == spec.name
            else None
            for agent in agents
        ]

    reward.__name__ = reward.__qualname__ = f"{spec.name}_{name}"
    reward.__doc__ = function.__doc__
    return reward


def server_reward(agent: GameAgent) -> float:
    """The sum of the rewards the game server gave in the episode."""
    return agent.server_reward


def episode_lost(agent: GameAgent) -> float:
    """1.0 when the game server vanished during the episode (which then scores 0)."""
    return 1.0 if agent.lost else 0.0


def reward_functions(
    spec: GameSpec, weights: dict[str, float], judge: AnswerJudge | None = None
) -> tuple[list[TRLReward], list[float]]:
    """The configured rewards of one game as TRL functions and their weights, in the game's
    order; ``server`` is the server's own reward, ``lost`` marks episodes lost with their
    server."""
    available: dict[str, RewardFunction] = {n: r.function for n, r in spec.rewards.items()}
    available["server"] = server_reward
    available["lost"] = episode_lost
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
