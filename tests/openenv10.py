"""OpenEnv 0.10 (the ``openenv`` package) in a virtual environment of its own.

``openenv`` 0.10 and ``openenv-core`` 0.3 install the same import package, ``openenv``, and
0.10 pulls Gradio and fastmcp, so it stays out of the project's environment: the 0.10 tests
run its clients, validator and stock server as subprocesses of a venv built here once and
cached under ``.cache/`` (git-ignored). A build that fails fails the tests with pip's output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
OPENENV_VERSION = "0.10.0"
SCRIPTS = Path(__file__).resolve().parent / "env_servers" / "openenv10"
"""Scripts run by OpenEnv 0.10's interpreter: its clients and a stock server."""


def venv_dir() -> Path:
    return REPO / ".cache" / f"openenv-{OPENENV_VERSION}"


def openenv10_python() -> Path:
    """The interpreter of the cached OpenEnv 0.10 venv, built on first use (about a minute)."""
    root = venv_dir()
    python = root / "bin" / "python"
    if (root / ".complete").exists():
        return python
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    steps = [
        [sys.executable, "-m", "venv", str(root)],
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         f"openenv=={OPENENV_VERSION}"],
    ]  # fmt: skip
    for command in steps:
        result = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            pytest.fail(
                f"Building the OpenEnv {OPENENV_VERSION} venv failed ({' '.join(command)}):\n"
                f"{(result.stdout + result.stderr)[-3000:]}",
                pytrace=False,
            )
    (root / ".complete").write_text(OPENENV_VERSION)
    return python


def subprocess_env() -> dict[str, str]:
    """No proxy for loopback, and our sources importable (the stock server reuses our rules)."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PYTHONPATH"] = str(REPO)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def run_script(name: str, *args: str, timeout: float = 120) -> Any:
    """Run ``openenv10/<name>.py`` under OpenEnv 0.10; its last stdout line is JSON."""
    command = [str(openenv10_python()), str(SCRIPTS / f"{name}.py"), *args]
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=subprocess_env()
    )
    if result.returncode != 0:
        pytest.fail(
            f"{name}.py exited {result.returncode}:\n{(result.stdout + result.stderr)[-4000:]}",
            pytrace=False,
        )
    return json.loads(result.stdout.strip().splitlines()[-1])


def openenv_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``openenv …`` of the 0.10 venv."""
    command = [str(openenv10_python()), "-m", "openenv.cli", *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=subprocess_env()
    )
