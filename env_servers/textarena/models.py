"""Wire models of every TextArena game: one move of text in, TextArena's text out.

Shared by the server and the typed clients (no FastAPI, no TextArena here).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from env_servers.core.models import Action, Observation, ResetOptions, State

MAX_MOVE_CHARS = 2_000
"""Longest move accepted: TextArena reads the bracketed part of a reply, so a short reasoning
before the move fits."""


class TextArenaResetOptions(ResetOptions):
    """A new episode of the game; ``seed`` fixes it (a game that always starts the same says
    so in its declaration: ``GameSpec.seeds_vary``)."""


class TextArenaAction(Action):
    """One move, as TextArena reads it: the bracketed part, e.g. ``[3 4]`` (brackets are added
    when the move has none)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"move": "[3 4]"}]})

    move: str = Field(
        min_length=1,
        max_length=MAX_MOVE_CHARS,
        description="The move in the game's format, e.g. '[3 4]' or '[Up]' (see the prompt).",
    )


class TextArenaObservation(Observation):
    """What TextArena showed the player: its prompt, and the messages since the last move."""

    prompt: str = Field(description="TextArena's prompt for the game: its rules and move format.")
    feedback: str = Field(
        default="",
        description="TextArena's messages since the last observation (the board, the verdict "
        "on the move, the end of the game), one '[GAME] …' line each.",
    )
    turn: int = Field(default=0, ge=0, description="Valid moves made so far.")
    invalid_move: bool = Field(
        default=False,
        description="Whether TextArena refused the last move; TextArena's error allowance "
        "forgives one such move in a row, the next ends the episode.",
    )
    reason: str | None = Field(
        default=None, description="TextArena's reason for refusing the move, or for the end."
    )
    invalid_count: int = Field(default=0, ge=0, description="Refused moves this episode.")
    score: float | None = Field(
        default=None,
        description="TextArena's own reward once the episode is over: 1.0 for a win, else its "
        "measure of progress (0..1) or -1.0 for some losses by invalid moves.",
    )
    solved: bool = Field(default=False, description="Whether the game was won.")
    board: str = Field(
        default="",
        description="The last board TextArena showed (empty for a game without one); it stays "
        "after an invalid move, which TextArena answers without a board.",
    )
    moves: list[str] = Field(
        default_factory=list,
        description="The moves TextArena took this episode (not the invalid ones), in order.",
    )
    secret: str | None = Field(
        default=None,
        description="The game's hidden information (the code, the number, the mines) once the "
        "episode is over; None before, and for a game that hides nothing.",
    )


class TextArenaState(State):
    """Episode bookkeeping: never the game's hidden state (codes, mines, cards)."""

    env_id: str = Field(default="", description="TextArena's environment id, e.g. 'Sudoku-v0'.")
    seed: int | None = Field(
        default=None, description="Seed of the episode (drawn when none was given), to replay it."
    )
    turn: int = Field(default=0, ge=0, description="Valid moves made so far.")
    invalid_count: int = Field(default=0, ge=0, description="Refused moves this episode.")
    done: bool = Field(default=False, description="Whether the episode is over.")
    solved: bool = Field(default=False, description="Whether the game was won.")
    score: float | None = Field(
        default=None, description="TextArena's own reward, once the episode is over."
    )
    reason: str | None = Field(default=None, description="Why the episode ended, once it has.")
