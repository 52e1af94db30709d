"""JSON encoding of replies, on the hot path of every step.

Replies are assembled as bytes around the observation that pydantic's Rust serializer
writes in one call, so a step costs one serialisation and no intermediate dicts. The shape
is OpenEnv's: ``{"observation": {…}, "reward": …, "done": …}``, the observation without the
``reward``, ``done`` and ``metadata`` fields it carries in Python.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

from env_servers.core.errors import EnvServerError, InvalidJSON
from env_servers.core.models import Observation

_LIFTED = frozenset({"reward", "done", "metadata"})
_TRUE, _FALSE = b"true", b"false"


def loads(raw: str | bytes) -> Any:
    """Parse one frame or body; malformed input is ``INVALID_JSON`` with the parser's reason."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise InvalidJSON(f"Malformed JSON ({error}). Send one JSON object per message.") from None


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def observation_json(observation: Observation) -> bytes:
    """The nested ``observation`` object of a reply."""
    return observation.__pydantic_serializer__.to_json(observation, exclude=_LIFTED)


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
