"""Server load benchmark: our Wordle server vs the stock OpenEnv server vs a bare echo floor.

Each server runs as its own subprocess, started, measured and stopped in turn, while this
process plays closed-loop Wordle over N WebSockets against it. Client and server share the
machine's cores, so raw steps/s mostly measures the client; the headline is the server's
own CPU time per 1,000 steps (``/proc/<pid>/stat`` utime + stime), compared as a ratio.

    python -m benchmarks.server_load                     # everything, the defaults
    python -m benchmarks.server_load --servers ours --open-sessions 0 --duration 5
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console

from benchmarks.load_client import OpenResult, hold_open, run_load
from benchmarks.procs import KINDS, running_server
from benchmarks.report import ServerRun, print_report, write_json
from env_servers.wordle import game

T = TypeVar("T")

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "server_load.json"
IDLE_SETTLE_S = 1.0
"""Pause between /health answering and reading the idle RSS (lazy imports, first GC)."""
FD_HEADROOM = 256
_WIDTH = 140
"""Table width when printing to a pipe or file (rich would use 80 and wrap the columns)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.server_load",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=256,
        help="concurrent WebSocket sessions of the closed-loop load",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=10.0,
        help="seconds measured per server, after the warm-up",
    )
    parser.add_argument(
        "--warmup", type=float, default=2.0, help="seconds of load before measuring starts"
    )
    parser.add_argument(
        "--open-sessions",
        type=int,
        default=10_000,
        help="sessions held open at once against ours (0 skips the phase)",
    )
    parser.add_argument(
        "--open-sessions-openenv",
        type=int,
        default=1_000,
        help="the same against the OpenEnv server (one thread per session; 0 skips)",
    )
    parser.add_argument(
        "--servers",
        default=",".join(KINDS),
        help=f"comma-separated subset of {','.join(KINDS)}, run in this order",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the client's choices")
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_JSON, help="where to write the results ('-' to skip)"
    )
    parser.add_argument(
        "--no-uvloop", action="store_true", help="run the client on asyncio's default loop"
    )
    args = parser.parse_args(argv)
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    if unknown := [s for s in args.servers if s not in KINDS]:
        parser.error(f"unknown server(s) {', '.join(unknown)}; choose from {', '.join(KINDS)}")
    if args.sessions < 1 or args.duration <= 0 or args.warmup < 0:
        parser.error("--sessions must be at least 1, --duration positive, --warmup not negative")
    return args


def raise_fd_limit(needed: int) -> None:
    """Raise the soft limit on open files to ``needed`` (servers started later inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise SystemExit(
            f"{needed} open files are needed but the hard limit is {hard}: lower "
            "--open-sessions / --sessions, or raise the limit (ulimit -Hn, or LimitNOFILE)."
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def _runner(use_uvloop: bool) -> Callable[[Coroutine[Any, Any, T]], T]:
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run
    return asyncio.run


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    width = None if sys.stdout.isatty() else _WIDTH
    log, out = Console(stderr=True, width=width), Console(width=width)
    opens_wanted = {"ours": args.open_sessions, "openenv": args.open_sessions_openenv}
    largest = max(args.sessions, *opens_wanted.values())
    raise_fd_limit(largest + FD_HEADROOM)
    run = _runner(not args.no_uvloop)
    words = game.answers()
    max_sessions = largest + 64

    runs: dict[str, ServerRun] = {}
    for kind in args.servers:
        with running_server(kind, max_sessions) as server:
            time.sleep(IDLE_SETTLE_S)
            idle = server.rss_bytes()
            log.print(
                f"{kind}: pid {server.pid}, idle RSS {idle / 1e6:.1f} MB; "
                f"{args.sessions} sessions, {args.warmup:g} s warm-up + {args.duration:g} s"
            )
            load = run(
                run_load(
                    server.ws_url,
                    server,
                    sessions=args.sessions,
                    warmup=args.warmup,
                    duration=args.duration,
                    words=words,
                    seed=args.seed,
                )
            )
            log.print(
                f"{kind}: {load.steps_per_s:,.0f} steps/s, p99 {load.p99_ms:.2f} ms, "
                f"{load.server_cpu_s_per_1k_steps:.4f} CPU-s / 1k steps"
            )
        runs[kind] = ServerRun(kind, idle, load)

    opens: dict[str, OpenResult] = {}
    for kind, count in opens_wanted.items():
        if count <= 0 or kind not in args.servers:
            continue
        with running_server(kind, max_sessions) as server:
            time.sleep(IDLE_SETTLE_S)
            log.print(f"{kind}: opening {count:,} sessions")
            held = run(hold_open(server.ws_url, server, count=count, seed=args.seed))
            log.print(f"{kind}: {held.opened:,} open, RSS {held.rss_open_bytes / 1e6:.1f} MB")
        opens[kind] = held

    print_report(out, runs, opens)
    if str(args.json) != "-":
        settings = {k: v for k, v in vars(args).items() if k not in ("json", "no_uvloop")}
        settings["client_loop"] = "uvloop" if run is not asyncio.run else "asyncio"
        write_json(args.json, settings, runs, opens)
        log.print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
