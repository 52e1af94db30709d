"""``create_app()``: the HTTP and WebSocket routes, thin shells over ``sessions.py``.

WebSocket ``/ws`` speaks OpenEnv's frames (one connection, one session) plus the extensions
in ``protocol.EXTENSIONS``. HTTP is stateful: ``POST /reset`` opens a session whose id the
other routes take, so a person can play with curl.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import Response
from starlette.websockets import WebSocketState

from env_servers.core import wire
from env_servers.core.config import ServerSettings
from env_servers.core.environment import Environment
from env_servers.core.errors import EnvServerError, InvalidRequest, UnknownMessageType
from env_servers.core.protocol import (
    EXTENSIONS,
    PROTOCOL_NAME,
    PROTOCOL_VERSION,
    SESSION_HEADER,
    WS_CLOSE_GOING_AWAY,
    WS_CLOSE_REPLACED,
    WS_CLOSE_SESSION_GONE,
    WS_CLOSE_TRY_LATER,
)
from env_servers.core.sessions import Session, SessionManager

logger = logging.getLogger("arenagym.server")

JSON = "application/json"


def _json(body: bytes, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type=JSON)


def _error_response(error: EnvServerError) -> Response:
    return _json(wire.error_body(error), error.status)


async def _read_json(request: Request, limit: int) -> Any:
    """The request's JSON body (``{}`` when empty), refusing more than ``limit`` bytes."""
    too_large = InvalidRequest(
        f"Request body larger than {limit} bytes. Send only the action or reset fields.", status=413
    )
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    body = b"".join(chunks)
    return wire.loads(body) if body.strip() else {}


def _session_id(request: Request, body: Any) -> str | None:
    if isinstance(body, dict) and isinstance(body.get("session_id"), str):
        return body["session_id"]
    return request.headers.get(SESSION_HEADER) or request.query_params.get("session_id")


def _schemas(env_type: type[Environment[Any, Any, Any, Any]]) -> dict[str, Any]:
    return {
        "action": env_type.action_type.model_json_schema(),
        "observation": env_type.observation_type.model_json_schema(),
        "state": env_type.state_type.model_json_schema(),
        "reset": env_type.reset_type.model_json_schema(),
    }


def _body_doc(schema: dict[str, Any], example: dict[str, Any]) -> dict[str, Any]:
    content = {JSON: {"schema": schema, "example": example}}
    return {"requestBody": {"required": False, "content": content}}


