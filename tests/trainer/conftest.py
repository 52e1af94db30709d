"""A model server (``arenagym serve-model``'s app) with the tiny model, and game servers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.live import live_app, live_server

SERVED_GAMES = ("wordle", "countdown", "textarena:GuessTheNumber-v0")
"""Games the model server plays in the tests (a new game: one more name here)."""


@dataclass(frozen=True)
class ModelServer:
    url: str
    games: dict[str, str]
    """Each game server's URL, by game."""


@pytest.fixture(scope="session")
def tiny_engine(tiny_model: Any) -> Any:
    from trainer.serving.engine import load_engine

    return load_engine(str(tiny_model), backend="transformers", device="cpu")


@pytest.fixture(scope="module")
def model_server(tiny_engine: Any) -> Iterator[ModelServer]:
    """The model server, serving the tiny model, with a live server for each served game."""
    from trainer.serving.app import create_app

    with contextlib.ExitStack() as stack:
        games = {name: stack.enter_context(live_server(name)).url for name in SERVED_GAMES}
        url = stack.enter_context(live_app(create_app(tiny_engine, games)))
        yield ModelServer(url, games)
