"""The client's side of the protocol, without I/O: what the async and the sync transports share.

A transport owns a socket (or an HTTP client) and drives one of these objects: it asks for the
bytes to send, hands over what it received, and asks what a dropped connection or a late reply
means. Every decision lives here, so the two I/O stacks cannot drift apart: request ids, stale
replies, error frames, refusals at connect, which requests may be retried and after how long,
the resume URL, the session id. Nothing here blocks, awaits or touches a socket.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import orjson
from websockets.exceptions import InvalidStatus

from clients.errors import (
    NEEDS_TOKEN,
    AccessError,
    CapacityError,
    ClientError,
    ConnectError,
    ConnectionLost,
    RequestTimeout,
    ServerError,
    SessionError,
    server_error,
)
from env_servers.core.protocol import (
    EXT_EPISODES,
    EXT_HTTP_SESSIONS,
    EXT_REQUEST_ID,
    EXT_RESUME,
    SESSION_HEADER,
    WS_CLOSE_SESSION_GONE,
    WS_CLOSE_TRY_LATER,
    ErrorCode,
)

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MESSAGE_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_PING_INTERVAL = 20.0
"""Keep-alive pings; a socket stays healthy through long silences between episodes."""
DEFAULT_CLOSE_TIMEOUT = 10.0
"""The closing handshake's bound: a finalizer may close a client at interpreter exit, with
the server gone."""
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
EPISODES_FRAME_BYTES = 48 * 1024
"""The most JSON one ``episodes`` frame carries: under a server's default frame limit."""
RETRY_BACKOFF = 0.2
REFUSALS = frozenset({ErrorCode.CAPACITY_REACHED, ErrorCode.SESSION_ERROR, ErrorCode.FACTORY_ERROR})
"""Codes a server sends, without an id, when it refuses a connection before closing it."""
FRESH_START = frozenset({"reset", "episodes"})
"""Requests that begin with a reset, so a new socket (a new session) may replay them."""
CLOSE_FRAME = b'{"type":"close"}'
"""Ends the session on the server (a bare socket close would keep it for resume)."""


def ws_url(base_url: str) -> str:
    """``http(s)://host[:port][/prefix]`` → ``ws(s)://host[:port][/prefix]/ws``."""
    url = base_url.rstrip("/")
    if url.startswith("http"):
        url = "ws" + url[4:]
    return url if url.endswith("/ws") else url + "/ws"


@dataclass(frozen=True, slots=True)
class ConnectionOptions:
    """What every network transport is configured with."""

    extensions: frozenset[str] = frozenset()
    """The protocol extensions the server advertised (none for a plain OpenEnv server)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    message_timeout: float = DEFAULT_MESSAGE_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES


DEFAULT_OPTIONS = ConnectionOptions()


@dataclass(slots=True)
class Request:
    """One client frame, encoded once and re-sent unchanged on a retry (same id: a resumed
    server answers a repeated reset or step with its original reply, never playing twice)."""

    kind: str
    id: int | None
    frame: bytes
    """UTF-8 JSON, sent as a text frame."""


@dataclass(slots=True)
class Reply:
    """What a received frame (or a missing one) means for the request waiting on it."""

    data: Any = None
    error: ClientError | None = None
    drop: bool = False
    """Close the socket before raising: the server is closing it, or a late reply would
    desync it."""

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.data


class WebSocketSession:
    """One server session over WebSockets, across reconnects, without I/O.

    A transport calls ``request`` to build a frame, ``connect_url`` and ``connected`` around
    each new socket, ``receive`` for every frame read (``None``: a stale reply, keep reading),
    ``timed_out`` when no frame came in time, and ``lost`` when the socket failed (it returns
    the delay before the retry, or raises).
    """

    def __init__(self, base_url: str, options: ConnectionOptions) -> None:
        self.url = ws_url(base_url)
        self.options = options
        self.session_id: str | None = None
        self.reconnects = 0
        self._ids = EXT_REQUEST_ID in options.extensions
        self._next_id = 0
        self._fresh = False

    @property
    def plays_episodes(self) -> bool:
        """Whether the server takes whole episodes in one ``episodes`` frame."""
        return EXT_EPISODES in self.options.extensions

    @property
    def resumable(self) -> bool:
        return EXT_RESUME in self.options.extensions and self.session_id is not None

    def connect_url(self) -> str:
        """The URL of the next socket: the session's own when it can be resumed."""
        if self.resumable:
            return f"{self.url}?session_id={quote(self.session_id or '')}"
        return self.url

    def connect_failed(self, error: Exception) -> ClientError:
        if isinstance(error, InvalidStatus) and error.response.status_code == 401:
            return AccessError(ErrorCode.ACCESS_DENIED, NEEDS_TOKEN)
        detail = f"HTTP {error.response.status_code}" if isinstance(error, InvalidStatus) else error
        return ConnectError(f"Cannot open {self.url}: {detail}")

    def connected(self) -> None:
        """A new socket is open: its first reply may be a refusal."""
        self._fresh = True

    def request(self, kind: str, data: Any = None) -> Request:
        """The frame for ``kind``; ids only where the server advertises them (OpenEnv's own
        server rejects unknown fields)."""
        frame: dict[str, Any] = {"type": kind}
        if data is not None:
            frame["data"] = data
        request_id = None
        if self._ids:
            self._next_id = request_id = self._next_id + 1
            frame["id"] = request_id
        return Request(kind, request_id, orjson.dumps(frame))

    def receive(self, request: Request, raw: bytes | str) -> Reply | None:
        """What a frame read while waiting for ``request`` means; ``None`` for the reply to
        an earlier request that timed out."""
        reply = orjson.loads(raw)
        if request.id is not None and reply.get("id", request.id) != request.id:
            return None
        if reply.get("type") == "error":
            error = server_error(reply.get("data"))
            refused = self._fresh and "id" not in reply and error.code in REFUSALS
            if refused:  # refused at connect; the server closes the socket
                self.session_id = None
            return Reply(error=error, drop=refused)
        self._fresh = False
        data = reply.get("data")
        if request.kind == "reset":
            self.session_id = data.get("session_id", self.session_id)
        elif request.kind == "episodes" and data and data[0].get("results"):
            self.session_id = data[0]["results"][0].get("session_id", self.session_id)
        return Reply(data)

    def timed_out(self, request: Request) -> Reply:
        """No reply in time. Without ids a late reply would be taken for the next one's, so
        the socket goes (with resume, the next request re-attaches)."""
        error = RequestTimeout(
            f"No reply from {self.url} within {self.options.message_timeout:g} s."
        )
        return Reply(error=error, drop=request.id is None)

    def lost(self, request: Request, error: Exception, attempt: int) -> float:
        """The socket failed during ``request`` (attempt 0, 1…): the seconds to wait before
        sending it again on a new socket. Raises the server's refusal, or ``ConnectionLost``
        when the request may not be retried: without resume a new socket is a new session,
        so only a reset (or a batch of episodes, each starting with one) may be re-sent."""
        refusal = _refusal(error, self.session_id)
        if refusal is not None:
            self.session_id = None
            raise refusal
        retryable = request.kind in FRESH_START or self.resumable
        if not retryable or attempt >= self.options.max_retries:
            raise ConnectionLost(
                f"Connection to {self.url} lost during '{request.kind}' ({error})."
                + ("" if retryable else " The server cannot resume sessions.")
            )
        self.reconnects += 1
        return float(RETRY_BACKOFF * 2**attempt)

    def closed(self) -> None:
        """The session was ended on the server."""
        self.session_id = None


