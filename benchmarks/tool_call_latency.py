"""Tool-call latency: one TRL adapter tool call against a local server, per transport.

TRL calls an environment's tools one after another inside a training step, so the round
trip of one ``WordleToolEnv.guess`` is added to every turn of every rollout. Targets: a p50
under 1 ms on loopback, at most 0.8x OpenEnv's sync client's and within 1.5x a bare
pre-encoded frame's. The same games are played through our adapter over WebSocket, HTTP and
in-process (what the network costs), and through OpenEnv's own ``GenericEnvClient(...).sync()``
against the same server (ours against theirs); the layers of our WebSocket call are measured
alone too (where its time goes).

    python -m benchmarks.tool_call_latency                 # the defaults, 30-60 s on 2 cores
    python -m benchmarks.tool_call_latency --calls 500 --warmup 50 --json -
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, cast

import httpx
import orjson
from openenv.core.generic_client import GenericEnvClient
from rich.console import Console
from rich.table import Table
from websockets.asyncio.client import ClientConnection, connect
from websockets.sync.client import ClientConnection as SyncConnection
from websockets.sync.client import connect as sync_connect

from benchmarks.load_client import _machine_busy, _own_cpu, _percentile
from benchmarks.procs import ServerProcess, running_server
from benchmarks.report import _check, machine
from clients.protocol import ws_url
from clients.trl import make_env_factory
from env_servers.wordle import game
from env_servers.wordle.agent import WordleToolEnv
from env_servers.wordle.client import AsyncWordleClient, WordleClient

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "tool_call_latency.json"
TARGET_P50_US = 1000.0
TARGET_OVER_OPENENV = 0.8
"""Our adapter's WebSocket p50 over OpenEnv's ``GenericEnvClient.sync()``'s, at most."""
TARGET_OVER_RAW_FRAME = 1.5
"""Our adapter's WebSocket p50 over the bare pre-encoded frame's (asyncio), at most."""
MAX_SESSIONS = 16
"""Our server's --max-sessions: seven sessions are open at once, one per networked path."""
_WIDTH = 120
"""Table width when printing to a pipe or file (rich would use 80 and wrap the columns)."""

LABELS = {
    "adapter_websocket": "adapter, WebSocket",
    "adapter_http": "adapter, HTTP",
    "adapter_inprocess": "adapter, in-process",
    "openenv_websocket": "OpenEnv GenericEnvClient.sync(), WebSocket",
    "sync_client_websocket": "our WordleClient.step (under the adapter)",
    "raw_frame_websocket_sync": "bare frame, pre-encoded, websockets' threading client",
    "async_client_websocket": "our AsyncWordleClient.step on this thread's loop",
    "raw_frame_websocket": "bare frame, pre-encoded, websockets' asyncio client",
}
PATHS = ("adapter_websocket", "adapter_http", "adapter_inprocess", "openenv_websocket")
PARTS = (
    "sync_client_websocket",
    "raw_frame_websocket_sync",
    "async_client_websocket",
    "raw_frame_websocket",
)
"""The adapter's WebSocket call peeled layer by layer, each measured on its own, and our
async client over its own bare frame beside them."""


