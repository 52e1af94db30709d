"""Transports: how a client's reset/step/state reach a game.

All three speak in the same JSON-shaped values, so the client above them has one parse path:
``reset``/``step`` return ``{"observation", "reward", "done"[, "session_id"]}``, ``state``
returns the state object.

- ``WebSocketTransport`` (default): one socket, one session; request ids, keep-alive pings,
  bounded retries and reconnect-and-resume when the server advertises them.
- ``HTTPTransport``: the stateful HTTP routes (``http-sessions`` extension).
- ``InProcessTransport``: the game's ``Environment`` called through the server's own session
  layer, no network: for tests and to measure what the network costs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from clients.errors import (
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
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
RETRY_BACKOFF = 0.2
REFUSALS = frozenset({ErrorCode.CAPACITY_REACHED, ErrorCode.SESSION_ERROR, ErrorCode.FACTORY_ERROR})
"""Codes a server sends, without an id, when it refuses a connection before closing it."""


class Transport(Protocol):
    """What a client needs from a connection to one session."""

    session_id: str | None

    async def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]: ...
    async def step(self, action: Mapping[str, Any]) -> dict[str, Any]: ...
    async def state(self) -> dict[str, Any]: ...
    async def close(self) -> None: ...


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


class WebSocketTransport:
    """One WebSocket bound to one server session."""

    def __init__(
        self,
        base_url: str,
        options: ConnectionOptions = ConnectionOptions(),
        *,
        ping_interval: float | None = DEFAULT_PING_INTERVAL,
    ) -> None:
        self.url = ws_url(base_url)
        self.extensions = options.extensions
        self.headers = dict(options.headers)
        self.connect_timeout = options.connect_timeout
        self.message_timeout = options.message_timeout
        self.max_retries = options.max_retries
        self.ping_interval = ping_interval
        self.session_id: str | None = None
        self.reconnects = 0
        self._ws: ClientConnection | None = None
        self._lock = asyncio.Lock()
        self._next_id = 0
        self._fresh = False

    @property
    def _ids(self) -> bool:
        return EXT_REQUEST_ID in self.extensions

    @property
    def _resumable(self) -> bool:
        return EXT_RESUME in self.extensions and self.session_id is not None

    async def _connect(self, resume: bool) -> ClientConnection:
        url = f"{self.url}?session_id={quote(self.session_id or '')}" if resume else self.url
        try:
            return await connect(
                url,
                additional_headers=self.headers or None,
                open_timeout=self.connect_timeout,
                ping_interval=self.ping_interval,
                ping_timeout=self.ping_interval,
                max_size=DEFAULT_MAX_MESSAGE_BYTES,
                compression=None,
                proxy=None,
            )
        except (OSError, InvalidHandshake, TimeoutError) as error:
            detail = (
                f"HTTP {error.response.status_code}" if isinstance(error, InvalidStatus) else error
            )
            raise ConnectError(f"Cannot open {self.url}: {detail}") from None

    async def _request(self, kind: str, data: Any = None) -> Any:
        frame: dict[str, Any] = {"type": kind}
        if data is not None:
            frame["data"] = data
        if self._ids:
            self._next_id += 1
            frame["id"] = self._next_id
        raw = orjson.dumps(frame).decode()
        async with self._lock:
            for attempt in range(self.max_retries + 1):
                try:
                    if self._ws is None:
                        self._ws = await self._connect(resume=self._resumable)
                        self._fresh = True
                    await self._ws.send(raw)
                    return await self._reply(frame.get("id"))
                except (ConnectionClosed, ConnectError, OSError) as error:
                    self._ws = None
                    refusal = _refusal(error, self.session_id)
                    if refusal is not None:
                        self.session_id = None
                        raise refusal from None
                    # without resume a new socket is a new session: only a reset may retry
                    retryable = kind == "reset" or self._resumable
                    if not retryable or attempt == self.max_retries:
                        raise ConnectionLost(
                            f"Connection to {self.url} lost during '{kind}' ({error})."
                            + ("" if retryable else " The server cannot resume sessions.")
                        ) from None
                    self.reconnects += 1
                    await asyncio.sleep(RETRY_BACKOFF * 2**attempt)
        raise AssertionError("unreachable")

    async def _reply(self, request_id: int | None) -> Any:
        assert self._ws is not None
        while True:
            try:
                raw = await asyncio.wait_for(self._ws.recv(), self.message_timeout)
            except TimeoutError:
                if request_id is None:  # no ids: a late reply would desync the socket
                    await self._drop()
                raise RequestTimeout(
                    f"No reply from {self.url} within {self.message_timeout:g} s."
                ) from None
            reply = orjson.loads(raw)
            if request_id is not None and reply.get("id", request_id) != request_id:
                continue  # the reply to a request that timed out earlier
            if reply.get("type") == "error":
                error = server_error(reply.get("data"))
                if self._fresh and "id" not in reply and error.code in REFUSALS:
                    await self._drop()  # refused at connect; the server closes the socket
                    self.session_id = None
                raise error
            self._fresh = False
            return reply.get("data")

    async def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        data = await self._request("reset", dict(kwargs))
        self.session_id = data.get("session_id", self.session_id)
        return data

    async def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        return await self._request("step", dict(action))

    async def state(self) -> dict[str, Any]:
        return await self._request("state")

    async def _drop(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()

    async def close(self) -> None:
        """End the session on the server and close the socket."""
        ws, self._ws = self._ws, None
        if ws is None:
            return
        with contextlib.suppress(Exception):
            await ws.send('{"type":"close"}')
        with contextlib.suppress(Exception):
            await ws.close()
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


class HTTPTransport:
    """The stateful HTTP routes: ``POST /reset`` opens the session the other routes use."""

    def __init__(self, base_url: str, options: ConnectionOptions = ConnectionOptions()) -> None:
        if options.extensions and EXT_HTTP_SESSIONS not in options.extensions:
            raise ClientError(f"{base_url} does not offer stateful HTTP sessions; use WebSocket.")
        timeout = httpx.Timeout(options.message_timeout, connect=options.connect_timeout)
        # retries cover failed connects only: a request that reached the server is not re-sent
        transport = httpx.AsyncHTTPTransport(retries=options.max_retries)
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=dict(options.headers),
            timeout=timeout,
            transport=transport,
            trust_env=False,
        )
        self.session_id: str | None = None

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise RequestTimeout(f"No reply from {self._http.base_url}{path} in time.") from None
        except httpx.TransportError as error:
            raise ConnectError(f"Cannot reach {self._http.base_url}{path}: {error}") from None
        body = response.json() if response.content else {}
        if response.is_error:
            raise server_error(body.get("error", body) if isinstance(body, dict) else body)
        return body

    def _session_headers(self) -> dict[str, str]:
        return {SESSION_HEADER: self.session_id} if self.session_id else {}

    async def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        body = dict(kwargs)
        if self.session_id:
            body["session_id"] = self.session_id
        data = await self._call("POST", "/reset", json=body)
        self.session_id = data.get("session_id", self.session_id)
        return data

    async def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        body = {"session_id": self.session_id, "action": dict(action)}
        return await self._call("POST", "/step", json=body)

    async def state(self) -> dict[str, Any]:
        return await self._call("GET", "/state", headers=self._session_headers())

    async def close(self) -> None:
        if self.session_id:
            with contextlib.suppress(ClientError):
                await self._call("DELETE", f"/sessions/{self.session_id}")
            self.session_id = None
        await self._http.aclose()


class InProcessTransport:
    """A game's ``Environment`` behind the server's session layer, in this process."""

    def __init__(self, game: str, *, allow_explicit_secrets: bool = True) -> None:
        from env_servers.core.config import ServerSettings
        from env_servers.core.registry import load_environment
        from env_servers.core.sessions import SessionManager

        settings = ServerSettings(allow_explicit_secrets=allow_explicit_secrets)
        self._manager = SessionManager(load_environment(game), settings)
        self._session = self._manager.open()
        self.session_id: str | None = self._session.id

    def _call(self, method: str, argument: Any = None) -> Any:
        from env_servers.core import wire
        from env_servers.core.errors import EnvServerError

        try:
            if method == "state":
                return orjson.loads(wire.model_json(self._manager.state(self._session)))
            run = self._manager.reset if method == "reset" else self._manager.step
            return orjson.loads(wire.result_body(run(self._session, argument), self.session_id))
        except EnvServerError as error:
            raise server_error(wire.error_data(error)) from None

    async def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("reset", dict(kwargs))

    async def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("step", dict(action))

    async def state(self) -> dict[str, Any]:
        return self._call("state")

    async def close(self) -> None:
        self._manager.close(self._session)
