"""Session ids are secrets: whoever holds one can play its game, so no log line shows one.

uvicorn logs request targets (its access log, and WebSocket handshakes) with their query
string, where ``/ws?session_id=…`` carries the id, and ``DELETE /sessions/{id}`` carries it
in the path; ``Redactor`` masks it in every record of
the loggers it is installed on, our own included.
"""

from __future__ import annotations

import logging
import re

SECRET = re.compile(r"((?:session_id|token)=|/sessions/)[^&/?\s\"']+", re.IGNORECASE)
"""A query's ``session_id=`` or ``token=`` value, and the id in ``DELETE /sessions/{id}``."""
MASK = "…"
LOGGERS = (
    "uvicorn",
    "uvicorn.error",
    "uvicorn.access",
    "arenagym.sessions",
    "arenagym.mcp",
)
"""A logger's filters see only records logged to it by name, so each one that writes is named."""


def redact(text: str) -> str:
    """``text`` with the values of ``session_id=`` and ``token=``, and session paths, masked."""
    return SECRET.sub(r"\1" + MASK, text)


class Redactor(logging.Filter):
    """Masks secrets in a record's message and arguments; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(arg) if isinstance(arg, str) else arg for arg in record.args)
        return True


def install_redactor(names: tuple[str, ...] = LOGGERS) -> None:
    """Put one ``Redactor`` on each logger (idempotent: uvicorn may configure logging again)."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, Redactor) for existing in logger.filters):
            logger.addFilter(Redactor())
