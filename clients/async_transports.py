"""The async transports, twins of ``clients.transports``: the same sans-I/O objects of
``clients.protocol`` driven from an event loop (websockets' asyncio client, ``httpx.AsyncClient``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any, Protocol

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from clients.errors import ClientError, ConnectError
from clients.protocol import (
    CLOSE_FRAME,
    DEFAULT_CLOSE_TIMEOUT,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_OPTIONS,
    DEFAULT_PING_INTERVAL,
    ConnectionOptions,
    HTTPRequest,
    HTTPSession,
    Request,
    WebSocketSession,
    WebSocketSessionView,
)
from clients.tls import https_context, websocket_ssl
from clients.transports import InProcessTransport


class AsyncTransport(Protocol):
    """What an async client needs from a connection to one session."""

    @property
    def session_id(self) -> str | None: ...

    async def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]: ...
    async def step(self, action: Mapping[str, Any]) -> dict[str, Any]: ...
    async def state(self) -> dict[str, Any]: ...
    async def episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None: ...
    async def close(self) -> None: ...


class AsyncWebSocketTransport(WebSocketSessionView):
    """One WebSocket bound to one server session; websockets answers pings on the loop."""

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
        self._lock = asyncio.Lock()

    async def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return await self._request("reset", dict(kwargs))

    async def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        return await self._request("step", dict(action))

    async def state(self) -> dict[str, Any]:
        return await self._request("state")

    async def episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        return await self._request("episodes", batch) if self._session.plays_episodes else None

    async def _request(self, kind: str, data: Any = None) -> Any:
        request = self._session.request(kind, data)
        async with self._lock:
            attempt = 0
            while True:
                try:
                    ws = self._ws or await self._open()
                    await ws.send(request.frame, text=True)
                    return await self._reply(ws, request)
                except (ConnectionClosed, ConnectError, OSError) as error:
                    self._ws = None
                    await asyncio.sleep(self._session.lost(request, error, attempt))
                    attempt += 1

    async def _reply(self, ws: ClientConnection, request: Request) -> Any:
        timeout = self._session.options.message_timeout
        while True:
            try:
                raw = await asyncio.wait_for(ws.recv(decode=False), timeout)
            except TimeoutError:
                reply = self._session.timed_out(request)
            else:
                if (found := self._session.receive(request, raw)) is None:
                    continue  # the reply to a request that timed out earlier
                reply = found
            if reply.drop:
                await self._drop()
            return reply.result()

    async def _open(self) -> ClientConnection:
        options = self._session.options
        try:
            url = self._session.connect_url()
            self._ws = await connect(
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
        self._session.connected()
        return self._ws

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
            await ws.send(CLOSE_FRAME, text=True)
        with contextlib.suppress(Exception):
            await ws.close()
        self._session.closed()


class AsyncHTTPTransport:
    """The stateful HTTP routes on ``httpx.AsyncClient``."""

    def __init__(self, base_url: str, options: ConnectionOptions = DEFAULT_OPTIONS) -> None:
        self._session = HTTPSession(base_url, options)
        # retries cover failed connects only: a request that reached the server is not re-sent
        transport = httpx.AsyncHTTPTransport(retries=options.max_retries, verify=https_context())
        self._http = httpx.AsyncClient(transport=transport, **self._session.client_options())

    @property
    def session_id(self) -> str | None:
        return self._session.session_id

    async def _send(self, request: HTTPRequest) -> Any:
        try:
            response = await self._http.request(
                request.method, request.path, json=request.json, headers=request.headers
            )
        except httpx.TransportError as error:
            raise self._session.failed(request, error) from None
        return self._session.receive(request, response.status_code, response.content)

    async def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return await self._send(self._session.reset(kwargs))

    async def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        return await self._send(self._session.step(action))

    async def state(self) -> dict[str, Any]:
        return await self._send(self._session.state())

    async def episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        return None  # a WebSocket extension: over HTTP, a request per reset and step

    async def close(self) -> None:
        try:
            if (request := self._session.close()) is not None:
                with contextlib.suppress(ClientError):
                    await self._send(request)
        finally:
            await self._http.aclose()


class AsyncInProcessTransport:
    """``InProcessTransport`` behind async methods: a game step takes microseconds, so it
    runs on the loop, as the server runs it."""

    def __init__(self, game: str | type[Any], *, allow_explicit_secrets: bool = True) -> None:
        self._local = InProcessTransport(game, allow_explicit_secrets=allow_explicit_secrets)

    @property
    def session_id(self) -> str | None:
        return self._local.session_id

    async def reset(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return self._local.reset(kwargs)

    async def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        return self._local.step(action)

    async def state(self) -> dict[str, Any]:
        return self._local.state()

    async def episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        return self._local.episodes(batch)

    async def close(self) -> None:
        self._local.close()
