"""Every check, in the order the report lists them.

A check takes a ``Run`` and returns a line on what it saw, raises ``Failed`` saying what is
wrong and what to do, or ``Skip`` saying what it would need (a declaration, for a server not
registered here). Most read the run's recorded episodes and cost no play of their own.
"""

from __future__ import annotations

from collections.abc import Callable

from env_servers.check.behaviour import (
    bad_actions_rejected,
    episodes_end_within_limit,
    hidden_stays_hidden,
    invalid_moves_cost,
    random_moves_legal,
    rewards_in_range,
    same_seed_same_episode,
    seeds_vary,
    step_count,
)
from env_servers.check.declared import declaration, metadata, replies_match_schema, schema
from env_servers.check.probes import probe_empty_output, probe_invalid_moves, probe_repeat_move
from env_servers.check.run import Run

Check = Callable[[Run], str]

CHECKS: tuple[Check, ...] = (
    declaration,
    metadata,
    schema,
    replies_match_schema,
    bad_actions_rejected,
    same_seed_same_episode,
    seeds_vary,
    random_moves_legal,
    invalid_moves_cost,
    episodes_end_within_limit,
    step_count,
    rewards_in_range,
    hidden_stays_hidden,
    probe_invalid_moves,
    probe_empty_output,
    probe_repeat_move,
)
