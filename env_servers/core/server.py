"""Run a game server with uvicorn, draining cleanly on SIGTERM.

On SIGTERM/SIGINT the server stops accepting connections, lets requests in flight finish,
closes every WebSocket with 1001 (going away) instead of uvicorn's 1012, and exits.

``/ws`` is answered inline (``ws_protocol``) only where the installed uvicorn and websockets
are versions that path is tested on: it subclasses uvicorn's private protocol, so it is
imported only then. Anywhere else uvicorn's own protocol hands ``/ws`` to the app's endpoint.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.metadata
import logging
import math
import re
import socket
from typing import Any

import uvicorn
from uvicorn.config import WS_PROTOCOLS

from env_servers.core.access import Gate
from env_servers.core.app import create_app
from env_servers.core.config import ServerSettings
from env_servers.core.environment import Environment
from env_servers.core.http_protocol import bounded_http_protocol
from env_servers.core.logs import install_redactor
from env_servers.core.sessions import SessionManager
from env_servers.core.ws import close_all_sockets

INLINE_WS_TESTED: dict[str, tuple[str, str]] = {
    "uvicorn": ("0.52.1", "0.55"),
    "websockets": ("16.0", "18"),
}
"""Versions the inline ``/ws`` path is tested on: the lowest, and the first one not tested.
It needs uvicorn's ``close_timeout`` (0.52.1) and websockets' ``current_size`` (16.0);
uvicorn changes the private module it subclasses in most minor releases. ``pyproject.toml``
declares the same ranges, and CI runs the server tests on the lowest."""

ASGI_WS, ASGI_WS_BEFORE_0_35 = "websockets-sansio", "websockets"
"""uvicorn's own protocols, which hand ``/ws`` to the app: the sans-I/O one where it exists."""

WS_HARD_LIMIT_FACTOR = 16
"""Frames up to this many times ``max_message_bytes`` get an error frame; larger ones
close the socket at the protocol level (1009) before they are buffered."""


GC_THRESHOLD = 20_000
logger = logging.getLogger("uvicorn.error")


class DrainingServer(uvicorn.Server):
    """uvicorn's server, closing our sockets with 1001 before its own shutdown."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()  # stop accepting first
        app = self.config.loaded_app
        while hasattr(app, "app") and not hasattr(app, "state"):
            app = app.app  # unwrap uvicorn's middleware to reach the FastAPI app
        manager = getattr(getattr(app, "state", None), "sessions", None)
        if manager is not None:
            await close_all_sockets(manager)
        await super().shutdown(sockets)


def inline_ws_unsupported() -> str | None:
    """Why the inline ``/ws`` path must not run on the installed versions, or None."""
    for package, (lowest, beyond) in INLINE_WS_TESTED.items():
        try:
            installed = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:  # importable, yet not installed
            return f"it cannot tell which {package} is installed"
        if not _release(lowest) <= _release(installed) < _release(beyond):
            return f"it is tested on {package}>={lowest},<{beyond}, not {package} {installed}"
    return None


def _release(version: str) -> tuple[int, ...]:
    """The numeric release of a version string (``0.52.1rc1`` is ``(0, 52, 1)``)."""
    match = re.match(r"\d+(?:\.\d+)*", version)
    parts = [int(part) for part in match.group().split(".")] if match else []
    while parts and parts[-1] == 0:  # 16 and 16.0 are the same release
        parts.pop()
    return tuple(parts)


def websocket_protocol(
    settings: ServerSettings, manager: SessionManager, gate: Gate
) -> tuple[type[asyncio.Protocol] | str, str | None]:
    """uvicorn's ``ws=`` for ``settings.ws``, and why ``inline`` fell back to ASGI, if it did."""
    reason = None
    if settings.ws == "inline":
        reason = inline_ws_unsupported()
        if reason is None:
            try:
                from env_servers.core.ws_protocol import inline_protocol
            except ImportError as error:
                reason = f"importing it failed ({error})"
            else:
                return inline_protocol(manager, gate), None
    return ASGI_WS if ASGI_WS in WS_PROTOCOLS else ASGI_WS_BEFORE_0_35, reason


def build_config(
    env_type: type[Environment[Any, Any, Any, Any]], settings: ServerSettings
) -> uvicorn.Config:
    """uvicorn's config for serving ``env_type``; says once if ``/ws`` fell back to ASGI."""
    app = create_app(env_type, settings)
    ws, fallback = websocket_protocol(settings, app.state.sessions, app.state.gate)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        http=bounded_http_protocol(settings),
        ws_max_size=settings.max_message_bytes * WS_HARD_LIMIT_FACTOR,
        ws=ws,
        ws_per_message_deflate=False,  # frames are small; compression costs CPU per step
        timeout_graceful_shutdown=math.ceil(settings.drain_timeout),  # uvicorn types it int
        access_log=settings.log_level in ("debug", "trace"),
    )
    install_redactor()  # after uvicorn configured its loggers: their lines show no session id
    if fallback is not None:  # logged once uvicorn's logging is set up, in its format
        logger.warning("Serving /ws through ASGI, not inline: %s.", fallback)
    return config


def serve(env_type: type[Environment[Any, Any, Any, Any]], settings: ServerSettings) -> None:
    """Serve until SIGTERM/SIGINT."""
    config = build_config(env_type, settings)
    # Everything imported so far lives as long as the process: keep it out of the collector's
    # scans, and collect the young generation less often (a step allocates a few dozen objects).
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    DrainingServer(config).run()
