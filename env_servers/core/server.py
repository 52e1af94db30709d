"""Run a game server with uvicorn, draining cleanly on SIGTERM.

On SIGTERM/SIGINT the server stops accepting connections, lets requests in flight finish,
closes every WebSocket with 1001 (going away) instead of uvicorn's 1012, and exits.
"""

from __future__ import annotations

import gc
import socket
from typing import Any

import uvicorn

from env_servers.core.app import create_app
from env_servers.core.config import ServerSettings
from env_servers.core.environment import Environment
from env_servers.core.ws import close_all_sockets
from env_servers.core.ws_protocol import inline_protocol

WS_HARD_LIMIT_FACTOR = 16
"""Frames up to this many times ``max_message_bytes`` get an error frame; larger ones
close the socket at the protocol level (1009) before they are buffered."""


GC_THRESHOLD = 20_000


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


def build_config(
    env_type: type[Environment[Any, Any, Any, Any]], settings: ServerSettings
) -> uvicorn.Config:
    app = create_app(env_type, settings)
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        ws_max_size=settings.max_message_bytes * WS_HARD_LIMIT_FACTOR,
        ws=inline_protocol(app.state.sessions),
        ws_per_message_deflate=False,  # frames are small; compression costs CPU per step
        timeout_graceful_shutdown=settings.drain_timeout,
        access_log=settings.log_level in ("debug", "trace"),
    )


def serve(env_type: type[Environment[Any, Any, Any, Any]], settings: ServerSettings) -> None:
    """Serve until SIGTERM/SIGINT."""
    config = build_config(env_type, settings)
    # Everything imported so far lives as long as the process: keep it out of the collector's
    # scans, and collect the young generation less often (a step allocates a few dozen objects).
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    DrainingServer(config).run()
