"""Soak benchmark: thousands of sessions opening, playing, dropping, resuming and closing.

One Wordle server runs as a subprocess (``arenagym serve``, a short ``--session-ttl`` so that
dropped sessions are reaped within the run); this process plays sessions against it, a bounded
number at a time, each one of five lives chosen at random:

- ``play``: a WebSocket plays a whole game, then ends the session with a ``close`` frame;
- ``drop``: a WebSocket resets, steps, and its TCP connection is cut mid-episode (the session
  stays for resume until the TTL reaps it);
- ``resume``: as ``drop``, then a new socket re-attaches with ``?session_id=`` and finishes;
- ``close``: a WebSocket resets and closes at once;
- ``http``: the stateful HTTP routes: reset, two steps, ``DELETE /sessions/{id}``.

It reports the server's RSS before, at its peak and after (all sessions gone, reaped, the
server settled), the errors (error frames, unexpected closes, HTTP 5xx), sessions/s, and
whether ``/health`` counts zero active sessions at the end.

    python -m benchmarks.soak --sessions 5000 --seconds 120
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx
import orjson

from benchmarks.load_client import Probe
from benchmarks.procs import running_server
from benchmarks.ws_connection import OneAtATime, WSConnection
from env_servers.wordle import game

REATTACH_TRIES = 5
"""Attempts to re-attach a dropped session before counting an error."""
LIVES = {"play": 4, "drop": 2, "resume": 2, "close": 1, "http": 1}
"""Each life's weight in the random choice."""
REPLY_TIMEOUT_S = 30.0
SESSION_TTL_S = 5.0
"""The server's ``--session-ttl`` here: dropped sessions are reaped within the run, while a
session of a client slowed down by the load (2 cores shared) is not."""
SETTLE_S = 1.0
RSS_SAMPLE_S = 0.05


@dataclass
class SoakResult:
    sessions: int
    """Sessions whose life ended, by every kind of life."""
    lives: dict[str, int]
    seconds: float
    sessions_per_s: float
    steps: int
    errors: int
    error_samples: list[str]
    rss_before_mb: float
    rss_peak_mb: float
    rss_after_mb: float
    active_after: int
    """``/health``'s active sessions once every socket was gone and the TTL passed."""
    client_stall_s: float
    """The longest this client's event loop was kept from running (a loaded machine): longer
    than the TTL, a session it played over HTTP may expire between two of its requests."""
    health_after: dict[str, Any] = field(default_factory=dict)
    reattach_refused: int = 0
    """Re-attaches refused while the server still held the dropped socket (each an error the
    server counts), then tried again."""


class SessionFailed(RuntimeError):
    """A session saw something a healthy server never sends."""


class Socket(OneAtATime):
    """One session's socket: replies that are error frames raise ``SessionFailed``."""

    @classmethod
    async def open(cls, url: str, timeout: float = REPLY_TIMEOUT_S) -> Socket:
        return cls(await WSConnection.connect(url, timeout))

    async def call(self, kind: str, data: Any = None) -> dict[str, Any]:
        frame: dict[str, Any] = {"type": kind} if data is None else {"type": kind, "data": data}
        try:
            raw = await self.request(orjson.dumps(frame), REPLY_TIMEOUT_S)
        except (ConnectionError, TimeoutError) as error:
            raise SessionFailed(f"no reply to {kind}: {error}") from None
        message = orjson.loads(raw)
        if message.get("type") == "error":
            raise SessionFailed(f"error frame for {kind}: {message.get('data')}")
        return dict(message["data"])


