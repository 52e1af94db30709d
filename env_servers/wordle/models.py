"""Wordle wire models, shared by the server and the typed clients (so: no FastAPI here).

The observation carries two views of the same game. ``prompt``, ``messages``,
``current_player_id``, ``legal_players`` and ``info`` are what OpenEnv's textarena server sends
for TextArena's ``Wordle-v0``, so OpenEnv clients and TRL's examples work unchanged; the
structured fields (``guesses``, ``invalid_move``, ``reward_signals``, …) are what our own
clients and reward functions read instead of parsing prose.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from env_servers.core.models import Action, Observation, ResetOptions, State
from env_servers.wordle import game

MAX_MESSAGE_CHARS = 16_000
"""Longest ``message`` accepted: a model's whole turn (thousands of tokens) fits."""


class WordleResetOptions(ResetOptions):
    """How to start a game. ``word`` fixes the secret, so the server gates it."""

    SECRET_FIELDS: ClassVar[frozenset[str]] = frozenset({"word"})

    split: Literal["train", "eval", "all"] = Field(
        default="train",
        description=(
            "Pool the secret is drawn from: 'train' (2,015 answers), 'eval' (300 held-out "
            "answers) or 'all' (both)."
        ),
    )
    hard_mode: bool = Field(
        default=False,
        description="Every revealed hint must be used: greens stay in place, yellows reused.",
    )
    word: str | None = Field(
        default=None,
        description=(
            "An explicit secret word (5 letters, from the Wordle lists); overrides split and "
            "seed. Accepted only when the server runs with --allow-explicit-secrets."
        ),
    )

    @field_validator("word")
    @classmethod
    def _known_word(cls, word: str | None) -> str | None:
        if word is None:
            return None
        word = word.strip().lower()
        if not game.is_word(word):
            raise ValueError(
                f"'{word}' is not a 5-letter word from the Wordle answer or allowed lists."
            )
        return word


class WordleAction(Action):
    """One guess: either a TextArena-style ``message`` or a plain ``guess``, not both."""

    message: str | None = Field(
        default=None,
        max_length=MAX_MESSAGE_CHARS,
        description=(
            "TextArena/OpenEnv form: text holding the guess in square brackets, e.g. '[crane]' "
            "or 'I will try [crane]'. A message without brackets is taken whole as the word."
        ),
    )
    guess: str | None = Field(
        default=None, max_length=64, description="The guessed word itself, e.g. 'crane'."
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> WordleAction:
        if (self.message is None) == (self.guess is None):
            raise ValueError(
                "Give exactly one of 'message' (e.g. \"[crane]\") or 'guess' (e.g. \"crane\")."
            )
        return self


class TextArenaMessage(BaseModel):
    """One message as OpenEnv's textarena server sends it."""

    model_config = ConfigDict(extra="forbid")

    sender_id: int = Field(description="-1 for the game, as in OpenEnv's server.")
    content: str = Field(description="The text; for Wordle, the whole transcript so far.")
    category: str = Field(description="TextArena observation category; 'MESSAGE' here.")


class GuessFeedback(BaseModel):
    """One accepted guess and its marks."""

    model_config = ConfigDict(extra="forbid")

    word: str = Field(description="The guessed word, lowercase.")
    feedback: str = Field(
        description="Five marks: G right letter, right place; Y elsewhere in the word; X absent."
    )


class WordleRewardSignals(BaseModel):
    """What shaped rewards need, so reward functions never parse the transcript."""

    model_config = ConfigDict(extra="forbid")

    greens: int = Field(default=0, description="Greens of the last accepted guess.")
    yellows: int = Field(default=0, description="Yellows of the last accepted guess.")
    best_greens: int = Field(default=0, description="Most greens in one guess this episode.")
    best_yellows: int = Field(default=0, description="Most yellows in one guess this episode.")
    attempted_guesses: int = Field(
        default=0,
        description="Well-formed 5-letter words attempted, valid or not (repeats included).",
    )
    distinct_attempted: int = Field(
        default=0, description="Distinct well-formed 5-letter words attempted."
    )
    repeats_attempted: int = Field(
        default=0, description="attempted_guesses - distinct_attempted: how often it repeated."
    )
    correct: bool = Field(default=False, description="Whether the word was found.")
    invalid_count: int = Field(default=0, description="Refused attempts this episode.")


class WordleObservation(Observation):
    """The game after a reset or a step; the secret appears only once ``done``."""

    prompt: str = Field(default="", description="The game's rules (TextArena's player prompt).")
    messages: list[TextArenaMessage] = Field(
        default_factory=list,
        description=(
            "One message whose content is the whole transcript so far; each step appends to it."
        ),
    )
    current_player_id: int = Field(default=0, description="Always 0: Wordle has one player.")
    legal_players: list[int] = Field(default=[0], description="Players who may act: [0].")
    info: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "As OpenEnv's server: empty after reset, then {'reward_signals': {'wordle.greens', "
            "'wordle.yellows', 'wordle.repetitions', 'wordle.correct'}}."
        ),
    )
    guesses: list[GuessFeedback] = Field(
        default_factory=list, description="Accepted guesses so far, in order."
    )
    guesses_left: int = Field(default=game.MAX_GUESSES, description="Guesses still available.")
    invalid_move: bool = Field(
        default=False, description="Whether the last attempt was refused (it cost no guess)."
    )
    reason: str | None = Field(
        default=None, description="Why the last attempt was refused, and what to do instead."
    )
    reward_signals: WordleRewardSignals = Field(
        default_factory=WordleRewardSignals, description="Counters for shaped rewards."
    )
    hard_mode: bool = Field(default=False, description="Whether hard mode is on.")
    answer: str | None = Field(
        default=None, description="The secret word once the episode is over; None while playing."
    )


class WordleState(State):
    """Episode bookkeeping. ``answer`` stays None until the episode is over."""

    split: Literal["train", "eval", "all"] = Field(
        default="train", description="Pool the secret was drawn from."
    )
    hard_mode: bool = Field(default=False, description="Whether hard mode is on.")
    guesses: list[GuessFeedback] = Field(
        default_factory=list, description="Accepted guesses so far, in order."
    )
    guesses_left: int = Field(default=game.MAX_GUESSES, description="Guesses still available.")
    invalid_count: int = Field(default=0, description="Refused attempts this episode.")
    done: bool = Field(default=False, description="Whether the episode is over.")
    won: bool = Field(default=False, description="Whether the word was found.")
    answer: str | None = Field(
        default=None, description="The secret word once the episode is over; None while playing."
    )
