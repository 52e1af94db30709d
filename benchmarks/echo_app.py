"""A bare ASGI app that answers every WebSocket frame with one fixed small JSON reply.

It is the floor of the load benchmark: what uvicorn's WebSocket stack alone costs per frame,
with no framework, no game and no JSON parsing. ``GET /health`` answers 200 so it is started
and waited for like the real servers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

REPLY = '{"type":"observation","data":{"observation":{},"reward":null,"done":false}}'
"""Shaped like a real observation frame so the client code path is the same; never done."""
_HEALTH = b'{"status":"healthy"}'


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    kind = scope["type"]
    if kind == "websocket":
        await _echo(receive, send)
    elif kind == "http":
        await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
        await send({"type": "http.response.body", "body": _HEALTH})
    elif kind == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


_HEADERS = [(b"content-type", b"application/json")]
_REPLY_MESSAGE: Message = {"type": "websocket.send", "text": REPLY}


async def _echo(receive: Receive, send: Send) -> None:
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        await send(_REPLY_MESSAGE)
