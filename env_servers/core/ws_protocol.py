"""uvicorn's WebSocket protocol, answering ``/ws`` frames inline where they are parsed.

Through ASGI every frame costs a queue hand-off to the app's task, an event-loop pass to wake
it, a pause and a resume of reading (two ``epoll_ctl`` calls) and a message dict each way:
more than the game step itself. Here ``/ws`` frames are answered by ``ws.answer`` in the
``data_received`` callback that read them, and the reply is written before it returns.

A client's request is almost always one small, complete, masked text frame. Frame headers
are read here, so frame boundaries are always known: such frames are unmasked here and the
replies framed here (a few header bytes), which skips websockets' generator-based parser;
every other frame (fragments, control frames, 64-bit lengths) is handed to websockets whole,
one frame at a time, so its parser always starts at a frame boundary. Everything else stays
uvicorn's and websockets': the handshake, limits, ping/pong, keepalive, the closing handshake
and shutdown. Other WebSocket paths go to the ASGI app, and ``ws.WebSocketEndpoint`` serves
``/ws`` under any other ASGI server.

One difference from the ASGI path: a text frame that is not valid UTF-8 gets an
``INVALID_JSON`` error frame and the socket stays open (uvicorn's ASGI path closes with 1007).

This module subclasses a private uvicorn class and reads websockets' parser state, so
``server.websocket_protocol`` imports it only on the versions in ``INLINE_WS_TESTED``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from typing import ClassVar

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import apply_mask
from websockets.http11 import Request
from websockets.protocol import State

from env_servers.core.access import Gate
from env_servers.core.errors import EnvServerError
from env_servers.core.protocol import WS_CLOSE_FRAGMENT_TIMEOUT, WS_CLOSE_RATE
from env_servers.core.sessions import Session, SessionManager
from env_servers.core.ws import RATE_REASON, answer, bind, refusal, resume_id

WS_PATH = "/ws"
_FIN_TEXT, _FIN_BINARY = 0x81, 0x82
"""First byte of an unfragmented text / binary frame without extension bits."""
logger = logging.getLogger("uvicorn.error")


class InlineWebSocketProtocol(WebSocketsSansIOProtocol):
    """One connection. On ``/ws`` it is also the socket bound to its session (``close``), so
    draining and re-attaching close it like any other socket."""

    manager: ClassVar[SessionManager]
    gate: ClassVar[Gate]
    inline = False
    """Whether this connection is ours (``/ws``) rather than the ASGI app's."""
    session: Session | None = None
    _writes_paused = False
    _backlog = b""
    """Bytes read but not yet handled: an incomplete frame, or requests waiting while the
    client is not reading its replies. At most one read plus one frame."""
    _passthrough = 0
    """Bytes of the current frame still to hand to websockets' parser."""
    _unfinished: asyncio.TimerHandle | None = None
    """Closes the socket when a message handed to websockets (fragments, or a frame still
    arriving) is not finished within ``fragment_timeout``: its buffer is not held forever."""

    def handle_connect(self, event: Request) -> None:
        path, _, query = event.path.partition("?")
        if path != WS_PATH:
            super().handle_connect(event)
            return
        self.inline = True
        self.request = event
        owner, denied = self.gate.check("GET", path, _first_header(event), websocket=True)
        if denied is not None:
            self.response = self.conn.reject(denied.status, denied.message)
        else:
            self.response = self.conn.accept(event)
        self.handshake_initiated = self.handshake_complete = True
        if self.response.status_code != 101:  # refused, or not a valid WebSocket handshake
            self.close_sent = True
            self.conn.send_response(self.response)
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.transport.close()
            return
        del self.response.headers["Date"]
        self.response.headers.update(
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in self.default_headers
        )
        if logger.isEnabledFor(logging.INFO):
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "-"
            logger.info('%s - "WebSocket %s" [accepted]', client, path)  # no session id
        self.conn.send_response(self.response)
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.start_keepalive()

        manager = self.manager
        resume = resume_id(query.encode())
        try:
            self.session = bind(manager, self, resume, owner)
        except EnvServerError as error:
            frame, code = refusal(manager, error, resume)
            self._write(frame)
            self._close(code, error.code)

    def data_received(self, data: bytes) -> None:
        if self._backlog:
            data, self._backlog = self._backlog + data, b""
        if self.session is None:  # the handshake, another path, or a refused socket
            super().data_received(data)
            return
        limit = self.conn.max_message_size or sys.maxsize
        while data:
            if self._passthrough:  # the rest of a frame websockets is parsing
                chunk, data = data[: self._passthrough], data[self._passthrough :]
                self._passthrough -= len(chunk)
                super().data_received(chunk)
                continue
            if self.close_sent:  # only the closing handshake is left: websockets' part
                super().data_received(data)
                return
            if self._writes_paused:  # replies are backing up: answer the rest later
                self._backlog = data
                return
            header = _frame_header(data)
            if header is None:  # not even a whole header yet
                self._backlog = data
                return
            simple, mask, end = header
            if simple and self._between_messages() and end - mask - 4 <= limit:
                if len(data) < end:  # wait for the rest of the frame
                    self._backlog = data
                    return
                self._on_message(apply_mask(data[mask + 4 : end], data[mask : mask + 4]))
                data = data[end:]
            else:  # anything else goes to websockets' parser, exactly one frame of it
                chunk, data = data[:end], data[end:]
                self._passthrough = end - len(chunk)
                super().data_received(chunk)
                unfinished = self._passthrough or not self._between_messages()
                if unfinished and self._unfinished is None and not self.close_sent:
                    self._unfinished = self.loop.call_later(
                        self.manager.settings.fragment_timeout, self._message_timed_out
                    )

    def _between_messages(self) -> bool:
        """Whether a new data frame may start here (not inside a fragmented message)."""
        return self.conn.state is State.OPEN and self.conn.current_size is None and not self.frames

    def _message_timed_out(self) -> None:
        self._unfinished = None
        timeout = self.manager.settings.fragment_timeout
        self._close(WS_CLOSE_FRAGMENT_TIMEOUT, f"message unfinished after {timeout:g} s")

    def _message_finished(self) -> None:
        if self._unfinished is not None:
            self._unfinished.cancel()
            self._unfinished = None

    def send_receive_event_to_app(self) -> None:
        """A message websockets parsed: answer it on ``/ws``, else hand it to the app."""
        if not self.inline:
            super().send_receive_event_to_app()
            return
        self._message_finished()
        frames, self.frames = self.frames, []
        if self.session is not None and not self.close_sent:
            self._on_message(frames[0] if len(frames) == 1 else b"".join(frames))

    def _on_message(self, data: bytes) -> None:
        session, manager = self.session, self.manager
        if session is None or session.socket is not self:
            return  # closed, or re-attached elsewhere: this socket is being closed
        if not manager.admit(session):
            self._close(WS_CLOSE_RATE, RATE_REASON)
            return
        try:
            reply = answer(manager, session, data, manager.settings.max_message_bytes)
        except Exception:  # a bug, not bad input: answer() reports bad input itself
            logger.exception("answering a frame on /ws failed")
            self._close(1011, "internal error")
            return
        if reply is None:  # the client's "close" message
            self._close(1000, "closed")
            manager.close(session)
        else:
            self._write(reply)

    def _write(self, message: bytes) -> None:
        """Send ``message`` (UTF-8 JSON) as one text frame."""
        if not self.transport.is_closing():
            self.transport.write(text_frame_header(len(message)) + message)

    def _close(self, code: int, reason: str) -> None:
        """Start the closing handshake; the connection is dropped after ``close_timeout``
        even if the peer neither answers nor reads."""
        if self.close_sent or self.transport.is_closing() or self.conn.state is not State.OPEN:
            return  # already closing (the peer's close frame may be in this very read)
        self.conn.send_close(code, reason)
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        if self._writes_paused:
            self._writes_paused = False
            self.transport.resume_reading()  # the peer's closing frame must still get through
        if self._backlog:  # it may hold the peer's closing frame already
            self.loop.call_soon(self.data_received, b"")
        self.close_timer = self.loop.call_later(self.close_timeout, self.transport.abort)

    async def close(self, code: int, reason: str = "") -> None:
        """Close from the server's side: draining (1001) or its session closed (1000)."""
        self._close(code, reason)

    def keepalive_timeout(self) -> None:
        """uvicorn fails a connection whose pongs stopped; drop it for good after
        ``close_timeout`` even if the peer stopped reading too, so its session is freed."""
        super().keepalive_timeout()
        self.loop.call_later(self.close_timeout, self.transport.abort)

    # Backpressure: a client that stops reading its replies stops being read, and what was
    # already read waits in the backlog, so replies never pile up beyond the transport's limit.

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.session is not None and not self.close_sent:
            self._writes_paused = True
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        super().resume_writing()
        if not self._writes_paused:
            return
        self._writes_paused = False
        if self._backlog:
            self.data_received(b"")
        if not self._writes_paused and not self.close_sent:
            self.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self._message_finished()
        super().connection_lost(exc)
        if self.session is not None:
            self.manager.detach(self.session, self)
            self.session = None


