"""Training progress: a Rich progress bar with reward and solve/win rate, and the metrics file.

``metrics.jsonl`` gets one JSON object per logging step (``step``, ``reward``, ``solve_rate``
and everything TRL logged), flushed as it is written, so a killed run keeps its curve.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from transformers import TrainerCallback


class MetricsFile(TrainerCallback):
    def __init__(self, path: Path, solve_key: str) -> None:
        self.path = path
        self.solve_key = solve_key
        self.last: dict[str, Any] = {}

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any
    ) -> None:
        if not logs or "reward" not in logs or not state.is_world_process_zero:
            return
        record = {"step": state.global_step, **logs}
        if self.solve_key in logs:
            record["solve_rate"] = logs[self.solve_key]
        self.last = record
        with self.path.open("a") as file:
            file.write(json.dumps(record) + "\n")


class RichProgress(TrainerCallback):
    def __init__(self, game: str, metrics: MetricsFile) -> None:
        self.game = game
        self.metrics = metrics
        self.progress: Progress | None = None
        self.task: Any = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if not state.is_world_process_zero:
            return
        self.progress = Progress(
            TextColumn(f"[bold]{self.game}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeRemainingColumn(),
        )
        self.progress.start()
        self.task = self.progress.add_task(
            "train", total=state.max_steps, completed=state.global_step, stats=""
        )

    def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.progress is None:
            return
        last = self.metrics.last
        stats = ""
        if last:
            rate = last.get("solve_rate")
            label = "win" if self.game == "wordle" else "solved"
            stats = f"reward {last['reward']:.3f}" + (
                f"  {label} {rate:.0%}" if rate is not None else ""
            )
        self.progress.update(self.task, completed=state.global_step, stats=stats)

    def on_train_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
