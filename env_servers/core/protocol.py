"""Protocol constants shared by the servers and the clients (no FastAPI here).

The wire protocol is OpenEnv's (0.2/0.3) plus the extensions listed in ``EXTENSIONS``, each
advertised in ``GET /metadata`` so a client uses one only when the server offers it.
"""

from __future__ import annotations

from enum import StrEnum

PROTOCOL_NAME = "openenv"
PROTOCOL_VERSION = "0.3"

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

EXTENSIONS: tuple[str, ...] = (
    EXT_REQUEST_ID,
    EXT_SESSION_ID,
    EXT_RESUME,
    EXT_HTTP_SESSIONS,
    EXT_STRUCTURED_ERRORS,
)

SESSION_HEADER = "X-Session-Id"

WS_CLOSE_GOING_AWAY = 1001
"""Close code sent to every socket when the server drains on SIGTERM."""
WS_CLOSE_SESSION_GONE = 4404
"""Close code after a re-attach names a session that no longer exists."""
WS_CLOSE_REPLACED = 4409
"""Close code sent to a socket whose session was re-attached by another socket."""
WS_CLOSE_TRY_LATER = 1013
"""Close code after ``CAPACITY_REACHED`` at connect (RFC 6455's "try again later")."""


class ErrorCode(StrEnum):
    """Error codes, as OpenEnv's ``WSErrorCode``; HTTP errors use the same codes."""

    INVALID_JSON = "INVALID_JSON"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    CAPACITY_REACHED = "CAPACITY_REACHED"
    FACTORY_ERROR = "FACTORY_ERROR"
    SESSION_ERROR = "SESSION_ERROR"
