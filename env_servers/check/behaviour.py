"""Checks of how a game plays: bad actions, seeds, invalid moves, step limit, step count,
rewards and hidden information."""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any

from clients.errors import ServerError
from env_servers.check.declared import first_difference, short
from env_servers.check.leaks import contains, hidden_values
from env_servers.check.play import comparable
from env_servers.check.run import Failed, Run, Skip, expect, need
from env_servers.core.protocol import ErrorCode

UNKNOWN_FIELD = {"no_such_field": 1}
JUNK_VALUES: tuple[Any, ...] = ("", "x" * 3000, 7, -1, 2.5, True, None, [], {}, "[]", "(((")
"""Values sent in each action field: each must be played as a move or refused cleanly."""
CRASHES = (ErrorCode.EXECUTION_ERROR, ErrorCode.FACTORY_ERROR)
"""Codes of a game that failed, rather than refused a request."""


def bad_actions_rejected(run: Run) -> str:
    cases: list[tuple[str, Any]] = [("an unknown field", UNKNOWN_FIELD)]
    if run.spec is not None:
        properties = run.schema["action"].get("properties", {})
        fields = [name for name in properties if name != "metadata"]
        cases += [(short({}), {})]
        cases += [(short({f: v}, 40), {f: v}) for f in fields for v in JUNK_VALUES]
    refused = played = 0
    with contextlib.closing(run.target.session()) as session:
        session.reset({"seed": run.seeds[0]})
        for label, action in cases:
            before = comparable(session.state())
            try:
                reply = session.step(action)
            except ServerError as error:
                clean = error.code == ErrorCode.VALIDATION_ERROR or (
                    run.spec is None and error.code not in CRASHES  # e.g. FastAPI's bare 422
                )
                expect(
                    clean,
                    f"{label} was answered {error.code}: {error.message}. Refuse a malformed "
                    "action as VALIDATION_ERROR (in the action model), or play it as an "
                    "invalid move",
                )
                after = comparable(session.state())
                change = "" if after == before else first_difference(before, after)
                expect(not change, f"{label} was refused but changed the state: {change}")
                refused += 1
                continue
            expect(action is not UNKNOWN_FIELD, f"{label} was played: {short(reply)}")
            played += 1
            if reply["done"]:
                session.reset({"seed": run.seeds[0]})
    return f"{refused} malformed actions refused cleanly, state unchanged; " + (
        f"{played} played as moves" if run.spec is not None else "no declaration to fuzz"
    )


def trace_difference(a: list[Any], b: list[Any]) -> str:
    """Where two ``Episode.trace()`` lists first differ."""
    index = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    if index is None:
        return f"one play took {(len(a) - 2) // 4} steps, the other {(len(b) - 2) // 4}"
    if index < 2:
        what = ("reset observation", "state after reset")[index]
    else:
        part = ("action", "reply", "state", "error")[(index - 2) % 4]
        what = f"{part} of step {(index - 2) // 4 + 1}"
    return f"the {what} differs: {first_difference(a[index], b[index])}"


def same_seed_same_episode(run: Run) -> str:
    for first, again in zip(run.random_play, run.replay, strict=True):
        a, b = first.trace(), again.trace()
        if a != b:
            raise Failed(
                f"{first.where()}, played twice: {trace_difference(a, b)}. Draw everything "
                "random from options.seed, and keep nothing from one episode to the next"
            )
    how = "reset alone" if not run.random_play[0].turns else f"{run.random_play[0].policy} moves"
    return (
        f"{len(run.seeds)} seeds replayed ({how}) in another session, in reverse order: "
        "the same observations, rewards and states"
    )


def revealed_secrets(run: Run, fields: frozenset[str]) -> dict[int, dict[str, Any]]:
    """Seed → the hidden values that its finished episodes revealed (by any policy)."""
    secrets: dict[int, dict[str, Any]] = {}
    for episode in run.played():
        if episode.done:
            revealed = hidden_values(fields, episode.final, episode.final_state)
            secrets.setdefault(episode.seed, {}).update(revealed)
    return secrets


