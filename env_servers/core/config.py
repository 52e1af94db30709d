"""Server settings: one frozen object, validated on construction.

Read from CLI flags and ``ARENAGYM_*`` environment variables by ``arenagym serve``; never
from the environment at import time.
"""

from __future__ import annotations

import re
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
MIN_TOKEN_LENGTH = 16
"""Shorter tokens could be guessed; ``secrets.token_urlsafe()`` makes 43 characters."""
ORIGIN = re.compile(r"https?://[^/\s?#]+")


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
    auth_tokens: tuple[str, ...] = ()
    """Bearer tokens accepted; when any is set, every route but ``/health`` (and the play
    page's static files) needs one, and a session answers only the token that opened it."""
    allowed_origins: tuple[str, ...] = ()
    """Browser origins (``https://host[:port]``) allowed besides the server's own; a request
    or WebSocket handshake carrying any other ``Origin`` is refused."""

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
        if any(
            len(token) < MIN_TOKEN_LENGTH or token != token.strip() for token in self.auth_tokens
        ):
            raise ValueError(
                f"auth tokens must be at least {MIN_TOKEN_LENGTH} characters without surrounding "
                "spaces; make one with: python -c 'import secrets; print(secrets.token_urlsafe())'"
            )
        for origin in self.allowed_origins:
            if origin != "null" and not ORIGIN.fullmatch(origin):
                raise ValueError(
                    f"allowed origin {origin!r} is not scheme://host[:port] (no path, no "
                    "trailing slash), e.g. https://example.org"
                )
        if self.ws not in WEBSOCKET_MODES:
            raise ValueError(f"ws must be one of {', '.join(WEBSOCKET_MODES)}, got {self.ws!r}")
