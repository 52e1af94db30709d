"""Transports: how a client's reset/step/state reach a game. These are the sync ones; the async
twins are in ``clients.async_transports``, and both drive the same sans-I/O objects of
``clients.protocol``, so they differ in I/O alone.

Every transport speaks in the same JSON-shaped values, so the clients above them have one parse
path: ``reset``/``step`` return ``{"observation", "reward", "done"[, "session_id"]}``, ``state``
returns the state object.

- ``WebSocketTransport`` (default): one socket, one session; request ids, keep-alive pings,
  bounded retries and reconnect-and-resume when the server advertises them.
- ``HTTPTransport``: the stateful HTTP routes (``http-sessions`` extension).
- ``InProcessTransport``: the game's ``Environment`` called through the server's own session
  layer, no network: for tests and to measure what the network costs.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from typing import Any, Protocol

import httpx
import orjson
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import ClientConnection, connect

from clients.errors import ClientError, ConnectError, server_error
from clients.protocol import (
    CLOSE_FRAME,
    DEFAULT_CLOSE_TIMEOUT,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MESSAGE_TIMEOUT,
    DEFAULT_OPTIONS,
    DEFAULT_PING_INTERVAL,
    ConnectionOptions,
    HTTPRequest,
    HTTPSession,
    Request,
    WebSocketSession,
    WebSocketSessionView,
    ws_url,
)
from clients.tls import https_context, websocket_ssl

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MESSAGE_TIMEOUT",
    "ConnectionOptions",
    "HTTPTransport",
    "InProcessTransport",
    "Transport",
    "WebSocketTransport",
    "ws_url",
]


class Transport(Protocol):
    """What a sync client needs from a connection to one session."""

    @property
    def session_id(self) -> str | None: ...

    def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]: ...
    def step(self, action: Mapping[str, Any]) -> dict[str, Any]: ...
    def state(self) -> dict[str, Any]: ...
    def episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The ``episodes`` reply's data, or None where the server does not offer it."""
        ...

    def close(self) -> None: ...


