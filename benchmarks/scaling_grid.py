"""OpenEnv's scaling grid: the largest batch of sessions a server serves on this machine.

For each server and each think time W (1, 5, 10 s: a model generating between two steps),
``N`` sessions (32, 64, 128, … doubling) connect at once over WebSockets, reset, and play
``--steps`` steps, each after waiting W s. A count *holds* when at least 95 % of the sessions
finish every step and the p99 step latency stays under 1 s; "max batch" is the largest count
that holds. Doubling stops at the first count that fails, or at ``--cap``.

Both servers get the same load generator and the same frames (plain OpenEnv frames, no
extensions): ours (``arenagym serve wordle``) and a stock OpenEnv 0.10 server serving the same
Wordle rules (``benchmarks/openenv_wordle.py`` under OpenEnv 0.10's own interpreter, the venv
``tests/openenv10.py`` builds in ``.cache/``). Each (server, W) series runs on a fresh server.

    python -m benchmarks.scaling_grid                         # both servers, W = 1, 5, 10
    python -m benchmarks.scaling_grid --servers ours --waits 1 --cap 256
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

from benchmarks.load_client import CONNECT_CONCURRENCY, _percentile
from benchmarks.procs import running_server
from benchmarks.server_load import raise_fd_limit
from benchmarks.ws_connection import OneAtATime
from env_servers.wordle import game

SERVERS = ("ours", "openenv10")
SUCCESS_SHARE = 0.95
P99_LIMIT_S = 1.0
FIRST_BATCH = 32
REPLY_TIMEOUT_S = 30.0
DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "scaling_grid.json"


@dataclass(frozen=True)
class BatchResult:
    server: str
    wait_s: float
    sessions: int
    finished: int
    """Sessions that connected, reset and played every step."""
    success: float
    p50_ms: float
    p99_ms: float
    seconds: float
    errors: list[str]
    holds: bool


async def _timed(session: OneAtATime, frame: bytes) -> tuple[float, bool]:
    """Send ``frame``, wait for its observation; returns the latency in seconds and whether
    the episode is over."""
    start = time.perf_counter()
    raw = await session.request(frame, REPLY_TIMEOUT_S)
    latency = time.perf_counter() - start
    reply = orjson.loads(raw)
    if reply.get("type") != "observation":
        raise RuntimeError(f"not an observation: {raw[:200]!r}")
    return latency, bool(reply["data"]["done"])


async def _one(
    url: str, wait: float, steps: int, gate: asyncio.Semaphore, rng: random.Random
) -> list[float]:
    """One session's step latencies; raises on any failure."""
    async with gate:
        session = await OneAtATime.open(url, timeout=REPLY_TIMEOUT_S)
    words = game.answers()

    def reset() -> bytes:
        return orjson.dumps({"type": "reset", "data": {"seed": rng.randrange(2**31)}})

    try:
        await _timed(session, reset())
        latencies = []
        for _ in range(steps):
            await asyncio.sleep(wait)
            frame = {"type": "step", "data": {"message": f"[{rng.choice(words)}]"}}
            latency, done = await _timed(session, orjson.dumps(frame))
            latencies.append(latency)
            if done:  # a lucky guess won the game: the next step starts another
                await _timed(session, reset())
        session.ws.send(b'{"type":"close"}')
        return latencies
    finally:
        await session.close()


async def run_batch(url: str, server: str, sessions: int, wait: float, steps: int) -> BatchResult:
    """``sessions`` sessions at once, each playing ``steps`` steps ``wait`` s apart."""
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    master = random.Random(sessions)
    start = time.perf_counter()
    results = await asyncio.gather(
        *(_one(url, wait, steps, gate, random.Random(master.random())) for _ in range(sessions)),
        return_exceptions=True,
    )
    seconds = time.perf_counter() - start
    latencies = sorted(x for r in results if isinstance(r, list) for x in r)
    failures = [r for r in results if isinstance(r, BaseException)]
    finished = sessions - len(failures)
    p99 = _percentile(latencies, 0.99)
    success = finished / sessions
    return BatchResult(
        server=server,
        wait_s=wait,
        sessions=sessions,
        finished=finished,
        success=round(success, 4),
        p50_ms=round(_percentile(latencies, 0.50) * 1000, 1),
        p99_ms=round(p99 * 1000, 1),
        seconds=round(seconds, 1),
        errors=sorted({repr(f)[:160] for f in failures})[:3],
        holds=success >= SUCCESS_SHARE and p99 < P99_LIMIT_S,
    )


def series(server: str, wait: float, steps: int, cap: int) -> list[BatchResult]:
    """Doubling batches on a fresh server until one fails or ``cap`` is reached."""
    results: list[BatchResult] = []
    with running_server("ours" if server == "ours" else "openenv10", cap + 64) as process:
        url = process.ws_url
        sessions = FIRST_BATCH
        while sessions <= cap:
            result = asyncio.run(run_batch(url, server, sessions, wait, steps))
            results.append(result)
            print(json.dumps(asdict(result)), flush=True)
            if not result.holds:
                break
            sessions *= 2
            time.sleep(1.0)  # let the closed sessions go
    return results


def max_batch(results: Sequence[BatchResult]) -> int:
    return max((r.sessions for r in results if r.holds), default=0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.scaling_grid",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--servers", nargs="+", default=list(SERVERS), choices=SERVERS)
    parser.add_argument("--waits", nargs="+", type=float, default=[1.0, 5.0, 10.0])
    parser.add_argument("--steps", type=int, default=3, help="steps per session")
    parser.add_argument("--cap", type=int, default=4096, help="largest batch tried")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where results go")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.cap < FIRST_BATCH or min(args.waits) < 0:
        parser.error(f"--steps must be positive, --cap at least {FIRST_BATCH}, waits >= 0")
    raise_fd_limit(2 * args.cap + 256)  # the client's sockets and the server's
    results = [
        result
        for server in args.servers
        for wait in args.waits
        for result in series(server, wait, args.steps, args.cap)
    ]
    summary = {
        server: {str(wait): max_batch([r for r in results if (r.server, r.wait_s) == (server, wait)])
                 for wait in args.waits}
        for server in args.servers
    }  # fmt: skip
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({"max_batch": summary, "runs": [asdict(r) for r in results]}, indent=2)
    )
    print(json.dumps({"max_batch": summary}, indent=2))


if __name__ == "__main__":
    main()
