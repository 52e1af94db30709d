"""The checks, in the order the report lists them.

Each takes a ``Run`` and returns a line on what it saw, raises ``Failed`` saying what is wrong
and what to do, or ``Skip`` saying what it would need. They read the run's recorded episodes,
so most cost no play of their own.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable
from statistics import mean
from typing import Any

from jsonschema import validators
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator

from clients.errors import ServerError
from env_servers.check.leaks import contains, hidden_values
from env_servers.check.play import comparable
from env_servers.check.run import NO_SPEC, Failed, Run, Skip, expect, need
from env_servers.check.targets import InProcessTarget
from env_servers.core.protocol import ErrorCode

Check = Callable[[Run], str]
UNKNOWN_FIELD = {"no_such_field": 1}
JUNK_VALUES: tuple[Any, ...] = ("", "x" * 3000, 7, -1, 2.5, True, None, [], {}, "[]", "(((")
"""Values sent in each action field: each must be played as a move or refused cleanly."""
SCHEMA_PARTS = ("action", "observation", "state")


def short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two JSON values first differ, and how."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            if a.get(key) != b.get(key):
                return first_difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path.lstrip('.') or 'the value'}: {short(a, 80)} vs {short(b, 80)}"


def observation_fields(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply's observation with the reward and done that the wire lifts out of it."""
    return {**reply["observation"], "reward": reply.get("reward"), "done": reply["done"]}


def validator(schema: Any) -> Validator:
    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


# -- what the game and the server declare ----------------------------------------------------


def declaration(run: Run) -> str:
    spec = run.declared()
    env_type = spec.load_environment()
    for part in ("reset", "action", "observation", "state"):
        ours, theirs = getattr(spec, f"{part}_type"), getattr(env_type, f"{part}_type")
        expect(
            ours is theirs,
            f"the declaration's {part} model is {ours.__name__}, the environment's "
            f"{theirs.__name__}: clients would read replies with other models than the server's",
        )
    expect(env_type.name == spec.name, f"the environment is named {env_type.name!r}")
    expect(bool(env_type.description), f"{env_type.__name__} has no description")
    secret = spec.hidden_reset_fields - spec.reset_fields
    expect(not secret, f"SECRET_FIELDS names {sorted(secret)}, which are no reset fields")
    fields = set(spec.observation_type.model_fields) | set(spec.state_type.model_fields)
    unknown = spec.hidden_fields - fields
    expect(not unknown, f"hidden_fields names {sorted(unknown)}: no observation or state field")
    if (rules := spec.invalid_moves) is not None:
        try:
            spec.action_type.model_validate(dict(rules.example))
        except ValueError as error:
            raise Failed(
                f"the invalid-move example {short(rules.example)} is no action: {error}"
            ) from None
        expect(
            rules.flag is None or rules.flag in spec.observation_type.model_fields,
            f"invalid_moves.flag {rules.flag!r} is no field of {spec.observation_type.__name__}",
        )
    return f"{env_type.__name__} serves the declared models"


def metadata(run: Run) -> str:
    if isinstance(run.target, InProcessTarget):
        raise Skip("in-process: no server to ask")
    data = run.metadata
    expect(data is not None, "GET /metadata answers 404: serve the game's name and description")
    assert data is not None
    name = data.get("name")
    expect(isinstance(name, str) and bool(name), f"/metadata has no name: {short(data)}")
    if run.spec is not None:
        expect(name == run.spec.name, f"the server plays {name!r}, not {run.spec.name!r}")
    extensions = (data.get("protocol") or {}).get("extensions", [])
    return f"{name!r}; protocol extensions: {', '.join(extensions) or 'none'}"


def schema(run: Run) -> str:
    served = run.schema
    for part in SCHEMA_PARTS:
        expect(part in served, f"/schema has no {part!r} schema (it has {sorted(served)})")
        validator(served[part])
    if run.spec is None:
        return "action, observation and state schemas are valid JSON Schemas"
    models = {
        "action": run.spec.action_type,
        "observation": run.spec.observation_type,
        "state": run.spec.state_type,
        "reset": run.spec.reset_type,
    }
    for part, model in models.items():
        if part in served:
            expect(
                served[part] == model.model_json_schema(),
                f"/schema's {part} schema is not {model.__name__}'s: "
                + first_difference(served[part], model.model_json_schema()),
            )
    return "valid JSON Schemas, the declared models' own"


