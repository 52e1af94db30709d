"""Errors the server reports to clients.

Every error a client can cause is an ``EnvServerError`` carrying its ``ErrorCode`` and HTTP
status; both transports render it the same way (an ``error`` frame on a WebSocket, a
``{"error": {"code", "message"}}`` body over HTTP). Anything else that escapes a handler is a
bug and is reported as ``EXECUTION_ERROR`` without taking the server down::

    EnvServerError
    ├── InvalidJSON            INVALID_JSON      400
    ├── UnknownMessageType     UNKNOWN_TYPE      400
    ├── InvalidRequest         VALIDATION_ERROR  422 (413 when too large)
    ├── EpisodeStateError      SESSION_ERROR     409  step before reset / after done
    ├── UnknownSession         SESSION_ERROR     404
    ├── SessionTaken           SESSION_ERROR     409  another live socket holds it
    ├── CapacityReached        CAPACITY_REACHED  503
    ├── EnvironmentFailed      EXECUTION_ERROR   400 (a game rejected the request) / 500
    └── FactoryFailed          FACTORY_ERROR     500
"""

from __future__ import annotations

from pydantic import ValidationError

from env_servers.core.protocol import ErrorCode


class EnvServerError(Exception):
    """Root of the errors a client can be told about."""

    code: ErrorCode = ErrorCode.EXECUTION_ERROR
    status: int = 500

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidJSON(EnvServerError):
    code = ErrorCode.INVALID_JSON
    status = 400


class UnknownMessageType(EnvServerError):
    code = ErrorCode.UNKNOWN_TYPE
    status = 400


class InvalidRequest(EnvServerError):
    code = ErrorCode.VALIDATION_ERROR
    status = 422

    @classmethod
    def from_validation(cls, what: str, error: ValidationError) -> InvalidRequest:
        """Summarise a pydantic error as one sentence per problem, naming the field."""
        problems = []
        for item in error.errors(include_url=False):
            where = ".".join(str(part) for part in item["loc"]) or what
            problems.append(f"{where}: {item['msg']}")
        return cls(f"Invalid {what}: " + "; ".join(problems))


class EpisodeStateError(EnvServerError):
    code = ErrorCode.SESSION_ERROR
    status = 409


class UnknownSession(EnvServerError):
    code = ErrorCode.SESSION_ERROR
    status = 404


class SessionTaken(EnvServerError):
    code = ErrorCode.SESSION_ERROR
    status = 409


class CapacityReached(EnvServerError):
    code = ErrorCode.CAPACITY_REACHED
    status = 503


class EnvironmentFailed(EnvServerError):
    code = ErrorCode.EXECUTION_ERROR
    status = 500


class FactoryFailed(EnvServerError):
    code = ErrorCode.FACTORY_ERROR
    status = 500
