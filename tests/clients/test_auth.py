"""Clients against a server that requires a token: every way of passing it, and the error
that says what to do when it is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from clients.errors import AccessError
from clients.trl import make_env_factory
from env_servers.core.protocol import AUTH_TOKEN_ENV
from env_servers.wordle.client import AsyncWordleClient, WordleClient
from tests.live import LiveServer, live_server

TOKEN = "t0k3n-for-the-client-tests-0123456789"


@pytest.fixture(scope="module")
def guarded() -> Iterator[LiveServer]:
    with live_server("wordle", auth_tokens=(TOKEN,)) as server:
        yield server


@pytest.fixture(autouse=True)
def no_token_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AUTH_TOKEN_ENV, raising=False)


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_the_token_is_sent_on_both_transports(guarded: LiveServer, transport: str) -> None:
    with WordleClient.from_url(guarded.url, transport=transport, auth_token=TOKEN) as client:
        client.reset(word="crane")
        assert client.step({"guess": "crane"}).reward == 1.0


def test_a_missing_token_says_how_to_pass_one(guarded: LiveServer) -> None:
    with pytest.raises(AccessError) as info:
        WordleClient.from_url(guarded.url)
    assert "auth_token=" in str(info.value) and AUTH_TOKEN_ENV in str(info.value)
    with pytest.raises(AccessError):
        WordleClient.from_url(guarded.url, auth_token="wrong-token-0123456789")


def test_the_token_comes_from_the_environment(
    guarded: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(AUTH_TOKEN_ENV, TOKEN)
    with WordleClient.from_url(guarded.url) as client:
        assert client.reset(word="crane").done is False


async def test_the_async_client_sends_it(guarded: LiveServer) -> None:
    async with AsyncWordleClient.from_url(guarded.url, auth_token=TOKEN) as client:
        await client.reset(word="crane")
        assert (await client.step({"guess": "crane"})).done


def test_the_trl_adapter_sends_it(guarded: LiveServer) -> None:
    agent = make_env_factory("wordle", url=guarded.url, auth_token=TOKEN)()
    agent.reset(word="crane")
    assert "solved" in agent.guess("crane").lower()


def test_play_says_it_needs_a_token() -> None:
    with live_server("wordle", auth_tokens=(TOKEN,)) as server:
        env = {k: v for k, v in os.environ.items() if k != AUTH_TOKEN_ENV}
        result = subprocess.run(
            [sys.executable, "-m", "env_servers", "play", "wordle", "--url", server.url],
            capture_output=True,
            text=True,
            timeout=60,
            env={**env, "COLUMNS": "200"},
        )
    assert result.returncode == 1, result.stderr
    assert "requires a token" in result.stderr and "--auth-token" in result.stderr
    assert "Traceback" not in result.stderr
