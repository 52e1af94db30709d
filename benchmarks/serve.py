"""Launch a comparison server: ``python -m benchmarks.serve {openenv,echo} --port P``.

Both run on the uvicorn settings of ``env_servers.core.server.build_config`` (same loop, HTTP
and WebSocket implementations, no per-message deflate, no access log), so the benchmark
compares frameworks, not uvicorn flags. The OpenEnv app is only imported when asked for: the
echo server's memory is then that of bare uvicorn.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import uvicorn

from env_servers.core.config import (
    DEFAULT_DRAIN_TIMEOUT,
    DEFAULT_HOST,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_SESSIONS,
)

WS_HARD_LIMIT_FACTOR = 16
"""As ``env_servers.core.server.WS_HARD_LIMIT_FACTOR`` (not imported: it pulls in FastAPI)."""


def _openenv_app(max_sessions: int) -> Any:
    from benchmarks.openenv_wordle import create_stock_app

    return create_stock_app(max_sessions)


def _echo_app(max_sessions: int) -> Any:
    from benchmarks.echo_app import app

    return app


APPS: dict[str, Callable[[int], Any]] = {"openenv": _openenv_app, "echo": _echo_app}


def uvicorn_config(app: Any, host: str, port: int, log_level: str) -> uvicorn.Config:
    """The keyword arguments our ``build_config`` passes, with its defaults."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        ws_max_size=DEFAULT_MAX_MESSAGE_BYTES * WS_HARD_LIMIT_FACTOR,
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=round(DEFAULT_DRAIN_TIMEOUT),  # typed int by uvicorn
        access_log=False,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.serve",
        description="Serve a comparison server for benchmarks.server_load.",
    )
    parser.add_argument(
        "kind",
        choices=sorted(APPS),
        help="openenv: stock OpenEnv Wordle; echo: bare ASGI echo (the floor)",
    )
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        help="OpenEnv's max_concurrent_envs (ignored by echo)",
    )
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    app = APPS[args.kind](args.max_sessions)
    uvicorn.Server(uvicorn_config(app, args.host, args.port, args.log_level)).run()


if __name__ == "__main__":
    main()
