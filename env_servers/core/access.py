"""Who may use a server: bearer tokens, browser origins, and JSON-only bodies.

One ``Gate`` decides for every way a request arrives: the ASGI app (HTTP, and the WebSocket
handshakes of ``/ws`` and ``/mcp``, which skip the middleware stack) and the inline ``/ws``
protocol's handshake. It answers with the request's *owner* (a digest of the token it showed,
which a session it opens is bound to) or a ``Refusal``.

- Token: with ``auth_tokens`` set, every route but ``/health`` and the play page's files needs
  ``Authorization: Bearer <token>``, or the cookie the page's ``POST /web/login`` sets (a
  browser cannot put a header on a WebSocket, and a cookie never lands in a URL or a log).
  Tokens are compared with ``hmac.compare_digest``.
- Origin: a browser names the page a request comes from in ``Origin``. A request from another
  site (not this server's own host, nor in ``allowed_origins``) is refused, so no page on
  the web can drive a game server through its visitors' browsers. Clients that are not
  browsers send no ``Origin``.
- Bodies: ``POST`` bodies must be ``application/json``: a cross-site form or ``text/plain``
  post (a "simple" request, which browsers send without asking) is refused.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from urllib.parse import urlsplit

import orjson

from env_servers.core.config import ServerSettings
from env_servers.core.protocol import ErrorCode

AUTH_COOKIE = "arenagym_token"
"""The cookie the play page's login sets: HttpOnly, SameSite=Strict."""
LOGIN_PATH = "/web/login"
OPEN_PATHS = frozenset({"/health", "/", "/web", LOGIN_PATH})
"""Routes anyone may call: liveness, and what the play page needs to ask for a token."""
OPEN_PREFIX = "/web/"
"""The play page's static files: code only, no game data."""
JSON_MEDIA_TYPES = frozenset({"application/json"})
OWNER = "arenagym.owner"
"""The ASGI scope key where the app leaves a request's owner for the routes."""

Header = Callable[[str], str | None]
"""A request's header by lower-case name, or None."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused: its HTTP status, error code and what to do."""

    status: int
    code: ErrorCode
    message: str

    def body(self) -> bytes:
        return orjson.dumps({"error": {"code": self.code.value, "message": self.message}})

    def headers(self) -> list[tuple[bytes, bytes]]:
        headers = [(b"content-type", b"application/json")]
        if self.status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="arenagym"'))
        return headers


def owner_of(token: str) -> str:
    """What a session is bound to: a digest of the token, so the token is never kept."""
    return hashlib.sha256(token.encode()).hexdigest()[:32]


class Gate:
    """Checks a request's token, origin and body type against a server's settings."""

    def __init__(self, settings: ServerSettings) -> None:
        self.tokens = tuple(token.encode() for token in settings.auth_tokens)
        self.origins = frozenset(settings.allowed_origins)

    @property
    def auth_required(self) -> bool:
        return bool(self.tokens)

    def owner(self, token: str | None) -> str | None:
        """The owner for a presented token; None when auth is off or the token is wrong."""
        if not self.tokens or token is None:
            return None
        presented = token.encode()
        # every token is compared, so the time taken does not say which one matched
        matched = [hmac.compare_digest(presented, known) for known in self.tokens]
        return owner_of(token) if any(matched) else None

    def check(
        self, method: str, path: str, header: Header, *, websocket: bool = False
    ) -> tuple[str | None, Refusal | None]:
        """``(owner, None)`` for a request that may go on, ``(None, refusal)`` otherwise."""
        origin = header("origin")
        if origin is not None and not self.origin_allowed(origin, header):
            return None, Refusal(
                403,
                ErrorCode.ACCESS_DENIED,
                f"Requests from the web page at {origin[:200]!r} are not allowed. Serve the page "
                "from this server, or start it with --allowed-origin for that origin.",
            )
        if not websocket and method == "POST" and not self.json_body(header):
            return None, Refusal(
                415,
                ErrorCode.VALIDATION_ERROR,
                "Send the body as JSON with the header 'Content-Type: application/json' "
                "(curl: -H 'Content-Type: application/json').",
            )
        if (
            not self.tokens
            or path in OPEN_PATHS
            or (path.startswith(OPEN_PREFIX) and not websocket)
        ):
            return None, None
        token = presented(header)
        owner = self.owner(token)
        if owner is None:
            given = "a wrong token" if token else "no token"
            return None, Refusal(
                401,
                ErrorCode.ACCESS_DENIED,
                f"This server requires a token and got {given}. Send 'Authorization: Bearer "
                "<token>' (clients: auth_token= or ARENAGYM_AUTH_TOKEN; the web page asks for it).",
            )
        return owner, None

    def origin_allowed(self, origin: str, header: Header) -> bool:
        """The server's own origin (the host and port of ``Host``, or of ``X-Forwarded-Host``
        behind a proxy that rewrites ``Host``), or one listed. A page elsewhere cannot forge
        either header: browsers send ``Host`` themselves, and a custom header on a
        cross-site request needs a CORS preflight this server never grants."""
        if origin in self.origins:
            return True
        if origin == "null":
            return False
        netloc = urlsplit(origin).netloc.lower()
        hosts = (header("host"), header("x-forwarded-host"))
        return any(host is not None and netloc == host.lower() for host in hosts)

    @staticmethod
    def json_body(header: Header) -> bool:
        """A POST carries JSON, or no body at all."""
        content_type = header("content-type")
        if content_type is None:
            length = header("content-length")
            return header("transfer-encoding") is None and (length is None or length == "0")
        return content_type.split(";", 1)[0].strip().lower() in JSON_MEDIA_TYPES


def presented(header: Header) -> str | None:
    """The token a request shows: ``Authorization: Bearer``, else the page's cookie."""
    return bearer(header("authorization")) or cookie(header("cookie"), AUTH_COOKIE)


def bearer(authorization: str | None) -> str | None:
    """The token of ``Authorization: Bearer <token>``, or None."""
    if authorization is None:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def cookie(header: str | None, name: str) -> str | None:
    """The value of cookie ``name`` in a ``Cookie`` header, or None."""
    if not header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def asgi_header(headers: Iterable[tuple[bytes, bytes]]) -> Header:
    """``Header`` over an ASGI scope's raw headers (the first of repeated ones)."""
    table: dict[str, str] = {}
    for name, value in headers:
        table.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return table.get
