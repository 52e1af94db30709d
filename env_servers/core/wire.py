"""JSON encoding of replies, on the hot path of every step.

Replies are assembled as bytes around the observation that pydantic's Rust serializer
writes in one call, so a step costs one serialisation and no intermediate dicts. The shape
is OpenEnv's: ``{"observation": {…}, "reward": …, "done": …}``, the observation without the
``reward``, ``done`` and ``metadata`` fields it carries in Python.
"""

from __future__ import annotations

import functools
import typing
from typing import Any

import orjson
from pydantic import BaseModel

from env_servers.core.environment import Environment
from env_servers.core.errors import EnvServerError, InvalidJSON
from env_servers.core.models import Observation

_LIFTED = frozenset({"reward", "done", "metadata"})
_TRUE, _FALSE = b"true", b"false"


def schemas(env_type: type[Environment[Any, Any, Any, Any]]) -> dict[str, Any]:
    """The JSON schemas a server publishes at ``GET /schema`` (``arenagym check`` computes
    them the same way for a game played in-process)."""
    return {
        "action": env_type.action_type.model_json_schema(),
        "observation": env_type.observation_type.model_json_schema(),
        "reset_observation": env_type.observation_type.model_json_schema(),
        "state": env_type.state_type.model_json_schema(),
        "reset": env_type.reset_type.model_json_schema(),
    }


def loads(raw: str | bytes) -> Any:
    """Parse one frame or body; malformed input is ``INVALID_JSON`` with the parser's reason."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise InvalidJSON(f"Malformed JSON ({error}). Send one JSON object per message.") from None


def observation_json(observation: Observation) -> bytes:
    """The nested ``observation`` object of a reply.

    Observations whose models serialise as their plain fields (no custom serializers,
    aliases, computed or excluded fields, here or in nested models) are written by orjson
    straight from their fields, about twice as fast as pydantic's serializer."""
    if _plain(type(observation)):
        fields = observation.__dict__.copy()
        for lifted in _LIFTED:
            fields.pop(lifted, None)
        return orjson.dumps(fields, default=_fields)
    return observation.__pydantic_serializer__.to_json(observation, exclude=set(_LIFTED))


def _fields(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.__dict__
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


@functools.cache
def _plain(model: type[BaseModel]) -> bool:
    """Whether ``model`` serialises exactly as its ``__dict__`` (checked once per class)."""
    decorators = model.__pydantic_decorators__
    if decorators.field_serializers or decorators.model_serializers or decorators.computed_fields:
        return False
    for field in model.model_fields.values():
        if field.alias or field.serialization_alias or field.exclude:
            return False
        if not all(_plain(nested) for nested in _models_in(field.annotation)):
            return False
    return True


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation mentions (``list[Guess]``, ``Signals | None``…)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def model_json(model: BaseModel) -> bytes:
    return model.__pydantic_serializer__.to_json(model)


def result_body(observation: Observation, session_id: str | None) -> bytes:
    """``{"observation", "reward", "done"[, "session_id"]}``: an HTTP body or a frame's data."""
    parts = [
        b'{"observation":',
        observation_json(observation),
        b',"reward":',
        orjson.dumps(observation.reward),
        b',"done":',
        _TRUE if observation.done else _FALSE,
    ]
    if session_id is not None:
        parts += [b',"session_id":"', session_id.encode(), b'"']
    parts.append(b"}")
    return b"".join(parts)


def frame(kind: str, data: bytes, request_id: Any = None) -> bytes:
    """A server frame ``{"type": kind, "data": …[, "id": …]}`` around already-encoded data."""
    head = b'{"type":"' + kind.encode() + b'","data":'
    if request_id is None:
        return head + data + b"}"
    return head + data + b',"id":' + orjson.dumps(request_id) + b"}"


def error_data(error: EnvServerError) -> dict[str, str]:
    return {"message": error.message, "code": error.code.value}


def error_frame(error: EnvServerError, request_id: Any = None) -> bytes:
    return frame("error", orjson.dumps(error_data(error)), request_id)


def error_body(error: EnvServerError) -> bytes:
    return orjson.dumps({"error": error_data(error)})
