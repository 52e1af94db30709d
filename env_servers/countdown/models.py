"""Countdown wire models, shared by the server and the typed clients (no FastAPI here)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, model_validator

from env_servers.core.models import Action, Observation, ResetOptions, State
from env_servers.countdown.expression import MAX_EXPRESSION_CHARS

MAX_MESSAGE_CHARS = 16_000
"""Longest ``message`` accepted: a 4,000-token completion fits."""
MAX_GIVEN_NUMBER = 1000
MAX_GIVEN_TARGET = 1_000_000

GivenNumber = Annotated[int, Field(ge=1, le=MAX_GIVEN_NUMBER)]


class CountdownResetOptions(ResetOptions):
    """How to pick the puzzle: generated from ``seed`` and the size settings, or given
    explicitly with ``numbers`` and ``target`` (then the size settings and ``split`` are
    ignored, and the puzzle may have no solution)."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"numbers": [3, 7, 9], "target": 20}]}
    )

    split: Literal["train", "eval", "all"] = Field(
        default="train",
        description="Pool to draw from: 'train', held-out 'eval' (disjoint from train), or "
        "'all' for either.",
    )
    n_numbers: int = Field(default=3, ge=2, le=6, description="How many numbers to give (2-6).")
    max_num: int = Field(
        default=9,
        ge=2,
        le=100,
        description="Largest number drawn (2-100); with big_numbers, the largest small number.",
    )
    big_numbers: bool = Field(
        default=False,
        description="The TV show's variant: one to four of 25, 50, 75, 100 (always at least one "
        "small number), the rest in 1..max_num, and a target in 100..999.",
    )
    numbers: list[GivenNumber] | None = Field(
        default=None,
        min_length=2,
        max_length=6,
        description=f"An explicit puzzle's numbers: 2-6 integers in 1..{MAX_GIVEN_NUMBER}. "
        "Give target too.",
    )
    target: int | None = Field(
        default=None,
        ge=1,
        le=MAX_GIVEN_TARGET,
        description=f"An explicit puzzle's target, in 1..{MAX_GIVEN_TARGET}. Give numbers too.",
    )
    attempts: int = Field(
        default=1,
        ge=1,
        le=10,
        description="Answers allowed (1-10); after a wrong one the observation says why.",
    )

    @model_validator(mode="after")
    def _explicit_puzzle_is_whole(self) -> CountdownResetOptions:
        if (self.numbers is None) != (self.target is None):
            raise ValueError(
                "give both 'numbers' and 'target' for an explicit puzzle, or neither to have one "
                "generated"
            )
        if (
            self.numbers is not None
            and "n_numbers" in self.model_fields_set
            and self.n_numbers != len(self.numbers)
        ):
            raise ValueError(
                f"n_numbers={self.n_numbers} but {len(self.numbers)} numbers were given: "
                "leave n_numbers out of an explicit puzzle"
            )
        return self


class CountdownAction(Action):
    """One answer: an ``expression`` checked as written, or a model's free ``message`` whose
    answer is extracted first (see :func:`env_servers.countdown.expression.extract_answer`).
    Exactly one of the two."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"expression": "(3 + 9) * 2"},
                {"message": "3 + 9 = 12 and 12 * 2 = 24, so <answer>(3 + 9) * 2</answer>"},
            ]
        }
    )

    expression: str | None = Field(
        default=None,
        max_length=MAX_EXPRESSION_CHARS,
        description="An arithmetic expression such as '(3 + 9) * 2', checked exactly as written: "
        "integers, + - * /, unary minus and parentheses only.",
    )
    message: str | None = Field(
        default=None,
        max_length=MAX_MESSAGE_CHARS,
        description="Free text from a model; the answer is taken from the last "
        "<answer>...</answer> tag, else the last expression in the text. A message with no "
        "expression is a wrong answer.",
    )

    @model_validator(mode="after")
    def _exactly_one_answer(self) -> CountdownAction:
        if (self.expression is None) == (self.message is None):
            raise ValueError(
                "give exactly one of 'expression' (checked as written) or 'message' (free text "
                "with an <answer>...</answer> tag)"
            )
        return self


class CountdownObservation(Observation):
    """The puzzle and, after a step, the verdict on the last answer."""

    prompt: str = Field(
        description="The puzzle as text for a model, asking for <answer>expression</answer>."
    )
    numbers: list[int] = Field(description="The numbers, each to be used exactly once.")
    target: int = Field(description="The number to make.")
    attempts_left: int = Field(ge=0, description="Answers still allowed in this episode.")
    expression: str | None = Field(
        default=None, description="The expression checked (extracted from a message), if any."
    )
    value: float | None = Field(
        default=None, description="The expression's value, when it could be computed."
    )
    correct: bool = Field(default=False, description="Whether the last answer was right.")
    invalid_move: bool = Field(
        default=False,
        description="Whether the last answer was not an answer to the puzzle at all (no "
        "expression, not an allowed one, or not exactly the given numbers): it used no attempt.",
    )
    invalid_count: int = Field(
        default=0, ge=0, description="Invalid answers so far; the 10th ends the episode."
    )
    reason: str | None = Field(
        default=None,
        description="Why the last answer was wrong, e.g. 'uses 7 twice', '= 19, target 20', "
        "'no arithmetic expression found', 'division by zero'.",
    )
    feedback: str = Field(
        default="",
        description="One sentence about the last answer: 'Correct: (3 + 9) * 2 = 24.' or what "
        "was wrong, e.g. '3 + 9 + 7 = 19, target 20.' (at reset: the puzzle in brief).",
    )
    solution: str | None = Field(
        default=None, description="A known solution, revealed only once the episode is over."
    )


class CountdownState(State):
    """Episode bookkeeping. ``solution`` stays ``None`` until the episode is over."""

    split: Literal["train", "eval"] = Field(
        default="train",
        description="The pool the puzzle belongs to (whatever split was asked for).",
    )
    seed: int | None = Field(
        default=None,
        description="Seed that generated the puzzle (drawn when none was given), to replay it; "
        "None for an explicit puzzle.",
    )
    numbers: list[int] = Field(default_factory=list, description="The numbers.")
    target: int = Field(default=0, description="The number to make (0 before the first reset).")
    attempts: int = Field(default=0, ge=0, description="Answers allowed in this episode.")
    attempts_left: int = Field(default=0, ge=0, description="Answers still allowed.")
    invalid_count: int = Field(default=0, ge=0, description="Invalid answers so far.")
    done: bool = Field(default=False, description="Whether the episode is over.")
    solved: bool = Field(default=False, description="Whether the puzzle was solved.")
    solution: str | None = Field(
        default=None, description="A known solution, shown only once the episode is over."
    )
