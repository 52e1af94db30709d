"""MCP at ``/mcp`` (JSON-RPC 2.0 over HTTP and WebSocket), sharing the server's sessions.

OpenEnv 0.10's own clients and validator run against these servers in
``test_openenv10_compat.py``; this file pins the contract itself.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from env_servers.core.config import WebSocketMode
from env_servers.core.mcp_tools import parse_docstring
from env_servers.core.registry import game_names, load_spec
from tests.live import JSON_TYPE, WEBSOCKET_IMPLEMENTATIONS, LiveServer, live_server


class Rpc:
    """JSON-RPC over ``POST /mcp``."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.next_id = 0

    def raw(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        response = self.http.post("/mcp", json=body)
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        assert answer["jsonrpc"] == "2.0" and answer["id"] == self.next_id
        return answer

    def __call__(self, method: str, **params: Any) -> Any:
        answer = self.raw(method, **params)
        assert "error" not in answer, answer
        return answer["result"]

    def error(self, method: str, **params: Any) -> dict[str, Any]:
        answer = self.raw(method, **params)
        assert "result" not in answer, answer
        error: dict[str, Any] = answer["error"]
        return error


@pytest.fixture
def rpc(wordle_server: LiveServer) -> Iterator[Rpc]:
    with httpx.Client(base_url=wordle_server.url, trust_env=False) as http:
        yield Rpc(http)


@pytest.mark.parametrize("game", game_names())
def test_tools_list_is_the_games_declared_tools(game: str) -> None:
    spec = load_spec(game)
    with live_server(game) as server, httpx.Client(base_url=server.url, trust_env=False) as http:
        tools = Rpc(http)("tools/list")["tools"]
        metadata = http.get("/metadata").json()
    assert [tool["name"] for tool in tools] == spec.tool_names() == metadata["mcp"]["tools"]
    for tool in tools:
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and schema["required"]
        assert all(field.get("description") for field in schema["properties"].values())
        assert tool["description"] and tool["outputSchema"]["required"] == ["result", "done"]


def test_a_whole_game_over_http_mcp(rpc: Rpc) -> None:
    session = rpc("openenv/session/create")["session_id"]
    opening = rpc("arenagym/reset", session_id=session, word="crane")
    assert "`guess` tool" in opening["content"][0]["text"] and opening["done"] is False
    result = rpc("tools/call", name="guess", arguments={"word": "slate"}, session_id=session)
    assert result["isError"] is False and result["data"] == "S L A T E\nX X G X G\n5 guesses left."
    assert result["content"] == [{"type": "text", "text": result["data"]}]
    assert result["structuredContent"] == {"result": result["data"], "done": False}
    invalid = rpc("tools/call", name="guess", arguments={"word": "qqqqq"}, session_id=session)
    assert invalid["isError"] is False and "No guess used" in invalid["data"]
    won = rpc("tools/call", name="guess", arguments={"word": "crane"}, session_id=session)
    assert won["structuredContent"]["done"] is True and won["data"].endswith("Solved!")
    over = rpc("tools/call", name="guess", arguments={"word": "crane"}, session_id=session)
    assert over["isError"] is True and "Reset" in over["data"]
    assert rpc("openenv/session/close", session_id=session) == {
        "session_id": session,
        "closed": True,
    }
    assert rpc.error("openenv/session/close", session_id=session)["code"] == -32602


def test_reset_without_a_session_opens_one(rpc: Rpc) -> None:
    opened = rpc("arenagym/reset", seed=4)
    assert opened["session_id"] and opened["observation"]["guesses_left"] == 6
    rpc("openenv/session/close", session_id=opened["session_id"])


def test_errors_follow_json_rpc(rpc: Rpc, wordle_server: LiveServer) -> None:
    http = rpc.http
    assert http.post("/mcp", content=b"{oops", headers=JSON_TYPE).json()["error"]["code"] == -32700
    for body in ({}, [], {"jsonrpc": "1.0", "method": "ping"}, {"jsonrpc": "2.0", "method": 3}):
        answer = http.post("/mcp", json=body)
        assert answer.status_code == 200 and answer.json()["error"]["code"] == -32600, body
    assert (
        http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/x"}).status_code == 202
    )
    assert rpc.error("resources/list")["code"] == -32601
    session = rpc("openenv/session/create")["session_id"]
    for name in ("reset", "step", "state", "close"):
        error = rpc.error("tools/call", name=name, arguments={}, session_id=session)
        assert error["code"] == -32602 and "reserved" in error["message"]
    cases: list[dict[str, Any]] = [
        {"name": "jump", "arguments": {}, "session_id": session},  # unknown tool
        {"name": "guess", "arguments": {"wrd": "crane"}, "session_id": session},  # bad arguments
        {"name": "guess", "arguments": {"word": "crane"}},  # no session
        {"name": "guess", "arguments": {"word": "crane"}, "session_id": "nope"},  # unknown one
    ]
    for params in cases:
        assert rpc.error("tools/call", **params)["code"] == -32602, params
    not_started = rpc("tools/call", name="guess", arguments={"word": "crane"}, session_id=session)
    assert not_started["isError"] is True and "reset it first" in not_started["data"]
    too_big = http.post(
        "/mcp", content=b" " * (wordle_server.config.ws_max_size + 1), headers=JSON_TYPE
    )
    assert too_big.status_code == 413 and too_big.json()["error"]["code"] == -32600
    rpc("openenv/session/close", session_id=session)


def test_capacity_is_a_server_error() -> None:
    with (
        live_server("wordle", max_sessions=1) as server,
        httpx.Client(base_url=server.url, trust_env=False) as http,
    ):
        rpc = Rpc(http)
        rpc("openenv/session/create")
        error = rpc.error("openenv/session/create")
    assert error["code"] == -32000 and error["data"]["code"] == "CAPACITY_REACHED"


@pytest.mark.parametrize("websocket", WEBSOCKET_IMPLEMENTATIONS)
def test_http_mcp_drives_a_session_a_socket_holds(websocket: WebSocketMode) -> None:
    """OpenEnv's MCPToolClient: create over HTTP, reset over /ws?session_id=, play over HTTP;
    closing the session ends the socket that holds it."""
    with (
        live_server("wordle", websocket) as wordle_server,
        httpx.Client(base_url=wordle_server.url, trust_env=False) as http,
    ):
        session = holds_a_session(Rpc(http), wordle_server)
    assert session not in wordle_server.sessions.sessions


def holds_a_session(rpc: Rpc, wordle_server: LiveServer) -> str:
    session = rpc("openenv/session/create")["session_id"]
    with connect(f"{wordle_server.ws_url}?session_id={session}") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"word": "crane"}}))
        assert json.loads(ws.recv())["type"] == "observation"
        played = rpc("tools/call", name="guess", arguments={"word": "crane"}, session_id=session)
        assert played["structuredContent"]["done"] is True
        ws.send(json.dumps({"type": "state"}))
        state = json.loads(ws.recv())
        assert state["data"]["step_count"] == 1
        closed = rpc("openenv/session/close", session_id=session)
        assert closed["closed"] is True
        with pytest.raises(ConnectionClosed):  # the socket ends with its session
            ws.recv(timeout=5)
    return session


