"""The env-server image built for a TextArena game: the build installs the family's extra,
and the container serves the game to its generic client."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from env_servers.core.registry import load_spec
from tests.docker.support import build_image, remove_images, require_docker

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]
GAME = "textarena:Mastermind-v0"


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    require_docker()
    tag = f"arenagym/textarena-mastermind:test-{uuid.uuid4().hex[:8]}"
    try:
        build_image(tag, "Dockerfiles/env-server.Dockerfile", GAME=GAME)
        yield tag
    finally:
        remove_images(tag)


def test_a_textarena_game_plays_in_its_container(image: str) -> None:
    spec = load_spec(GAME)
    with spec.client.from_docker_image(image, docker={"host_network": True}) as env:
        first = env.reset(seed=2)
        assert "Mastermind" in first.observation.prompt
        refused = env.step({"move": "[7 7 7 7]"})
        assert refused.observation.invalid_move and refused.observation.reason
        played = env.step({"move": "[1 2 3 4]"})
        assert not played.observation.invalid_move and "peg" in played.observation.feedback
