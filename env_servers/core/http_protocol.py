"""uvicorn's httptools protocol with bounds on reading a request's headers.

uvicorn reads headers of any size for as long as a client takes to send them, and keeps a
connection that never sends a byte: 100 MB of headers or a few hundred silent sockets cost
memory and file descriptors without ever reaching the app. Here a request's line and headers
may take at most ``max_header_bytes`` (else HTTP 431) and ``header_timeout`` seconds, counted
from the connection or the end of the previous request (else HTTP 408, or just a close when
not a byte of a request came); both close the connection. Pipelined requests are bounded
too: whatever follows a request's body counts as the next request's headers.

On SIGTERM a request whose body is still arriving is cut off rather than waited for: its
sender is not going to finish within the drain, and the app sees a disconnect at once.

This subclasses uvicorn's own protocol module, so it lives under the same version pins as
``ws_protocol`` (``server.INLINE_WS_TESTED``).
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from env_servers.core.config import ServerSettings


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """One HTTP connection whose request headers are bounded in size and time."""

    max_header_bytes: ClassVar[int]
    header_timeout: ClassVar[float]
    _reading_headers = False
    _header_bytes = 0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()

    def _await_headers(self) -> None:
        self._reading_headers, self._header_bytes = True, 0
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_timed_out)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def data_received(self, data: bytes) -> None:
        if not self._reading_headers:
            super().data_received(data)
            return
        room = self.max_header_bytes - self._header_bytes
        if len(data) <= room:
            self._header_bytes += len(data)
            super().data_received(data)
            return
        # more than the headers may take: parse only what they may, then see if they ended
        super().data_received(data[:room])
        if self._reading_headers:
            self._refuse(
                431,
                f"Request headers larger than {self.max_header_bytes} bytes: send fewer or "
                "shorter headers.",
            )
            return
        protocol = self.transport.get_protocol()
        if protocol is not self:  # upgraded to a WebSocket within the bytes parsed
            protocol.data_received(data[room:])
        elif not self.transport.is_closing():
            super().data_received(data[room:])

    def on_headers_complete(self) -> None:
        self._reading_headers = False
        self._cancel_header_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        if not self.transport.is_closing() and self.transport.get_protocol() is self:
            self._await_headers()  # what follows is the next request, pipelined or not

    def _headers_timed_out(self) -> None:
        self._header_timer = None
        if not self._reading_headers or self.transport.get_protocol() is not self:
            return
        if self.cycle is not None and not self.cycle.response_complete:
            # still answering the previous request: the next one's time starts after it
            self._header_timer = self.loop.call_later(self.header_timeout, self._headers_timed_out)
            return
        if self._header_bytes:
            self._refuse(408, f"Request headers not received within {self.header_timeout:g} s.")
        else:  # nothing of a request came: close as an idle keep-alive connection is closed
            self._reading_headers = False
            self.transport.close()

    def _refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with ``message`` as plain text and close the connection."""
        self._reading_headers = False
        self._cancel_header_timer()
        if self.transport.is_closing():
            return
        phrase = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}[status]
        body = message.encode()
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (status, phrase, len(body), body)
        )
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """Draining: a request whose body is still arriving is dropped, not waited for."""
        cycle = self.cycle
        if cycle is not None and cycle.more_body and not cycle.response_started:
            self.transport.close()
            return
        super().shutdown()


def bounded_http_protocol(settings: ServerSettings) -> type[BoundedHttpToolsProtocol]:
    """The protocol class to give uvicorn (``http=``) for ``settings``' header bounds."""
    return type(
        "BoundedHttpToolsProtocol",
        (BoundedHttpToolsProtocol,),
        {"max_header_bytes": settings.max_header_bytes, "header_timeout": settings.header_timeout},
    )
