"""A lean WebSocket client connection for load generation: websockets' sans-I/O protocol
driven by asyncio callbacks.

The load client must cost less than the servers it measures, or its own queueing shows up
as their latency. websockets' asyncio connection spends a future, a lock and a task wake-up
per message; here each incoming message is handed to a callback from ``data_received``,
which may send the next request at once. Handshake, framing, masking, ping answers and the
closing handshake are websockets' (``ClientProtocol``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import cast

from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri

CLOSE_TIMEOUT = 5.0

MessageHandler = Callable[[bytes], None]


class WSConnection(asyncio.Protocol):
    """One client connection. ``on_message`` receives each text or binary message; until it
    is set, messages are kept in ``unclaimed`` (a server's refusal arrives that way)."""

    def __init__(self, url: str) -> None:
        if not url.startswith("ws://"):
            raise ValueError(f"only ws:// URLs are supported here, not {url!r}")
        self.conn = ClientProtocol(parse_uri(url), max_size=None)
        loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = loop.create_future()
        self.lost: asyncio.Future[None] = loop.create_future()
        """Done when the connection ends: with an exception when ``on_message`` raised."""
        self.unclaimed: list[bytes] = []
        self.on_message: MessageHandler = self.unclaimed.append
        self.transport: asyncio.Transport | None = None

    @classmethod
    async def connect(cls, url: str, timeout: float = 60.0) -> WSConnection:
        """Open a connection to ``ws://host:port/path`` and complete the handshake."""
        uri = parse_uri(url)
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(lambda: cls(url), uri.host, uri.port)
        try:
            await asyncio.wait_for(asyncio.shield(connection.opened), timeout)
        except BaseException:
            connection.abort()
            raise
        connection.check_open()
        return connection

    def check_open(self) -> None:
        """Raise, with what the server said, if it has already closed the connection."""
        if self.conn.state is not State.OPEN:
            said = b" ".join(self.unclaimed)[:300].decode(errors="replace")
            raise ConnectionError(f"the server closed the connection: {said or self.conn.state}")

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.conn.send_request(self.conn.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        conn = self.conn
        conn.receive_data(data)
        try:
            for event in conn.events_received():
                if isinstance(event, Frame):
                    if event.opcode is Opcode.TEXT or event.opcode is Opcode.BINARY:
                        self.on_message(bytes(event.data))
                elif isinstance(event, Response) and not self.opened.done():
                    if conn.handshake_exc is not None:
                        self.opened.set_exception(conn.handshake_exc)
                    else:
                        self.opened.set_result(None)
        except Exception as error:  # the handler's failure ends this connection, visibly
            if not self.lost.done():
                self.lost.set_exception(error)
            self.abort()
            return
        self._flush()  # pongs and the reply to a closing frame

    def eof_received(self) -> None:
        self.conn.receive_eof()
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            reason = self.conn.handshake_exc or exc or ConnectionError("closed during handshake")
            self.opened.set_exception(reason)
        if not self.lost.done():
            self.lost.set_result(None)

    # sending

    def send(self, message: bytes) -> None:
        """Send one text message (UTF-8 bytes)."""
        self.check_open()
        self.conn.send_text(message)
        self._flush()

    def _flush(self) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        for chunk in self.conn.data_to_send():
            if chunk:
                transport.write(chunk)
            elif transport.can_write_eof():
                transport.write_eof()  # websockets' signal to half-close

    async def close(self) -> None:
        """Closing handshake, then the TCP connection; dropped after ``CLOSE_TIMEOUT``."""
        if self.transport is None or self.transport.is_closing():
            return
        self.on_message = _ignore
        with contextlib.suppress(Exception):
            self.conn.send_close(1000)
            self._flush()
        try:
            await asyncio.wait_for(asyncio.shield(self.lost), CLOSE_TIMEOUT)
        except (TimeoutError, Exception):
            pass
        finally:
            self.abort()

    def abort(self) -> None:
        if not self.opened.done():
            self.opened.cancel()
        if self.transport is not None:
            self.transport.abort()


def _ignore(message: bytes) -> None:
    pass


class OneAtATime:
    """A connection spoken to one request at a time: each reply is awaited in turn (the soak
    and the scaling grid; the closed-loop load answers in callbacks instead)."""

    def __init__(self, ws: WSConnection) -> None:
        self.ws = ws
        self.replies: asyncio.Queue[bytes] = asyncio.Queue()
        for message in ws.unclaimed:
            self.replies.put_nowait(message)
        ws.on_message = self.replies.put_nowait

    @classmethod
    async def open(cls, url: str, timeout: float = 60.0) -> OneAtATime:
        return cls(await WSConnection.connect(url, timeout))

    async def request(self, message: bytes, timeout: float) -> bytes:
        """Send ``message`` and return the next message received; raises ``ConnectionError``
        when the connection ends first, ``TimeoutError`` after ``timeout`` seconds."""
        self.ws.send(message)
        lost = asyncio.ensure_future(asyncio.shield(self.ws.lost))
        reply = asyncio.ensure_future(self.replies.get())
        done, _ = await asyncio.wait({lost, reply}, timeout=timeout, return_when="FIRST_COMPLETED")
        lost.cancel()
        if reply in done:
            return reply.result()
        reply.cancel()
        if done:
            raise ConnectionError("the server closed the connection before replying")
        raise TimeoutError(f"no reply within {timeout:g} s")

    async def close(self) -> None:
        await self.ws.close()
