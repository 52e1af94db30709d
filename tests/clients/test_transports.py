"""Both WebSocket transports against a scripted server, for what only a real socket shows:
a late reply skipped after a timeout, and pings answered while the caller is silent."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import pytest
from websockets.sync.server import ServerConnection, serve

from clients.async_transports import AsyncWebSocketTransport
from clients.errors import RequestTimeout
from clients.protocol import ConnectionOptions
from clients.transports import WebSocketTransport
from env_servers.core.protocol import EXT_REQUEST_ID


def held_until_next(ws: ServerConnection) -> None:
    """Echoes each step's guess; the reply to ``"slow"`` is held back until the next frame
    arrives, and sent just before that frame's own reply."""
    held: bytes | None = None
    for raw in ws:
        message = orjson.loads(raw)
        reply = orjson.dumps(
            {"type": "observation", "data": message.get("data"), "id": message.get("id")}
        )
        if (message.get("data") or {}).get("guess") == "slow":
            held = reply
            continue
        if held is not None:
            ws.send(held.decode())
            held = None
        ws.send(reply.decode())


@contextmanager
def scripted(handler: Any, **options: Any) -> Iterator[str]:
    with serve(handler, "127.0.0.1", 0, compression=None, **options) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.socket.getsockname()[1]}"
        finally:
            server.shutdown()
            thread.join(timeout=5)


IDS = ConnectionOptions(frozenset({EXT_REQUEST_ID}), message_timeout=0.5, max_retries=0)
"""Request ids but no resume: a dropped socket would fail the next step."""


def test_sync_transport_skips_the_late_reply_of_a_timed_out_request() -> None:
    with scripted(held_until_next) as url:
        transport = WebSocketTransport(url, IDS)
        with pytest.raises(RequestTimeout):
            transport.step({"guess": "slow"})
        assert transport.step({"guess": "crane"}) == {"guess": "crane"}
        assert transport.reconnects == 0
        transport.close()


async def test_async_transport_skips_the_late_reply_of_a_timed_out_request() -> None:
    with scripted(held_until_next) as url:
        transport = AsyncWebSocketTransport(url, IDS)
        with pytest.raises(RequestTimeout):
            await transport.step({"guess": "slow"})
        assert await transport.step({"guess": "crane"}) == {"guess": "crane"}
        assert transport.reconnects == 0
        await transport.close()


def test_sync_transport_answers_pings_while_the_caller_is_silent() -> None:
    # the server closes a socket whose pong is a second late; the caller sleeps longer
    with scripted(held_until_next, ping_interval=0.1, ping_timeout=1.0) as url:
        transport = WebSocketTransport(url, IDS)
        assert transport.step({"guess": "crane"}) == {"guess": "crane"}
        time.sleep(1.5)
        assert transport.step({"guess": "slate"}) == {"guess": "slate"}
        assert transport.reconnects == 0
        transport.close()