def test_mcp_websocket_is_one_session(wordle_server: LiveServer) -> None:
    url = wordle_server.ws_url.replace("/ws", "/mcp")
    before = wordle_server.sessions.active

    def call(ws: Any, method: str, request_id: int, **params: Any) -> dict[str, Any]:
        ws.send(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        )
        answer: dict[str, Any] = json.loads(ws.recv())
        assert answer["id"] == request_id
        return answer

    with connect(url) as ws:
        assert wordle_server.sessions.active == before + 1
        own = call(ws, "openenv/session/create", 1)["result"]["session_id"]
        assert call(ws, "openenv/session/close", 2, session_id=own)["error"]["code"] == -32600
        assert call(ws, "arenagym/reset", 3, word="crane")["result"]["session_id"] == own
        result = call(ws, "tools/call", 4, name="guess", arguments={"word": "crane"})["result"]
        assert result["structuredContent"] == {"result": result["data"], "done": True}
        ws.send("not json")
        assert json.loads(ws.recv())["error"]["code"] == -32700
    deadline = time.monotonic() + 5
    while wordle_server.sessions.active != before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert wordle_server.sessions.active == before


def test_reward_stays_off_mcp(rpc: Rpc) -> None:
    session = rpc("arenagym/reset", word="crane")["session_id"]
    result = rpc("tools/call", name="guess", arguments={"word": "crane"}, session_id=session)
    assert "reward" not in json.dumps(result)
    state = rpc.http.get("/state", params={"session_id": session}).json()
    assert state["step_count"] == 1
    rpc("openenv/session/close", session_id=session)


def test_initialize_and_ping(rpc: Rpc) -> None:
    hello = rpc("initialize", protocolVersion="2025-06-18", capabilities={})
    assert hello["capabilities"] == {"tools": {"listChanged": False}}
    assert hello["serverInfo"]["name"] == "arenagym-wordle"
    assert rpc("ping") == {}


def test_metadata_names_the_protocol_versions(rpc: Rpc) -> None:
    protocol = rpc.http.get("/metadata").json()["protocol"]
    assert protocol["versions"] == ["0.3", "0.10"] and protocol["version"] == "0.10"
    assert protocol["standard_profile"] == "openenv-http/1.x"
    assert "mcp-reset" in protocol["extensions"]


def test_google_docstrings_give_tool_descriptions() -> None:
    doc = """Do a thing.

    Longer words.

    Args:
        first: The first
            thing, continued.
        second (int): The second.

    Returns:
        Something.
    """
    assert parse_docstring(doc) == (
        "Do a thing. Longer words.",
        {"first": "The first thing, continued.", "second": "The second."},
    )