def replies_match_schema(run: Run) -> str:
    """Every reply and state round-trips through the declared models; those of each policy's
    first episode (all, for a server without a declaration) are validated against /schema
    too (a JSON Schema validator is slow, and the schema check ties the two together)."""
    checkers = {part: validator(run.schema[part]) for part in SCHEMA_PARTS}
    spec = run.spec
    seen: set[tuple[str, str]] = set()
    counted = 0

    def check(part: str, value: Any, where: str, by_schema: bool) -> None:
        nonlocal counted
        counted += 1
        key = (part, json.dumps(value, sort_keys=True, default=str))
        if (by_schema or spec is None) and key not in seen:
            seen.add(key)
            if (error := best_match(checkers[part].iter_errors(value))) is not None:
                at = "/".join(map(str, error.absolute_path)) or part
                raise Failed(f"{where}: {at}: {error.message} (the {part} schema of /schema)")
        if spec is None or part == "action":
            return
        model = spec.observation_type if part == "observation" else spec.state_type
        again = model.model_validate(value).model_dump(mode="json", exclude={"metadata"})
        original = {k: v for k, v in value.items() if k != "metadata"}
        expect(
            again == original,
            f"{where} does not round-trip through {model.__name__}: "
            + first_difference(original, again),
        )

    policies: set[str] = set()
    for episode in run.played():
        at, first = episode.where(), episode.policy not in policies
        policies.add(episode.policy)
        for number, reply in enumerate(episode.replies):
            expect(
                isinstance(reply.get("observation"), dict) and isinstance(reply.get("done"), bool),
                f"{at}: reply {number} is not {{observation, reward, done}}: {short(reply)}",
            )
            check("observation", observation_fields(reply), f"{at}: reply {number}", first)
        check("state", episode.reset_state, f"{at}: state after reset", first)
        for number, turn in enumerate(episode.turns, start=1):
            if turn.reply is not None:
                check("action", turn.action, f"{at}: action {number}", first)
            if turn.state is not None:
                check("state", turn.state, f"{at}: state after step {number}", first)
    if spec is None:
        return f"{counted} observations, states and actions fit /schema"
    return (
        f"{counted} observations and states round-trip through the declared models; "
        f"{len(seen)} distinct ones (each policy's first episode) fit /schema"
    )


# -- behaviour -------------------------------------------------------------------------------


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
                expect(
                    error.code == ErrorCode.VALIDATION_ERROR,
                    f"{label} was answered {error.code}: {error.message}. Refuse a malformed "
                    "action as VALIDATION_ERROR (in the action model), or play it as an "
                    "invalid move",
                )
                after = comparable(session.state())
                expect(after == before, f"{label} was refused but changed the state: "
                       + first_difference(before, after))  # fmt: skip
                refused += 1
                continue
            expect(action is not UNKNOWN_FIELD, f"{label} was played: {short(reply)}")
            played += 1
            if reply["done"]:
                session.reset({"seed": run.seeds[0]})
    return f"{refused} malformed actions refused as VALIDATION_ERROR, state unchanged; " + (
        f"{played} played as moves" if run.spec is not None else "no declaration to fuzz"
    )


def same_seed_same_episode(run: Run) -> str:
    for first, again in zip(run.random_play, run.replay, strict=True):
        a, b = first.trace(), again.trace()
        if a != b:
            index = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
            if index < 2:
                what = ("reset observation", "state after reset")[index]
            else:
                part = ("action", "reply", "state", "error")[(index - 2) % 4]
                what = f"{part} of step {(index - 2) // 4 + 1}"
            shorter = "" if len(a) == len(b) else f" (the plays take {len(a)} and {len(b)} items)"
            raise Failed(
                f"{first.where()}, played twice: the {what} differs: "
                f"{first_difference(a[index], b[index])}{shorter}. Draw everything random from "
                "options.seed, and keep nothing from one episode to the next"
            )
    how = "reset alone" if not run.random_play[0].turns else f"{run.random_play[0].policy} moves"
    return (
        f"{len(run.seeds)} seeds replayed ({how}) in another session, in reverse order: "
        "the same observations, rewards and states"
    )


def seeds_vary(run: Run) -> str:
    spec = run.declared()
    need(spec.seeds_vary, "the game declares that seeds need not vary (seeds_vary=False)")
    keys = {
        json.dumps([ep.reset, hidden_values(spec.hidden, ep.final, ep.final_state)], sort_keys=True)
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
        for plain, mixed in zip(run.random_play, run.interleaved, strict=True):
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
        detail += "; free: slipped between legal moves, they change nothing"
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
        raise Skip(f"no reward_range declared ({spread}, all finite)")
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
    secrets: dict[int, dict[str, Any]] = {}
    for episode in episodes:
        if episode.done:
            revealed = hidden_values(fields, episode.final, episode.final_state)
            secrets.setdefault(episode.seed, {}).update(revealed)
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


def _probe(run: Run, names: list[str], advice: str) -> str:
    baseline = mean(ep.score for ep in run.random_play)
    lines = []
    for name in names:
        episodes = [ep for ep in run.probes[name] if ep.error is None]
        if not episodes:
            lines.append(f"{name}: refused as malformed")
            continue
        score = mean(ep.score for ep in episodes)
        expect(
            score <= baseline + 1e-9,
            f"{name} moves return {score:.3f} on average over {len(episodes)} episodes, random "
            f"legal moves {baseline:.3f}: {advice}",
        )
        lines.append(f"{name} {score:.3f}")
    return f"{'; '.join(lines)} ≤ random legal {baseline:.3f} (mean return)"


def probe_invalid_moves(run: Run) -> str:
    spec = run.can_play()
    need(spec.invalid_moves, "no invalid_moves declared: no invalid move to send")
    return _probe(run, ["invalid"], "an invalid move must earn no more than a legal one")


def probe_empty_output(run: Run) -> str:
    run.can_play()
    names = [name for name in run.probes if name.startswith("empty")]
    need(names or None, "no text field in the action and no answer mode: no empty output")
    return _probe(run, names, "empty output must earn no more than a legal move")


def probe_repeat_move(run: Run) -> str:
    spec = run.can_play()
    need(spec.repeat_probe, "not opted in (repeat_probe=False)")
    return _probe(run, ["repeated"], "repeating one move must not pay")


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
"""Every check, in report order. ``NO_SPEC`` marks those a foreign server cannot take."""

__all__ = ["CHECKS", "NO_SPEC", "Check"]
