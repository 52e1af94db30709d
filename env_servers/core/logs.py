"""Session ids are secrets: whoever holds one can play its game, so no log line shows one.

uvicorn logs request targets (its access log, and WebSocket handshakes) with their query
string, where ``/ws?session_id=…`` carries the id; ``Redactor`` masks it in every record of
the loggers it is installed on, our own included.
"""

from __future__ import annotations

import logging
import re

SECRET_QUERY = re.compile(r"((?:session_id|token)=)[^&\s\"']+", re.IGNORECASE)
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
    """``text`` with the values of ``session_id=`` and ``token=`` masked."""
    return SECRET_QUERY.sub(r"\1" + MASK, text)


class Redactor(logging.Filter):
    """Masks secrets in a record's message and arguments; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and "=" in record.msg:
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact(arg) if isinstance(arg, str) and "=" in arg else arg for arg in record.args
            )
        return True


def install_redactor(names: tuple[str, ...] = LOGGERS) -> None:
    """Put one ``Redactor`` on each logger (idempotent: uvicorn may configure logging again)."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, Redactor) for existing in logger.filters):
            logger.addFilter(Redactor())
