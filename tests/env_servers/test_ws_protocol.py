"""The inline ``/ws`` protocol at the frame level, on real sockets.

Frames are written raw to the client's socket, so the server sees exactly the byte layout a
test wants: several frames in one segment, one frame split over several, fragments, control
frames between requests, masks missing, invalid UTF-8.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import WebSocket
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.frames import Frame, Opcode, apply_mask
from websockets.sync.client import ClientConnection, connect

from env_servers.core.config import ServerSettings
from env_servers.core.ws_protocol import text_frame_header
from tests.live import LiveServer, live_server


def raw_frame(
    payload: bytes, opcode: Opcode = Opcode.TEXT, fin: bool = True, mask: bool = True
) -> bytes:
    return Frame(opcode, payload, fin=fin).serialize(mask=mask, extensions=[])


def message(kind: str, data: Any = None, request_id: Any = None) -> bytes:
    body: dict[str, Any] = {"type": kind, "data": data or {}}
    if request_id is not None:
        body["id"] = request_id
    return json.dumps(body).encode()


def receive(ws: ClientConnection) -> dict[str, Any]:
    return json.loads(ws.recv(timeout=5))


def receive_reset(ws: ClientConnection) -> str:
    ws.send(message("reset", {"word": "crane"}).decode())
    return str(receive(ws)["data"]["session_id"])


@pytest.fixture
def ws(wordle_server: LiveServer) -> Iterator[ClientConnection]:
    with connect(wordle_server.ws_url) as client:
        client.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        yield client


def write(ws: ClientConnection, data: bytes) -> None:
    ws.socket.sendall(data)


def test_several_frames_in_one_segment_are_answered_in_order(ws: ClientConnection) -> None:
    frames = [raw_frame(message("reset", {"word": "crane"}, "r"))]
    frames += [
        raw_frame(message("step", {"guess": w}, i)) for i, w in enumerate(["slate", "pious"])
    ]
    frames.append(raw_frame(message("state", request_id="s")))
    write(ws, b"".join(frames))
    replies = [receive(ws) for _ in range(4)]
    assert [r["id"] for r in replies] == ["r", 0, 1, "s"]
    assert replies[3]["data"]["step_count"] == 2


def test_a_frame_split_across_segments_is_answered_once_complete(ws: ClientConnection) -> None:
    frame = raw_frame(message("reset", {"word": "crane"}, "split"))
    for cut in (1, 3, 9):  # inside the header, inside the mask, inside the payload
        write(ws, frame[:cut])
        time.sleep(0.05)
        write(ws, frame[cut:])
        assert receive(ws)["id"] == "split"
    # and the next whole frame is answered as usual
    ws.send(message("step", {"guess": "crane"}, "next").decode())
    assert receive(ws)["data"]["reward"] == 1.0


def test_a_frame_and_a_half_then_the_rest(ws: ClientConnection) -> None:
    first = raw_frame(message("reset", {"word": "crane"}, 1))
    second = raw_frame(message("step", {"guess": "crane"}, 2))
    write(ws, first + second[:5])
    assert receive(ws)["id"] == 1
    time.sleep(0.05)
    write(ws, second[5:])
    assert receive(ws)["data"]["done"] is True


def test_fragmented_message(ws: ClientConnection) -> None:
    ws.send(['{"type": "reset", ', '"data": {"word": "crane"}, ', '"id": "frag"}'])
    assert receive(ws)["id"] == "frag"
    ws.send(message("step", {"guess": "crane"}).decode())
    assert receive(ws)["data"]["done"] is True


def test_fragments_written_raw_with_a_ping_between(ws: ClientConnection) -> None:
    body = message("reset", {"word": "crane"}, "f")
    write(ws, raw_frame(body[:10], fin=False))
    ws.ping(b"hi").wait(5)  # a control frame in the middle of a fragmented message
    write(ws, raw_frame(body[10:], Opcode.CONT))
    assert receive(ws)["id"] == "f"


def test_ping_between_requests_is_answered(ws: ClientConnection) -> None:
    ws.send(message("reset", {"word": "crane"}).decode())
    receive(ws)
    assert ws.ping(b"x").wait(5)
    ws.send(message("step", {"guess": "crane"}).decode())
    assert receive(ws)["data"]["done"] is True


def test_binary_frames_are_answered(ws: ClientConnection) -> None:
    write(ws, raw_frame(message("reset", {"word": "crane"}, "b"), Opcode.BINARY))
    assert receive(ws)["id"] == "b"


def test_medium_frames_use_the_16_bit_length(ws: ClientConnection) -> None:
    ws.send(message("reset", {"word": "crane"}).decode())
    receive(ws)
    padded = message("step", {"message": " " * 300 + "[crane]"}, "m")
    assert 126 <= len(padded) < 65536
    write(ws, raw_frame(padded))
    reply = receive(ws)
    assert reply["id"] == "m" and reply["data"]["done"] is True


def test_invalid_utf8_gets_an_error_and_the_socket_stays_open(ws: ClientConnection) -> None:
    write(ws, raw_frame(b'{"type": "reset", "data": {"seed": "\xff"}}'))
    reply = receive(ws)
    assert reply["type"] == "error" and reply["data"]["code"] == "INVALID_JSON"
    ws.send(message("reset").decode())
    assert receive(ws)["type"] == "observation"


def test_unmasked_client_frame_is_a_protocol_error(wordle_server: LiveServer) -> None:
    with connect(wordle_server.ws_url) as ws:
        write(ws, raw_frame(message("reset"), mask=False))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1002
    assert httpx.get(f"{wordle_server.url}/health").json()["status"] == "healthy"


def test_frame_over_the_hard_limit_closes_with_1009(wordle_server: LiveServer) -> None:
    limit = wordle_server.config.ws_max_size
    with connect(wordle_server.ws_url, max_size=None) as ws:
        write(ws, raw_frame(b"x" * (limit + 1))[:4096])  # refused from its header alone
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


@pytest.fixture
def unlimited_server() -> Iterator[LiveServer]:
    """A server without a message rate limit, for bursts of thousands of frames."""
    with live_server("wordle", max_message_rate=0) as server:
        yield server


def test_a_client_that_does_not_read_is_paused_not_buffered(
    unlimited_server: LiveServer,
) -> None:
    """Requests keep coming while no reply is read: once replies back up the server stops
    answering and reading, so its buffer stays bounded; it resumes as they are read, and no
    request is lost or answered out of order."""
    wordle_server = unlimited_server
    port = int(wordle_server.url.rsplit(":", 1)[1])
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: replies back up
    sock.connect(("127.0.0.1", port))
    count = 20_000
    frames = b"".join(raw_frame(message("state", request_id=i)) for i in range(count))
    with connect(wordle_server.ws_url, sock=sock, max_queue=1) as ws:
        session_id = receive_reset(ws)
        sender = threading.Thread(target=write, args=(ws, frames))
        sender.start()
        time.sleep(0.5)  # nothing read meanwhile
        server_end = wordle_server.sessions.sessions[session_id].socket
        assert server_end.transport.get_write_buffer_size() < 256 * 1024  # ~6 MB unchecked
        ids = [receive(ws)["id"] for _ in range(count)]
        sender.join(timeout=10)
    assert ids == list(range(count))


def test_a_bad_handshake_on_ws_is_refused(wordle_server: LiveServer) -> None:
    port = int(wordle_server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
        )
        assert sock.recv(1024).startswith(b"HTTP/1.1 400")  # no Sec-WebSocket-Key
    assert httpx.get(f"{wordle_server.url}/health").json()["status"] == "healthy"


def test_other_websocket_paths_go_to_the_app(wordle_server: LiveServer) -> None:
    with pytest.raises(InvalidStatus) as refused:
        connect(wordle_server.ws_url.replace("/ws", "/elsewhere"))
    assert refused.value.response.status_code == 403

    async def shout(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text((await websocket.receive_text()).upper())
        await websocket.close()

    wordle_server.config.app.add_api_websocket_route("/shout", shout)
    with connect(wordle_server.ws_url.replace("/ws", "/shout")) as other:
        other.send("hello")
        assert other.recv(timeout=5) == "HELLO"


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_text_frame_header_matches_websockets(size: int) -> None:
    payload = b"a" * size
    expected = Frame(Opcode.TEXT, payload).serialize(mask=False, extensions=[])
    assert text_frame_header(size) + payload == expected


@pytest.mark.parametrize("cut", [2, 6])  # after the header; after the header and mask
def test_other_frames_split_after_their_header_keep_the_stream_in_step(
    ws: ClientConnection, cut: int
) -> None:
    """Frames the fast path hands to websockets stay whole to it, however they are cut."""
    mask = b"\x81\x86\x01\x02"  # after the header, the mask looks like a frame's start
    ping = b"\x89\x88" + mask + apply_mask(b"12345678", mask)
    write(ws, ping[:cut])
    time.sleep(0.05)
    write(ws, ping[cut:] + raw_frame(message("reset", {"word": "crane"}, "after")))
    assert receive(ws)["id"] == "after"
    big = raw_frame(message("step", {"message": "x" * 70_000}, "big"))  # a 64-bit length
    write(ws, big[:14])
    time.sleep(0.05)
    write(ws, big[14:])
    reply = receive(ws)  # refused before parsing, so without the id
    assert reply["type"] == "error" and "larger than" in reply["data"]["message"]
    ws.send(message("step", {"guess": "crane"}).decode())
    assert receive(ws)["data"]["done"] is True


def raw_client(server: LiveServer) -> socket.socket:
    """A plain TCP socket past the WebSocket handshake: no library answers for it."""
    port = int(server.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(
        b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    response = b""
    while b"\r\n\r\n" not in response:
        response += sock.recv(4096)
    assert response.startswith(b"HTTP/1.1 101")
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


@pytest.mark.parametrize("ping_first", [False, True])
def test_close_message_and_closing_frame_in_one_segment(
    wordle_server: LiveServer, ping_first: bool
) -> None:
    """A client that sends the "close" message and its own closing frame at once is closed
    at once, not after the server's close timeout."""
    with raw_client(wordle_server) as sock:
        before = raw_frame(b"hi", Opcode.PING) if ping_first else b""
        goodbye = raw_frame(message("close")) + raw_frame(b"\x03\xe8", Opcode.CLOSE)
        started = time.monotonic()
        sock.sendall(before + goodbye)
        received = read_until_closed(sock)  # the server closes the TCP connection...
        assert time.monotonic() - started < 3  # ...at once
        assert received.endswith(b"\x88\x08\x03\xe8closed")  # after its closing frame, 1000
    assert httpx.get(f"{wordle_server.url}/health").json()["status"] == "healthy"


