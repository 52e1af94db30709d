"""Countdown on the terminal: the numbers and the target, your answer's value and the feedback.

Pure functions of a ``CountdownObservation``, so they are tested without a terminal or server.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from clients.play import GameUI
from env_servers.countdown.models import CountdownObservation

NUMBER_STYLE = "bold white on blue"
TARGET_STYLE = "bold black on yellow"


def format_value(value: float | None) -> str:
    """``24``, or ``19/3`` for a value that is not whole (the server sends it as a float)."""
    if value is None:
        return "?"
    if value == int(value):
        return str(int(value))
    return str(Fraction(value).limit_denominator(1_000_000))


def puzzle(observation: CountdownObservation) -> Panel:
    """The numbers as tiles and the target, large enough to read at a glance."""
    numbers = Text("  ").join(Text(f" {n} ", style=NUMBER_STYLE) for n in observation.numbers)
    grid = Table.grid(padding=(0, 2))
    grid.add_row(Text("Numbers", style="bold"), numbers)
    grid.add_row(Text(), Text())
    grid.add_row(
        Text("Target", style="bold"), Text.assemble((f" {observation.target} ", TARGET_STYLE))
    )
    return Panel.fit(grid, title="Countdown", padding=(1, 3))


def verdict(observation: CountdownObservation) -> Table:
    """The last answer (its value and what was wrong), the attempts left, and at the end a
    solution."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    if observation.expression is not None or observation.reason is not None:
        answer = Text(observation.expression or "—")
        if observation.value is not None:
            answer.append(f"  = {format_value(observation.value)}", style="bold")
        grid.add_row("Your answer", answer)
        if observation.correct:
            grid.add_row("Feedback", Text("Correct!", style="bold green"))
        elif observation.invalid_move:
            feedback = Text(f"Not accepted: {observation.reason or 'invalid'}", style="red")
            grid.add_row("Feedback", feedback.append(" (no attempt used)", style="dim"))
        else:
            grid.add_row("Feedback", Text(observation.reason or "wrong", style="red"))
    if observation.done:
        if observation.correct:
            outcome = "Solved!"
        elif observation.attempts_left:
            outcome = f"Too many invalid answers ({observation.invalid_count})."
        else:
            outcome = "Out of attempts."
        grid.add_row("Result", Text(outcome, style="bold green" if observation.correct else "red"))
        if observation.solution:
            grid.add_row("Solution", Text(f"{observation.solution} = {observation.target}"))
    else:
        grid.add_row("Attempts left", str(observation.attempts_left))
    return grid


def render_countdown(observation: CountdownObservation, marks: bool = False) -> RenderableType:
    """The whole screen for one observation (``marks`` unused: nothing here is colour-only)."""
    return Group(puzzle(observation), Text(), verdict(observation))


def countdown_action(line: str) -> dict[str, Any]:
    """A typed line is an ``expression``, checked as written."""
    return {"expression": line}


COUNTDOWN = GameUI(
    render=render_countdown,
    action=countdown_action,
    ask="Your expression: ",
    hint="Use each number once with + - * / and parentheses, e.g. (3 + 9) * 2. Only a wrong "
    "value uses an attempt; :q quits.",
    defaults={"attempts": 3},
)