def create_app(
    env_type: type[Environment[Any, Any, Any, Any]], settings: ServerSettings | None = None
) -> FastAPI:
    """The ASGI app serving ``env_type``. ``app.state.sessions`` is its ``SessionManager``."""
    settings = settings or ServerSettings()
    manager = SessionManager(env_type, settings)
    schemas = _schemas(env_type)
    metadata = {
        "name": env_type.name,
        "description": env_type.description,
        "version": env_type.version,
        "protocol": {
            "name": PROTOCOL_NAME,
            "version": PROTOCOL_VERSION,
            "extensions": list(EXTENSIONS),
        },
        "max_sessions": settings.max_sessions,
        "session_ttl": settings.session_ttl,
        "max_message_bytes": settings.max_message_bytes,
    }

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        reaper = asyncio.create_task(manager.reap_forever(), name="session-reaper")
        try:
            yield
        finally:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper

    app = FastAPI(
        title=f"arenagym · {env_type.name}",
        description=env_type.description,
        version=env_type.version,
        lifespan=lifespan,
    )
    app.state.sessions = manager
    app.state.settings = settings

    @app.exception_handler(EnvServerError)
    async def _on_error(request: Request, error: EnvServerError) -> Response:
        manager.counters.errors += 1
        return _error_response(error)

    reset_example = {"seed": 7}
    step_example = {"session_id": "…", "action": {}}

    @app.post("/reset", openapi_extra=_body_doc(schemas["reset"], reset_example))
    async def reset(request: Request) -> Response:
        """Start an episode. Without a session id this opens a new session; its id comes back
        as ``session_id``. With one, it starts a new episode in that session."""
        body = await _read_json(request, settings.max_message_bytes)
        session_id = _session_id(request, body)
        if isinstance(body, dict):
            body = {k: v for k, v in body.items() if k != "session_id"}
        session = manager.get(session_id) if session_id else manager.open()
        try:
            observation = manager.reset(session, body)
        except EnvServerError:
            if session_id is None:
                manager.close(session)  # don't leave a session nobody knows the id of
            raise
        return _json(wire.result_body(observation, session.id))

    @app.post("/step", openapi_extra=_body_doc({"type": "object"}, step_example))
    async def step(request: Request) -> Response:
        """Apply ``action`` (the game's action fields) in the session ``session_id``."""
        body = await _read_json(request, settings.max_message_bytes)
        session = manager.get(_session_id(request, body))
        if not isinstance(body, dict) or "action" not in body:
            raise InvalidRequest('The body must be {"session_id": …, "action": {…}}.')
        observation = manager.step(session, body["action"])
        return _json(wire.result_body(observation, session.id))

    @app.get("/state")
    async def state(request: Request, session_id: str | None = None) -> Response:
        """Bookkeeping of the session's episode; hidden information stays hidden."""
        session = manager.get(session_id or request.headers.get(SESSION_HEADER))
        return _json(wire.model_json(manager.state(session)))

    @app.delete("/sessions/{session_id}")
    async def delete_session(session_id: str) -> Response:
        """Close a session and free its slot."""
        manager.close(manager.get(session_id))
        return _json(b'{"closed":true}')

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Liveness, the number of open sessions and request counters."""
        counters = manager.counters
        return {
            "status": "draining" if manager.draining else "healthy",
            "game": env_type.name,
            "active_sessions": manager.active,
            "max_sessions": settings.max_sessions,
            "resets": counters.resets,
            "steps": counters.steps,
            "errors": counters.errors,
            "sessions_opened": counters.sessions_opened,
            "sessions_expired": counters.sessions_expired,
        }

    @app.get("/metadata")
    async def get_metadata() -> dict[str, Any]:
        """The game, the protocol and the extensions this server offers."""
        return metadata

    @app.get("/schema")
    async def get_schema() -> dict[str, Any]:
        """JSON schemas of the action, observation, state and reset parameters."""
        return schemas

    @app.websocket("/ws")
    async def websocket(socket: WebSocket) -> None:
        await socket.accept()
        resume = socket.query_params.get("session_id")
        try:
            if resume:
                session, previous = manager.attach(resume, socket)
                if previous is not None:
                    await _close_quietly(previous, WS_CLOSE_REPLACED, "re-attached elsewhere")
            else:
                session = manager.open()
                session.socket = socket
        except EnvServerError as error:
            manager.counters.errors += 1
            await socket.send_text(wire.error_frame(error).decode())
            code = WS_CLOSE_SESSION_GONE if resume else WS_CLOSE_TRY_LATER
            await _close_quietly(socket, code, error.code.value)
            return
        try:
            await _serve_socket(manager, session, socket, settings.max_message_bytes)
        finally:
            manager.detach(session, socket)

    return app


async def _serve_socket(
    manager: SessionManager, session: Session, socket: WebSocket, limit: int
) -> None:
    """Answer frames until the client closes or disconnects. A bad frame gets an error frame
    and the socket stays open."""
    receive, send = socket.receive, socket.send
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        raw = message.get("text")
        if raw is None:
            raw = message.get("bytes") or b""
        reply, close = _answer(manager, session, raw, limit)
        if close:
            manager.close(session)
            await _close_quietly(socket, 1000, "closed")
            return
        try:
            await send({"type": "websocket.send", "text": reply.decode()})
        except Exception:  # the peer vanished between receive and send
            return


def _answer(
    manager: SessionManager, session: Session, raw: str | bytes, limit: int
) -> tuple[bytes, bool]:
    """One frame in, one frame out (and whether the client asked to close)."""
    request_id = None
    try:
        if len(raw) > limit:
            raise InvalidRequest(f"Frame larger than {limit} bytes. Send one message at a time.")
        message = wire.loads(raw)
        if not isinstance(message, dict):
            raise InvalidRequest(
                'A frame must be a JSON object like {"type": "step", "data": {…}}.'
            )
        request_id = message.get("id")
        kind = message.get("type")
        if kind == "step" or kind == "reset":
            if request_id is not None and raw == session.last_frame:
                return session.last_reply, False  # a retry after reconnect: don't play twice
            if kind == "step":
                observation = manager.step(session, message.get("data"))
                body = wire.result_body(observation, None)
            else:
                observation = manager.reset(session, message.get("data"))
                body = wire.result_body(observation, session.id)
            reply = wire.frame("observation", body, request_id)
            if request_id is not None:
                session.last_frame, session.last_reply = raw, reply
            return reply, False
        if kind == "state":
            state = manager.state(session)
            return wire.frame("state", wire.model_json(state), request_id), False
        if kind == "close":
            return b"", True
        raise UnknownMessageType(
            f"Unknown message type {kind!r}. Use one of: reset, step, state, close."
        )
    except EnvServerError as error:
        manager.counters.errors += 1
        return wire.error_frame(error, request_id), False


async def _close_quietly(socket: WebSocket, code: int, reason: str) -> None:
    if socket.application_state == WebSocketState.DISCONNECTED:
        return
    with contextlib.suppress(Exception):
        await socket.close(code, reason)


async def close_all_sockets(manager: SessionManager) -> None:
    """Drain: refuse new sessions, then close every bound socket with 1001 (going away)."""
    manager.draining = True
    sockets = [s.socket for s in manager.sessions.values() if s.socket is not None]
    await asyncio.gather(
        *(_close_quietly(socket, WS_CLOSE_GOING_AWAY, "server shutting down") for socket in sockets)
    )