def seeds_vary(run: Run) -> str:
    spec = run.declared()
    need(spec.seeds_vary, "the game declares that seeds need not vary (seeds_vary=False)")
    revealed = revealed_secrets(run, spec.hidden)
    keys = {
        json.dumps([ep.reset, revealed.get(ep.seed, {})], sort_keys=True, default=str)
        for ep in run.random_play
    }
    wanted = max(2, math.ceil(len(run.seeds) / 2))
    expect(
        len(keys) >= wanted,
        f"{len(run.seeds)} seeds gave {len(keys)} different episodes (first observation and "
        "hidden values compared). Draw the episode from options.seed; if episodes differ only "
        "in hidden information, name its fields in hidden_fields",
    )
    return f"{len(run.seeds)} seeds gave {len(keys)} different episodes"


def random_moves_legal(run: Run) -> str:
    spec = run.can_play()
    flag = spec.invalid_moves.flag if spec.invalid_moves is not None else "invalid_move"
    moves = 0
    for episode in run.random_play:
        for number, turn in enumerate(episode.turns, start=1):
            where = f"{episode.where()}, step {number}: random_move made {short(turn.action)}"
            expect(turn.error is None, f"{where}, which the server refused: {turn.error}")
            observation = (turn.reply or {}).get("observation", {})
            expect(
                not (flag and observation.get(flag)),
                f"{where}, an invalid move: {observation.get('reason')}. random_move must make "
                "legal moves only",
            )
            moves += 1
    return f"{moves} random moves in {len(run.seeds)} episodes, all legal"


def invalid_moves_cost(run: Run) -> str:
    spec = run.declared()
    rules = need(spec.invalid_moves, "no invalid_moves declared")
    example = short(rules.example)
    for episode in run.probes["invalid"]:
        expect(
            episode.error is None,
            f"{episode.where()}: {example} was refused ({episode.error}): an illegal move is an "
            "observation with its flag set, not an error",
        )
        for number, turn in enumerate(episode.turns, start=1):
            assert turn.reply is not None
            where = f"{episode.where()}, invalid move {number}"
            seen = turn.reply["observation"].get(rules.flag) if rules.flag else True
            expect(seen is True, f"{where}: {rules.flag} is {seen!r}, not true")
            reward = turn.reply.get("reward")
            expect(
                rules.reward is None or reward == rules.reward,
                f"{where}: reward {reward}, not the declared {rules.reward}",
            )
            ends = rules.ends_after is not None and number == rules.ends_after
            expect(
                turn.reply["done"] == ends,
                f"{where}: done is {turn.reply['done']}, but the declaration says the "
                + (
                    f"invalid move {rules.ends_after} ends it"
                    if rules.ends_after
                    else "none ends it"
                ),
            )
    ending = (
        f"invalid move {rules.ends_after} ends the episode" if rules.ends_after else "none ends it"
    )
    detail = f"each flagged, rewarded {rules.reward}; {ending}"
    if rules.free and run.interleaved:
        # an episode the step cap cut off has no outcome to compare (a game with no step limit)
        pairs = [
            (plain, mixed)
            for plain, mixed in zip(run.random_play, run.interleaved, strict=True)
            if plain.done and mixed.done
        ]
        for plain, mixed in pairs:
            same = (plain.score, plain.done, hidden_values(spec.hidden, plain.final)) == (
                mixed.score,
                mixed.done,
                hidden_values(spec.hidden, mixed.final),
            )
            expect(
                same
                and mixed.steps - plain.steps
                == sum(t.action == rules.example for t in mixed.turns),
                f"{mixed.where()}: invalid moves between the legal ones changed the episode "
                f"(return {plain.score} → {mixed.score}, {plain.steps} → {mixed.steps} steps), "
                "but the declaration says they are free",
            )
        detail += (
            f"; free: slipped between legal moves, they change nothing ({len(pairs)} of "
            f"{len(run.interleaved)} episodes ended within {run.cap} steps, and compared)"
        )
    return detail


