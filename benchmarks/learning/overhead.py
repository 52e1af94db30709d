"""Where a GRPO step's time goes, with the game in-process and through the server.

The same ``arenagym train`` run (same seed, settings and model) is timed twice for a fixed
number of steps: ``transport: inprocess`` (the game in the trainer's process) and
``transport: websocket`` (the live server). TRL's own profiling spans give the split:
generation (``transformers.generate``), verification (the Countdown reward: every completion
sent to the game), the rest of input preparation (log-probabilities, advantages) and the
optimisation (forward, backward, optimiser step).
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.learning.stages import Run

TRANSPORTS = ("inprocess", "websocket")


@contextmanager
def step_profile() -> Iterator[list[dict[str, float]]]:
    """Per optimiser step, the seconds of each TRL span and of the whole step."""
    import torch
    import trl.extras.profiling as profiling
    from trl import GRPOTrainer

    steps: list[dict[str, float]] = []
    current: dict[str, float] = defaultdict(float)
    original_log = profiling.ProfilingContext._log_metrics
    original_step = GRPOTrainer.training_step

    def log_metrics(self: Any, duration: float) -> None:
        current[self.name.split(".", 1)[-1]] += duration  # "<trainer class>.<span>"

    def training_step(self: Any, *args: Any, **kwargs: Any) -> Any:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        started = time.perf_counter()
        output = original_step(self, *args, **kwargs)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        current["training_step"] += time.perf_counter() - started
        return output

    profiling.ProfilingContext._log_metrics = log_metrics  # type: ignore[method-assign]
    GRPOTrainer.training_step = training_step  # type: ignore[method-assign]
    from transformers import TrainerCallback

    class Steps(TrainerCallback):
        def __init__(self) -> None:
            self.started = 0.0

        def on_step_begin(self, *_: Any, **__: Any) -> None:
            current.clear()
            self.started = time.perf_counter()

        def on_step_end(self, *_: Any, **__: Any) -> None:
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            steps.append({**current, "step": time.perf_counter() - self.started})

    original_init = GRPOTrainer.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["callbacks"] = [*(kwargs.get("callbacks") or []), Steps()]
        original_init(self, *args, **kwargs)

    GRPOTrainer.__init__ = init  # type: ignore[method-assign]
    try:
        yield steps
    finally:
        profiling.ProfilingContext._log_metrics = original_log  # type: ignore[method-assign]
        GRPOTrainer.training_step = original_step  # type: ignore[method-assign]
        GRPOTrainer.__init__ = original_init  # type: ignore[method-assign]


def _mean(rows: list[dict[str, float]], key: str) -> float:
    """The mean, not the median: with ``num_iterations`` > 1 only some steps generate."""
    return statistics.fmean(row.get(key, 0.0) for row in rows) if rows else 0.0


def summarise(rows: list[dict[str, float]]) -> dict[str, float]:
    """Mean seconds per step: the whole step and its parts. Verification is the time the
    reward waited for the verdicts, judging having started as the replies came out."""
    step = _mean(rows, "step")
    generation = _mean(rows, "transformers.generate")
    verification = _mean(rows, "countdown_correct")
    prepare = _mean(rows, "_prepare_inputs")
    training_step = _mean(rows, "training_step")
    return {
        "step_s": step,
        "generation_s": generation,
        "verification_s": verification,
        "scoring_s": max(0.0, prepare - generation - verification),
        "optimisation_s": max(0.0, step - prepare),
        "training_step_s": training_step,
    }


def time_transports(run: Run) -> dict[str, Any]:
    """Both transports for ``overhead_steps`` steps each; means over the steps after the
    first ``overhead_skip``, and the remote's extra time per step in percent."""
    from benchmarks.learning.stages import train_config
    from trainer.config import load_config
    from trainer.train import train

    s = run.settings
    result: dict[str, Any] = {"steps": s.overhead_steps, "skipped": s.overhead_skip}
    for transport in TRANSPORTS:
        directory = run.path(f"overhead-{transport}")
        path = train_config(
            run,
            directory,
            transport=transport,
            max_steps=s.overhead_steps,
            max_time_s=None,
            resume=False,
        )
        config = load_config(path)
        with step_profile() as rows:
            started = time.perf_counter()
            train(config)
            wall = time.perf_counter() - started
        kept = rows[s.overhead_skip :]
        result[transport] = {**summarise(kept), "wall_s": wall, "per_step": rows}
        run.log(f"overhead {transport}: {result[transport]['step_s']:.3f} s per step")
    local, remote = result["inprocess"], result["websocket"]
    result["remote_extra_percent"] = 100 * (remote["step_s"] - local["step_s"]) / local["step_s"]
    result["verification_extra_percent"] = (
        100 * (remote["verification_s"] - local["verification_s"]) / local["step_s"]
    )
    return result
