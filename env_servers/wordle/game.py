"""Wordle rules: word lists, splits, feedback, validity and hard mode. No I/O but the word lists.

Everything here is pure except ``WordleGame``, a small mutable object holding one episode.
Text for the player (the TextArena-style transcript) is built in ``environment.py``; this
module only returns the *reason* an attempt was refused, as one sentence that says what was
wrong and what to do.

Word lists are the original game's 2,315 answers and 12,972 allowed guesses (answers
included), shipped in ``data/`` and read once per process.
"""

from __future__ import annotations

import hashlib
import random
import re
from functools import cache
from importlib.resources import files
from typing import Literal

Split = Literal["train", "eval", "all"]

WORD_LENGTH = 5
MAX_GUESSES = 6
MAX_INVALID_MOVES = 10
"""The episode ends, lost, on this many invalid moves (counted over the whole episode).

Invalid moves cost no guess, so without a cap a broken policy could loop until its token
budget runs out. TextArena ends the game on the second *consecutive* invalid move, which is
harsh for a model learning the format; ten in total still bounds an episode at 16 steps."""

EVAL_SIZE = 300
SPLIT_SALT = "arenagym/wordle/split/v1"
"""The split: answers sorted by ``sha256(SPLIT_SALT + word)``; the first ``EVAL_SIZE`` are
``eval``, the rest ``train``. Changing the salt changes the held-out set: don't."""

_ORDINALS = ("1st", "2nd", "3rd", "4th", "5th")
_BRACKETED = re.compile(r"\[(\w+)\]")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
_system_random = random.SystemRandom()

FORMAT_REASON = (
    "You tried submitting a word in the wrong format. Wrap your guess in square brackets, "
    "e.g. [crane]."
)


# -- word lists and splits --------------------------------------------------------------------


def _read_words(name: str) -> tuple[str, ...]:
    text = files("env_servers.wordle").joinpath("data", name).read_text(encoding="ascii")
    return tuple(sorted({line.strip() for line in text.splitlines() if line.strip()}))


@cache
def answers() -> tuple[str, ...]:
    """The 2,315 possible secrets, sorted."""
    return _read_words("answers.txt")


@cache
def allowed_words() -> frozenset[str]:
    """Every word accepted as a guess (answers included)."""
    return frozenset(_read_words("allowed.txt")) | frozenset(answers())


def _split_key(word: str) -> str:
    return hashlib.sha256((SPLIT_SALT + word).encode()).hexdigest()


@cache
def split_words(split: Split) -> tuple[str, ...]:
    """The secrets of a split, sorted alphabetically (so seeds index a stable order)."""
    if split == "all":
        return answers()
    ranked = sorted(answers(), key=_split_key)
    chosen = ranked[:EVAL_SIZE] if split == "eval" else ranked[EVAL_SIZE:]
    return tuple(sorted(chosen))


def choose_secret(split: Split, seed: int | None) -> str:
    """A secret from ``split``: uniform at random, or fixed by ``seed``.

    A seed picks ``random.Random(seed).choice`` over the sorted split; CPython seeds an int
    the same way on every platform and run (no ``hash()``), so the same seed and split give
    the same word in every process.
    """
    pool = split_words(split)
    if seed is None:
        return _system_random.choice(pool)
    return random.Random(seed).choice(pool)


def is_word(word: str) -> bool:
    return word in allowed_words()


# -- parsing ----------------------------------------------------------------------------------


def parse_message(message: str) -> str | None:
    """The guess in a TextArena-style message, lowercased, or None when there is none.

    As TextArena's ``Wordle-v0`` behind its ``ActionFormattingWrapper``: a message with no
    square bracket at all is taken whole as the word (we also strip surrounding whitespace);
    otherwise the first ``[token]`` of word characters counts, so ``"I'll try [crane]"`` works.
    """
    if "[" not in message and "]" not in message:
        message = "[" + message.strip() + "]"
    match = _BRACKETED.search(message)
    return match.group(1).lower() if match is not None else None


def parse_guess(guess: str) -> str:
    """A plain-word guess, normalised; tolerates ``[crane]`` in the plain field."""
    word = guess.strip()
    if len(word) > 1 and word[0] == "[" and word[-1] == "]":
        word = word[1:-1].strip()
    return word.lower()


# -- feedback ---------------------------------------------------------------------------------


def score(secret: str, guess: str) -> str:
    """Feedback as five of ``G`` (right place), ``Y`` (elsewhere in the word), ``X`` (absent).

    Greens are marked first; a yellow then needs an unmatched copy of that letter left in the
    secret, scanning left to right, so a guess never earns more marks for a letter than the
    secret has copies of it.
    """
    marks = ["X", "X", "X", "X", "X"]
    unmatched: dict[str, int] = {}
    for i in range(WORD_LENGTH):
        letter = secret[i]
        if guess[i] == letter:
            marks[i] = "G"
        else:
            unmatched[letter] = unmatched.get(letter, 0) + 1
    for i in range(WORD_LENGTH):
        if marks[i] == "X":
            letter = guess[i]
            left = unmatched.get(letter, 0)
            if left:
                marks[i] = "Y"
                unmatched[letter] = left - 1
    return "".join(marks)


