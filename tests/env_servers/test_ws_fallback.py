"""Where ``/ws`` may be answered inline, and the ASGI path taking over where it may not.

The inline path subclasses uvicorn's private protocol, so it runs only on the versions it is
tested on; elsewhere (or with ``ws="asgi"``) uvicorn's own protocol hands ``/ws`` to the app,
and a server asked for ``inline`` says once that it fell back.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from websockets.sync.client import connect

from env_servers.core import server
from env_servers.core.access import Gate
from env_servers.core.config import ServerSettings, WebSocketMode
from env_servers.core.registry import load_environment
from env_servers.core.server import INLINE_WS_TESTED, inline_ws_unsupported, websocket_protocol
from env_servers.core.sessions import SessionManager
from tests.live import LiveServer, live_server

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
PRIVATE_MODULE = "uvicorn.protocols.websockets.websockets_sansio_impl"
FALLBACK_WARNING = "Serving /ws through ASGI, not inline: "


def play_over_ws(live: LiveServer) -> None:
    with connect(live.ws_url) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"word": "crane"}}))
        assert json.loads(ws.recv(timeout=5))["type"] == "observation"
        ws.send(json.dumps({"type": "step", "data": {"guess": "crane"}}))
        assert json.loads(ws.recv(timeout=5))["data"]["reward"] == 1.0


def protocol_for(ws: WebSocketMode) -> tuple[object, str | None]:
    settings = ServerSettings(ws=ws)
    manager = SessionManager(load_environment("wordle"), settings)
    return websocket_protocol(settings, manager, Gate(settings))


def test_the_installed_versions_run_inline() -> None:
    """Otherwise every inline test in this suite would quietly test the ASGI path."""
    from env_servers.core.ws_protocol import InlineWebSocketProtocol

    assert inline_ws_unsupported() is None
    protocol, fallback = protocol_for("inline")
    assert isinstance(protocol, type) and issubclass(protocol, InlineWebSocketProtocol)
    assert fallback is None


@pytest.mark.skipif(not PYPROJECT.is_file(), reason="runs from a source checkout")
def test_the_declared_ranges_are_the_tested_ones() -> None:
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    for package, (lowest, beyond) in INLINE_WS_TESTED.items():
        assert f"{package}>={lowest},<{beyond}" in declared


def test_asgi_is_used_when_asked_for_without_a_warning() -> None:
    assert protocol_for("asgi") == ("websockets-sansio", None)


def test_a_setting_outside_the_choices_is_refused() -> None:
    with pytest.raises(ValueError, match="ws must be one of inline, asgi"):
        ServerSettings(ws="fast")  # type: ignore[arg-type]


def test_an_untested_uvicorn_falls_back_to_asgi(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(INLINE_WS_TESTED, "uvicorn", ("0.1", "0.2"))
    with live_server("wordle") as live:
        assert live.config.ws == "websockets-sansio"
        play_over_ws(live)
    warnings = [line for line in capfd.readouterr().err.splitlines() if FALLBACK_WARNING in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("WARNING:") and "tested on uvicorn>=0.1,<0.2, not" in warnings[0]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # websockets' legacy API, under
@pytest.mark.filterwarnings("ignore:The `websockets` implementation is deprecated")  # uvicorn's
def test_a_uvicorn_without_the_private_module_falls_back_to_asgi(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """As on uvicorn before 0.35: the module is missing, and so is the protocol built on it."""
    monkeypatch.setattr(server, "inline_ws_unsupported", lambda: None)  # the import decides
    monkeypatch.setitem(sys.modules, PRIVATE_MODULE, None)  # importing it raises ImportError
    monkeypatch.delitem(sys.modules, "env_servers.core.ws_protocol", raising=False)  # afresh
    protocols = {
        name: path
        for name, path in server.WS_PROTOCOLS.items()
        if PRIVATE_MODULE not in (path or "")
    }
    monkeypatch.setattr(server, "WS_PROTOCOLS", protocols)
    with live_server("wordle") as live:
        assert live.config.ws == "websockets"
        play_over_ws(live)
    warnings = [line for line in capfd.readouterr().err.splitlines() if FALLBACK_WARNING in line]
    assert len(warnings) == 1 and "importing it failed" in warnings[0]
