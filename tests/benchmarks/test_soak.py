"""The soak benchmark, CI-sized: sessions of every life (played, dropped, resumed, closed,
over HTTP) against a real server process leave no error, no session and little memory behind.
The full-sized run is ``python -m benchmarks.soak`` (or ``pytest -m long``)."""

from __future__ import annotations

import pytest

from benchmarks.soak import LIVES, SoakResult, soak

RSS_GROWTH_MB = 25.0
"""What the server may keep after the sessions are gone: allocator pools and caches, not
sessions (one Wordle session costs a few kB; a leak of every session would exceed it at
scale)."""


def check(result: SoakResult, sessions: int) -> None:
    assert result.errors == 0, result.error_samples
    assert result.sessions == sessions and set(result.lives) == set(LIVES), result.lives
    assert result.active_after == 0, result.health_after
    assert result.health_after["errors"] == result.reattach_refused  # refusals, then retried
    assert result.health_after["status"] == "healthy"
    assert result.health_after["sessions_expired"] >= result.lives["drop"]
    assert result.rss_after_mb - result.rss_before_mb < RSS_GROWTH_MB, result


@pytest.mark.slow
def test_soak_leaves_no_error_no_session_and_flat_memory() -> None:
    check(soak(sessions=300, seconds=60, concurrency=16), 300)


@pytest.mark.long
def test_soak_thousands_of_sessions() -> None:
    check(soak(sessions=5000, seconds=600, concurrency=64), 5000)