class Episodes:
    """The games a path plays: seeds 0, 1, 2… and, per game, six distinct answer words from a
    generator seeded alike on every path, so every path plays the same games in the same
    order (repeats would be refused as invalid moves and make games longer)."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._words = game.answers()
        self._next = 0

    def next(self) -> tuple[int, list[str]]:
        seed, self._next = self._next, self._next + 1
        return seed, self._rng.sample(self._words, game.MAX_GUESSES)


class TimedPath(Protocol):
    """One way of making the call; ``play`` returns at least ``calls`` timings in ns."""

    def play(self, calls: int) -> list[int]: ...

    def close(self) -> None: ...


class GamePath:
    """Whole games: ``_reset(seed)`` untimed, then ``_call(word)`` timed per guess, and
    ``_ended(reply)`` read after the clock stops."""

    def __init__(self, seed: int) -> None:
        self._episodes = Episodes(seed)

    def play(self, calls: int) -> list[int]:
        timings: list[int] = []
        while len(timings) < calls:
            seed, words = self._episodes.next()
            self._reset(seed)
            for word in words:
                start = time.perf_counter_ns()
                reply = self._call(word)
                timings.append(time.perf_counter_ns() - start)
                if self._ended(reply):
                    break
        return timings

    def _reset(self, seed: int) -> None:
        raise NotImplementedError

    def _call(self, word: str) -> Any:
        raise NotImplementedError

    def _ended(self, reply: Any) -> bool:
        return bool(reply.done)

    def close(self) -> None:
        pass


class AdapterPath(GamePath):
    """``WordleToolEnv.guess`` as TRL calls it: an instance of the factory's class, made
    with no arguments, ``reset(seed=…)``, then one tool call per guess."""

    def __init__(self, transport: str, url: str, seed: int) -> None:
        super().__init__(seed)
        factory = make_env_factory("wordle", url=url, transport=transport)
        self._env: WordleToolEnv = cast(WordleToolEnv, factory())

    def _reset(self, seed: int) -> None:
        self._env.reset(seed=seed)

    def _call(self, word: str) -> str:
        return self._env.guess(word)

    def _ended(self, reply: Any) -> bool:
        return self._env.solved or self._env.guesses_used == game.MAX_GUESSES

    def close(self) -> None:
        del self._env  # the adapter's finalizer ends its session, as under TRL


class SyncClientPath(GamePath):
    """A sync client's ``step({"guess": word})``: OpenEnv's as its users write it,
    ``GenericEnvClient(base_url).sync()`` (plain OpenEnv frames, which our server accepts),
    or ours, ``WordleClient``, the one under the adapter."""

    def __init__(self, client: Any, seed: int) -> None:
        super().__init__(seed)
        self._client = client

    @classmethod
    def openenv(cls, url: str, seed: int) -> SyncClientPath:
        return cls(GenericEnvClient(base_url=url).sync().connect(), seed)

    @classmethod
    def ours(cls, url: str, seed: int) -> SyncClientPath:
        return cls(WordleClient.from_url(url), seed)

    def _reset(self, seed: int) -> None:
        self._client.reset(seed=seed)

    def _call(self, word: str) -> Any:
        return self._client.step({"guess": word})

    def close(self) -> None:
        self._client.close()


class AsyncGamePath(GamePath):
    """Whole games awaited on this thread's own loop (``runner``), no loop thread."""

    def __init__(self, seed: int, runner: asyncio.Runner) -> None:
        super().__init__(seed)
        self._runner = runner

    def play(self, calls: int) -> list[int]:
        return self._runner.run(self._play(calls))

    async def _play(self, calls: int) -> list[int]:
        timings: list[int] = []
        while len(timings) < calls:
            seed, words = self._episodes.next()
            await self._reset_async(seed)
            for word in words:
                start = time.perf_counter_ns()
                reply = await self._call_async(word)
                timings.append(time.perf_counter_ns() - start)
                if self._ended(reply):
                    break
        return timings

    async def _reset_async(self, seed: int) -> None:
        raise NotImplementedError

    async def _call_async(self, word: str) -> Any:
        raise NotImplementedError


class AsyncClientPath(AsyncGamePath):
    """Our async client's ``step`` awaited on this thread's loop: the async transport and
    the parse of each reply, beside the sync client's."""

    def __init__(self, url: str, seed: int, runner: asyncio.Runner) -> None:
        super().__init__(seed, runner)
        self._client = AsyncWordleClient.from_url(url)

    async def _reset_async(self, seed: int) -> None:
        await self._client.reset(seed=seed)

    async def _call_async(self, word: str) -> Any:
        return await self._client.step({"guess": word})

    def close(self) -> None:
        self._runner.run(self._client.aclose())


