"""The judging benchmark runs end to end on a small batch, every way it judges."""

from __future__ import annotations

import pytest

from benchmarks.judging import main


def test_judging_benchmark_prints_every_way(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--answers", "96", "--connections", "2", "--repeats", "1"])
    out = capsys.readouterr().out
    for label in ("inprocess", "frame per request", "episodes frames", "process CPU"):
        assert label in out
