"""The load client: concurrent WebSocket sessions playing Wordle in a closed loop.

Each session is one socket driven by callbacks (``ws_connection``): reset (a random seed, no
explicit word), then guess random answer words until ``done``, then reset again; the next
request leaves as soon as the reply is read. Only step frames are timed and
counted, and only inside the measurement window that follows the warm-up; resets still
cost the server CPU, so "CPU per 1,000 steps" includes one reset per ~6 steps on every
server alike. The client sends what OpenEnv's own server accepts (no extensions), so the
same traffic runs against every server.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from benchmarks.ws_connection import WSConnection

CONNECT_CONCURRENCY = 128
"""Handshakes in flight at once: below uvicorn's listen backlog (2048), so none is dropped."""
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MAX_ERRORS = 100
"""Give up on a run after this many error frames: the numbers would mean nothing."""


class Probe(Protocol):
    """What the client reads of the server process (see ``procs.ServerProcess``)."""

    def cpu_seconds(self) -> float: ...

    def rss_bytes(self) -> int: ...


class ServerError(RuntimeError):
    """The server answered with something other than an observation."""


@dataclass
class _Recorder:
    step_frames: Sequence[bytes]
    """One step frame per answer word, encoded once and shared by all sessions."""
    failed: asyncio.Future[None]
    """Set with the error that ends the run early."""
    active: bool = False
    stopping: bool = False
    steps: int = 0
    resets: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class LoadResult:
    """One closed-loop run; latencies in milliseconds, CPU in seconds over the window."""

    sessions: int
    seconds: float
    steps: int
    resets: int
    errors: int
    steps_per_s: float
    p50_ms: float
    p99_ms: float
    server_cpu_s: float
    server_cpu_s_per_1k_steps: float
    client_cpu_s_per_1k_steps: float
    server_cores: float
    """Cores the server kept busy on average: near 1.0, one process is saturated."""
    client_cores: float
    other_cores: float
    """Cores busy with neither (other work on the machine): latency suffers, CPU/step less."""
    rss_load_bytes: int


@dataclass(frozen=True)
class OpenResult:
    """``count`` sessions held open at once, each after one reset."""

    count: int
    opened: int
    seconds_to_open: float
    rss_before_bytes: int
    rss_open_bytes: int
    rss_per_session_bytes: float


def _percentile(ordered: list[float], q: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _open_all(url: str, count: int) -> list[WSConnection]:
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one() -> WSConnection:
        async with gate:
            return await WSConnection.connect(url)

    results = await asyncio.gather(*(one() for _ in range(count)), return_exceptions=True)
    sockets = [r for r in results if isinstance(r, WSConnection)]
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        await _close_all(sockets)
        raise RuntimeError(
            f"{len(failures)} of {count} connections failed; first: {failures[0]!r}"
        ) from failures[0]
    return sockets


async def _close_all(sockets: Sequence[WSConnection]) -> None:
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY * 4)

    async def one(ws: WSConnection) -> None:
        async with gate:
            await ws.close()

    await asyncio.gather(*(one(ws) for ws in sockets), return_exceptions=True)


def _reply(raw: bytes) -> Any:
    message = orjson.loads(raw)
    if message.get("type") != "observation":
        raise ServerError(f"expected an observation frame, got {raw[:300]!r}")
    return message["data"]


def _reset_frame(rng: random.Random) -> bytes:
    return orjson.dumps({"type": "reset", "data": {"seed": rng.randrange(2**31)}})


def _step_frames(words: Sequence[str]) -> list[bytes]:
    return [orjson.dumps({"type": "step", "data": {"message": f"[{w}]"}}) for w in words]


class _Player:
    """One closed-loop session on one socket; every reply is handled as it is read."""

    __slots__ = ("rec", "rng", "sent_at", "stepping", "ws")

    def __init__(self, ws: WSConnection, rng: random.Random, rec: _Recorder) -> None:
        self.ws, self.rng, self.rec = ws, rng, rec
        self.sent_at = 0.0
        self.stepping = False
        ws.on_message = self.on_reply
        self.reset()

    def reset(self) -> None:
        self.stepping = False
        self.ws.send(_reset_frame(self.rng))

    def on_reply(self, raw: bytes) -> None:
        now, rec = time.perf_counter(), self.rec
        try:
            done = _reply(raw)["done"]
        except ServerError as error:
            if not self.stepping:
                self.fail(error)  # a reset must always work
                return
            rec.errors += 1
            if rec.errors >= MAX_ERRORS:
                self.fail(error)
                return
            done = True  # start a fresh episode
        else:
            if rec.active:
                if self.stepping:
                    rec.steps += 1
                    rec.latencies.append(now - self.sent_at)
                else:
                    rec.resets += 1
        if rec.stopping:
            return
        if done:
            self.reset()
            return
        frames = rec.step_frames
        frame = frames[self.rng.randrange(len(frames))]
        self.stepping = True
        self.sent_at = time.perf_counter()
        self.ws.send(frame)

    def fail(self, error: BaseException) -> None:
        if not self.rec.failed.done():
            self.rec.failed.set_exception(error)