class SyncRawFramePath(GamePath):
    """A step frame encoded in advance on a bare connection of websockets' threading client
    (the one under our sync client), the reply parsed after the clock stops: the server, the
    kernel and the library, no client code."""

    def __init__(self, url: str, seed: int) -> None:
        super().__init__(seed)
        self._ws: SyncConnection = sync_connect(ws_url(url), compression=None, proxy=None)
        self._ws.__enter__()  # owned here and closed below (websockets 17 warns otherwise)
        self._frames = {w: _frame("step", {"guess": w}) for w in game.answers()}

    def _reset(self, seed: int) -> None:
        self._ws.send(_frame("reset", {"seed": seed}))
        self._ws.recv()

    def _call(self, word: str) -> Any:
        self._ws.send(self._frames[word])
        return self._ws.recv()

    def _ended(self, reply: Any) -> bool:
        return bool(orjson.loads(reply)["data"]["done"])

    def close(self) -> None:
        self._ws.send('{"type":"close"}')
        self._ws.close()


class RawFramePath(AsyncGamePath):
    """A step frame encoded in advance on a bare connection of websockets' asyncio client,
    the reply parsed after the clock stops: the server, the kernel and the library, no
    client code."""

    def __init__(self, url: str, seed: int, runner: asyncio.Runner) -> None:
        super().__init__(seed, runner)
        self._ws = runner.run(_open(ws_url(url)))
        self._frames = {w: _frame("step", {"guess": w}) for w in game.answers()}

    async def _reset_async(self, seed: int) -> None:
        await self._ws.send(_frame("reset", {"seed": seed}))
        await self._ws.recv()

    async def _call_async(self, word: str) -> Any:
        await self._ws.send(self._frames[word])
        return await self._ws.recv()

    def _ended(self, reply: Any) -> bool:
        return bool(orjson.loads(reply)["data"]["done"])

    def close(self) -> None:
        # the session, not only the socket: a started session otherwise waits for its TTL
        self._runner.run(self._ws.send('{"type":"close"}'))
        self._runner.run(self._ws.close())


async def _open(url: str) -> ClientConnection:
    return await connect(url, compression=None, proxy=None)


def _frame(kind: str, data: dict[str, Any]) -> str:
    return orjson.dumps({"type": kind, "data": data}).decode()


@dataclass(frozen=True)
class Summary:
    """The timings of one path, in microseconds."""

    calls: int
    p50_us: float
    p90_us: float
    p99_us: float
    mean_us: float
    max_us: float

    @classmethod
    def of(cls, timings_ns: Sequence[int]) -> Summary:
        ordered = sorted(t / 1e3 for t in timings_ns)
        return cls(
            calls=len(ordered),
            p50_us=_percentile(ordered, 0.50),
            p90_us=_percentile(ordered, 0.90),
            p99_us=_percentile(ordered, 0.99),
            mean_us=sum(ordered) / len(ordered),
            max_us=ordered[-1],
        )


@dataclass(frozen=True)
class Cores:
    """Average busy cores while measuring: this process, the server, everything else."""

    client: float
    server: float
    other: float


