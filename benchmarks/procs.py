"""Server subprocesses: start on a free port, wait for ``/health``, read CPU and memory, kill
and restart on the same port (the fault test), stop.

CPU and RSS are read from ``/proc/<pid>`` of the server process itself (all its threads
included, so OpenEnv's per-session executor threads count), never from the client side.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

HOST = "127.0.0.1"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
_REPO_ROOT = Path(__file__).resolve().parent.parent

KINDS = ("ours", "openenv", "openenv10", "echo")
OPENENV10_PYTHON = _REPO_ROOT / ".cache" / "openenv-0.10.0" / "bin" / "python"
"""OpenEnv 0.10's own interpreter: the venv ``tests/openenv10.py`` builds (0.10 and the
``openenv-core`` 0.3 of the openenv extra install the same import package)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def server_argv(
    kind: str, port: int, max_sessions: int, game: str = "wordle", options: Sequence[str] = ()
) -> list[str]:
    """The command line of one server; ours exactly as a user starts it, with ``options``
    (flags of ``arenagym serve``; OpenEnv's serve Wordle only and take none)."""
    common = ["--port", str(port), "--log-level", "warning", "--max-sessions", str(max_sessions)]
    if kind == "ours":
        return [sys.executable, "-m", "env_servers", "serve", game, *common, *options]
    if kind == "openenv10":
        if not OPENENV10_PYTHON.exists():
            raise FileNotFoundError(
                f"No OpenEnv 0.10 venv at {OPENENV10_PYTHON.parent.parent}: build it with "
                "python -c 'from tests.openenv10 import openenv10_python; openenv10_python()'"
            )
        return [str(OPENENV10_PYTHON), "-m", "benchmarks.serve", "openenv", *common]
    if kind in ("openenv", "echo"):
        return [sys.executable, "-m", "benchmarks.serve", kind, *common]
    raise ValueError(f"unknown server {kind!r}; choose from {', '.join(KINDS)}")


@dataclass
class ServerProcess:
    """A running server. ``cpu_seconds`` and ``rss_bytes`` read its ``/proc`` entries."""

    kind: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    argv: list[str]

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def http_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{HOST}:{self.port}/ws"

    def cpu_seconds(self) -> float:
        """utime + stime of the whole process, in seconds (clock-tick resolution)."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS

    def rss_bytes(self) -> int:
        resident_pages = Path(f"/proc/{self.pid}/statm").read_text().split()[1]
        return int(resident_pages) * _PAGE_SIZE

    def kill(self) -> None:
        """SIGKILL: the server vanishes with every session, as a crashed host's would."""
        self.process.kill()
        self.process.wait()

    def restart(self) -> None:
        """Start the same command on the same port again and wait until it is healthy."""
        with self.log_path.open("ab") as log:
            self.process = _spawn(self.argv, log)
        _wait_healthy(self, START_TIMEOUT)

    def log_tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""


def _child_env() -> dict[str, str]:
    """Our environment minus settings that would change what the servers do."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ARENAGYM_") and k != "ENABLE_WEB_INTERFACE"
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def _wait_healthy(server: ServerProcess, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                raise RuntimeError(
                    f"{server.kind} server exited with {server.process.returncode}:\n"
                    + server.log_tail()
                )
            with contextlib.suppress(httpx.HTTPError):
                if client.get(server.http_url + "/health").status_code == 200:
                    return
            time.sleep(0.1)
    raise TimeoutError(
        f"{server.kind} server not healthy after {timeout:g} s:\n{server.log_tail()}"
    )


def _stop(server: ServerProcess) -> None:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


def _spawn(argv: list[str], log: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=_REPO_ROOT,
        env=_child_env(),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


@contextlib.contextmanager
def running_server(
    kind: str, max_sessions: int, game: str = "wordle", options: Sequence[str] = ()
) -> Iterator[ServerProcess]:
    """Start ``kind`` (serving ``game``, ours only, with ``options``) on a free port, yield it
    once healthy, always stop it (SIGTERM, then SIGKILL after ``STOP_TIMEOUT``)."""
    port = free_port()
    argv = server_argv(kind, port, max_sessions, game, options)
    with tempfile.NamedTemporaryFile(prefix=f"bench-{kind}-", suffix=".log", delete=False) as log:
        log_path = Path(log.name)
        process = _spawn(argv, log)
    server = ServerProcess(kind, port, process, log_path, argv)
    try:
        _wait_healthy(server, START_TIMEOUT)
        yield server
    except BaseException:
        if tail := server.log_tail():
            print(f"--- last lines of the {kind} server's log ---\n{tail}", file=sys.stderr)
        raise
    finally:
        _stop(server)
        log_path.unlink(missing_ok=True)
