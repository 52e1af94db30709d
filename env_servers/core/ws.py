"""The WebSocket endpoint ``/ws``: OpenEnv's frames plus our extensions, one socket one session.

``answer`` (one frame in, one frame out) and ``bind`` / ``refusal`` (a socket's session) are
shared by both ways of serving ``/ws``: the ASGI endpoint here, for any ASGI server, and
``ws_protocol``, which ``arenagym serve`` runs inside uvicorn. The endpoint is written against
raw ASGI rather than Starlette's ``WebSocket`` wrapper: its loop runs once per game step, and
the wrapper's per-message state checks cost more than the game does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from env_servers.core import episodes, wire
from env_servers.core.access import OWNER
from env_servers.core.errors import (
    EnvServerError,
    InvalidRequest,
    SessionTaken,
    UnknownMessageType,
)
from env_servers.core.protocol import (
    WS_CLOSE_GOING_AWAY,
    WS_CLOSE_RATE,
    WS_CLOSE_SESSION_GONE,
    WS_CLOSE_SESSION_TAKEN,
    WS_CLOSE_TRY_LATER,
)
from env_servers.core.sessions import Session, SessionManager

RATE_REASON = "messages faster than the server allows; resume with ?session_id="
"""Reason sent with ``WS_CLOSE_RATE``."""
Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


class Socket:
    """The server's end of one connection; ``close`` may be called from another task."""

    __slots__ = ("_send", "closed")

    def __init__(self, send: Send) -> None:
        self._send = send
        self.closed = False

    async def send(self, frame: bytes) -> None:
        await self._send({"type": "websocket.send", "text": frame.decode()})

    async def close(self, code: int, reason: str = "") -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            await self._send({"type": "websocket.close", "code": code, "reason": reason})


class WebSocketEndpoint:
    """ASGI app for ``/ws`` serving the sessions of ``manager``."""

    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        socket = Socket(send)
        manager = self.manager
        resume = resume_id(scope.get("query_string", b""))
        try:
            session = bind(manager, socket, resume, scope.get(OWNER))
        except EnvServerError as error:
            frame, code = refusal(manager, error, resume)
            with contextlib.suppress(Exception):
                await socket.send(frame)
            await socket.close(code, error.code)
            return
        try:
            await self._serve(session, socket, receive)
        finally:
            manager.detach(session, socket)

    async def _serve(self, session: Session, socket: Socket, receive: Receive) -> None:
        """Answer frames until the client closes or disconnects. A bad frame gets an error
        frame and the socket stays open."""
        manager = self.manager
        limit = manager.settings.max_message_bytes
        send = socket.send
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                return  # websocket.disconnect
            if session.socket is not socket:
                return  # the session was closed (DELETE, MCP): the socket is being closed
            if not manager.admit(session):
                await socket.close(WS_CLOSE_RATE, RATE_REASON)
                return
            raw = message.get("text")
            if raw is None:
                raw = message.get("bytes") or b""
            reply = answer(manager, session, raw, limit)
            if reply is None:
                await socket.close(1000, "closed")
                manager.close(session)
                return
            if socket.closed:
                return
            try:
                await send(reply)
            except Exception:  # the peer vanished between receive and send
                return
            reply = None  # don't hold the last reply while the socket idles


def resume_id(query_string: bytes) -> str:
    """The ``?session_id=`` a client re-attaches with, or ``""`` for a new session."""
    return parse_qs(query_string.decode()).get("session_id", [""])[0]


def bind(manager: SessionManager, socket: Any, resume: str, owner: str | None) -> Session:
    """Bind a new socket to a new session of ``owner``, or to ``owner``'s session ``resume``
    if no live socket holds it."""
    if resume:
        return manager.attach(resume, socket, owner)
    session = manager.open(owner)
    session.bind(socket, manager.clock())
    return session


def refusal(manager: SessionManager, error: EnvServerError, resume: str) -> tuple[bytes, int]:
    """The error frame and close code for a socket that ``bind`` refused."""
    manager.count_error(error.code.value)
    if isinstance(error, SessionTaken):
        code = WS_CLOSE_SESSION_TAKEN
    else:
        code = WS_CLOSE_SESSION_GONE if resume else WS_CLOSE_TRY_LATER
    return wire.error_frame(error), code


def answer(manager: SessionManager, session: Session, raw: str | bytes, limit: int) -> bytes | None:
    """One frame in, one frame out; ``None`` when the client asked to close."""
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
        if request_id is not None and not isinstance(request_id, (str, int, float)):
            request_id = None
            raise InvalidRequest('"id" must be a string or a number; the reply echoes it.')
        kind = message.get("type")
        if kind == "step" or kind == "reset" or kind == "episodes":
            if request_id is not None and raw == session.last_frame:
                return session.last_reply  # a retry after reconnect: don't play twice
            if kind == "step":
                observation = manager.step(session, message.get("data"))
                reply = wire.frame("observation", wire.result_body(observation, None), request_id)
            elif kind == "reset":
                observation = manager.reset(session, message.get("data"))
                body = wire.result_body(observation, session.id)
                reply = wire.frame("observation", body, request_id)
            else:
                body = episodes.play(manager, session, message.get("data"))
                reply = wire.frame("episodes", body, request_id)
            if request_id is not None:
                session.last_frame, session.last_reply = raw, reply
            return reply
        if kind == "state":
            return wire.frame("state", wire.model_json(manager.state(session)), request_id)
        if kind == "close":
            return None
        raise UnknownMessageType(
            f"Unknown message type {kind!r}. Use one of: reset, step, state, close, episodes."
        )
    except EnvServerError as error:
        manager.count_error(error.code.value)
        return wire.error_frame(error, request_id)


async def close_all_sockets(manager: SessionManager) -> None:
    """Drain: refuse new sessions, then close every bound socket with 1001 (going away)."""
    manager.draining = True
    for session in list(manager.sessions.values()):
        if session.socket is not None:
            await session.socket.close(WS_CLOSE_GOING_AWAY, "server shutting down")
