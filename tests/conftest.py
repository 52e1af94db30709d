"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live import LiveServer, live_server


@pytest.fixture(scope="module")
def wordle_server() -> Iterator[LiveServer]:
    with live_server("wordle") as server:
        yield server


@pytest.fixture(scope="module")
def countdown_server() -> Iterator[LiveServer]:
    with live_server("countdown") as server:
        yield server


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny offline model, built once per machine (cached) or per run."""
    from trainer.tiny import default_cache_dir, tiny_model_path

    cache = os.environ.get("ARENAGYM_CACHE")
    return tiny_model_path(
        default_cache_dir() if cache else tmp_path_factory.mktemp("tiny") / "model"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``long`` run only when ``-m`` names them (``pytest -m long``)."""
    if "long" in (config.getoption("markexpr") or ""):
        return
    kept = [item for item in items if item.get_closest_marker("long") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