async def run_load(
    url: str,
    probe: Probe,
    *,
    sessions: int,
    warmup: float,
    duration: float,
    words: Sequence[str],
    seed: int,
) -> LoadResult:
    """Connect ``sessions`` sockets, play for ``warmup`` s, then measure for ``duration`` s."""
    rec = _Recorder(_step_frames(words), asyncio.get_running_loop().create_future())
    master = random.Random(seed)
    sockets = await _open_all(url, sessions)
    lost = [ws.lost for ws in sockets]
    # A full collection of the client's 256 connections stalls it for tens of milliseconds,
    # which would be counted as the server's latency: collect now, then not during the run.
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        for ws in sockets:
            _Player(ws, random.Random(master.random()), rec)
        await _run_for(warmup, rec.failed, lost)
        cpu0, client0, busy0 = probe.cpu_seconds(), _own_cpu(), _machine_busy()
        t0 = time.perf_counter()
        rec.active = True
        await _run_for(duration, rec.failed, lost)
        rec.active = False
        cpu1, client1, busy1 = probe.cpu_seconds(), _own_cpu(), _machine_busy()
        t1 = time.perf_counter()
        rss = probe.rss_bytes()
        rec.stopping = True
    finally:
        gc.enable()
        gc.unfreeze()
        await _close_all(sockets)
    seconds, ordered = t1 - t0, sorted(rec.latencies)
    per_1k = 1000 / rec.steps if rec.steps else float("nan")
    return LoadResult(
        sessions=sessions,
        seconds=round(seconds, 3),
        steps=rec.steps,
        resets=rec.resets,
        errors=rec.errors,
        steps_per_s=rec.steps / seconds,
        p50_ms=_percentile(ordered, 0.50) * 1000,
        p99_ms=_percentile(ordered, 0.99) * 1000,
        server_cpu_s=cpu1 - cpu0,
        server_cpu_s_per_1k_steps=(cpu1 - cpu0) * per_1k,
        client_cpu_s_per_1k_steps=(client1 - client0) * per_1k,
        server_cores=(cpu1 - cpu0) / seconds,
        client_cores=(client1 - client0) / seconds,
        other_cores=max(0.0, (busy1 - busy0) - (cpu1 - cpu0) - (client1 - client0)) / seconds,
        rss_load_bytes=rss,
    )


async def hold_open(url: str, probe: Probe, *, count: int, seed: int) -> OpenResult:
    """Open ``count`` sessions, reset each (so a game exists), and read the server's RSS
    while all of them are open."""
    rng = random.Random(seed)
    before = probe.rss_bytes()
    start = time.perf_counter()
    sockets: list[WSConnection] = []
    try:
        sockets = await _open_all(url, count)
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

        async def reset(ws: WSConnection) -> None:
            replied: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
            ws.on_message = replied.set_result
            async with gate:
                ws.send(_reset_frame(rng))
                _reply(await asyncio.wait_for(replied, 60))

        await asyncio.gather(*(reset(ws) for ws in sockets))
        seconds = time.perf_counter() - start
        await asyncio.sleep(0.5)  # let the server settle before reading its memory
        rss = probe.rss_bytes()
    finally:
        await _close_all(sockets)
    return OpenResult(
        count=count,
        opened=len(sockets),
        seconds_to_open=round(seconds, 2),
        rss_before_bytes=before,
        rss_open_bytes=rss,
        rss_per_session_bytes=(rss - before) / count,
    )


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system


def _machine_busy() -> float:
    """CPU-seconds all cores spent busy since boot (``/proc/stat``: all but idle, iowait)."""
    with open("/proc/stat") as stat:
        ticks = [int(t) for t in stat.readline().split()[1:]]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / _CLOCK_TICKS


async def _run_for(
    seconds: float, failed: asyncio.Future[None], lost: Sequence[asyncio.Future[None]]
) -> None:
    """Let the players run; raise as soon as one fails or a server drops a connection."""
    waits = [*lost, failed]
    done, _ = await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    for future in done:
        future.result()  # a player's or a connection's error
        if future is not failed:
            raise ConnectionError("the server closed a load connection during the run")
