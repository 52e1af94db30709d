"""The folder ``arenagym push --dry-run`` stages builds with Docker alone, and the container
serves: a client given its URL and the server's token plays over ``/ws``, HTTP and ``/mcp``, as
on a public Space whose secret ``ARENAGYM_AUTH_TOKEN`` is set."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from clients import WordleClient
from tests.docker.support import play_wordle, remove_images, require_docker, run

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]
TOKEN = "space-secret-token-0123456789"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def space_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_docker()
    folder: Path = tmp_path_factory.mktemp("space") / "wordle"
    push = [sys.executable, "-m", "env_servers", "push", "wordle", "--space", "alice/wordle"]
    run([*push, "--dry-run", str(folder)], timeout=300)
    tag = f"arenagym/wordle-space:test-{uuid.uuid4().hex[:8]}"
    name = f"arenagym-space-{uuid.uuid4().hex[:8]}"
    port = free_port()
    try:
        run(["docker", "build", "--network", "host", "-t", tag, str(folder)], timeout=600)
        run(
            ["docker", "run", "-d", "--rm", "--name", name, "--network", "host",
             "-e", f"ARENAGYM_PORT={port}", "-e", f"ARENAGYM_AUTH_TOKEN={TOKEN}", tag],
            timeout=60,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", trust_env=False).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True)
                pytest.fail(f"the Space container did not serve:\n{logs.stdout}{logs.stderr}")
            time.sleep(0.2)
        user = run(["docker", "exec", name, "id", "-u"], timeout=30).stdout.strip()
        assert user == "1000", "the Space image must not run as root"
        yield url
    finally:
        run(["docker", "rm", "--force", name], timeout=60, check=False)
        remove_images(tag)


def test_the_staged_space_wants_its_token(space_url: str) -> None:
    assert httpx.post(f"{space_url}/reset", json={}, trust_env=False).status_code == 401
    assert httpx.get(f"{space_url}/health", trust_env=False).status_code == 200


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_the_staged_space_plays_over_ws_and_http(space_url: str, transport: str) -> None:
    with WordleClient.from_url(space_url, transport=transport, auth_token=TOKEN) as env:  # type: ignore[arg-type]
        env.reset(seed=3)

        def guess(word: str) -> tuple[str, bool]:
            result = env.step({"guess": word})
            return result.observation.guesses[-1].feedback, result.done

        assert len(play_wordle(guess)) <= 6


def test_the_staged_space_plays_over_mcp(space_url: str) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=space_url, headers=headers, trust_env=False) as http:

        def rpc(method: str, **params: object) -> dict[str, object]:
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            answer: dict[str, object] = http.post("/mcp", json=body).json()["result"]
            return answer

        session = rpc("arenagym/reset", seed=3)["session_id"]

        def guess(word: str) -> tuple[str, bool]:
            result = rpc("tools/call", name="guess", arguments={"word": word}, session_id=session)
            marks = str(result["data"]).splitlines()[1].replace(" ", "")
            return marks, bool(result["structuredContent"]["done"])  # type: ignore[index]

        assert len(play_wordle(guess)) <= 6
        rpc("openenv/session/close", session_id=session)
