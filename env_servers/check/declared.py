"""Checks of what a game and its server declare: the models, ``/metadata``, ``/schema``, and
replies that fit them."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import validators
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator

from env_servers.check.run import Failed, Run, Skip, expect
from env_servers.check.targets import InProcessTarget
from env_servers.core.registry import environment_of

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


def declaration(run: Run) -> str:
    spec = run.declared()
    env_type = environment_of(spec)
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
        f"{counted} observations, states and actions: all round-trip through the declared "
        f"models; {len(seen)} distinct ones (each policy's first episode) fit /schema"
    )
