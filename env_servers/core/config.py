"""Server settings: one frozen object, validated on construction.

Read from CLI flags and ``ARENAGYM_*`` environment variables by ``arenagym serve``; never
from the environment at import time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LogLevel = Literal["critical", "error", "warning", "info", "debug", "trace"]
WebSocketMode = Literal["inline", "asgi"]
WEBSOCKET_MODES: tuple[WebSocketMode, ...] = ("inline", "asgi")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 1024
DEFAULT_SESSION_TTL = 600.0
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024
DEFAULT_DRAIN_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class ServerSettings:
    host: str = DEFAULT_HOST
    """Interface to bind; use 0.0.0.0 in a container."""
    port: int = DEFAULT_PORT
    max_sessions: int = DEFAULT_MAX_SESSIONS
    """Open sessions at most; further ones get CAPACITY_REACHED (HTTP 503)."""
    session_ttl: float = DEFAULT_SESSION_TTL
    """Seconds a session without a socket survives without requests."""
    log_level: LogLevel = "info"
    allow_explicit_secrets: bool = False
    """Accept reset fields that fix hidden information (Wordle's ``word``): tests, debugging."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """Largest WebSocket frame or HTTP body answered; larger ones get VALIDATION_ERROR."""
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT
    """Seconds SIGTERM waits for in-flight requests before closing connections."""
    ws: WebSocketMode = "inline"
    """How ``/ws`` is served: ``inline`` answers frames inside uvicorn's WebSocket protocol
    (the fast path; it falls back to ``asgi``, with a warning, on a uvicorn or websockets it
    is not tested on); ``asgi`` through the app's endpoint, as under any other ASGI server."""

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be in 0..65535, got {self.port}")
        if self.max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {self.max_sessions}")
        if self.session_ttl <= 0:
            raise ValueError(
                f"session_ttl must be a positive number of seconds, got {self.session_ttl}"
            )
        if self.max_message_bytes < 1024:
            raise ValueError(
                f"max_message_bytes must be at least 1024, got {self.max_message_bytes}"
            )
        if self.drain_timeout < 0:
            raise ValueError(f"drain_timeout must not be negative, got {self.drain_timeout}")
        if self.ws not in WEBSOCKET_MODES:
            raise ValueError(f"ws must be one of {', '.join(WEBSOCKET_MODES)}, got {self.ws!r}")
