"""The load generator of ``benchmarks.server_load``, briefly, against a live server."""

from __future__ import annotations

import asyncio
import os
import resource

import httpx
import pytest

from benchmarks.load_client import hold_open, run_load
from benchmarks.ws_connection import WSConnection
from env_servers.wordle import game
from tests.live import LiveServer, live_server


class ThisProcess:
    """The server runs in a thread of the test process: probe the process itself."""

    def cpu_seconds(self) -> float:
        times = os.times()
        return times.user + times.system

    def rss_bytes(self) -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def test_closed_loop_load_plays_and_times_steps(wordle_server: LiveServer) -> None:
    before = httpx.get(f"{wordle_server.url}/health").json()
    result = await run_load(
        wordle_server.ws_url,
        ThisProcess(),
        sessions=8,
        warmup=0.2,
        duration=0.5,
        words=game.answers(),
        seed=1,
    )
    after = httpx.get(f"{wordle_server.url}/health").json()
    assert result.errors == 0 and result.steps > 0 and result.resets > 0
    assert 0 < result.p50_ms <= result.p99_ms
    assert after["steps"] - before["steps"] >= result.steps  # counted steps did reach it


async def test_hold_open_opens_resets_and_closes(wordle_server: LiveServer) -> None:
    before = httpx.get(f"{wordle_server.url}/health").json()
    held = await hold_open(wordle_server.ws_url, ThisProcess(), count=40, seed=0)
    assert held.opened == 40
    after = httpx.get(f"{wordle_server.url}/health").json()
    assert after["resets"] - before["resets"] == 40


async def test_a_refused_handshake_is_an_error(wordle_server: LiveServer) -> None:
    with pytest.raises(Exception, match="403"):
        await WSConnection.connect(wordle_server.ws_url.replace("/ws", "/nowhere"), timeout=5)


async def test_a_refused_session_says_why() -> None:
    with live_server("wordle", max_sessions=1) as server:
        first = await WSConnection.connect(server.ws_url)
        try:
            with pytest.raises(ConnectionError, match="CAPACITY_REACHED"):
                second = await WSConnection.connect(server.ws_url)
                await asyncio.sleep(0.2)  # the refusal may come after the handshake
                second.send(b'{"type": "reset"}')
        finally:
            await first.close()
