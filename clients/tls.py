"""TLS contexts built once per process and shared by every client.

Building a verifying context loads a CA bundle, about 15 ms; httpx and websockets build one
for each client or connection they make, even for a plain ``http://`` URL in httpx's case. A
client per session pays that per session: an evaluation opening 500 sessions spent a third of
its time there. The contexts are the libraries' own defaults, so what is trusted is unchanged.
"""

from __future__ import annotations

import functools
import ssl

import certifi


@functools.cache
def https_context() -> ssl.SSLContext:
    """httpx's default: certifi's CA bundle."""
    return ssl.create_default_context(cafile=certifi.where())


@functools.cache
def _system_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def websocket_ssl(url: str) -> ssl.SSLContext | None:
    """websockets' default for a ``wss://`` URL (the system's CAs); ``None`` for ``ws://``,
    which takes no context."""
    return _system_context() if url.startswith("wss://") else None
