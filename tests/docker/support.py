"""Docker helpers for the tests in this folder: is Docker usable, build and remove images,
and a Wordle player that reads the feedback (so a game ends in a few guesses, usually won).

Builds use the host's network, like docker-compose.ci.yml: on the test machines only the
host's network reaches the package index.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from env_servers.wordle import game
from tests.commands import REPO, run

__all__ = ["REPO", "build_image", "compose_command", "play_wordle", "remove_images", "run"]

IMAGE_TITLES = ("arenagym-env-server", "arenagym-trainer", "arenagym-space")
"""The ``org.opencontainers.image.title`` labels of our Dockerfiles: what a failed build
leaves behind carries one, so it can be pruned without touching anyone else's images."""


def require_docker() -> None:
    """Skip, saying why, unless a Docker engine answers here."""
    if shutil.which("docker") is None:
        pytest.skip("Docker is not installed (no `docker` command); CI sets it up in .ci/run")
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.skip("Docker is not usable: `docker info` did not answer within 30 s")
    if info.returncode != 0:
        reason = (info.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"Docker is not usable (`docker info` failed: {reason})")


def compose_command() -> list[str]:
    """docker-compose 1.29 (what CI has), else Compose v2; skip when neither is there."""
    require_docker()
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    v2 = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
    if v2.returncode == 0:
        return ["docker", "compose"]
    pytest.skip("Docker Compose is not installed (neither `docker-compose` nor `docker compose`)")


def build_image(
    tag: str, dockerfile: str, *, timeout: float = 600, context: Path = REPO, **args: str
) -> None:
    """Build ``dockerfile`` (relative to ``context``, the repository by default)."""
    command = ["docker", "build", "--network", "host", "-f", str(context / dockerfile), "-t", tag]
    for name, value in args.items():
        command += ["--build-arg", f"{name}={value}"]
    run([*command, str(context)], timeout=timeout)


def remove_images(*tags: str) -> None:
    """Remove the images, then what a failed build of ours may have left (dangling only)."""
    if tags:
        run(["docker", "image", "rm", "--force", *tags], timeout=300, check=False)
    for title in IMAGE_TITLES:
        prune = ["docker", "image", "prune", "--force"]
        run(
            [*prune, "--filter", f"label=org.opencontainers.image.title={title}"],
            timeout=300,
            check=False,
        )


def play_wordle(guess: Callable[[str], tuple[str, bool]]) -> list[str]:
    """Play until the game is over: each guess is an answer that fits all feedback so far.
    ``guess(word)`` returns the word's G/Y/X feedback and whether the game is over."""
    history: list[tuple[str, str]] = []
    while len(history) < game.MAX_GUESSES:
        word = next(
            w for w in game.answers() if all(game.score(w, g) == marks for g, marks in history)
        )
        marks, done = guess(word)
        history.append((word, marks))
        if done:
            return [w for w, _ in history]
    raise AssertionError(f"the game was not over after {game.MAX_GUESSES} guesses: {history}")
