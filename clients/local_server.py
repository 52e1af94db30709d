"""Start a game server on this machine for as long as a block runs.

Used wherever a command needs a game and was given no URL (``arenagym play``, the trainer,
evaluation): ``python -m env_servers serve GAME`` on a free loopback port, in its own process
session (a Ctrl-C in the terminal reaches only the caller), stopped with SIGTERM and then
SIGKILL after a grace period. While one runs, a SIGTERM to the caller (``timeout``, Docker,
a scheduler) unwinds it like Ctrl-C, so the server is stopped rather than orphaned.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import httpx

from clients.errors import ConnectError

START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0


class ServerStartError(ConnectError):
    """A local server exited or did not become healthy."""


def free_port() -> int:
    """A loopback port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, timeout: float, exited: Callable[[], str | None] = lambda: None) -> None:
    """Poll ``url/health`` until it answers 200; ``exited`` returns why the server died, if
    it did, so a crash is reported at once instead of after the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (reason := exited()) is not None:
            raise ServerStartError(f"The server exited at start: {reason}")
        try:
            if httpx.get(f"{url}/health", timeout=1.0, trust_env=False).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise ServerStartError(f"{url}/health did not answer within {timeout:g} s.")


@dataclass(frozen=True, slots=True)
class LocalServer:
    url: str
    pid: int


@contextlib.contextmanager
def local_server(game: str, args: Sequence[str] = ()) -> Iterator[LocalServer]:
    """Serve ``game`` on a free port until the block exits."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "env_servers", "serve", game]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", *args]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )

        def exited() -> str | None:
            if process.poll() is None:
                return None
            log.seek(0)
            tail = log.read().decode(errors="replace").strip().splitlines()[-3:]
            return " / ".join(tail) or f"exit code {process.returncode}"

        try:
            with _unwind_on_sigterm():
                wait_healthy(url, START_TIMEOUT, exited)
                yield LocalServer(url, process.pid)
        finally:
            stop(process)


SIGTERM_EXIT = 128 + signal.SIGTERM


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(SIGTERM_EXIT)


@contextlib.contextmanager
def _unwind_on_sigterm() -> Iterator[None]:
    """Make SIGTERM raise ``SystemExit`` in the main thread, where nobody else handles it."""
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be bound right now, or None when it can (port 0 always can)."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as error:
            return error.strerror or str(error)
    return None
