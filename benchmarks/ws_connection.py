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
from websockets.uri import parse_uri

CLOSE_TIMEOUT = 5.0

MessageHandler = Callable[[bytes], None]


class WSConnection(asyncio.Protocol):
    """One client connection. ``on_message`` receives each text or binary message."""

    def __init__(self, url: str) -> None:
        self.conn = ClientProtocol(parse_uri(url), max_size=None)
        loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = loop.create_future()
        self.lost: asyncio.Future[None] = loop.create_future()
        self.on_message: MessageHandler = _ignore
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
        return connection

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.conn.send_request(self.conn.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        conn = self.conn
        conn.receive_data(data)
        for event in conn.events_received():
            if isinstance(event, Frame):
                if event.opcode is Opcode.TEXT or event.opcode is Opcode.BINARY:
                    self.on_message(bytes(event.data))
            elif isinstance(event, Response) and not self.opened.done():
                if conn.handshake_exc is not None:
                    self.opened.set_exception(conn.handshake_exc)
                else:
                    self.opened.set_result(None)
        self._flush()  # pongs and the reply to a closing frame

    def eof_received(self) -> None:
        self.conn.receive_eof()
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        error = exc or ConnectionError("connection closed")
        for future in (self.opened, self.lost):
            if not future.done():
                if future is self.lost:
                    future.set_result(None)
                else:
                    future.set_exception(error)

    # sending

    def send(self, message: bytes) -> None:
        """Send one text message (UTF-8 bytes)."""
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
        """Closing handshake, then the TCP connection; forced after ``CLOSE_TIMEOUT``."""
        if self.transport is None or self.transport.is_closing():
            return
        self.on_message = _ignore
        with contextlib.suppress(Exception):
            self.conn.send_close(1000)
            self._flush()
        try:
            await asyncio.wait_for(asyncio.shield(self.lost), CLOSE_TIMEOUT)
        except TimeoutError:
            pass
        finally:
            self.abort()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.close()


def _ignore(message: bytes) -> None:
    pass