def measure(
    paths: dict[str, TimedPath], calls: int, warmup: int, rounds: int, server: ServerProcess
) -> tuple[dict[str, list[int]], Cores]:
    """Warm every path up, then measure in ``rounds`` rounds, each path in turn (starting one
    further along every round): bursts of other work on the machine then fall on all paths
    alike. Turns of one game each keep the layers' medians consistent on a busy machine;
    turns of 300 calls let one path see a burst the next one missed."""
    for path in paths.values():
        path.play(warmup)
    per_round = -(-calls // rounds)
    names = list(paths)
    timings: dict[str, list[int]] = {name: [] for name in names}
    wall, own, served, busy = time.monotonic(), _own_cpu(), server.cpu_seconds(), _machine_busy()
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            timings[name] += paths[name].play(per_round)
    wall = time.monotonic() - wall
    own, served = _own_cpu() - own, server.cpu_seconds() - served
    other = max(0.0, _machine_busy() - busy - own - served)
    return timings, Cores(own / wall, served / wall, other / wall)


def ratios(summaries: dict[str, Summary]) -> dict[str, float]:
    """Each networked path against in-process (what the network costs), ours against OpenEnv
    and against the bare frames."""
    p50 = {name: s.p50_us for name, s in summaries.items()}
    found: dict[str, float] = {}
    for name in ("adapter_websocket", "adapter_http", "openenv_websocket"):
        found[f"p50_{name}_over_adapter_inprocess"] = p50[name] / p50["adapter_inprocess"]
        found[f"p50_{name}_minus_adapter_inprocess_us"] = p50[name] - p50["adapter_inprocess"]
    ours, theirs = summaries["adapter_websocket"], summaries["openenv_websocket"]
    found["p50_adapter_websocket_over_openenv_websocket"] = ours.p50_us / theirs.p50_us
    found["mean_adapter_websocket_over_openenv_websocket"] = ours.mean_us / theirs.mean_us
    for bare in ("raw_frame_websocket", "raw_frame_websocket_sync"):
        found[f"p50_adapter_websocket_over_{bare}"] = ours.p50_us / summaries[bare].p50_us
    return found


def layers(summaries: dict[str, Summary]) -> dict[str, float]:
    """The adapter's WebSocket p50 as a sum of layers, each the difference between the
    medians of two paths that differ by that layer alone (approximate: medians don't add)."""
    p50 = {name: s.p50_us for name, s in summaries.items()}
    return {
        "server, kernel and websockets (bare frame)": p50["raw_frame_websocket_sync"],
        "our client: frame, orjson, ids, model_validate": p50["sync_client_websocket"]
        - p50["raw_frame_websocket_sync"],
        "adapter: reply text and reward attributes": p50["adapter_websocket"]
        - p50["sync_client_websocket"],
        "total: adapter over WebSocket": p50["adapter_websocket"],
    }


def targets(summaries: dict[str, Summary]) -> dict[str, dict[str, Any]]:
    found = ratios(summaries)
    return {
        "adapter_websocket_p50": _check(summaries["adapter_websocket"].p50_us, TARGET_P50_US, "µs"),
        "adapter_websocket_p50_over_openenv": _check(
            found["p50_adapter_websocket_over_openenv_websocket"],
            TARGET_OVER_OPENENV,
            "x",
            at_most=True,
        ),
        "adapter_websocket_p50_over_raw_frame": _check(
            found["p50_adapter_websocket_over_raw_frame_websocket"],
            TARGET_OVER_RAW_FRAME,
            "x",
            at_most=True,
        ),
    }


def print_report(console: Console, summaries: dict[str, Summary], cores: Cores) -> None:
    base = summaries["adapter_inprocess"].p50_us
    table = Table(title="One Wordle tool call, one after another, loopback")
    for column in ("path", "calls", "p50 µs", "p90 µs", "p99 µs", "mean µs", "p50 / in-process"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for name in (*PATHS, *PARTS):
        s = summaries[name]
        numbers = (s.p50_us, s.p90_us, s.p99_us, s.mean_us)
        table.add_row(
            LABELS[name],
            f"{s.calls:,}",
            *(f"{n:,.0f}" for n in numbers),
            f"{s.p50_us / base:.2f}" if name in PATHS else "",
            end_section=name == PATHS[-1],
        )
    console.print(table)
    console.print(
        "Below the line: layers of the adapter's WebSocket call, each measured alone. "
        f"Busy cores while measuring: client {cores.client:.2f}, server {cores.server:.2f}, "
        f"other {cores.other:.2f}."
    )
    found = ratios(summaries)
    for name in ("adapter_websocket", "adapter_http", "openenv_websocket"):
        extra = found[f"p50_{name}_minus_adapter_inprocess_us"]
        times = found[f"p50_{name}_over_adapter_inprocess"]
        console.print(f"Network, {LABELS[name]}: +{extra:,.0f} µs at p50 (x{times:.2f})")
    console.print(
        "Ours / OpenEnv over WebSocket: p50 "
        f"[bold]{found['p50_adapter_websocket_over_openenv_websocket']:.2f}[/], "
        f"mean {found['mean_adapter_websocket_over_openenv_websocket']:.2f}"
    )
    console.print(
        "Ours / bare pre-encoded frame: p50 "
        f"[bold]{found['p50_adapter_websocket_over_raw_frame_websocket']:.2f}[/] (asyncio), "
        f"{found['p50_adapter_websocket_over_raw_frame_websocket_sync']:.2f} (threading)"
    )
    console.print("Where the adapter's WebSocket p50 goes (differences of medians):")
    for layer, value in layers(summaries).items():
        console.print(f"  {layer:<52} {value:>6,.0f} µs")
    checks = targets(summaries)
    what = {
        "adapter_websocket_p50": "adapter over WebSocket p50",
        "adapter_websocket_p50_over_openenv": "p50 ours / OpenEnv's",
        "adapter_websocket_p50_over_raw_frame": "p50 ours / bare frame (asyncio)",
    }
    for name, check in checks.items():
        mark = "[green]PASS[/]" if check["ok"] else "[red]FAIL[/]"
        value = f"{check['value']:,.0f}" if check["unit"] == "µs" else f"{check['value']:.2f}"
        limit = "<" if check["unit"] == "µs" else "≤"
        console.print(
            f"Target {mark}: {what[name]} {value} {check['unit']} ({limit} {check['limit']:g})"
        )


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown, and the module docstring kept as written (its example commands)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.tool_call_latency",
        description=__doc__,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument(
        "--calls",
        type=int,
        default=3000,
        help="timed calls per path at least (whole games, so a few more)",
    )
    parser.add_argument(
        "--warmup", type=int, default=200, help="untimed calls per path before measuring"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=500,
        help="turns the paths take: calls / rounds calls a turn (the default: one game)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the guessed words")
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_JSON, help="where to write the results ('-' to skip)"
    )
    args = parser.parse_args(argv)
    if args.calls < 1 or args.warmup < 0 or not 1 <= args.rounds <= args.calls:
        parser.error("--calls must be at least 1, --warmup not negative, --rounds in 1..calls")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    width = None if sys.stdout.isatty() else _WIDTH
    log, out = Console(stderr=True, width=width), Console(width=width)
    load_before = os.getloadavg()
    with running_server("ours", MAX_SESSIONS) as server, asyncio.Runner() as runner:
        url = server.http_url
        makers: dict[str, Callable[[], TimedPath]] = {
            "adapter_websocket": lambda: AdapterPath("websocket", url, args.seed),
            "adapter_http": lambda: AdapterPath("http", url, args.seed),
            "adapter_inprocess": lambda: AdapterPath("inprocess", url, args.seed),
            "openenv_websocket": lambda: SyncClientPath.openenv(url, args.seed),
            "sync_client_websocket": lambda: SyncClientPath.ours(url, args.seed),
            "raw_frame_websocket_sync": lambda: SyncRawFramePath(url, args.seed),
            "async_client_websocket": lambda: AsyncClientPath(url, args.seed, runner),
            "raw_frame_websocket": lambda: RawFramePath(url, args.seed, runner),
        }
        with contextlib.ExitStack() as opened:  # sessions end before the server stops
            paths: dict[str, TimedPath] = {}
            for name, make in makers.items():
                paths[name] = path = make()
                opened.callback(path.close)
            log.print(
                f"server pid {server.pid} on {url}; {len(paths)} paths, {args.warmup} warm-up "
                f"+ {args.calls} calls each, in {args.rounds} rounds"
            )
            timings, cores = measure(paths, args.calls, args.warmup, args.rounds, server)
        health = httpx.get(f"{url}/health", timeout=5.0, trust_env=False).json()
    summaries = {name: Summary.of(timings[name]) for name in makers}
    print_report(out, summaries, cores)
    if health["errors"] or health["active_sessions"]:
        log.print(f"[red]server not clean after the run:[/] {health}")
    if str(args.json) != "-":
        described = machine()
        described["packages"]["httpx"] = metadata.version("httpx")
        document = {  # summaries only, no per-call data: small enough to commit
            "benchmark": "tool_call_latency",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": described,
            "settings": {k: v for k, v in vars(args).items() if k != "json"},
            "load_average_1m": {"before": load_before[0], "after": os.getloadavg()[0]},
            "busy_cores": _rounded(asdict(cores)),
            "server_health_after": health,
            "paths": {name: _rounded(asdict(summaries[name])) for name in PATHS},
            "layers": {name: _rounded(asdict(summaries[name])) for name in PARTS},
            "ratios": _rounded(ratios(summaries)),
            "adapter_websocket_p50_layers_us": _rounded(layers(summaries)),
            "targets": targets(summaries),
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        log.print(f"results written to {args.json}")
    return 0


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in values.items()}


if __name__ == "__main__":
    sys.exit(main())
