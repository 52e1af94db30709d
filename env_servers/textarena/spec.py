"""The TextArena family: ``textarena:<ENV_ID>`` is TextArena's ``ENV_ID`` for one player.

Making a spec never imports TextArena for the games of :data:`games.OFFLINE` (clients and
trainers read it without the extra); another id is checked against TextArena's registry
when TextArena is installed.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache

from env_servers.core.family import GameFamily
from env_servers.core.spec import GameSpec, InvalidMoves, Reward
from env_servers.textarena.agent import TextArenaAgent, agent_type
from env_servers.textarena.client import client_type
from env_servers.textarena.games import CHECK_FAILURES, NEEDS_DOWNLOAD, OFFLINE, KnownGame
from env_servers.textarena.models import (
    TextArenaAction,
    TextArenaObservation,
    TextArenaResetOptions,
    TextArenaState,
)
from env_servers.textarena.moves import MOVES

FAMILY_NAME = "textarena"
UNKNOWN_MOVES = "in the game's format, in square brackets (the rules say which)"
INVALID_MOVES = InvalidMoves({"move": "[xyzzy]"}, ends_after=2, reward=None)
"""A move no TextArena game reads as one. TextArena forgives one invalid move in a row, without
using a turn; the second ends the episode, rewarded TextArena's measure of progress (which
varies: a reward of 0 at the first, the progress at the second)."""
HIDDEN_FIELDS = frozenset({"secret"})


def solved(agent: TextArenaAgent) -> float:
    """1.0 when the game was won (TextArena's reward 1.0)."""
    return 1.0 if agent.solved else 0.0


def progress(agent: TextArenaAgent) -> float:
    """TextArena's own reward at the end, as 0..1: its measure of progress (a loss by
    invalid moves, -1.0 in TextArena, counts 0)."""
    return max(0.0, agent.score or 0.0)


REWARDS = {
    "solved": Reward(solved, 1.0, "1.0 when the game was won"),
    "progress": Reward(progress, 0.5, "TextArena's reward at the end, 0..1 (1.0 for a win)"),
}


def _known(env_id: str) -> KnownGame:
    known = OFFLINE.get(env_id)
    if known is not None:
        return known
    if importlib.util.find_spec("textarena") is None:
        if env_id in NEEDS_DOWNLOAD:
            return KnownGame(env_id, UNKNOWN_MOVES)
        raise LookupError(
            f"'{env_id}' is not one of the offline TextArena games; to try another of "
            "TextArena's ids, install TextArena: pip install 'arenagym[textarena]'"
        )
    from textarena.envs.registration import ENV_REGISTRY

    if env_id not in ENV_REGISTRY:
        raise LookupError(f"TextArena has no environment '{env_id}'")
    return KnownGame(env_id, UNKNOWN_MOVES)


@cache
def textarena_spec(env_id: str) -> GameSpec:
    """The declaration of ``textarena:<env_id>``."""
    known = _known(env_id)
    name = f"{FAMILY_NAME}:{env_id}"
    class_name = "TextArena" + "".join(part.capitalize() for part in re.split(r"\W+", env_id))
    return GameSpec(
        name=name,
        description=f"{known.title}: TextArena's {env_id}, for one player.",
        environment=f"env_servers.textarena.environment:{env_id}",
        reset_type=TextArenaResetOptions,
        action_type=TextArenaAction,
        observation_type=TextArenaObservation,
        state_type=TextArenaState,
        client=client_type(name, f"{class_name}Client"),
        agent=agent_type(name, known.title, known.moves),
        instruction=f"Play {known.title}: call the `move` tool with one move at a time.",
        rewards=REWARDS,
        solved="solved",
        seeds_vary=known.seeds_vary,
        max_steps=known.max_steps,
        reward_range=(0.0, 1.0),
        random_move=MOVES.get(env_id),
        invalid_moves=INVALID_MOVES,
        hidden_fields=HIDDEN_FIELDS,
        repeat_probe=known.repeat_probe and env_id in MOVES,
        unit="games",
        extras={
            "textarena_id": env_id,
            "offline": env_id in OFFLINE,
            "check_failures": CHECK_FAILURES.get(env_id, {}),
        },
    )


FAMILY = GameFamily(
    name=FAMILY_NAME,
    description="TextArena's single-player games (pip install 'arenagym[textarena]' to serve).",
    listed=lambda: list(OFFLINE),
    spec=textarena_spec,
)