def _refusal(error: Exception, session_id: str | None) -> ServerError | None:
    """The error a server meant when it closed a new socket with one of its refusal codes
    (its error frame may arrive after our send already failed)."""
    rcvd = getattr(error, "rcvd", None)
    code = rcvd.code if rcvd is not None else None
    if code == WS_CLOSE_SESSION_GONE:
        return SessionError(
            ErrorCode.SESSION_ERROR,
            f"Unknown session '{session_id}': it expired or was closed on the server, so the "
            "episode is lost. Reset to start a new one.",
        )
    if code == WS_CLOSE_TRY_LATER:
        return CapacityError(
            ErrorCode.CAPACITY_REACHED,
            "The server has no free session (see its --max-sessions); retry later.",
        )
    return None


@dataclass(frozen=True, slots=True)
class HTTPRequest:
    method: str
    path: str
    json: Any = None
    headers: Mapping[str, str] | None = None


class HTTPSession:
    """The stateful HTTP routes, without I/O: ``POST /reset`` opens the session that the
    other routes name. A transport sends each ``HTTPRequest`` and hands the response to
    ``receive``, or an httpx error to ``failed``."""

    def __init__(self, base_url: str, options: ConnectionOptions) -> None:
        if options.extensions and EXT_HTTP_SESSIONS not in options.extensions:
            raise ClientError(f"{base_url} does not offer stateful HTTP sessions; use WebSocket.")
        self.base_url = base_url.rstrip("/")
        self.options = options
        self.session_id: str | None = None

    def client_options(self) -> dict[str, Any]:
        """``httpx.Client`` / ``httpx.AsyncClient`` keyword arguments, less the transport."""
        return {
            "base_url": self.base_url,
            "headers": dict(self.options.headers),
            "timeout": httpx.Timeout(
                self.options.message_timeout, connect=self.options.connect_timeout
            ),
            "trust_env": False,
        }

    def reset(self, kwargs: Mapping[str, Any]) -> HTTPRequest:
        body = dict(kwargs)
        if self.session_id:
            body["session_id"] = self.session_id
        return HTTPRequest("POST", "/reset", body)

    def step(self, action: Mapping[str, Any]) -> HTTPRequest:
        return HTTPRequest("POST", "/step", {"session_id": self.session_id, "action": dict(action)})

    def state(self) -> HTTPRequest:
        headers = {SESSION_HEADER: self.session_id} if self.session_id else {}
        return HTTPRequest("GET", "/state", headers=headers)

    def close(self) -> HTTPRequest | None:
        """The request that ends the session, if one is open; it counts as ended either way."""
        session_id, self.session_id = self.session_id, None
        return HTTPRequest("DELETE", f"/sessions/{session_id}") if session_id else None

    def receive(self, request: HTTPRequest, status: int, content: bytes) -> Any:
        body = orjson.loads(content) if content else {}
        if status >= 400:
            raise server_error(body.get("error", body) if isinstance(body, dict) else body)
        if request.path == "/reset":
            self.session_id = body.get("session_id", self.session_id)
        return body

    def failed(self, request: HTTPRequest, error: httpx.TransportError) -> ClientError:
        where = f"{self.base_url}{request.path}"
        if isinstance(error, httpx.TimeoutException):
            return RequestTimeout(f"No reply from {where} in time.")
        return ConnectError(f"Cannot reach {where}: {error}")


class WebSocketSessionView:
    """What a WebSocket transport, sync or async, reports of its session (no I/O)."""

    _session: WebSocketSession

    @property
    def url(self) -> str:
        return self._session.url

    @property
    def extensions(self) -> frozenset[str]:
        return self._session.options.extensions

    @property
    def session_id(self) -> str | None:
        return self._session.session_id

    @property
    def reconnects(self) -> int:
        return self._session.reconnects
