"""The Compose stack end to end, as the README runs it: the images build, the `offline`
profile comes up, the servers become healthy, a person plays the game containers over HTTP,
the tiny trainer finishes its steps against them and leaves a checkpoint on its volume; then
everything is torn down and the images built here are removed.

Runs with docker-compose 1.29 (all CI has) or Compose v2, through the CI override
docker-compose.ci.yml: builds and containers use host networking and every request goes to
127.0.0.1. Service-name networking (`http://wordle:8001`), which users get, is therefore not
exercised here. docker-compose 1.29 refuses published ports on a host-networked container
and an override cannot remove them, so the merged configuration is written out without
`ports` (on the host's network the servers listen on those ports themselves).

The offline image gets torch from PyPI here (PyTorch's CPU index, the profile's default, is
not reachable from the test machines): set ARENAGYM_TORCH_INDEX to use another index.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from clients.local_server import free_port
from env_servers.wordle import game
from tests.docker.support import REPO, compose_command, play_wordle, remove_images, run

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]

SERVICES = ("wordle", "countdown", "trainer-offline")
BUILD_TIMEOUT = 1200.0
TRAIN_TIMEOUT = 900.0


@dataclass
class Stack:
    project: str
    command: list[str]
    """The compose command with project, directory and the merged file."""
    env: dict[str, str]
    wordle_url: str
    countdown_url: str
    images: tuple[str, ...]

    def compose(self, *args: str, timeout: float = 300, check: bool = True) -> str:
        result = run([*self.command, *args], env=self.env, timeout=timeout, check=check)
        return result.stdout + result.stderr

    def container(self, service: str) -> str:
        """The id of the service's container, running or exited."""
        ids = run(
            [
                "docker",
                "ps",
                "--all",
                "--quiet",
                "--filter",
                f"label=com.docker.compose.project={self.project}",
                "--filter",
                f"label=com.docker.compose.service={service}",
            ],
            timeout=30,
        ).stdout.split()
        assert len(ids) == 1, f"expected one {service} container, found {ids}"
        return ids[0]

    def logs(self, service: str) -> str:
        result = run(
            ["docker", "logs", "--tail", "60", self.container(service)], timeout=30, check=False
        )
        return (result.stdout + result.stderr)[-6000:]


def _ports(count: int) -> list[int]:
    ports: set[int] = set()
    while len(ports) < count:
        ports.add(free_port())
    return sorted(ports)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    compose = compose_command()
    project = f"arenagym-test-{uuid.uuid4().hex[:8]}"
    wordle_port, countdown_port = _ports(2)
    env = {
        **os.environ,
        "COMPOSE_PROJECT_NAME": project,
        "COMPOSE_PROFILES": "offline",  # the shell wins over .env's COMPOSE_PROFILES=train
        "ARENAGYM_TAG": project,  # images of this run only, removed at the end
        "ARENAGYM_WORDLE_PORT": str(wordle_port),
        "ARENAGYM_COUNTDOWN_PORT": str(countdown_port),
        "ARENAGYM_TORCH_INDEX": os.environ.get("ARENAGYM_TORCH_INDEX", ""),
    }
    files = ["-f", "docker-compose.yml", "-f", "docker-compose.ci.yml"]
    merged = yaml.safe_load(run([*compose, *files, "config"], env=env, timeout=60).stdout)
    for service in merged["services"].values():
        if service.get("network_mode") == "host":
            service.pop("ports", None)
    path = tmp_path_factory.mktemp("compose") / "docker-compose.merged.yml"
    path.write_text(yaml.safe_dump(merged))
    images = tuple(merged["services"][name]["image"] for name in SERVICES)
    assert all(image.endswith(f":{project}") for image in images), images

    stack = Stack(
        project=project,
        command=[*compose, "--project-directory", str(REPO), "-f", str(path)],
        env=env,
        wordle_url=f"http://127.0.0.1:{wordle_port}",
        countdown_url=f"http://127.0.0.1:{countdown_port}",
        images=images,
    )
    try:
        started = time.monotonic()
        stack.compose("build", *SERVICES, timeout=BUILD_TIMEOUT)
        print(f"compose build: {time.monotonic() - started:.0f} s")
        # `up` starts the trainer only once both servers report healthy (depends_on).
        stack.compose("up", "--detach", timeout=300)
        yield stack
    finally:
        stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "10", check=False)
        remove_images(*images)


