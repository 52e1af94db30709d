"""Adapters for TRL's ``GRPOTrainer(environment_factory=…)``, for any registered game.

``make_env_factory(game)`` returns the game's agent class (``clients.agent.GameAgent``,
declared in the game's folder) configured with a server, a transport and reset defaults: TRL
calls it with no arguments for each environment it needs, shows its public methods as tools,
and passes each dataset row to ``reset``. A row carries a ``seed``, and TRL gives every rollout
of a prompt the same row, so a GRPO group plays one word or puzzle.

In ``answer`` mode the class has no tools: its ``reset`` starts the row's episode and returns
nothing (the row's prompt is the whole question), and the reply is sent to the server as the
game's answer when rewards are computed. With ``server_reward=True`` the class has TRL's
``get_reward``: the environment owns the reward, the sum of what the server gave.
"""

from __future__ import annotations

from typing import Any

from clients.agent import TRANSPORTS, GameAgent
from env_servers.core.registry import load_spec
from env_servers.core.spec import GameSpec, Mode


def _server_reward(self: GameAgent) -> float:
    """The reward the game server gave this episode (0 for an episode lost with its server)."""
    return 0.0 if self.lost else self.server_reward


def make_env_factory(
    game: str | GameSpec,
    *,
    url: str | None = None,
    auth_token: str | None = None,
    transport: str = "websocket",
    mode: Mode | None = None,
    server_reward: bool = False,
    **reset_defaults: Any,
) -> type[GameAgent]:
    """A configured agent class to pass as ``environment_factory`` (or, one per game, as a
    ``dict`` of them).

    ``url`` defaults to ``ARENAGYM_<GAME>_URL`` and ``auth_token`` (the server's
    ``--auth-token``) to ``ARENAGYM_AUTH_TOKEN``; ``transport`` is ``websocket`` (default),
    ``http`` or ``inprocess`` (the game in this process, no server); ``mode`` is ``tools``
    (the default, where the game has tools) or ``answer``; ``reset_defaults`` apply to every episode unless
    the dataset row sets them (e.g. ``split="eval"``, ``hard_mode=True``).
    """
    spec = load_spec(game) if isinstance(game, str) else game
    mode = mode or ("tools" if "tools" in spec.modes else "answer")
    if mode not in spec.modes:
        raise ValueError(f"{spec.name} is played in mode {' or '.join(spec.modes)}, not {mode!r}.")
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    unknown = set(reset_defaults) - spec.reset_fields
    if unknown:
        raise ValueError(
            f"Unknown reset field(s) for {spec.name}: {', '.join(sorted(unknown))}. "
            f"Known: {', '.join(sorted(spec.reset_fields))}."
        )
    attributes: dict[str, Any] = {
        "_spec": spec,
        "_url": url,
        "_auth_token": auth_token,
        "_transport": transport,
        "_reset_defaults": dict(reset_defaults),
        "_mode": mode,
        "__module__": spec.agent.__module__,
        "__doc__": spec.agent.__doc__,
    }
    if mode == "answer":  # the reply is the answer: withhold the tools, add nothing to the prompt
        attributes |= {name: None for name in spec.tool_names()}
        attributes["_opening"] = lambda self, observation: None
    if server_reward:
        attributes["get_reward"] = _server_reward
    return type(spec.agent.__name__, (spec.agent,), attributes)
