"""Training progress: a Rich progress bar with reward and solve/win rate, and the metrics file.

``metrics.jsonl`` gets one JSON object per logging step (``step``, ``reward``, ``solve_rate``
and everything TRL logged), flushed as it is written, so a killed run keeps its curve. In a
mixed run ``solve_rate/<game>`` is written per game, and ``solve_rate`` is their mean.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from transformers import TrainerCallback


def step_bars(enabled: bool = True, stderr: bool = False) -> Progress:
    """Progress bars for long work outside a GRPO run (evaluation, warm-ups): what runs, the
    bar, steps done of all, time elapsed."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    console = Console(stderr=True) if stderr else None
    return Progress(*columns, TimeElapsedColumn(), console=console, disable=not enabled)


class MetricsFile(TrainerCallback):
    def __init__(self, path: Path, solve_keys: dict[str, str]) -> None:
        self.path = path
        self.solve_keys = solve_keys
        """Per game, the logged metric that is its solve rate."""
        self.last: dict[str, Any] = {}

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any
    ) -> None:
        if not logs or "reward" not in logs or not state.is_world_process_zero:
            return
        record = {"step": state.global_step, **logs}
        rates = {
            game: logs[key]
            for game, key in self.solve_keys.items()
            if isinstance(logs.get(key), int | float) and logs[key] == logs[key]  # not NaN
        }
        if len(self.solve_keys) > 1:
            record |= {f"solve_rate/{game}": rate for game, rate in rates.items()}
        if rates:
            record["solve_rate"] = sum(rates.values()) / len(rates)
        self.last = record
        with self.path.open("a") as file:
            file.write(json.dumps(record) + "\n")


class RichProgress(TrainerCallback):
    def __init__(self, solved_words: dict[str, str], metrics: MetricsFile) -> None:
        self.solved_words = solved_words
        """Per game, the word for a solved episode."""
        self.metrics = metrics
        self.progress: Progress | None = None
        self.task: Any = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if not state.is_world_process_zero:
            return
        self.progress = Progress(
            TextColumn(f"[bold]{' + '.join(self.solved_words)}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeRemainingColumn(),
        )
        self.progress.start()
        self.task = self.progress.add_task(
            "train", total=state.max_steps, completed=state.global_step, stats=""
        )

    def stats(self) -> str:
        """The last logged step's reward and solve rates."""
        last = self.metrics.last
        if not last:
            return ""
        stats = f"reward {last['reward']:.3f}"
        for game, word in self.solved_words.items():
            key = f"solve_rate/{game}" if len(self.solved_words) > 1 else "solve_rate"
            if last.get(key) is not None:
                name = f"{game} {word}" if len(self.solved_words) > 1 else word
                stats += f"  {name} {last[key]:.0%}"
        return stats

    def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=state.global_step)

    def on_log(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        """After the metrics file took the step's logs (callbacks run in order), so the bar
        shows the step just finished, not the one before."""
        if self.progress is not None:
            self.progress.update(self.task, completed=state.global_step, stats=self.stats())

    def on_train_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
