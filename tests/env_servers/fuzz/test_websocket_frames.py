"""Hypothesis sends arbitrary frames to ``/ws`` (JSON of any shape, protocol-shaped messages
with wrong fields, text, bytes): each is answered with a frame of the protocol, or the socket
is closed with a proper code (never 1011, never a dropped connection without a close frame),
and the server stays healthy, its sessions all accounted for once the sockets are gone."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from env_servers.core.protocol import ErrorCode
from tests.env_servers.fuzz.budget import EXAMPLES
from tests.live import WEBSOCKET_IMPLEMENTATIONS, LiveServer, live_server

pytestmark = pytest.mark.fuzz

PROPER_CLOSE = {1000, 1001, 1003, 1007, 1008, 1009, 1013} | set(range(4000, 5000))
"""Close codes a server may choose (RFC 6455 §7.4.1, and ours in the 4000s); 1011 means it
failed, 1006 that it vanished without a close frame."""
REPLY_TYPES = {"observation", "state", "error", "episodes"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=20,
)
game_fields = st.dictionaries(
    st.sampled_from(["guess", "message", "expression", "seed", "word", "split", "numbers"])
    | st.text(max_size=10),
    json_values,
    max_size=4,
)
episodes = st.lists(
    st.fixed_dictionaries(
        {}, optional={"reset": game_fields, "actions": st.lists(game_fields, max_size=3)}
    )
    | json_values,
    max_size=4,
)
protocol_frames = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["reset", "step", "state", "close", "episodes"])
        | st.text(max_size=10)
    },
    optional={"data": game_fields | episodes | json_values, "id": json_values},
)
FRAMES = {
    "json": json_values.map(json.dumps),
    "protocol": protocol_frames.map(json.dumps),
    "text": st.text(max_size=300),
    "bytes": st.binary(max_size=300),
}


@pytest.fixture(scope="module", params=WEBSOCKET_IMPLEMENTATIONS)
def server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    with live_server("wordle", request.param) as live:
        yield live


class Socket:
    """One socket, opened again whenever the server closed the last one."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ws: ClientConnection | None = None
        self.closes: dict[int, int] = {}

    def exchange(self, frame: str | bytes) -> dict[str, Any] | None:
        """The reply to ``frame``, or None when the server closed the socket (properly)."""
        if self.ws is None:
            self.ws = connect(self.url, open_timeout=10).__enter__()  # closed by close()
        try:
            self.ws.send(frame)
            raw = self.ws.recv(timeout=10)
        except ConnectionClosed as closed:
            self.ws = None
            code = closed.rcvd.code if closed.rcvd else None
            assert code in PROPER_CLOSE, f"closed with {code} after {frame!r}"
            self.closes[code] = self.closes.get(code, 0) + 1
            return None
        reply = json.loads(raw)
        assert reply.get("type") in REPLY_TYPES, reply
        if reply["type"] == "error":
            assert reply["data"]["code"] in ErrorCode.__members__, reply
        return reply

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()


@pytest.mark.parametrize("kind", list(FRAMES))
def test_any_frame_gets_a_protocol_reply_or_a_proper_close(server: LiveServer, kind: str) -> None:
    socket = Socket(server.ws_url)
    opened_before = server.sessions.counters.sessions_opened

    @given(frame=FRAMES[kind])
    @settings(
        max_examples=EXAMPLES.frames,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=EXAMPLES.derandomize,
        database=None,
    )
    def answered(frame: str | bytes) -> None:
        socket.exchange(frame)

    try:
        answered()
    finally:
        socket.close()
    health = httpx.get(f"{server.url}/health", timeout=10).json()
    assert health["status"] == "healthy"
    # a socket that reset is a session until it closes; once closed, none is left bound to a
    # socket, and only a started episode whose socket the server closed waits for its resume
    deadline = time.monotonic() + 10
    left = list(server.sessions.sessions.values())
    while any(session.socket is not None for session in left) and time.monotonic() < deadline:
        time.sleep(0.05)
        left = list(server.sessions.sessions.values())
    assert all(session.socket is None and session.started for session in left), left
    assert len(left) <= sum(socket.closes.values()), (left, socket.closes)
    for session in left:  # the next kind starts from none
        server.sessions.close(session)
    assert server.sessions.counters.sessions_opened >= opened_before