def test_ids_must_be_strings_or_numbers(ws: ClientConnection) -> None:
    nested: Any = "x"
    for _ in range(300):
        nested = [nested]
    for bad_id in (nested, {"a": 1}):
        ws.send(json.dumps({"type": "state", "id": bad_id}))
        reply = receive(ws)
        assert reply["type"] == "error" and "id" not in reply
        assert reply["data"]["code"] == "VALIDATION_ERROR" and '"id"' in reply["data"]["message"]
    ws.send(message("reset", {"word": "crane"}, 7.5).decode())
    assert receive(ws)["id"] == 7.5


def test_a_peer_that_stops_reading_and_answering_is_dropped_and_its_session_freed() -> None:
    server = LiveServer(
        "wordle",
        ServerSettings(
            log_level="warning", allow_explicit_secrets=True, session_ttl=0.5, max_message_rate=0
        ),
    )
    server.config.ws_ping_interval = server.config.ws_ping_timeout = 0.3
    with server:
        port = int(server.url.rsplit(":", 1)[1])
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        # max_queue=1: once a reply waits unread, the client stops reading and stops
        # answering pings, like a hung process whose kernel still holds the connection
        with connect(server.ws_url, sock=sock, max_queue=1, ping_interval=None) as ws:
            session_id = receive_reset(ws)
            server_end = server.sessions.sessions[session_id].socket
            server_end.close_timeout = 0.5
            frames = b"".join(raw_frame(message("state", request_id=i)) for i in range(20_000))
            threading.Thread(target=write, args=(ws, frames), daemon=True).start()
            deadline = time.monotonic() + 15
            while server.sessions.active and time.monotonic() < deadline:
                time.sleep(0.1)
            assert server.sessions.active == 0
