"""TextArena games on real servers: the generic client over WebSocket and HTTP, the MCP tool,
and the errors a server gives for what it cannot serve (data it cannot download, a game
TextArena lacks, TextArena not installed)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import httpx
import nltk
import pytest

from clients.errors import ExecutionError
from env_servers.core.registry import UnknownGame, load_spec
from tests.live import LiveServer, live_server

GAME = "textarena:Mastermind-v0"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live_server(GAME) as running:
        yield running


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_the_generic_client_plays_over_a_socket(server: LiveServer, transport: str) -> None:
    spec = load_spec(GAME)
    with spec.client.from_url(server.url, transport=transport) as client:
        first = client.reset(seed=4)
        assert "Mastermind" in first.observation.prompt and not first.done
        refused = client.step({"move": "[1 1]"})
        assert refused.observation.invalid_move and refused.observation.reason
        played = client.step({"move": "1 2 3 4"})  # brackets are added
        assert not played.observation.invalid_move and "peg" in played.observation.feedback
        state = client.state()
        assert state.env_id == "Mastermind-v0" and state.turn == 1 and state.invalid_count == 1


def test_metadata_and_the_mcp_tool(server: LiveServer) -> None:
    metadata = httpx.get(f"{server.url}/metadata").json()
    assert metadata["name"] == GAME and metadata["mcp"]["tools"] == ["move"]
    listed = httpx.post(
        f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    ).json()
    (tool,) = listed["result"]["tools"]
    assert "[1 2 3 4]" in tool["inputSchema"]["properties"]["move"]["description"]


def test_a_game_needing_nltk_data_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wordle-v0 downloads NLTK corpora at run time; with no network the reset fails, saying
    which command installs them, as an error reply, not a crash."""
    monkeypatch.setattr(nltk, "download", lambda *args, **kwargs: False)  # as offline
    monkeypatch.setenv("NLTK_DATA", "/nonexistent")
    monkeypatch.setattr(nltk.data, "path", ["/nonexistent"])
    spec = load_spec("textarena:Wordle-v0")
    with live_server(spec.name) as running, spec.client.from_url(running.url) as client:
        with pytest.raises(ExecutionError, match=r"python -m nltk\.downloader words"):
            client.reset(seed=1)
        reply = httpx.post(f"{running.url}/reset", json={"seed": 1})
        assert reply.status_code == 400 and "Traceback" not in reply.text
        assert "nltk.downloader" in reply.json()["error"]["message"]


def test_unknown_and_multiplayer_games_are_refused_clearly() -> None:
    with pytest.raises(UnknownGame, match="Did you mean 'textarena:Mastermind-v0'"):
        load_spec("textarena:Mastermnd-v0")
    spec = load_spec("textarena:TicTacToe-v0")  # TextArena has it, for two players
    with spec.client.in_process() as client, pytest.raises(ExecutionError, match="one player"):
        client.reset(seed=1)


def test_a_server_without_textarena_says_which_extra_to_install() -> None:
    """A server-only install lacks TextArena: serving one of its games names the extra, while
    its declaration still loads (clients and trainers need no TextArena)."""
    code = (
        "import sys; sys.modules['textarena'] = None\n"
        "from env_servers.core.registry import UnknownGame, load_environment, load_spec\n"
        f"load_spec({GAME!r})\n"
        "try:\n"
        f"    load_environment({GAME!r})\n"
        "except UnknownGame as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "pip install 'arenagym[textarena]'" in result.stdout
