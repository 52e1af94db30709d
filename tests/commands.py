"""Running a command in a test: its output is shown when it fails."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run(
    command: list[str],
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    cwd: Path = REPO,
    input: str | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run a command (in the repository unless ``cwd`` says otherwise, reading ``input`` or
    nothing), failing with its output (tail) when ``check`` and it exits non-zero."""
    result = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    if check and result.returncode != 0:
        output = (result.stdout + result.stderr)[-4000:]
        pytest.fail(f"{' '.join(command)} exited {result.returncode}:\n{output}", pytrace=False)
    return result