def episodes_end_within_limit(run: Run) -> str:
    spec = run.declared()
    played = [ep for ep in run.played() if ep.turns and ep.error is None]
    limit = spec.max_steps
    if limit is None:
        endless = [ep.where() for ep in played if not ep.done]
        raise Skip(
            "no max_steps declared"
            + (f"; not over after {run.cap} steps: {', '.join(endless[:3])}" if endless else "")
        )
    for episode in played:
        expect(
            episode.done and episode.steps <= limit,
            f"{episode.where()}: not over after {episode.steps} steps, the declared limit being "
            f"{limit}",
        )
    longest = max((ep.steps for ep in played), default=0)
    policies = len({ep.policy for ep in played})
    return f"{len(played)} episodes of {policies} policies ended within {limit} steps (longest {longest})"


def step_count(run: Run) -> str:
    episodes = run.played()
    if not all("step_count" in ep.reset_state for ep in episodes):
        raise Skip("the state has no step_count")
    for episode in episodes:
        taken = 0
        counts = [(0, episode.reset_state)]
        for turn in episode.turns:
            taken += turn.reply is not None
            if turn.state is not None:
                counts.append((taken, turn.state))
        for wanted, state in counts:
            expect(
                state["step_count"] == wanted,
                f"{episode.where()}: state.step_count is {state['step_count']} after {wanted} steps",
            )
    return "state.step_count counts the steps of each episode from 0"


def rewards_in_range(run: Run) -> str:
    seen: list[float] = []
    for episode in run.played():
        for number, reward in enumerate(episode.rewards):
            ok = reward is None or (
                isinstance(reward, int | float)
                and not isinstance(reward, bool)
                and math.isfinite(reward)
            )
            expect(
                ok, f"{episode.where()}, reply {number}: reward {reward!r} is not a finite number"
            )
            if reward is not None:
                seen.append(float(reward))
    spread = f"{len(seen)} rewards from {min(seen):g} to {max(seen):g}" if seen else "no rewards"
    bounds = run.spec.reward_range if run.spec is not None else None
    if bounds is None:
        raise Skip(f"no reward_range declared ({spread}{', all finite' if seen else ''})")
    low, high = bounds
    for episode in run.played():
        for number, reward in enumerate(episode.rewards):
            expect(
                reward is None or low <= reward <= high,
                f"{episode.where()}, reply {number}: reward {reward} outside the declared "
                f"[{low:g}, {high:g}]",
            )
    return f"{spread}, within [{low:g}, {high:g}]"


def hidden_stays_hidden(run: Run) -> str:
    spec = run.declared()
    fields = need(spec.hidden or None, "no hidden_fields declared")
    episodes = run.played()
    secrets = revealed_secrets(run, fields)
    sought: dict[int, dict[str, Any]] = {}
    for seed, own in secrets.items():
        # text every episode sends (rules) may hold some episode's secret by chance
        common = [
            tree
            for other in run.random_play
            if secrets.get(other.seed) != own
            for tree in (other.reset, other.reset_state)
        ]
        sought[seed] = {name: v for name, v in own.items() if not contains(common, v)}
    searched = 0
    for episode in episodes:
        for where, tree in episode.running():
            searched += 1
            for name, value in hidden_values(fields, tree).items():
                raise Failed(
                    f"{episode.where()}: the {where} shows hidden field {name!r} = "
                    f"{short(value, 60)} before the episode is over"
                )
            for name, value in sought.get(episode.seed, {}).items():
                expect(
                    not contains(tree, value),
                    f"{episode.where()}: the {where} holds the hidden {name} "
                    f"{short(value, 60)} before the episode is over",
                )
    found = sum(len(values) for values in sought.values())
    return (
        f"{', '.join(sorted(fields))}: empty in {searched} observations and states before the "
        f"end, and none of the {found} values revealed at the end appears in them"
    )
