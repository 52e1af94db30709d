"""Stop training after a wall-clock budget, ending the run as if it had reached ``max_steps``
(the trainer then saves its final model as usual)."""

from __future__ import annotations

import time
from typing import Any

from transformers import TrainerCallback


class TimeLimit(TrainerCallback):
    """Ends training at the first step that finishes after ``seconds`` (``None``: no limit)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.started: float | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        self.started = time.monotonic()

    def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.seconds is None or self.started is None:
            return
        if time.monotonic() - self.started >= self.seconds:
            control.should_training_stop = True
            control.should_save = True
