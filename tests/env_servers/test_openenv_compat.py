"""OpenEnv's own client, and the published recipe's text parsing, against our servers."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.live import LiveServer

pytestmark = pytest.mark.openenv


def generic_client(url: str) -> Any:
    """OpenEnv 0.3's own client (the openenv extra), imported here so that a checkout without
    the extra can deselect these tests (``-m "not openenv"``) rather than fail to collect."""
    from openenv.core.generic_client import GenericEnvClient

    return GenericEnvClient(base_url=url)


FEEDBACK_LINE = re.compile(r"^\s*([GYX])(?:\s+[GYX]){4}\s*$")


class RecipeWrapper:
    """The published Wordle recipe's wrapper logic, as it reads TextArena text: the new part
    of the cumulative transcript is sliced off the end of ``messages[0].content``, the G/Y/X
    line is parsed, and invalid moves are detected by their sentence."""

    def __init__(self) -> None:
        self.seen = 0

    def new_text(self, observation: dict[str, Any]) -> str:
        content = observation["messages"][0]["content"]
        new, self.seen = content[self.seen :], len(content)
        return new

    @staticmethod
    def feedback(text: str) -> str | None:
        lines = [line for line in text.splitlines() if FEEDBACK_LINE.match(line)]
        return "".join(lines[-1].split()) if lines else None

    @staticmethod
    def invalid(text: str) -> bool:
        return "You attempted an invalid move" in text


async def test_generic_env_client_plays_a_whole_game(wordle_server: LiveServer) -> None:
    client = generic_client(wordle_server.url)
    async with client:
        wrapper = RecipeWrapper()
        result = await client.reset(word="crane")
        assert result.done is False
        wrapper.new_text(result.observation)

        result = await client.step({"message": "[slate]"})
        new = wrapper.new_text(result.observation)
        assert "[slate]" in new and wrapper.feedback(new) == "XXGXG"
        assert not wrapper.invalid(new)

        result = await client.step({"message": "[qqqqq]"})
        new = wrapper.new_text(result.observation)
        assert wrapper.invalid(new) and wrapper.feedback(new) is None
        assert result.done is False

        result = await client.step({"message": "[trace]"})
        assert wrapper.feedback(wrapper.new_text(result.observation)) == "XGGYG"

        result = await client.step({"message": "[crane]"})
        assert wrapper.feedback(wrapper.new_text(result.observation)) == "GGGGG"
        assert result.done is True and result.reward == 1.0

        state = await client.state()
        assert state["step_count"] == 4


def test_generic_env_client_sync_wrapper_and_seeds(wordle_server: LiveServer) -> None:
    with generic_client(wordle_server.url).sync() as client:
        first = client.reset(seed=123).observation
        assert client.state()["step_count"] == 0
        again = client.reset(seed=123).observation
        assert first == again  # same seed, same game
        result = client.step({"message": "[crane]", "metadata": {}})
        assert len(result.observation["guesses"]) == 1


async def test_openenv_client_sees_errors_as_errors(wordle_server: LiveServer) -> None:
    async with generic_client(wordle_server.url) as client:
        with pytest.raises(RuntimeError, match="SESSION_ERROR"):
            await client.step({"message": "[crane]"})
        await client.reset(word="crane")
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            await client.step({"nonsense": True})
        result = await client.step({"message": "[crane]"})  # the connection survived
        assert result.done is True
