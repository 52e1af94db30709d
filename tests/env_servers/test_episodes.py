"""The ``episodes`` frame on real sockets: whole episodes in one frame, played as the same
``reset`` and ``step`` frames would play them, both ways ``/ws`` is served."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from env_servers.core import episodes
from env_servers.core.protocol import EXT_EPISODES, MAX_EPISODES_PER_FRAME
from tests.live import WEBSOCKET_IMPLEMENTATIONS, LiveServer, live_server

EPISODES: list[dict[str, Any]] = [
    {"reset": {"word": "crane"}, "actions": [{"guess": "slate"}, {"guess": "crane"}]},
    {"reset": {"word": "light"}, "actions": [{"guess": "xyzzy"}, {"guess": "night"}]},
    {"reset": {"seed": 7, "hard_mode": True}, "actions": []},
    {"reset": {"word": "pious"}, "actions": [{"guess": "pious"}, {"guess": "crane"}]},
]
"""A won game, an invalid move (the game's own feedback, not an error), a bare reset, and a
step after the end (an error that stops its episode)."""


def send(ws: ClientConnection, message: dict[str, Any] | str) -> dict[str, Any]:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=10))


@pytest.fixture(scope="module", params=WEBSOCKET_IMPLEMENTATIONS)
def server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    with live_server("wordle", request.param, max_message_rate=40) as live:
        yield live


@pytest.fixture
def ws(server: LiveServer) -> Iterator[ClientConnection]:
    with connect(server.ws_url) as socket:
        yield socket


def played_one_at_a_time(server: LiveServer, episodes: list[dict[str, Any]]) -> list[Any]:
    """What the plain frames answer for the same episodes, shaped as an episodes reply."""
    replies = []
    with connect(server.ws_url) as ws:
        for episode in episodes:
            results: list[Any] = []
            entry: dict[str, Any] = {"results": results}
            for kind, data in [("reset", episode["reset"])] + [
                ("step", action) for action in episode["actions"]
            ]:
                reply = send(ws, {"type": kind, "data": data})
                if reply["type"] == "error":
                    entry["error"] = reply["data"]
                    break
                results.append(reply["data"])
            replies.append(entry)
    return replies


def without_session_ids(replies: list[Any]) -> list[Any]:
    for entry in replies:
        for result in entry["results"]:
            result.pop("session_id", None)
    return replies


def test_metadata_advertises_episodes(server: LiveServer) -> None:
    metadata = httpx.get(f"{server.url}/metadata").json()
    assert EXT_EPISODES in metadata["protocol"]["extensions"]


def test_a_batch_plays_as_the_same_frames_one_at_a_time(
    server: LiveServer, ws: ClientConnection
) -> None:
    reply = send(ws, {"type": "episodes", "data": EPISODES, "id": 1})
    assert reply["type"] == "episodes" and reply["id"] == 1
    data = reply["data"]
    assert [len(entry["results"]) for entry in data] == [3, 3, 1, 2]
    assert data[0]["results"][-1]["done"] is True and data[0]["results"][-1]["reward"] == 1.0
    assert "invalid" in json.dumps(data[1]["results"][1]).lower()
    assert data[3]["error"]["code"] == "SESSION_ERROR"
    assert "error" not in data[0] and "error" not in data[2]
    session_ids = {entry["results"][0]["session_id"] for entry in data}
    assert len(session_ids) == 1  # every reset is on the socket's one session
    assert without_session_ids(data) == without_session_ids(played_one_at_a_time(server, EPISODES))

    state = send(ws, {"type": "state"})["data"]  # the session holds the last episode
    assert state["step_count"] == 1 and state["done"] is True


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"reset": {}}, "must be a list of episodes"),
        ([], "must be a list of episodes"),
        ([{"reset": {}, "actions": {"guess": "crane"}}], "Episode 0 must be"),
        ([{"reset": {}}, {"reset": {}, "moves": []}], "Episode 1 must be"),
        ([{"reset": {}}, 3], "Episode 1 must be"),
        ([{"reset": {}}] * (MAX_EPISODES_PER_FRAME + 1), f"at most {MAX_EPISODES_PER_FRAME}"),
    ],
)
def test_a_malformed_batch_is_refused_whole_and_plays_nothing(
    ws: ClientConnection, data: Any, message: str
) -> None:
    send(ws, {"type": "reset", "data": {"word": "crane"}})
    send(ws, {"type": "step", "data": {"guess": "slate"}})
    reply = send(ws, {"type": "episodes", "data": data})
    assert reply["type"] == "error" and reply["data"]["code"] == "VALIDATION_ERROR"
    assert message in reply["data"]["message"]
    state = send(ws, {"type": "state"})["data"]  # the running episode is untouched
    assert state["step_count"] == 1 and state["done"] is False


def test_bad_reset_fields_and_actions_stop_only_their_episode(ws: ClientConnection) -> None:
    data = [
        {"reset": {"word": "crane", "colour": "red"}, "actions": [{"guess": "slate"}]},
        {"reset": {"word": "crane"}, "actions": [{"guess": 5}, {"guess": "crane"}]},
        {"reset": {"word": "crane"}, "actions": [{"guess": "crane"}]},
    ]
    replies = send(ws, {"type": "episodes", "data": data})["data"]
    assert replies[0]["results"] == [] and replies[0]["error"]["code"] == "VALIDATION_ERROR"
    assert len(replies[1]["results"]) == 1 and replies[1]["error"]["code"] == "VALIDATION_ERROR"
    assert replies[2]["results"][-1]["reward"] == 1.0 and "error" not in replies[2]


def test_a_batch_counts_its_messages_against_the_rate(server: LiveServer) -> None:
    """The server allows 40 messages a second: 16 pass, 32 more do not (nothing played)."""
    batch = [{"reset": {"word": "crane"}, "actions": [{"guess": "slate"}]}] * 8
    with connect(server.ws_url) as ws:
        assert send(ws, {"type": "episodes", "data": batch})["type"] == "episodes"
        reply = send(ws, {"type": "episodes", "data": batch * 2})
        assert reply["type"] == "error" and reply["data"]["code"] == "CAPACITY_REACHED"
        assert "send smaller batches or wait" in reply["data"]["message"]
        assert send(ws, {"type": "state"})["data"]["step_count"] == 1  # still open, unplayed


def test_a_repeated_batch_after_a_resume_is_answered_not_replayed(server: LiveServer) -> None:
    frame = {"type": "episodes", "data": EPISODES[:2], "id": "batch-1"}
    with connect(server.ws_url) as ws:
        first = send(ws, frame)
    session_id = first["data"][0]["results"][0]["session_id"]
    resets_before = _resets(server)
    with connect(f"{server.ws_url}?session_id={session_id}") as ws:
        again = send(ws, frame)
    assert again == first
    assert _resets(server) == resets_before


def _resets(server: LiveServer) -> float:
    for line in httpx.get(f"{server.url}/metrics").text.splitlines():
        if line.startswith("arenagym_resets_total"):
            return float(line.split()[-1])
    raise AssertionError("no arenagym_resets_total in /metrics")


def test_a_frame_answers_its_first_episodes_within_its_time(
    server: LiveServer, ws: ClientConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of time after the first episode, the server answers that one alone; the rest are
    not played (the session holds the first episode's end)."""
    monkeypatch.setattr(episodes, "FRAME_SECONDS", 0.0)
    reply = send(ws, {"type": "episodes", "data": EPISODES})
    assert len(reply["data"]) == 1
    assert reply["data"][0]["results"][-1]["reward"] == 1.0
    state = send(ws, {"type": "state"})["data"]
    assert state["step_count"] == 2 and state["done"] is True


def test_episodes_left_unplayed_do_not_count_against_the_rate(
    ws: ClientConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 messages a second: 32 sent, 2 played; the 30 sent again must still pass."""
    monkeypatch.setattr(episodes, "FRAME_SECONDS", 0.0)
    batch = [{"reset": {"word": "crane"}, "actions": [{"guess": "crane"}]}] * 16
    assert len(send(ws, {"type": "episodes", "data": batch})["data"]) == 1
    reply = send(ws, {"type": "episodes", "data": batch[1:]})
    assert reply["type"] == "episodes" and len(reply["data"]) == 1