def test_servers_become_healthy(stack: Stack) -> None:
    for service, url in (("wordle", stack.wordle_url), ("countdown", stack.countdown_url)):
        status = run(
            ["docker", "inspect", "--format", "{{.State.Health.Status}}", stack.container(service)],
            timeout=30,
        ).stdout.strip()
        assert status == "healthy", f"{service} is {status}:\n{stack.logs(service)}"
        health = httpx.get(f"{url}/health", timeout=5, trust_env=False).json()
        assert health["status"] == "healthy" and health["game"] == service


def test_a_person_plays_wordle_over_http(stack: Stack) -> None:
    with httpx.Client(base_url=stack.wordle_url, timeout=10, trust_env=False) as http:
        reply = http.post("/reset", json={"seed": 7}).json()
        session = reply["session_id"]
        assert not reply["done"] and reply["observation"]["guesses_left"] == 6
        last: dict = {}

        def guess(word: str) -> tuple[str, bool]:
            nonlocal last
            response = http.post("/step", json={"session_id": session, "action": {"guess": word}})
            assert response.status_code == 200, response.text
            last = response.json()
            assert not last["observation"]["invalid_move"], last["observation"]["reason"]
            return last["observation"]["guesses"][-1]["feedback"], last["done"]

        words = play_wordle(guess)
        won = last["observation"]["reward_signals"]["correct"]
        assert last["reward"] == (1.0 if won else 0.0)
        answer = last["observation"]["answer"]  # revealed once the game is over
        assert answer in game.answers() and (answer == words[-1]) == won
        state = http.get("/state", params={"session_id": session}).json()
        assert state["done"] and [g["word"] for g in state["guesses"]] == words
        assert http.delete(f"/sessions/{session}").status_code == 200


def test_a_person_plays_countdown_over_http(stack: Stack) -> None:
    with httpx.Client(base_url=stack.countdown_url, timeout=10, trust_env=False) as http:
        reply = http.post("/reset", json={"seed": 3}).json()
        numbers = reply["observation"]["numbers"]
        answer = " + ".join(str(n) for n in numbers)
        step = http.post(
            "/step", json={"session_id": reply["session_id"], "action": {"expression": answer}}
        ).json()
        assert step["done"] and step["observation"]["value"] == sum(numbers)
        assert step["reward"] == (1.0 if sum(numbers) == reply["observation"]["target"] else 0.0)


def test_trainer_finishes_against_the_servers_and_leaves_a_checkpoint(stack: Stack) -> None:
    trainer = stack.container("trainer-offline")
    waited = run(["docker", "wait", trainer], timeout=TRAIN_TIMEOUT).stdout.strip()
    assert waited == "0", f"the trainer exited {waited}:\n{stack.logs('trainer-offline')}"

    # Its rollouts were played by the game containers: more resets than the tests above made.
    resets = sum(
        httpx.get(f"{url}/health", timeout=5, trust_env=False).json()["resets"]
        for url in (stack.wordle_url, stack.countdown_url)
    )
    assert resets > 2, f"the servers saw {resets} resets: the trainer did not use them"

    # The checkpoints volume, listed from a throwaway container (the small server image).
    listing = run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "--entrypoint",
            "find",
            "--volume",
            f"{stack.project}_checkpoints:/outputs:ro",
            stack.images[0],
            "/outputs",
            "-name",
            "*.safetensors",
        ],
        timeout=60,
    ).stdout.split()
    checkpoints = [Path(p) for p in listing if Path(p).parent.name.startswith("checkpoint-")]
    assert checkpoints, f"no checkpoint weights on the volume; found {listing}"
    assert all(p.parts[:3] == ("/", "outputs", "tiny-offline") for p in checkpoints), checkpoints
