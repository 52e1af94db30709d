"""Who may use a server, on real sockets: tokens on every route, sessions bound to their
token, cross-site requests refused, session ids kept out of the logs, and ``DELETE`` of a
session that a socket holds.

Each test runs against both ways ``/ws`` is served (inline, and the ASGI endpoint)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from env_servers.core.logs import redact
from env_servers.core.protocol import WS_CLOSE_SESSION_GONE
from tests.live import WEBSOCKET_IMPLEMENTATIONS, LiveServer, live_server

TOKEN = "t0k3n-for-the-tests-only-0123456789"
OTHER = "another-token-of-the-tests-9876543210"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
EVIL = "https://evil.example"


def send(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps(message))
    reply: dict[str, Any] = json.loads(ws.recv(timeout=5))
    return reply


def closed_code(ws: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed) as info:
        while True:
            ws.recv(timeout=5)
    return info.value.rcvd.code if info.value.rcvd else None


def refused_status(url: str, **options: Any) -> int:
    with pytest.raises(InvalidStatus) as info:
        connect(url, **options).close()
    return info.value.response.status_code


@pytest.fixture(scope="module", params=WEBSOCKET_IMPLEMENTATIONS)
def websocket(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def guarded(websocket: str) -> Iterator[LiveServer]:
    """A server with two tokens and one allowed foreign origin."""
    with live_server(
        "wordle",
        websocket,
        auth_tokens=(TOKEN, OTHER),
        allowed_origins=("https://friend.example",),
    ) as server:
        yield server


# -- tokens ----------------------------------------------------------------------------------


def routes(server: LiveServer) -> list[tuple[str, str]]:
    """Every documented route (method, path): a new route is covered without editing here."""
    schema = httpx.get(f"{server.url}/openapi.json", headers=BEARER, trust_env=False).json()
    found = [
        (method.upper(), path.replace("{session_id}", "nope"))
        for path, methods in schema["paths"].items()
        for method in methods
    ]
    assert ("GET", "/metrics") in found and ("POST", "/reset") in found
    return found


def test_every_route_but_health_needs_the_token(guarded: LiveServer) -> None:
    with httpx.Client(base_url=guarded.url, trust_env=False) as http:
        guarded_routes = [r for r in routes(guarded) if r[1] != "/health"]
        for method, path in [*guarded_routes, ("GET", "/openapi.json"), ("GET", "/docs")]:
            kwargs: dict[str, Any] = {"json": {}} if method == "POST" else {}
            denied = http.request(method, path, **kwargs)
            wrong = http.request(method, path, headers={"Authorization": "Bearer nope"}, **kwargs)
            allowed = http.request(method, path, headers=BEARER, **kwargs)
            assert denied.status_code == 401, (method, path, denied.text)
            assert wrong.status_code == 401, (method, path)
            assert denied.json()["error"]["code"] == "ACCESS_DENIED"
            assert "Authorization: Bearer" in denied.json()["error"]["message"]
            assert denied.headers["www-authenticate"].startswith("Bearer")
            assert allowed.status_code not in (401, 403), (method, path, allowed.text)
            if method == "GET" and path != "/state":
                assert allowed.status_code == 200, (method, path)
        health = http.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "healthy"
        assert http.get("/web/").status_code == 200  # the page itself, which asks for a token


def test_websockets_need_the_token(guarded: LiveServer) -> None:
    mcp_url = guarded.ws_url.replace("/ws", "/mcp")
    for url in (guarded.ws_url, mcp_url):
        assert refused_status(url) == 401
        assert refused_status(url, additional_headers={"Authorization": "Bearer nope"}) == 401
    with connect(guarded.ws_url, additional_headers=BEARER) as ws:
        assert send(ws, {"type": "reset", "data": {"word": "crane"}})["type"] == "observation"
    with connect(mcp_url, additional_headers=BEARER) as ws:
        reply = send(ws, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert reply["result"]["tools"]


def test_a_session_answers_only_the_token_that_opened_it(guarded: LiveServer) -> None:
    other = {"Authorization": f"Bearer {OTHER}"}
    with httpx.Client(base_url=guarded.url, trust_env=False) as http:
        opened = http.post("/reset", json={"word": "crane"}, headers=BEARER).json()
        session_id = opened["session_id"]
        step = {"session_id": session_id, "action": {"guess": "slate"}}
        assert http.post("/step", json=step, headers=other).status_code == 404
        assert http.get(f"/state?session_id={session_id}", headers=other).status_code == 404
        assert http.delete(f"/sessions/{session_id}", headers=other).status_code == 404
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "guess", "arguments": {"guess": "slate"}, "session_id": session_id},
        }
        assert "error" in http.post("/mcp", json=call, headers=other).json()
        with connect(f"{guarded.ws_url}?session_id={session_id}", additional_headers=other) as ws:
            assert json.loads(ws.recv(timeout=5))["data"]["code"] == "SESSION_ERROR"
            assert closed_code(ws) == 4404
        # its own token still plays it, untouched by the attempts
        assert http.post("/step", json=step, headers=BEARER).json()["observation"]["guesses"]
        assert http.delete(f"/sessions/{session_id}", headers=BEARER).status_code == 200


def test_the_page_login_sets_a_cookie_the_socket_carries(guarded: LiveServer) -> None:
    with httpx.Client(base_url=guarded.url, trust_env=False) as http:
        assert http.post("/web/login", json={"token": "nope"}).status_code == 401
        login = http.post("/web/login", json={"token": TOKEN})
        assert login.status_code == 204
        cookie = login.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and TOKEN.lower() in cookie
        assert http.get("/metadata").status_code == 200  # the client keeps the cookie
        jar = "; ".join(f"{name}={value}" for name, value in http.cookies.items())
    with connect(guarded.ws_url, additional_headers={"Cookie": jar}) as ws:
        assert send(ws, {"type": "reset", "data": {}})["type"] == "observation"


# -- origins and cross-site posts ----------------------------------------------------------


def test_cross_site_requests_are_refused(websocket: str) -> None:
    """A page on another site can neither post to the server through its visitors'
    browsers (a "simple" text/plain POST needs no preflight) nor open its sockets."""
    with live_server("wordle", websocket) as server:
        with httpx.Client(base_url=server.url, trust_env=False) as http:
            plain = {"content-type": "text/plain"}
            forged = http.post("/reset", content=b"{}", headers={**plain, "origin": EVIL})
            assert forged.status_code == 403
            assert "--allowed-origin" in forged.json()["error"]["message"]
            text = http.post("/reset", content=b"{}", headers=plain)
            assert text.status_code == 415 and "application/json" in text.text
            form = {"content-type": "application/x-www-form-urlencoded"}
            assert http.post("/mcp", content=b"{}", headers=form).status_code == 415
            assert server.sessions.active == 0
            own = {"origin": server.url}  # the server's own page
            assert http.post("/reset", json={}, headers=own).status_code == 200
        assert refused_status(server.ws_url, origin=EVIL) == 403
        assert refused_status(server.ws_url.replace("/ws", "/mcp"), origin=EVIL) == 403
        with connect(server.ws_url, origin=server.url) as ws:  # type: ignore[arg-type]
            assert send(ws, {"type": "reset", "data": {}})["type"] == "observation"
        # repeated: refused (uvicorn's own handshake refuses it first under ASGI), never a crash
        repeated = [("Origin", EVIL), ("Origin", server.url)]
        assert refused_status(server.ws_url, additional_headers=repeated) in (400, 403)


def test_an_allowed_origin_may_call(guarded: LiveServer) -> None:
    friend = {"origin": "https://friend.example", **BEARER}
    response = httpx.post(f"{guarded.url}/reset", json={}, headers=friend, trust_env=False)
    assert response.status_code == 200
    with connect(
        guarded.ws_url,
        origin="https://friend.example",  # type: ignore[arg-type]
        additional_headers=BEARER,
    ) as ws:
        assert send(ws, {"type": "reset", "data": {}})["type"] == "observation"


# -- sessions --------------------------------------------------------------------------------


def test_delete_closes_the_socket_and_frees_its_slot(websocket: str) -> None:
    """``--max-sessions`` holds whatever a client does: a deleted session's socket does not
    play on outside the count, and /health counts every live session."""
    with live_server("wordle", websocket, max_sessions=2) as server:
        health = f"{server.url}/health"
        with connect(server.ws_url) as ws:
            session_id = send(ws, {"type": "reset", "data": {"word": "crane"}})["data"][
                "session_id"
            ]
            assert httpx.get(health, trust_env=False).json()["active_sessions"] == 1
            deleted = httpx.delete(f"{server.url}/sessions/{session_id}", trust_env=False)
            assert deleted.status_code == 200
            assert closed_code(ws) == WS_CLOSE_SESSION_GONE
        assert httpx.get(health, trust_env=False).json()["active_sessions"] == 0
        with connect(server.ws_url) as a, connect(server.ws_url) as b:
            for socket in (a, b):
                assert send(socket, {"type": "reset", "data": {}})["type"] == "observation"
            assert httpx.get(health, trust_env=False).json()["active_sessions"] == 2
            with connect(server.ws_url) as c:
                assert json.loads(c.recv(timeout=5))["data"]["code"] == "CAPACITY_REACHED"


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_session_ids_never_reach_the_logs(websocket: str) -> None:
    """Request lines are logged (the access log at debug), their session ids masked."""
    with live_server("wordle", websocket, log_level="debug") as server:
        lines = Lines()
        names = ("uvicorn.access", "uvicorn.error", "arenagym.sessions")
        for name in names:
            logging.getLogger(name).addHandler(lines)
        try:
            with connect(server.ws_url) as ws:
                session_id = send(ws, {"type": "reset", "data": {}})["data"]["session_id"]
            with connect(f"{server.ws_url}?session_id={session_id}") as ws:
                assert send(ws, {"type": "state"})["type"] == "state"
            with httpx.Client(base_url=server.url, trust_env=False) as http:
                assert http.get(f"/state?session_id={session_id}").status_code == 200
                assert http.delete(f"/sessions/{session_id}").status_code == 200
        finally:
            for name in names:
                logging.getLogger(name).removeHandler(lines)
    assert any("/ws?session_id=" in line for line in lines.lines), lines.lines
    assert any("/state?session_id=" in line for line in lines.lines), lines.lines
    assert any("DELETE /sessions/" in line for line in lines.lines), lines.lines
    assert not [line for line in lines.lines if session_id in line]


def test_redact_masks_ids_and_tokens() -> None:
    assert redact('GET /ws?session_id=abc-_1&x=2 HTTP/1.1"') == 'GET /ws?session_id=…&x=2 HTTP/1.1"'
    assert redact("/web/?token=s3cret") == "/web/?token=…"
    assert redact('"DELETE /sessions/abc HTTP/1.1"') == '"DELETE /sessions/… HTTP/1.1"'
