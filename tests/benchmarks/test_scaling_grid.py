"""The scaling grid's machinery on one small batch (the grid itself is a benchmark:
``python -m benchmarks.scaling_grid``)."""

from __future__ import annotations

from benchmarks.scaling_grid import FIRST_BATCH, max_batch, series


def test_a_small_batch_holds_on_our_server() -> None:
    results = series("ours", wait=0.1, steps=2, cap=FIRST_BATCH)
    assert [r.sessions for r in results] == [FIRST_BATCH]
    assert results[0].finished == FIRST_BATCH and results[0].errors == []
    assert results[0].p99_ms < 1000 and max_batch(results) == FIRST_BATCH
