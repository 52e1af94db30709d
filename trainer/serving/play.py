"""One episode of any game played by the served model, exactly as evaluation plays it.

The episode is started by :func:`trainer.evaluate.start_episode` and played by
:func:`trainer.rollouts.play_tools` / :func:`~trainer.rollouts.play_answers`, one turn at a
time so that each turn can be reported as it happens; every verdict is the game server's.
Events, in order: ``start`` (the first observation and prompt), one ``turn`` per reply (its
messages, moves and the observation after it), and ``result`` (the whole episode).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from clients.agent import GameAgent
from clients.errors import ConnectionLost
from clients.trl import make_env_factory
from env_servers.core.spec import GameSpec, Mode
from trainer.evaluate import DEFAULT_MAX_NEW_TOKENS, start_episode
from trainer.rollouts import ReplyParser, Rollout, play_answers, play_tools
from trainer.serving.engine import Engine

TOP_LEVEL_EXCLUDED = {"prompt", "messages", "done"}
"""Observation fields an answer-mode reply leaves out of its top level (the prompt is in the
transcript, and so are messages)."""


@dataclass(frozen=True, slots=True)
class PlaySettings:
    """How one episode is played; defaults as in evaluation."""

    mode: Mode | None = None
    """The game's first mode when None."""
    max_turns: int = 12
    max_new_tokens: int | None = None
    """Per reply; the mode's evaluation default when None."""
    temperature: float = 0.0


def observation_fields(observation: Any) -> dict[str, Any]:
    """An observation as JSON, its metadata left out (the game's model reads it back)."""
    if observation is None:
        return {}
    fields: dict[str, Any] = observation.model_dump(mode="json", exclude={"metadata"})
    return fields


def moves(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool calls of a transcript with the game's answers: ``{tool, arguments, output}``."""
    found: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "assistant":
            calls = [call["function"] for call in message.get("tool_calls") or []]
        elif message["role"] == "tool":
            call = calls.pop(0) if calls else {"name": message.get("name"), "arguments": {}}
            found.append(
                {
                    "tool": call["name"],
                    "arguments": call["arguments"],
                    "output": message["content"],
                }
            )
    return found


def play_episode(
    engine: Engine,
    spec: GameSpec,
    url: str,
    reset: dict[str, Any],
    settings: PlaySettings,
) -> Iterator[dict[str, Any]]:
    """Play one episode on the game server at ``url`` with the reset fields ``reset``,
    yielding its events. Raises ``ValueError`` for a mode the game lacks and the client's
    errors (``ClientError``) for the server."""
    mode = settings.mode or spec.default_mode
    if mode not in spec.modes:
        raise ValueError(f"{spec.name} is played in {' or '.join(spec.modes)}, not {mode}.")
    max_new_tokens = settings.max_new_tokens or DEFAULT_MAX_NEW_TOKENS[mode]
    agent = make_env_factory(spec, url=url, mode=mode)()
    try:
        text = start_episode(agent, reset, spec.instruction)
        _raise_if_lost(agent)
        rollout = Rollout(agent, seed=int(reset.get("seed") or 0))
        rollout.messages.append({"role": "user", "content": text})
        yield {
            "event": "start",
            "game": spec.name,
            "mode": mode,
            "prompt": text,
            "observation": observation_fields(agent.observation),
        }
        decoding: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "temperature": settings.temperature,
            "generator": engine.generate,
        }
        parser = ReplyParser(engine.tokenizer) if mode == "tools" else None
        for _ in range(settings.max_turns if parser is not None else 1):
            seen = len(rollout.messages)
            if parser is not None:
                play_tools(None, engine.tokenizer, parser, [rollout], max_turns=1, **decoding)
            else:
                play_answers(None, engine.tokenizer, [rollout], **decoding)
            _raise_if_lost(agent)
            new = rollout.messages[seen:]
            yield {
                "event": "turn",
                "turn": rollout.turns,
                "messages": new,
                "moves": moves(new),
                "observation": observation_fields(agent.observation),
            }
            if rollout.stop is not None:
                break
        yield {"event": "result", **result(rollout, mode)}
    finally:
        if agent._client is not None:
            agent._client.close()


def _raise_if_lost(agent: GameAgent) -> None:
    """A served episode is not scored 0 when its server vanishes, as in training: the caller
    is told the server failed."""
    if agent.lost:
        raise ConnectionLost(agent.lost)


def result(rollout: Rollout, mode: Mode) -> dict[str, Any]:
    """The reply of ``/play``: transcript, moves, the server's reward and verdict, and the
    final observation. Answer mode also carries the final observation's fields at the top
    level (for an arithmetic puzzle: ``expression``, ``value``, ``correct``, ``reason``)."""
    agent = rollout.agent
    observation = observation_fields(agent.observation)
    reply: dict[str, Any] = {
        "game": agent._game_spec.name,
        "mode": mode,
        "solved": rollout.solved,
        "ended": rollout.ended,
        "reward": agent.server_reward,
        "turns": rollout.turns,
        "tool_calls": rollout.tool_calls,
        "broken_calls": rollout.broken_calls,
        "transcript": rollout.messages,
        "moves": moves(rollout.messages),
        "observation": observation,
    }
    if mode == "answer":
        reply["answer"] = rollout.completion
        reply |= {
            k: v for k, v in observation.items() if k not in reply and k not in TOP_LEVEL_EXCLUDED
        }
    return reply
