"""Exceptions raised by the clients.

Every error a client raises is a ``ClientError``::

    ClientError
    ├── ConnectError          the server could not be reached or refused the handshake
    ├── RequestTimeout        no reply within the message timeout
    ├── ConnectionLost        the connection dropped and could not be resumed in time
    ├── EpisodeLost           (also a ValueError) a GameAgent's episode died with its server:
    │                         it scores 0, and the next reset reconnects
    └── ServerError           the server answered with an error frame or body (.code, .message)
        ├── InvalidRequestError   INVALID_JSON, UNKNOWN_TYPE, VALIDATION_ERROR
        ├── SessionError          SESSION_ERROR: unknown or expired session, step before
        │                         reset or after the episode ended
        ├── CapacityError         CAPACITY_REACHED
        ├── AccessError           ACCESS_DENIED: the server needs a token (a wrong or no one)
        └── ExecutionError        EXECUTION_ERROR, FACTORY_ERROR

An illegal *move* is not an exception: it comes back in the observation (``invalid_move``).
"""

from __future__ import annotations

from typing import Any

from env_servers.core.protocol import ErrorCode


class ClientError(Exception):
    """Root of the client's exceptions."""


class ConnectError(ClientError):
    """The server could not be reached."""


class RequestTimeout(ClientError):
    """No reply arrived in time."""


class ConnectionLost(ClientError):
    """The connection dropped and the session could not be resumed."""


class EpisodeLost(ClientError, ValueError):
    """The game server vanished (or forgot the session) during an episode. A ``ValueError``,
    so that TRL answers a tool call that raises it with its text, as for any failed tool."""


class ServerError(ClientError):
    """The server rejected a request; ``code`` is one of ``ErrorCode``."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = ErrorCode(code) if code in ErrorCode.__members__ else code
        self.message = message


class InvalidRequestError(ServerError):
    pass


class SessionError(ServerError):
    pass


class CapacityError(ServerError):
    pass


class ExecutionError(ServerError):
    pass


class AccessError(ServerError):
    pass


NEEDS_TOKEN = (
    "The server requires a token and refused this one (or none was given): pass "
    "auth_token=… or set ARENAGYM_AUTH_TOKEN to the token it was started with."
)


_BY_CODE: dict[str, type[ServerError]] = {
    ErrorCode.INVALID_JSON: InvalidRequestError,
    ErrorCode.UNKNOWN_TYPE: InvalidRequestError,
    ErrorCode.VALIDATION_ERROR: InvalidRequestError,
    ErrorCode.SESSION_ERROR: SessionError,
    ErrorCode.CAPACITY_REACHED: CapacityError,
    ErrorCode.EXECUTION_ERROR: ExecutionError,
    ErrorCode.FACTORY_ERROR: ExecutionError,
    ErrorCode.ACCESS_DENIED: AccessError,
}


def server_error(data: Any) -> ServerError:
    """The exception for an error payload ``{"code", "message"}`` (or OpenEnv's variants)."""
    if not isinstance(data, dict):
        return ServerError("UNKNOWN", str(data))
    code = str(data.get("code", "UNKNOWN"))
    message = str(data.get("message") or data.get("detail") or data)
    return _BY_CODE.get(code, ServerError)(code, message)
