"""Where a checked game runs: in this process behind the server's own session layer, or behind
a URL (an arenagym server or any OpenEnv server), reached through the generic client's
transports. Either way the checker sees the JSON a client sees."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import httpx

from clients.base import fetch_extensions
from clients.errors import ConnectError
from clients.protocol import ConnectionOptions
from clients.transports import HTTPTransport, InProcessTransport, Transport, WebSocketTransport
from env_servers.core import wire
from env_servers.core.environment import Environment

TransportName = Literal["websocket", "http"]
DEFAULT_TIMEOUT = 30.0


class Target(Protocol):
    """A game to check: new sessions, and what the server publishes about itself."""

    @property
    def description(self) -> str: ...

    def session(self) -> Transport:
        """A new session (close it when done)."""
        ...

    def schema(self) -> dict[str, Any]:
        """What ``GET /schema`` serves."""
        ...

    def metadata(self) -> dict[str, Any] | None:
        """What ``GET /metadata`` serves; None where there is no server."""
        ...


@dataclass(frozen=True)
class InProcessTarget:
    """The game's ``Environment`` behind the real session layer, validation and serialisation
    included, with no network."""

    env_type: type[Environment[Any, Any, Any, Any]]

    @property
    def description(self) -> str:
        return "in-process"

    def session(self) -> Transport:
        return InProcessTransport(self.env_type)

    def schema(self) -> dict[str, Any]:
        return wire.schemas(self.env_type)

    def metadata(self) -> dict[str, Any] | None:
        return None


@dataclass(frozen=True)
class URLTarget:
    """A running server, over WebSocket (``/ws``) or the stateful HTTP routes."""

    url: str
    transport: TransportName = "websocket"
    timeout: float = DEFAULT_TIMEOUT
    options: ConnectionOptions = field(init=False)

    def __post_init__(self) -> None:
        extensions = fetch_extensions(self.url, {}, self.timeout)
        options = ConnectionOptions(extensions, {}, self.timeout, self.timeout, max_retries=1)
        object.__setattr__(self, "options", options)

    @property
    def description(self) -> str:
        return f"{self.url} over {self.transport}"

    def session(self) -> Transport:
        if self.transport == "http":
            return HTTPTransport(self.url, self.options)
        return WebSocketTransport(self.url, self.options, ping_interval=None)

    def _get(self, path: str) -> httpx.Response:
        try:
            return httpx.get(self.url.rstrip("/") + path, timeout=self.timeout, trust_env=False)
        except httpx.TransportError as error:
            raise ConnectError(f"Cannot reach {self.url}{path}: {error}") from None

    def schema(self) -> dict[str, Any]:
        response = self._get("/schema")
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body

    def metadata(self) -> dict[str, Any] | None:
        response = self._get("/metadata")
        if response.status_code == 404:
            return None
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body
