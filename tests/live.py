"""Real game servers on real loopback sockets, run in a thread of the test process."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from env_servers.core.config import WEBSOCKET_MODES, ServerSettings, WebSocketMode
from env_servers.core.registry import load_environment
from env_servers.core.server import DrainingServer, build_config

JSON_TYPE = {"content-type": "application/json"}
"""A raw body's header: servers refuse POST bodies that are not JSON."""
WEBSOCKET_IMPLEMENTATIONS = WEBSOCKET_MODES
"""How ``/ws`` is served: ``inline`` as ``arenagym serve`` does (``ws_protocol``), ``asgi``
by the app's ``WebSocketEndpoint`` as under any other ASGI server."""


class LiveServer:
    """A game server running in a thread of the test process, on 127.0.0.1 and a free port."""

    def __init__(self, game: str, settings: ServerSettings) -> None:
        self.env_type = load_environment(game)
        self.config = build_config(self.env_type, replace(settings, host="127.0.0.1", port=0))
        self.server = DrainingServer(self.config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def sessions(self) -> Any:
        return self.config.app.state.sessions

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}/ws"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@contextlib.contextmanager
def live_server(
    game: str, websocket: WebSocketMode = "inline", **settings: Any
) -> Iterator[LiveServer]:
    """A live ``game`` server; ``settings`` override the tests' defaults."""
    base = ServerSettings(log_level="warning", allow_explicit_secrets=True, ws=websocket)
    with LiveServer(game, replace(base, **settings)) as server:
        yield server


@contextlib.contextmanager
def live_app(app: Any) -> Iterator[str]:
    """Any ASGI app served by uvicorn in a thread on 127.0.0.1 and a free port; yields its URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
