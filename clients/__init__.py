"""Typed clients for arenagym game servers (and plain OpenEnv servers), and TRL adapters.

Nothing under ``clients`` imports FastAPI: a trainer talks to games over the network only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "AsyncCountdownClient",
    "AsyncEnvClient",
    "AsyncWordleClient",
    "ClientError",
    "CountdownClient",
    "EnvClient",
    "StepResult",
    "WordleClient",
]

_WHERE = {
    "AsyncEnvClient": "clients.base",
    "EnvClient": "clients.base",
    "StepResult": "clients.base",
    "ClientError": "clients.errors",
    "AsyncWordleClient": "clients.games",
    "WordleClient": "clients.games",
    "AsyncCountdownClient": "clients.games",
    "CountdownClient": "clients.games",
}

if TYPE_CHECKING:
    from clients.base import AsyncEnvClient, EnvClient, StepResult
    from clients.errors import ClientError
    from clients.games import AsyncCountdownClient, AsyncWordleClient, CountdownClient, WordleClient


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'clients' has no attribute {name!r}")
