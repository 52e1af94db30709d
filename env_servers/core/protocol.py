"""Protocol constants shared by the servers and the clients (no FastAPI here).

The wire protocol is OpenEnv's, as both its releases speak it (``PROTOCOL_VERSIONS``: the
``openenv-core`` 0.3 reset/step/state protocol, and ``openenv`` 0.10, which adds MCP at
``/mcp``), plus the extensions listed in ``EXTENSIONS``, each advertised in ``GET /metadata``
so a client uses one only when the server offers it.
"""

from __future__ import annotations

from enum import StrEnum

PROTOCOL_NAME = "openenv"
PROTOCOL_VERSION = "0.10"
"""The newest OpenEnv release whose protocol the servers speak."""
PROTOCOL_VERSIONS: tuple[str, ...] = ("0.3", "0.10")
STANDARD_PROFILE = "openenv-http/1.x"
"""OpenEnv 0.10's name for the HTTP contract that ``openenv validate --url`` checks."""

EXT_REQUEST_ID = "request-id"
"""Any client frame may carry ``"id"`` (a string or a number); the reply echoes it."""
EXT_SESSION_ID = "session-id"
"""The reply to ``reset`` carries ``data.session_id``."""
EXT_RESUME = "resume"
"""``/ws?session_id=…`` re-attaches to a session whose socket dropped; re-sending the last
reset/step frame unchanged (same ``id``) gets its original reply, so a retry never plays twice."""
EXT_HTTP_SESSIONS = "http-sessions"
"""HTTP ``/reset`` opens a session; ``/step`` and ``/state`` take its id."""
EXT_STRUCTURED_ERRORS = "structured-errors"
"""HTTP errors come as ``{"error": {"code", "message"}}``."""

EXT_MCP_RESET = "mcp-reset"
"""JSON-RPC method ``arenagym/reset`` at ``/mcp``: start an episode without leaving MCP; its
result carries the opening text a model reads."""

EXT_EPISODES = "episodes"
"""WebSocket frame ``{"type": "episodes", "data": [{"reset": {…}, "actions": [{…}, …]}, …]}``:
whole episodes played one after another on the socket's session, answered by one frame whose
``data`` holds, per episode, ``{"results": [reset reply, step reply, …]}`` plus ``"error"``
where one stopped it. The server may answer only the first episodes (at least one), after a
few tens of milliseconds of play: the client sends the rest again. A batch of replies judged
at once costs a round trip per batch, not two per reply."""
MAX_EPISODES_PER_FRAME = 64
"""The most episodes one ``episodes`` frame may hold: a frame is answered in one go."""

EXTENSIONS: tuple[str, ...] = (
    EXT_REQUEST_ID,
    EXT_SESSION_ID,
    EXT_RESUME,
    EXT_HTTP_SESSIONS,
    EXT_STRUCTURED_ERRORS,
    EXT_MCP_RESET,
    EXT_EPISODES,
)

SESSION_HEADER = "X-Session-Id"
AUTH_TOKEN_ENV = "ARENAGYM_AUTH_TOKEN"
"""The environment variable holding the token a server requires and its clients send."""

WS_CLOSE_GOING_AWAY = 1001
"""Close code sent to every socket when the server drains on SIGTERM."""
WS_CLOSE_SESSION_GONE = 4404
"""Close code after a re-attach names a session that no longer exists."""
WS_CLOSE_SESSION_TAKEN = 4409
"""Close code refusing a socket that names a session another live socket holds: a session
is never taken over (as OpenEnv refuses a second attachment)."""
WS_CLOSE_TRY_LATER = 1013
"""Close code after ``CAPACITY_REACHED`` at connect (RFC 6455's "try again later")."""
WS_CLOSE_NO_FIRST_FRAME = 4400
"""Close code for a socket that sent no message within the server's first-frame timeout."""
WS_CLOSE_IDLE = 4408
"""Close code for a socket silent longer than the server's idle timeout; its session waits
for a resume (``/ws?session_id=…``) like any dropped socket's."""
WS_CLOSE_RATE = 4429
"""Close code for a socket sending more messages per second than the server allows; its
session waits for a resume."""
WS_CLOSE_FRAGMENT_TIMEOUT = 1008
"""Close code (RFC 6455's "policy violation") for a fragmented message not finished within
the server's fragment timeout."""


class ErrorCode(StrEnum):
    """Error codes, as OpenEnv's ``WSErrorCode``; HTTP errors use the same codes."""

    INVALID_JSON = "INVALID_JSON"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    CAPACITY_REACHED = "CAPACITY_REACHED"
    FACTORY_ERROR = "FACTORY_ERROR"
    SESSION_ERROR = "SESSION_ERROR"
    ACCESS_DENIED = "ACCESS_DENIED"
    """Ours: no token or a wrong one (HTTP 401), or a web page from another site (403)."""
