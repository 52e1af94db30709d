"""Countdown for language-model agents: one tool, ``submit``, or one text answer per puzzle."""

from __future__ import annotations

from clients.agent import GameAgent
from env_servers.countdown.models import CountdownObservation


class CountdownToolEnv(GameAgent):
    """Countdown answered through the ``submit`` tool (tools mode), or by the reply itself
    (answer mode: the server extracts and checks the expression)."""

    _game = "countdown"

    def _clear(self) -> None:
        self.solved = False
        self.attempts_used = 0
        self.numbers: list[int] = []
        self.target = 0
        self.expression: str | None = None
        self.value: float | None = None
        self.reason: str | None = None

    def _opening(self, observation: CountdownObservation) -> str:
        numbers = ", ".join(map(str, observation.numbers))
        return (
            f"\n\nNumbers: {numbers}. Target: {observation.target}. Use each number exactly once "
            "with + - * / and parentheses. Call the `submit` tool with your expression; you have "
            f"{observation.attempts_left} attempt(s)."
        )

    def submit(self, expression: str) -> str:
        """Submit an arithmetic expression that makes the target.

        Args:
            expression: An expression using each given number exactly once, e.g. "(3 + 9) * 2".

        Returns:
            Whether it reaches the target, its value, and the attempts left.
        """
        result = self._step({"expression": expression})
        observation: CountdownObservation = result.observation
        if observation.correct:
            return f"Correct: {observation.expression} = {observation.target}."
        if observation.invalid_move:
            text = f"Invalid: {observation.feedback} No attempt used"
            return text + (
                "; the episode is over." if result.done else f"; {observation.attempts_left} left."
            )
        text = f"Wrong: {observation.feedback}"
        if not result.done:
            text += f" {observation.attempts_left} attempt(s) left."
        return text

    def _record(self, observation: CountdownObservation) -> None:
        self.numbers, self.target = observation.numbers, observation.target
        if self.steps:  # an answer, not the puzzle
            self.attempts_used = self.steps
            self.solved = observation.correct
            self.expression = observation.expression
            self.value = observation.value
            self.reason = observation.reason
