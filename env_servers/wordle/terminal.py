"""Wordle on the terminal: tiles, a keyboard of used letters, and the turn's news.

Pure functions of a ``WordleObservation``, so they are tested without a terminal or server.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from clients.play import GameUI
from env_servers.wordle.game import MAX_GUESSES, MAX_INVALID_MOVES, WORD_LENGTH
from env_servers.wordle.models import GuessFeedback, WordleObservation

KEYBOARD_ROWS = ("QWERTYUIOP", "ASDFGHJKL", "ZXCVBNM")

TILE_STYLES = {
    "G": "bold white on green",
    "Y": "bold black on yellow",
    "X": "bold white on bright_black",
}
"""Background per mark: green, yellow, grey. Standard colours, so a 16-colour terminal keeps
them apart (Rich maps the original game's hex colours to greys there)."""
UNUSED_STYLE = "bold black on white"
EMPTY_STYLE = "dim"
RANK = {"G": 3, "Y": 2, "X": 1}
"""What a mark tells about a letter: green beats yellow beats grey."""


def tile(letter: str, mark: str | None) -> Text:
    """One letter on its coloured background (``mark`` None: a key not played yet)."""
    style = TILE_STYLES[mark] if mark else UNUSED_STYLE
    return Text(f" {letter.upper()} ", style=style)


def guess_row(guess: GuessFeedback, marks: bool = False) -> Text:
    """The five tiles of a guess; with ``marks``, the G/Y/X line too (for no-colour terminals)."""
    row = Text(" ").join(
        tile(letter, mark) for letter, mark in zip(guess.word, guess.feedback, strict=True)
    )
    if marks:
        row.append(f"   {' '.join(guess.feedback)}", style="dim")
    return row


def empty_row() -> Text:
    return Text(" ").join(Text(" · ", style=EMPTY_STYLE) for _ in range(WORD_LENGTH))


def letter_marks(guesses: list[GuessFeedback]) -> dict[str, str]:
    """Best mark known per letter (upper case): green > yellow > grey; unplayed letters absent."""
    best: dict[str, str] = {}
    for guess in guesses:
        for letter, mark in zip(guess.word.upper(), guess.feedback, strict=True):
            if RANK.get(mark, 0) > RANK.get(best.get(letter, ""), 0):
                best[letter] = mark
    return best


def key(letter: str, mark: str | None, marks: bool = False) -> Text:
    """A keyboard key; with ``marks`` it also reads without colour: ``[E]`` green, ``(R)``
    yellow, ``·`` grey (not in the word)."""
    if not marks or mark is None:
        return tile(letter, mark)
    shown = {"G": f"[{letter}]", "Y": f"({letter})"}.get(mark, " · ")
    return Text(shown, style=TILE_STYLES[mark])


def keyboard(guesses: list[GuessFeedback], marks: bool = False) -> Text:
    """QWERTY rows, each key coloured by what the guesses revealed about its letter."""
    known = letter_marks(guesses)
    rows = []
    for indent, letters in enumerate(KEYBOARD_ROWS):
        keys = Text(" ").join(key(letter, known.get(letter), marks) for letter in letters)
        rows.append(Text(" " * (2 * indent)) + keys)
    return Text("\n").join(rows)


def status(observation: WordleObservation) -> Text:
    """The news of the turn: a refused guess and why, the guesses left, or how it ended."""
    text = Text()
    if observation.invalid_move and observation.reason:
        text.append("Not accepted: ", style="bold red")
        text.append(observation.reason, style="red")
        text.append(" (no guess used)\n", style="dim")
    if observation.done:
        answer = (observation.answer or "?").upper()
        if observation.reward_signals.correct:
            count = len(observation.guesses)
            text.append(f"You got it in {count} guess{'es' if count != 1 else ''}! ", "bold green")
            text.append(f"The word was {answer}.")
        else:
            text.append("Game over. ", style="bold red")
            text.append("The word was ")
            text.append(answer, style="bold")
            text.append(".")
        return text
    text.append(f"Guesses left: {observation.guesses_left}", style="bold")
    invalid = observation.reward_signals.invalid_count
    if invalid:
        text.append(f"   ({invalid} invalid; the game is lost at {MAX_INVALID_MOVES})", "dim")
    return text


def render_wordle(observation: WordleObservation, marks: bool = False) -> RenderableType:
    """The whole screen for one observation."""
    rows = [guess_row(guess, marks) for guess in observation.guesses]
    rows += [empty_row() for _ in range(MAX_GUESSES - len(rows))]
    title = "Wordle (hard mode)" if observation.hard_mode else "Wordle"
    board = Panel.fit(Text("\n").join(rows), title=title, padding=(1, 3))
    return Group(board, Text(), keyboard(observation.guesses, marks), Text(), status(observation))


def wordle_action(line: str) -> dict[str, Any]:
    """A typed word is a ``guess`` (the server lower-cases it and accepts ``[crane]`` too)."""
    return {"guess": line}


WORDLE = GameUI(
    render=render_wordle,
    action=wordle_action,
    ask="Your guess: ",
    hint="Type a 5-letter word and press Enter; :q quits.",
    flags={"hard": "hard_mode"},
)
