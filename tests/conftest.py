"""Fixtures shared by the whole suite."""

from __future__ import annotations

from collections.abc import Iterator

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