# -- one episode ------------------------------------------------------------------------------


class WordleGame:
    """One episode: the secret, the accepted guesses, and the counters reward shaping needs.

    ``attempt(word)`` takes an already-parsed word (None when the message held none) and
    returns None when the guess was accepted or the reason it was refused. A refused attempt
    costs no guess; the ``MAX_INVALID_MOVES``-th ends the episode as a loss.
    """

    __slots__ = (
        "_fixed",
        "_required",
        "attempted",
        "attempts",
        "best_greens",
        "best_yellows",
        "done",
        "greens",
        "guessed",
        "guesses",
        "hard_mode",
        "invalid_count",
        "secret",
        "won",
        "yellows",
    )

    def __init__(self, secret: str, hard_mode: bool = False) -> None:
        self.secret = secret
        self.hard_mode = hard_mode
        self.guesses: list[tuple[str, str]] = []
        """Accepted guesses as ``(word, marks)``."""
        self.guessed: set[str] = set()
        self.attempts: dict[str, int] = {}
        """Every well-formed 5-letter word attempted, valid or not → times attempted."""
        self.attempted = 0
        self.invalid_count = 0
        self.done = False
        self.won = False
        self.greens = self.yellows = self.best_greens = self.best_yellows = 0
        self._fixed: dict[int, str] = {}
        """Hard mode: position → letter revealed green there."""
        self._required: dict[str, int] = {}
        """Hard mode: letter → copies revealed (green or yellow) in one earlier guess."""

    @property
    def guesses_left(self) -> int:
        return MAX_GUESSES - len(self.guesses)

    @property
    def distinct_attempted(self) -> int:
        return len(self.attempts)

    def attempt(self, word: str | None) -> str | None:
        """Play ``word``; None if accepted, else the reason it was refused."""
        if word is None:
            reason: str | None = FORMAT_REASON
        elif len(word) != WORD_LENGTH or not _LETTERS.issuperset(word):
            shown = word if len(word) <= 20 else word[:20] + "..."
            reason = (
                f"Your word must be exactly {WORD_LENGTH} letters (a-z); '{shown}' is not. "
                "Guess a 5-letter English word."
            )
        else:
            self.attempted += 1
            self.attempts[word] = self.attempts.get(word, 0) + 1
            reason = self._refusal(word)
        if reason is not None:
            self.invalid_count += 1
            if self.invalid_count >= MAX_INVALID_MOVES:
                self.done = True
            return reason
        marks = score(self.secret, word)  # type: ignore[arg-type]  # a valid word by now
        self.guesses.append((word, marks))  # type: ignore[arg-type]
        self.guessed.add(word)  # type: ignore[arg-type]
        self.greens = greens = marks.count("G")
        self.yellows = yellows = marks.count("Y")
        if greens > self.best_greens:
            self.best_greens = greens
        if yellows > self.best_yellows:
            self.best_yellows = yellows
        if greens == WORD_LENGTH:
            self.done = self.won = True
        elif len(self.guesses) >= MAX_GUESSES:
            self.done = True
        elif self.hard_mode:
            self._learn(word, marks)  # type: ignore[arg-type]
        return None

    def _refusal(self, word: str) -> str | None:
        """Why a well-formed 5-letter word is refused, or None."""
        if word in self.guessed:
            return f"You have already guessed '{word}' before; try a different word."
        if word not in allowed_words():
            return (
                f"'{word}' is not an English word in the Wordle word list. "
                "Guess a real 5-letter word."
            )
        if self.hard_mode:
            return self._hard_mode_violation(word)
        return None

    def _learn(self, word: str, marks: str) -> None:
        counts: dict[str, int] = {}
        for i in range(WORD_LENGTH):
            mark = marks[i]
            if mark != "X":
                letter = word[i]
                counts[letter] = counts.get(letter, 0) + 1
                if mark == "G":
                    self._fixed[i] = letter
        required = self._required
        for letter, n in counts.items():
            if n > required.get(letter, 0):
                required[letter] = n

    def _hard_mode_violation(self, word: str) -> str | None:
        for i, letter in self._fixed.items():
            if word[i] != letter:
                return (
                    f"Hard mode: the {_ORDINALS[i]} letter must be {letter.upper()} "
                    "(revealed green). Keep every green letter in place and reuse every "
                    "yellow letter."
                )
        for letter, n in self._required.items():
            if word.count(letter) < n:
                times = "" if n == 1 else f" at least {n} times"
                return (
                    f"Hard mode: your guess must contain {letter.upper()}{times} (revealed "
                    "earlier). Keep every green letter in place and reuse every yellow letter."
                )
        return None
