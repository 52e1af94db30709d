"""``GET /metrics`` after a scripted game: every count is the one the script implies."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from websockets.sync.client import ClientConnection, connect

from tests.live import live_server

WRONG = ["slate", "pious", "dough", "lymph", "fight", "mound"]
"""Six valid guesses that are not the word: a lost game."""


def send(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps(message))
    reply: dict[str, Any] = json.loads(ws.recv(timeout=5))
    return reply


def samples(text: str) -> dict[str, float]:
    """``name{label="v",…}`` → value, for every sample (without the ``game`` label)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()) if k != "game")
            found[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return found


def test_metrics_count_a_scripted_game() -> None:
    with live_server("wordle", max_sessions=2, session_ttl=0.4) as server:
        with (
            connect(server.ws_url) as ws,
            httpx.Client(base_url=server.url, trust_env=False) as http,
        ):
            # a won game over the socket: one invalid move, one miss, the word
            send(ws, {"type": "reset", "data": {"word": "crane"}})
            assert send(ws, {"type": "step", "data": {"guess": "zzzzz"}})["data"]["observation"][
                "invalid_move"
            ]
            send(ws, {"type": "step", "data": {"guess": "slate"}})
            assert send(ws, {"type": "step", "data": {"guess": "crane"}})["data"]["reward"] == 1.0
            assert send(ws, {"type": "step", "data": {"guess": "crane"}})["type"] == "error"
            # a lost game over HTTP, with one malformed action
            session_id = http.post("/reset", json={"word": "crane"}).json()["session_id"]
            bad = http.post("/step", json={"session_id": session_id, "action": {"nope": 1}})
            assert bad.status_code == 422
            for word in WRONG:
                body = {"session_id": session_id, "action": {"guess": word}}
                reply = http.post("/step", json=body).json()
            assert reply["done"] and reply["reward"] == 0.0
            # capacity: both slots taken, a third socket is refused
            with connect(server.ws_url) as third:
                assert json.loads(third.recv(timeout=5))["data"]["code"] == "CAPACITY_REACHED"
            # the HTTP session expires once idle for the TTL
            deadline = time.monotonic() + 5
            while server.sessions.active > 1 and time.monotonic() < deadline:
                time.sleep(0.05)
            response = http.get("/metrics")
        assert response.headers["content-type"].startswith("text/plain")
    found = samples(response.text)
    assert found["arenagym_sessions_opened_total"] == 2
    assert found["arenagym_sessions_refused_total{reason=capacity}"] == 1
    assert found["arenagym_sessions_reaped_total"] == 1
    assert found["arenagym_sessions_open"] == 1
    assert found["arenagym_resets_total"] == 2
    assert found["arenagym_steps_total"] == 3 + len(WRONG)
    assert found["arenagym_invalid_moves_total"] == 1
    assert found["arenagym_episodes_finished_total"] == 2
    assert found["arenagym_episodes_solved_total"] == 1
    assert found["arenagym_errors_total{code=SESSION_ERROR}"] == 1  # the step after the win
    assert found["arenagym_errors_total{code=VALIDATION_ERROR}"] == 1
    assert found["arenagym_errors_total{code=CAPACITY_REACHED}"] == 1
    assert found["arenagym_step_seconds_count"] == 3 + len(WRONG)
    assert 0 < found["arenagym_step_seconds_sum"] < 1
