"""``WordleClient.from_docker_image`` against the env-server image: the client starts the
container (host networking, as tests run containers here), plays a whole game over its
WebSocket and stops the container on close."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from clients import WordleClient
from tests.docker.support import build_image, play_wordle, remove_images, require_docker

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def wordle_image() -> Iterator[str]:
    require_docker()
    tag = f"arenagym/wordle:client-test-{uuid.uuid4().hex[:8]}"
    try:
        build_image(tag, "Dockerfiles/env-server.Dockerfile", GAME="wordle")
        yield tag
    finally:
        remove_images(tag)


def test_wordle_client_plays_a_game_in_a_container(wordle_image: str) -> None:
    import docker

    engine = docker.from_env()
    with WordleClient.from_docker_image(wordle_image, docker={"host_network": True}) as env:
        (container,) = engine.containers.list(filters={"ancestor": wordle_image})
        result = env.reset(seed=11)
        assert result.observation.guesses_left == 6

        def guess(word: str) -> tuple[str, bool]:
            nonlocal result
            result = env.step({"guess": word})
            assert not result.observation.invalid_move, result.observation.reason
            return result.observation.guesses[-1].feedback, result.done

        words = play_wordle(guess)
        assert result.done and len(words) <= 6
        assert result.reward == (1.0 if result.observation.reward_signals.correct else 0.0)
    assert not engine.containers.list(all=True, filters={"id": container.id}), "not removed"
