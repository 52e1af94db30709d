"""``arenagym serve`` as a real process: flags, environment variables, SIGTERM drain."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.sync.client import connect

ARENAGYM = [sys.executable, "-m", "env_servers"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("server did not become healthy")


@contextlib.contextmanager
def serving(*flags: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    env = {**os.environ, "ARENAGYM_PORT": str(port), "ARENAGYM_MAX_SESSIONS": "7"}
    process = subprocess.Popen(
        [*ARENAGYM, "serve", "wordle", "--log-level", "warning", *flags],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url, process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


@pytest.fixture
def served() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    with serving() as served:
        yield served


def test_settings_come_from_environment_variables(
    served: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, _ = served
    assert httpx.get(f"{url}/health").json()["max_sessions"] == 7


def test_sigterm_drains_and_closes_sockets_with_1001(
    served: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, process = served
    ws_url = url.replace("http", "ws") + "/ws"
    with connect(ws_url) as ws:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(ws.recv(timeout=5))["type"] == "observation"
        process.send_signal(signal.SIGTERM)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
    # uvicorn re-raises the signal once drained, so the exit status says "terminated"
    assert process.wait(timeout=15) in (0, -signal.SIGTERM)


def test_ws_asgi_serves_ws_through_the_app() -> None:
    with (
        serving("--ws", "asgi") as (url, process),
        connect(url.replace("http", "ws") + "/ws") as ws,
    ):
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(ws.recv(timeout=5))["type"] == "observation"
        # invalid UTF-8 tells the paths apart: inline answers INVALID_JSON, ASGI closes 1007
        ws.socket.sendall(Frame(Opcode.TEXT, b'"\xff"').serialize(mask=True, extensions=[]))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
        process.terminate()
        assert b"Serving /ws through ASGI" not in process.communicate(timeout=15)[1]


def test_list_and_unknown_game() -> None:
    listed = subprocess.run([*ARENAGYM, "serve", "--list"], capture_output=True, text=True)
    assert listed.returncode == 0
    assert "wordle" in listed.stdout and "countdown" in listed.stdout
    assert "textarena:Sudoku-v0\tenv_servers.textarena.spec:FAMILY" in listed.stdout
    unknown = subprocess.run([*ARENAGYM, "serve", "chess"], capture_output=True, text=True)
    assert unknown.returncode != 0
    assert "Unknown game 'chess'" in unknown.stderr and "wordle" in unknown.stderr


def test_bad_setting_is_reported_not_raised() -> None:
    result = subprocess.run(
        [*ARENAGYM, "serve", "wordle", "--max-sessions", "0"], capture_output=True, text=True
    )
    assert result.returncode != 0 and "max_sessions must be at least 1" in result.stderr
    assert "Traceback" not in result.stderr
    env = {**os.environ, "ARENAGYM_WS": "fast"}
    result = subprocess.run([*ARENAGYM, "serve", "wordle"], capture_output=True, text=True, env=env)
    assert result.returncode == 2 and "'fast' is not one of 'inline', 'asgi'" in plain(
        result.stderr
    )


def test_limits_are_flags_and_environment_variables_checked_before_serving() -> None:
    result = subprocess.run(
        [*ARENAGYM, "serve", "wordle", "--idle-timeout", "0"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "idle_timeout must be a positive number of seconds, got 0.0" in plain(result.stderr)
    env = {**os.environ, "ARENAGYM_MAX_HEADER_BYTES": "100"}
    result = subprocess.run([*ARENAGYM, "serve", "wordle"], capture_output=True, text=True, env=env)
    assert result.returncode == 2
    assert "max_header_bytes must be at least 1024, got 100" in plain(result.stderr)


def plain(text: str) -> str:
    """Terminal text without the boxes that rich draws around errors, on one line."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())


def test_every_wrong_value_is_one_message_and_exit_code_2() -> None:
    cases = [
        (["serve", "wordel"], "Did you mean 'wordle'?"),
        (["serve", "wordle", "--log-level", "verbose"], "'verbose' is not one of"),
        (["serve", "wordle", "--port", "http"], "Invalid value for '--port'"),
    ]
    for args, message in cases:
        result = subprocess.run([*ARENAGYM, *args], capture_output=True, text=True)
        assert result.returncode == 2, (args, result.stderr)
        assert message in plain(result.stderr) and "Traceback" not in result.stderr, result.stderr
    assert subprocess.run([*ARENAGYM, "serve", "-h"], capture_output=True).returncode == 0


def test_a_port_in_use_is_named_before_starting() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*ARENAGYM, "serve", "wordle", "--port", str(port)], capture_output=True, text=True
        )
    assert result.returncode == 2 and f"Port {port} on 127.0.0.1 is in use" in result.stderr
    assert "--port" in result.stderr and "Application startup" not in result.stderr


def test_every_command_takes_dash_h() -> None:
    from env_servers.cli import SUBCOMMANDS

    for name in ("", *SUBCOMMANDS):
        result = subprocess.run([*ARENAGYM, *name.split(), "-h"], capture_output=True, text=True)
        assert result.returncode == 0 and "Usage" in result.stdout, (name, result.stderr)


def test_tokens_come_from_a_file_and_origins_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = "first-token-of-the-file-0123456789", "second-token-of-the-file-0123456789"
    tokens = tmp_path / "tokens"
    tokens.write_text(f"# one a line\n{first}\n\n{second}\n")
    origins = "https://a.example https://b.example"
    monkeypatch.setenv("ARENAGYM_ALLOWED_ORIGINS", origins)
    monkeypatch.delenv("ARENAGYM_AUTH_TOKEN", raising=False)
    with serving("--auth-token-file", str(tokens)) as (url, _):
        assert httpx.get(f"{url}/health").status_code == 200
        assert httpx.get(f"{url}/metadata").status_code == 401
        for token in (first, second):
            bearer = {"Authorization": f"Bearer {token}"}
            for origin in origins.split():
                headers = {**bearer, "Origin": origin}
                assert httpx.get(f"{url}/metadata", headers=headers).status_code == 200
            evil = {**bearer, "Origin": "https://c.example"}
            assert httpx.get(f"{url}/metadata", headers=evil).status_code == 403


def test_a_weak_token_or_a_missing_file_is_refused() -> None:
    cases = [
        (["--auth-token", "short"], "at least 16 characters"),
        (["--auth-token-file", "/nonexistent/tokens"], "cannot read --auth-token-file"),
        (["--allowed-origin", "example.org"], "is not scheme://host[:port]"),
    ]
    for flags, message in cases:
        result = subprocess.run(
            [*ARENAGYM, "serve", "wordle", *flags], capture_output=True, text=True
        )
        assert result.returncode == 2, (flags, result.stderr)
        assert message in plain(result.stderr) and "Traceback" not in result.stderr