def _first_header(event: Request) -> Callable[[str], str | None]:
    """A handshake's header by name, the first of repeated ones (as ``access.asgi_header``)."""
    return lambda name: next(iter(event.headers.get_all(name)), None)


def _frame_header(data: bytes) -> tuple[bool, int, int] | None:
    """For the frame ``data`` starts with: whether it is an unfragmented, masked text or
    binary frame with a 7- or 16-bit length, where its mask starts and where it ends;
    None until the whole header is there."""
    if len(data) < 2:
        return None
    first, second = data[0], data[1]
    size, start = second & 0x7F, 2
    if size == 126:
        if len(data) < 4:
            return None
        size, start = int.from_bytes(data[2:4]), 4
    elif size == 127:
        if len(data) < 10:
            return None
        size, start = int.from_bytes(data[2:10]), 10
    masked = bool(second & 0x80)
    simple = masked and start < 10 and first in (_FIN_TEXT, _FIN_BINARY)
    mask_bytes = 4 if masked else 0
    if len(data) < start + mask_bytes and simple:
        return None
    return simple, start, start + mask_bytes + size


def text_frame_header(size: int) -> bytes:
    """RFC 6455 header of an unfragmented, unmasked text frame of ``size`` bytes."""
    if size < 126:
        return bytes((_FIN_TEXT, size))
    if size < 65536:
        return b"\x81\x7e" + size.to_bytes(2)
    return b"\x81\x7f" + size.to_bytes(8)


def inline_protocol(manager: SessionManager, gate: Gate) -> type[InlineWebSocketProtocol]:
    """The protocol class to give uvicorn (``ws=``) for an app serving ``manager``, whose
    handshakes ``gate`` checks."""
    return type(
        "InlineWebSocketProtocol", (InlineWebSocketProtocol,), {"manager": manager, "gate": gate}
    )