class WebSocketTransport(WebSocketSessionView):
    """One WebSocket bound to one server session, on websockets' threading client.

    The caller's thread sends each frame and waits for its reply itself: no event loop, no
    hop to another thread. The connection's own reader thread answers the server's pings, so
    the socket stays healthy while the caller is busy elsewhere (a trainer generating text for
    minutes between two steps). Calls from several threads take turns.
    """

    def __init__(
        self,
        base_url: str,
        options: ConnectionOptions = DEFAULT_OPTIONS,
        *,
        ping_interval: float | None = DEFAULT_PING_INTERVAL,
    ) -> None:
        self._session = WebSocketSession(base_url, options)
        self.ping_interval = ping_interval
        self._ws: ClientConnection | None = None
        self._lock = threading.Lock()

    def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return self._request("reset", dict(kwargs))

    def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        return self._request("step", dict(action))

    def state(self) -> dict[str, Any]:
        return self._request("state")

    def episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        return self._request("episodes", batch) if self._session.plays_episodes else None

    def _request(self, kind: str, data: Any = None) -> Any:
        request = self._session.request(kind, data)
        with self._lock:
            attempt = 0
            while True:
                try:
                    ws = self._ws or self._open()
                    ws.send(request.frame, text=True)
                    return self._reply(ws, request)
                except (ConnectionClosed, ConnectError, OSError) as error:
                    self._drop()
                    time.sleep(self._session.lost(request, error, attempt))
                    attempt += 1

    def _reply(self, ws: ClientConnection, request: Request) -> Any:
        timeout = self._session.options.message_timeout
        while True:
            try:
                raw = ws.recv(timeout, decode=False)
            except TimeoutError:
                reply = self._session.timed_out(request)
            else:
                if (found := self._session.receive(request, raw)) is None:
                    continue  # the reply to a request that timed out earlier
                reply = found
            if reply.drop:
                self._drop()
            return reply.result()

    def _open(self) -> ClientConnection:
        options = self._session.options
        try:
            url = self._session.connect_url()
            opened = connect(
                url,
                additional_headers=dict(options.headers) or None,
                open_timeout=options.connect_timeout,
                ping_interval=self.ping_interval,
                ping_timeout=self.ping_interval,
                close_timeout=DEFAULT_CLOSE_TIMEOUT,
                max_size=DEFAULT_MAX_MESSAGE_BYTES,
                compression=None,
                proxy=None,
                ssl=websocket_ssl(url),
            )
        except (OSError, InvalidHandshake, TimeoutError) as error:
            raise self._session.connect_failed(error) from None
        # entered as a context: this transport owns the connection and closes it itself
        # (websockets 17 warns about connections it returns that are never entered)
        self._ws = opened.__enter__()
        self._session.connected()
        return self._ws

    def _drop(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(Exception):
                ws.close()

    def close(self) -> None:
        """End the session on the server and close the socket (within the close timeout)."""
        ws, self._ws = self._ws, None
        if ws is None:
            return
        with contextlib.suppress(Exception):
            ws.send(CLOSE_FRAME, text=True)
        with contextlib.suppress(Exception):
            ws.close()
        self._session.closed()


class HTTPTransport:
    """The stateful HTTP routes: ``POST /reset`` opens the session the other routes use."""

    def __init__(self, base_url: str, options: ConnectionOptions = DEFAULT_OPTIONS) -> None:
        self._session = HTTPSession(base_url, options)
        # retries cover failed connects only: a request that reached the server is not re-sent
        transport = httpx.HTTPTransport(retries=options.max_retries, verify=https_context())
        self._http = httpx.Client(transport=transport, **self._session.client_options())

    @property
    def session_id(self) -> str | None:
        return self._session.session_id

    def _send(self, request: HTTPRequest) -> Any:
        try:
            response = self._http.request(
                request.method, request.path, json=request.json, headers=request.headers
            )
        except httpx.TransportError as error:
            raise self._session.failed(request, error) from None
        return self._session.receive(request, response.status_code, response.content)

    def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return self._send(self._session.reset(kwargs))

    def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        return self._send(self._session.step(action))

    def state(self) -> dict[str, Any]:
        return self._send(self._session.state())

    def episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        return None  # a WebSocket extension: over HTTP, a request per reset and step

    def close(self) -> None:
        try:
            if (request := self._session.close()) is not None:
                with contextlib.suppress(ClientError):
                    self._send(request)
        finally:
            self._http.close()


class InProcessTransport:
    """A game's ``Environment`` behind the server's session layer, in this process. Calls are
    plain function calls, so the async twin wraps this one."""

    def __init__(self, game: str | type[Any], *, allow_explicit_secrets: bool = True) -> None:
        """``game``: a registered game's name, or an ``Environment`` subclass itself (a game
        not registered, as ``arenagym check`` runs a declaration given by reference)."""
        from env_servers.core.config import ServerSettings
        from env_servers.core.registry import load_environment
        from env_servers.core.sessions import SessionManager

        settings = ServerSettings(allow_explicit_secrets=allow_explicit_secrets)
        env_type = load_environment(game) if isinstance(game, str) else game
        self._manager = SessionManager(env_type, settings)
        self._session = self._manager.open()
        self.session_id: str | None = self._session.id

    def _call(self, method: str, argument: Any = None) -> Any:
        from env_servers.core import episodes, wire
        from env_servers.core.errors import EnvServerError

        try:
            if method == "state":
                return orjson.loads(wire.model_json(self._manager.state(self._session)))
            if method == "episodes":
                played = episodes.play(self._manager, self._session, argument, metered=False)
                return orjson.loads(played)
            run = self._manager.reset if method == "reset" else self._manager.step
            return orjson.loads(wire.result_body(run(self._session, argument), self.session_id))
        except EnvServerError as error:
            raise server_error(wire.error_data(error)) from None

    def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("reset", dict(kwargs))

    def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("step", dict(action))

    def state(self) -> dict[str, Any]:
        return self._call("state")

    def episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        return self._call("episodes", batch)

    def close(self) -> None:
        self._manager.close(self._session)