class Soak:
    """Plays the sessions and keeps the counts."""

    def __init__(self, base_url: str, probe: Probe, seed: int) -> None:
        self.base_url = base_url
        self.ws_url = base_url.replace("http://", "ws://") + "/ws"
        self.probe = probe
        self.rng = random.Random(seed)
        self.words = game.answers()
        self.lives: Counter[str] = Counter()
        self.steps = self.errors = 0
        self.error_samples: list[str] = []
        self.peak = probe.rss_bytes()
        self.stall = 0.0
        self.reattach_refused = 0

    def guess(self) -> dict[str, str]:
        return {"message": f"[{self.rng.choice(self.words)}]"}

    async def _play(self, socket: Socket, *, steps: int | None = None) -> None:
        """Step until the episode ends (or ``steps`` steps)."""
        taken = 0
        while steps is None or taken < steps:
            reply = await socket.call("step", self.guess())
            self.steps += 1
            taken += 1
            if reply["done"]:
                return

    async def play(self) -> None:
        socket = await Socket.open(self.ws_url)
        await socket.call("reset", {"seed": self.rng.randrange(2**31)})
        await self._play(socket)
        socket.ws.send(b'{"type":"close"}')
        await socket.close()

    async def drop(self) -> str:
        socket = await Socket.open(self.ws_url)
        reply = await socket.call("reset", {"seed": self.rng.randrange(2**31)})
        await self._play(socket, steps=2)
        socket.ws.abort()  # the TCP connection cut mid-episode, no closing handshake
        return str(reply["session_id"])

    async def resume(self) -> None:
        session_id = await self.drop()
        socket = await self._reattach(f"{self.ws_url}?session_id={session_id}")
        await self._play(socket)
        socket.ws.send(b'{"type":"close"}')
        await socket.close()

    async def _reattach(self, url: str) -> Socket:
        """Re-attach as a resuming client does: until the server has seen the dropped socket
        go (the same event-loop turn may bring the new handshake first), the session is still
        held and the attach is refused, so it is tried again after a short wait."""
        for attempt in range(REATTACH_TRIES):
            try:
                socket = await Socket.open(url)
                await socket.call("state")
                return socket
            except (SessionFailed, ConnectionError) as error:
                if "held by another" not in str(error) or attempt == REATTACH_TRIES - 1:
                    raise
                self.reattach_refused += 1
            await asyncio.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")

    async def close(self) -> None:
        socket = await Socket.open(self.ws_url)
        await socket.call("reset", {"seed": self.rng.randrange(2**31)})
        socket.ws.send(b'{"type":"close"}')
        await socket.close()

    async def http(self, client: httpx.AsyncClient) -> None:
        response = await self._http(client, "POST", "/reset", {"seed": self.rng.randrange(2**31)})
        session_id = response["session_id"]
        for _ in range(2):  # unless the first guess was the word
            action = {"session_id": session_id, "action": self.guess()}
            self.steps += 1
            if (await self._http(client, "POST", "/step", action))["done"]:
                break
        await self._http(client, "DELETE", f"/sessions/{session_id}")

    @staticmethod
    async def _http(
        client: httpx.AsyncClient, method: str, path: str, body: Any = None
    ) -> dict[str, Any]:
        response = await client.request(method, path, json=body)
        if response.status_code != 200:
            raise SessionFailed(
                f"{method} {path}: HTTP {response.status_code} {response.text[:200]}"
            )
        return dict(response.json())

    async def one(self, client: httpx.AsyncClient) -> None:
        life = self.rng.choices(list(LIVES), weights=list(LIVES.values()))[0]
        try:
            if life == "http":
                await self.http(client)
            else:
                await getattr(self, life)()
        except (TimeoutError, SessionFailed, OSError, httpx.HTTPError) as error:
            self.errors += 1
            if len(self.error_samples) < 5:
                self.error_samples.append(f"{life}: {error!r}")
        self.lives[life] += 1

    async def sample_rss(self) -> None:
        while True:
            with contextlib.suppress(OSError):
                self.peak = max(self.peak, self.probe.rss_bytes())
            start = time.perf_counter()
            await asyncio.sleep(RSS_SAMPLE_S)
            self.stall = max(self.stall, time.perf_counter() - start - RSS_SAMPLE_S)

    async def run(self, sessions: int, seconds: float, concurrency: int) -> float:
        """Play up to ``sessions`` sessions, ``concurrency`` at a time, for ``seconds`` at
        most; returns the seconds taken."""
        deadline = time.monotonic() + seconds
        started = 0
        sampler = asyncio.create_task(self.sample_rss())
        start = time.perf_counter()
        async with httpx.AsyncClient(base_url=self.base_url, trust_env=False, timeout=30) as client:

            async def worker() -> None:
                nonlocal started
                while started < sessions and time.monotonic() < deadline:
                    started += 1
                    await self.one(client)

            await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
        sampler.cancel()
        return elapsed


def _mb(value: int) -> float:
    return round(value / 2**20, 1)


async def _health(base_url: str) -> dict[str, Any]:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as client:
        return dict((await client.get(f"{base_url}/health")).json())


async def soak_server(
    base_url: str, probe: Probe, *, sessions: int, seconds: float, concurrency: int, seed: int
) -> SoakResult:
    """The soak against a running server whose ``--session-ttl`` is ``SESSION_TTL_S``."""
    await asyncio.sleep(SETTLE_S)
    before = probe.rss_bytes()
    soak = Soak(base_url, probe, seed)
    elapsed = await soak.run(sessions, seconds, concurrency)
    deadline = time.monotonic() + SESSION_TTL_S * 3 + 5  # dropped sessions: reaped after the TTL
    health = await _health(base_url)
    while health["active_sessions"] and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        health = await _health(base_url)
    await asyncio.sleep(SETTLE_S)
    done = sum(soak.lives.values())
    return SoakResult(
        sessions=done,
        lives=dict(soak.lives),
        seconds=round(elapsed, 2),
        sessions_per_s=round(done / elapsed, 1),
        steps=soak.steps,
        errors=soak.errors,
        error_samples=soak.error_samples,
        rss_before_mb=_mb(before),
        rss_peak_mb=_mb(soak.peak),
        rss_after_mb=_mb(probe.rss_bytes()),
        active_after=health["active_sessions"],
        client_stall_s=round(soak.stall, 2),
        reattach_refused=soak.reattach_refused,
        health_after=health,
    )


def soak(sessions: int, seconds: float, concurrency: int, seed: int = 0) -> SoakResult:
    """Start a Wordle server, soak it, stop it."""
    options = ["--session-ttl", str(SESSION_TTL_S)]
    with running_server("ours", max_sessions=4 * concurrency + 64, options=options) as server:
        return asyncio.run(
            soak_server(
                server.http_url,
                server,
                sessions=sessions,
                seconds=seconds,
                concurrency=concurrency,
                seed=seed,
            )
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.soak",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--sessions", type=int, default=5000, help="sessions to play in all")
    parser.add_argument("--seconds", type=float, default=120.0, help="stop after this long")
    parser.add_argument("--concurrency", type=int, default=64, help="sessions at once")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if min(args.sessions, args.concurrency) < 1 or args.seconds <= 0:
        parser.error("--sessions, --concurrency and --seconds must be positive")
    result = soak(args.sessions, args.seconds, args.concurrency, args.seed)
    print(json.dumps(asdict(result), indent=2))
    if result.errors or result.active_after:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
