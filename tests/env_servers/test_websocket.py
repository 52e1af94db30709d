"""The WebSocket protocol on real sockets: frames, extensions, sessions, bad input.

Every test runs against both ways ``/ws`` is served: inline in uvicorn's protocol, as
``arenagym serve`` runs it, and through the ASGI endpoint, as under any other ASGI server."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.live import WEBSOCKET_IMPLEMENTATIONS, LiveServer, live_server


def send(ws: ClientConnection, message: dict[str, Any] | str) -> dict[str, Any]:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=5))


def closed_code(ws: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed) as info:
        ws.recv(timeout=5)
    return info.value.rcvd.code if info.value.rcvd else None


@pytest.fixture(scope="module", params=WEBSOCKET_IMPLEMENTATIONS)
def websocket(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def wordle_server(websocket: str) -> Iterator[LiveServer]:
    with live_server("wordle", websocket) as server:
        yield server


@pytest.fixture
def ws(wordle_server: LiveServer) -> Iterator[ClientConnection]:
    with connect(wordle_server.ws_url) as socket:
        yield socket


def test_whole_game_with_request_ids(ws: ClientConnection) -> None:
    reply = send(ws, {"type": "reset", "data": {"word": "crane"}, "id": "r1"})
    assert reply["type"] == "observation" and reply["id"] == "r1"
    assert reply["data"]["done"] is False
    assert isinstance(reply["data"]["session_id"], str)
    assert "reward" in reply["data"] and "observation" in reply["data"]

    reply = send(ws, {"type": "step", "data": {"guess": "slate"}, "id": 2})
    assert reply["id"] == 2 and reply["data"]["done"] is False
    assert reply["data"]["observation"]["guesses"][-1] == {"word": "slate", "feedback": "XXGXG"}

    reply = send(ws, {"type": "step", "data": {"message": "I think it is [crane]"}})
    assert "id" not in reply
    assert reply["data"]["done"] is True and reply["data"]["reward"] == 1.0

    state = send(ws, {"type": "state", "id": "s"})
    assert state["type"] == "state" and state["id"] == "s"
    assert state["data"]["step_count"] == 2


@pytest.mark.parametrize(
    ("frame", "code", "needle"),
    [
        ("{not json", "INVALID_JSON", "Malformed JSON"),
        ("[1, 2]", "VALIDATION_ERROR", "JSON object"),
        ({"type": "jump"}, "UNKNOWN_TYPE", "reset, step, state, close"),
        ({"data": {}}, "UNKNOWN_TYPE", "Unknown message type"),
        ({"type": "step", "data": {"guess": "crane"}}, "SESSION_ERROR", "send a reset first"),
        ({"type": "state"}, "SESSION_ERROR", "send a reset first"),
        ({"type": "reset", "data": {"split": "nope"}}, "VALIDATION_ERROR", "split"),
        ({"type": "reset", "data": {"hardmode": True}}, "VALIDATION_ERROR", "hardmode"),
        ({"type": "reset", "data": [1]}, "VALIDATION_ERROR", "JSON object"),
    ],
)
def test_bad_frames_get_an_error_and_the_socket_stays_open(
    ws: ClientConnection, frame: Any, code: str, needle: str
) -> None:
    reply = send(ws, {**frame, "id": 9} if isinstance(frame, dict) else frame)
    assert reply["type"] == "error"
    assert reply["data"]["code"] == code
    assert needle in reply["data"]["message"]
    # the same socket still plays
    assert send(ws, {"type": "reset", "data": {"word": "crane"}})["type"] == "observation"


@pytest.mark.parametrize(
    "action",
    [{}, {"guess": 5}, {"guess": "crane", "message": "[crane]"}, {"word": "crane"}, None, "crane"],
)
def test_invalid_actions_are_validation_errors(ws: ClientConnection, action: Any) -> None:
    send(ws, {"type": "reset", "data": {"word": "crane"}})
    reply = send(ws, {"type": "step", "data": action, "id": "a"})
    assert reply["type"] == "error" and reply["id"] == "a"
    assert reply["data"]["code"] == "VALIDATION_ERROR"
    assert send(ws, {"type": "step", "data": {"guess": "crane"}})["data"]["done"] is True


def test_step_after_done_and_invalid_moves(ws: ClientConnection) -> None:
    send(ws, {"type": "reset", "data": {"word": "crane"}})
    bad = send(ws, {"type": "step", "data": {"guess": "zzzzz"}})["data"]
    assert bad["observation"]["invalid_move"] is True and bad["done"] is False
    assert bad["observation"]["guesses_left"] == 6
    send(ws, {"type": "step", "data": {"guess": "crane"}})
    after = send(ws, {"type": "step", "data": {"guess": "slate"}})
    assert after["type"] == "error" and after["data"]["code"] == "SESSION_ERROR"
    assert "reset" in after["data"]["message"]


def test_oversized_frame_is_refused_and_socket_survives(ws: ClientConnection) -> None:
    send(ws, {"type": "reset", "data": {"word": "crane"}})
    reply = send(ws, {"type": "step", "data": {"message": "x" * 100_000}})
    assert reply["data"]["code"] == "VALIDATION_ERROR" and "larger than" in reply["data"]["message"]
    assert send(ws, {"type": "step", "data": {"guess": "crane"}})["data"]["done"] is True


def test_secret_words_need_the_server_flag(websocket: str) -> None:
    with (
        live_server("wordle", websocket, allow_explicit_secrets=False) as server,
        connect(server.ws_url) as ws,
    ):
        reply = send(ws, {"type": "reset", "data": {"word": "crane"}})
        assert reply["data"]["code"] == "VALIDATION_ERROR"
        assert "--allow-explicit-secrets" in reply["data"]["message"]


def test_errors_on_one_session_do_not_touch_another(wordle_server: LiveServer) -> None:
    with connect(wordle_server.ws_url) as a, connect(wordle_server.ws_url) as b:
        send(a, {"type": "reset", "data": {"word": "crane"}})
        send(b, {"type": "reset", "data": {"word": "slate"}})
        for junk in ("{", "[]", json.dumps({"type": "step", "data": {"bad": 1}})):
            assert send(a, junk)["type"] == "error"
        assert send(b, {"type": "step", "data": {"guess": "slate"}})["data"]["reward"] == 1.0
        assert send(a, {"type": "step", "data": {"guess": "crane"}})["data"]["reward"] == 1.0


def test_close_frame_ends_the_session(wordle_server: LiveServer) -> None:
    before = wordle_server.sessions.active
    with connect(wordle_server.ws_url) as ws:
        send(ws, {"type": "reset", "data": {"word": "crane"}})
        assert wordle_server.sessions.active == before + 1
        ws.send(json.dumps({"type": "close"}))
        assert closed_code(ws) == 1000
    assert wordle_server.sessions.active == before


def test_dropped_socket_resumes_its_episode(wordle_server: LiveServer) -> None:
    with connect(wordle_server.ws_url) as ws:
        session_id = send(ws, {"type": "reset", "data": {"word": "crane"}})["data"]["session_id"]
        send(ws, {"type": "step", "data": {"guess": "slate"}})
    # the socket went away without a "close" frame of ours: a dropped connection
    with connect(f"{wordle_server.ws_url}?session_id={session_id}") as again:
        state = send(again, {"type": "state"})["data"]
        assert state["step_count"] == 1 and state["guesses_left"] == 5
        assert send(again, {"type": "step", "data": {"guess": "crane"}})["data"]["reward"] == 1.0


def test_a_live_session_cannot_be_taken_over(wordle_server: LiveServer) -> None:
    """Whoever learns a session id cannot displace the socket that plays it (OpenEnv refuses
    a second attachment too); the owner plays on."""
    with connect(wordle_server.ws_url) as first:
        session_id = send(first, {"type": "reset", "data": {"word": "crane"}})["data"]["session_id"]
        with connect(f"{wordle_server.ws_url}?session_id={session_id}") as second:
            reply = json.loads(second.recv(timeout=5))
            assert reply["type"] == "error" and reply["data"]["code"] == "SESSION_ERROR"
            assert "held by another open connection" in reply["data"]["message"]
            assert closed_code(second) == 4409
        assert send(first, {"type": "step", "data": {"guess": "crane"}})["data"]["done"]


def test_resume_of_an_unknown_session_says_so(wordle_server: LiveServer) -> None:
    with connect(f"{wordle_server.ws_url}?session_id=nope") as ws:
        reply = json.loads(ws.recv(timeout=5))
        assert reply["type"] == "error" and reply["data"]["code"] == "SESSION_ERROR"
        assert closed_code(ws) == 4404


def test_unused_dropped_socket_frees_its_slot_at_once(wordle_server: LiveServer) -> None:
    before = wordle_server.sessions.active
    with connect(wordle_server.ws_url):
        pass
    deadline = time.monotonic() + 5
    while wordle_server.sessions.active != before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert wordle_server.sessions.active == before


def test_capacity_is_bounded_and_freed(websocket: str) -> None:
    with live_server("wordle", websocket, max_sessions=2) as server:
        with connect(server.ws_url) as a, connect(server.ws_url) as b:
            send(a, {"type": "reset", "data": {}})
            send(b, {"type": "reset", "data": {}})
            with connect(server.ws_url) as c:
                reply = json.loads(c.recv(timeout=5))
                assert reply["data"]["code"] == "CAPACITY_REACHED"
                assert "--max-sessions" in reply["data"]["message"]
                assert closed_code(c) == 1013
            for socket in (a, b):
                socket.send(json.dumps({"type": "close"}))
        with connect(server.ws_url) as d:
            assert send(d, {"type": "reset", "data": {}})["type"] == "observation"


def test_silent_socket_outlives_the_ttl_but_a_detached_session_expires(websocket: str) -> None:
    with live_server("wordle", websocket, session_ttl=0.3) as server:
        with connect(server.ws_url) as ws:
            session_id = send(ws, {"type": "reset", "data": {"word": "crane"}})["data"][
                "session_id"
            ]
            time.sleep(1.0)  # silent for more than three TTLs, reaper running
            assert send(ws, {"type": "step", "data": {"guess": "slate"}})["type"] == "observation"
        time.sleep(1.0)  # now detached: the reaper frees it
        assert httpx.get(f"{server.url}/health").json()["active_sessions"] == 0
        with connect(f"{server.ws_url}?session_id={session_id}") as again:
            assert json.loads(again.recv(timeout=5))["data"]["code"] == "SESSION_ERROR"
