"""Results of ``server_load``: the printed tables, the targets and the JSON file."""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.load_client import LoadResult, OpenResult

MB = 1e6
LABELS = {
    "ours": "ours",
    "openenv": "openenv",
    "echo": "echo (floor)",
}
PACKAGES = ("uvicorn", "websockets", "fastapi", "starlette", "pydantic", "openenv-core", "uvloop")

TARGET_CPU_RATIO = 0.2
TARGET_P99_MS = 25.0
TARGET_OPEN_RSS_MB = 500.0
TARGET_OPEN_COUNT = 10_000
TARGET_IDLE_RSS_MB = 100.0


@dataclass(frozen=True)
class ServerRun:
    """One server under the closed-loop load, and its memory before the load."""

    kind: str
    rss_idle_bytes: int
    load: LoadResult


def ratios(runs: dict[str, ServerRun]) -> dict[str, float]:
    """CPU per step of one server over another's, for every pair that ran."""
    cpu = {k: r.load.server_cpu_s_per_1k_steps for k, r in runs.items()}
    pairs = (("ours", "openenv"), ("ours", "echo"), ("openenv", "echo"))
    return {
        f"cpu_per_step_{a}_over_{b}": cpu[a] / cpu[b] for a, b in pairs if a in cpu and b in cpu
    }


def targets(runs: dict[str, ServerRun], opens: dict[str, OpenResult]) -> dict[str, dict[str, Any]]:
    """The issue's targets for our server that this run could check, each with pass/fail."""
    found: dict[str, dict[str, Any]] = {}
    cpu_ratio = ratios(runs).get("cpu_per_step_ours_over_openenv")
    if cpu_ratio is not None:
        found["cpu_per_step_vs_openenv"] = _check(cpu_ratio, TARGET_CPU_RATIO, "x", at_most=True)
    if (ours := runs.get("ours")) is not None:
        found[f"p99_ms_at_{ours.load.sessions}_sessions"] = _check(
            ours.load.p99_ms, TARGET_P99_MS, "ms"
        )
        found["idle_rss_mb"] = _check(ours.rss_idle_bytes / MB, TARGET_IDLE_RSS_MB, "MB")
    if (held := opens.get("ours")) is not None:
        found[f"rss_mb_with_{held.count}_open_sessions"] = _check(
            held.rss_open_bytes / MB, TARGET_OPEN_RSS_MB, "MB"
        )
        if held.count < TARGET_OPEN_COUNT:
            found[f"rss_mb_with_{held.count}_open_sessions"]["note"] = (
                f"target is for {TARGET_OPEN_COUNT} sessions"
            )
    return found


def _check(value: float, limit: float, unit: str, *, at_most: bool = False) -> dict[str, Any]:
    """``value`` under ``limit`` (or at most ``limit``) passes."""
    ok = value <= limit if at_most else value < limit
    return {"value": round(value, 4), "limit": limit, "unit": unit, "ok": ok}


def print_report(
    console: Console, runs: dict[str, ServerRun], opens: dict[str, OpenResult]
) -> None:
    if runs:
        sessions = next(iter(runs.values())).load.sessions
        table = Table(title=f"Closed-loop Wordle load, {sessions} WebSocket sessions")
        for column in (
            "server",
            "steps/s",
            "p50 ms",
            "p99 ms",
            "server CPU-s/1k",
            "client CPU-s/1k",
            "RSS idle MB",
            "RSS load MB",
            "cores srv/cli/other",
            "errors",
        ):
            table.add_column(column, justify="left" if column == "server" else "right")
        for kind, run in runs.items():
            load = run.load
            table.add_row(
                LABELS[kind],
                f"{load.steps_per_s:,.0f}",
                f"{load.p50_ms:.2f}",
                f"{load.p99_ms:.2f}",
                f"{load.server_cpu_s_per_1k_steps:.4f}",
                f"{load.client_cpu_s_per_1k_steps:.4f}",
                f"{run.rss_idle_bytes / MB:.1f}",
                f"{load.rss_load_bytes / MB:.1f}",
                f"{load.server_cores:.2f}/{load.client_cores:.2f}/{load.other_cores:.2f}",
                str(load.errors),
            )
        console.print(table)
        console.print(
            "CPU-s/1k: CPU-seconds per 1,000 step frames (resets included in the cost); cores: "
            "average busy cores of the server, the client and everything else on the machine."
        )
        for name, value in ratios(runs).items():
            a, b = name.removeprefix("cpu_per_step_").split("_over_")
            console.print(f"CPU per step, {a} / {b}: [bold]{value:.3f}[/]")
    if opens:
        table = Table(title="Sessions held open at once (each after one reset)")
        for column in (
            "server",
            "sessions",
            "seconds to open",
            "RSS before MB",
            "RSS open MB",
            "KB / session",
        ):
            table.add_column(column, justify="left" if column == "server" else "right")
        for kind, held in opens.items():
            table.add_row(
                LABELS[kind],
                f"{held.count:,}",
                f"{held.seconds_to_open:.1f}",
                f"{held.rss_before_bytes / MB:.1f}",
                f"{held.rss_open_bytes / MB:.1f}",
                f"{held.rss_per_session_bytes / 1e3:.1f}",
            )
        console.print(table)
    checks = targets(runs, opens)
    if checks:
        console.print("Targets for ours:")
        for name, check in checks.items():
            mark = "[green]PASS[/]" if check["ok"] else "[red]FAIL[/]"
            note = f" ({check['note']})" if "note" in check else ""
            console.print(
                f"  {mark} {name}: {check['value']:.4g} {check['unit']} "
                f"(limit {check['limit']:g}){note}"
            )


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions: dict[str, str | None] = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "packages": versions,
    }


def write_json(
    path: Path,
    settings: dict[str, Any],
    runs: dict[str, ServerRun],
    opens: dict[str, OpenResult],
) -> None:
    """A small, stable JSON file (summaries only, no per-step data) meant to be committed."""
    document = {
        "benchmark": "server_load",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "settings": settings,
        "load": {
            kind: {"rss_idle_bytes": run.rss_idle_bytes, **_rounded(asdict(run.load))}
            for kind, run in runs.items()
        },
        "open_sessions": {kind: _rounded(asdict(held)) for kind, held in opens.items()},
        "ratios": {k: round(v, 4) for k, v in ratios(runs).items()},
        "targets": targets(runs, opens),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in values.items()}
