"""Stateful HTTP on a real socket: a whole game with plain requests, and every error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.live import JSON_TYPE, LiveServer, live_server


@pytest.fixture
def http(wordle_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=wordle_server.url, timeout=5) as client:
        yield client


def error_of(response: httpx.Response) -> dict[str, Any]:
    return response.json()["error"]


def test_whole_game_over_http(http: httpx.Client) -> None:
    reply = http.post("/reset", json={"word": "crane"}).json()
    session_id = reply["session_id"]
    assert reply["done"] is False and "prompt" in reply["observation"]

    reply = http.post("/step", json={"session_id": session_id, "action": {"guess": "slate"}})
    assert reply.status_code == 200 and reply.json()["observation"]["guesses_left"] == 5

    state = http.get("/state", params={"session_id": session_id}).json()
    assert state["step_count"] == 1 and "crane" not in str(state)

    reply = http.post(
        "/step", json={"action": {"message": "[crane]"}}, headers={"X-Session-Id": session_id}
    ).json()
    assert reply["done"] is True and reply["reward"] == 1.0

    after = http.post("/step", json={"session_id": session_id, "action": {"guess": "crane"}})
    assert after.status_code == 409 and error_of(after)["code"] == "SESSION_ERROR"

    again = http.post("/reset", json={"session_id": session_id, "word": "slate"}).json()
    assert again["session_id"] == session_id and again["done"] is False

    assert http.delete(f"/sessions/{session_id}").status_code == 200
    gone = http.get("/state", params={"session_id": session_id})
    assert gone.status_code == 404 and "Reset to start a new one" in error_of(gone)["message"]


def test_empty_reset_body_starts_a_random_game(http: httpx.Client) -> None:
    reply = http.post("/reset")
    assert reply.status_code == 200 and reply.json()["session_id"]
    http.delete(f"/sessions/{reply.json()['session_id']}")


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/reset", b"{oops", 400, "INVALID_JSON"),
        ("/reset", b'{"split": "test"}', 422, "VALIDATION_ERROR"),
        ("/reset", b'{"seed": -1}', 422, "VALIDATION_ERROR"),
        ("/reset", b"[1]", 422, "VALIDATION_ERROR"),
        ("/step", b'{"action": {"guess": "crane"}}', 404, "SESSION_ERROR"),
        ("/step", b'{"session_id": "nope", "action": {}}', 404, "SESSION_ERROR"),
        ("/step", b"{bad", 400, "INVALID_JSON"),
    ],
)
def test_bad_requests(http: httpx.Client, path: str, body: bytes, status: int, code: str) -> None:
    before = http.get("/health").json()["active_sessions"]
    response = http.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    assert error_of(response)["code"] == code and error_of(response)["message"]
    assert http.get("/health").json()["active_sessions"] == before  # nothing leaked


@pytest.mark.parametrize(
    "action", [None, {}, {"guess": 1}, {"guess": "crane", "nope": 1}, {"message": None}]
)
def test_invalid_action(http: httpx.Client, action: Any) -> None:
    session_id = http.post("/reset", json={"word": "crane"}).json()["session_id"]
    body = (
        {"session_id": session_id}
        if action is None
        else {"session_id": session_id, "action": action}
    )
    response = http.post("/step", json=body)
    assert response.status_code == 422 and error_of(response)["code"] == "VALIDATION_ERROR"
    ok = http.post("/step", json={"session_id": session_id, "action": {"guess": "crane"}})
    assert ok.json()["reward"] == 1.0


def test_body_too_large(http: httpx.Client) -> None:
    response = http.post("/reset", content=b"{" + b" " * 200_000 + b"}", headers=JSON_TYPE)
    assert response.status_code == 413 and error_of(response)["code"] == "VALIDATION_ERROR"


def test_capacity_returns_503() -> None:
    with live_server("wordle", max_sessions=1) as server, httpx.Client(base_url=server.url) as http:
        assert http.post("/reset").status_code == 200
        full = http.post("/reset")
        assert full.status_code == 503 and error_of(full)["code"] == "CAPACITY_REACHED"


def test_discovery_endpoints(http: httpx.Client) -> None:
    health = http.get("/health").json()
    assert health["status"] == "healthy" and health["game"] == "wordle"
    assert {"active_sessions", "max_sessions", "steps", "resets"} <= health.keys()
    metadata = http.get("/metadata").json()
    assert metadata["name"] == "wordle"
    assert metadata["protocol"]["name"] == "openenv"
    assert {"request-id", "resume", "http-sessions"} <= set(metadata["protocol"]["extensions"])
    schema = http.get("/schema").json()
    assert {"action", "observation", "state", "reset"} <= schema.keys()
    assert "guess" in schema["action"]["properties"]
    assert http.get("/docs").status_code == 200
    paths = http.get("/openapi.json").json()["paths"]
    assert {"/reset", "/step", "/state", "/health", "/metadata", "/schema"} <= paths.keys()
