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
DEFAULT_MAX_HEADER_BYTES = 32 * 1024
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_MAX_MESSAGE_RATE = 1000.0
DEFAULT_FIRST_FRAME_TIMEOUT = 60.0
DEFAULT_FRAGMENT_TIMEOUT = 10.0
DEFAULT_IDLE_TIMEOUT = DEFAULT_SESSION_TTL
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
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    """Largest HTTP request line and headers read; larger ones get HTTP 431."""
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    """Seconds a connection may take to send a request's headers (counted from connect, or
    from the previous response); slower or silent ones get HTTP 408 and are closed."""
    max_message_rate: float = DEFAULT_MAX_MESSAGE_RATE
    """WebSocket messages per second one connection may send (bursts of as many allowed);
    a faster one is closed with 4429, its session kept for resume. 0: no limit."""
    first_frame_timeout: float = DEFAULT_FIRST_FRAME_TIMEOUT
    """Seconds a new WebSocket may stay silent before its first message; then it is closed
    with 4400 (a session it never started is freed)."""
    fragment_timeout: float = DEFAULT_FRAGMENT_TIMEOUT
    """Seconds a fragmented WebSocket message may take to finish; then the socket is closed
    with 1008 and its buffer freed."""
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    """Seconds a WebSocket that has spoken may stay silent; then it is closed with 4408 and
    its session lives on for resume (``session_ttl`` more seconds). A TRL run keeps sockets
    silent between steps for minutes, so keep this no shorter than ``session_ttl``."""
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
        for name in ("header_timeout", "first_frame_timeout", "fragment_timeout", "idle_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(
                    f"{name} must be a positive number of seconds, got {getattr(self, name)}"
                )
        if self.max_header_bytes < 1024:
            raise ValueError(f"max_header_bytes must be at least 1024, got {self.max_header_bytes}")
        if self.max_message_rate < 0:
            raise ValueError(
                f"max_message_rate must be 0 (no limit) or positive, got {self.max_message_rate}"
            )
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
