"""A game written by ``arenagym new`` builds into the server image (``PACKAGES`` names its
folder under ``games/``) and plays there: the container serves it with no edits. The trainer
image installs it the same way, so a trainer container can train on it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from clients.local_server import free_port, wait_healthy
from tests.docker.support import REPO, build_image, remove_images, require_docker, run

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]

GAME = "scaffolded-image-game"
CONTEXT = ("pyproject.toml", "README.md", ".dockerignore", "Dockerfiles", "env_servers", "clients",
           "trainer", "configs", "games")  # fmt: skip


def build_context(root: Path) -> Path:
    """The repository's build context, copied, with the new game written into its games/."""
    context = root / "context"
    context.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in CONTEXT:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, context / name, ignore=ignore)
        else:
            shutil.copy2(source, context / name)
    command = [sys.executable, "-m", "env_servers", "new", GAME, "--dir", str(context / "games")]
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    return context


def test_a_new_game_builds_into_the_server_image_and_plays(tmp_path: Path) -> None:
    require_docker()
    context = build_context(tmp_path)
    tag = f"arenagym/{GAME}:test-{uuid.uuid4().hex[:8]}"
    try:
        build_image(
            tag,
            "Dockerfiles/env-server.Dockerfile",
            context=context,
            GAME=GAME,
            PACKAGES=f"./games/arenagym-{GAME}",
        )
        port = free_port()
        settings = ["-e", f"ARENAGYM_PORT={port}", "-e", "ARENAGYM_HOST=127.0.0.1"]
        started = run(["docker", "run", "-d", "--network", "host", *settings, tag], timeout=60)
        container = started.stdout.strip()
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, 60)
            with httpx.Client(base_url=url, trust_env=False, timeout=10) as http:
                assert http.get("/metadata").json()["name"] == GAME
                reply = http.post("/reset", json={"seed": 2}).json()
                session, low, high = reply["session_id"], 100, 999
                while not reply["done"]:
                    guess = (low + high) // 2
                    step = {"session_id": session, "action": {"guess": guess}}
                    reply = http.post("/step", json=step).json()
                    hint = reply["observation"]["hint"]
                    low, high = (guess + 1, high) if hint == "higher" else (low, guess - 1)
            assert reply["observation"]["won"] and reply["reward"] == 1.0
        finally:
            run(["docker", "rm", "--force", container], timeout=60, check=False)
    finally:
        remove_images(tag)


def test_a_new_game_builds_into_the_trainer_image(tmp_path: Path) -> None:
    """No extras (no torch), to keep the build short: what is checked is the package's install."""
    require_docker()
    context = build_context(tmp_path)
    tag = f"arenagym/trainer-{GAME}:test-{uuid.uuid4().hex[:8]}"
    try:
        build_image(
            tag,
            "Dockerfiles/trainer.Dockerfile",
            context=context,
            EXTRAS="",
            PACKAGES=f"./games/arenagym-{GAME}",
        )
        code = "import sys; from env_servers.core.registry import load_spec; load_spec(sys.argv[1])"
        command = ["docker", "run", "--rm", "--entrypoint", "python", tag, "-c", code, GAME]
        run(command, timeout=120)
    finally:
        remove_images(tag)
