"""The TextArena games known to play offline here, and what a model needs to know of each.

TextArena's own prompt explains every game in full; this table adds the one line a tool's
docstring shows (the move format), and whether a seed changes the episode. Data only: reading
it never imports TextArena, so clients and trainers list and declare these games without it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KnownGame:
    """What arenagym adds to a TextArena environment id."""

    title: str
    moves: str
    """The move format, for the ``move`` tool's docstring."""
    seeds_vary: bool = True
    """False for a game that always starts the same, whatever the seed."""


OFFLINE: dict[str, KnownGame] = {
    "2048-v0": KnownGame("2048", "a direction in brackets: [Up], [Down], [Left] or [Right]"),
    "Bandit-v0": KnownGame(
        "Multi-armed bandit", "a button in brackets, e.g. [red]; at the end, the best button"
    ),
    "Blackjack-v0": KnownGame("Blackjack", "[Hit] to draw a card or [Stand] to hold"),
    "Countdown-v0": KnownGame(
        "Countdown (TextArena's)",
        "two indices and an operation, e.g. [0 2 *] combines the numbers at indices 0 and 2",
        seeds_vary=False,
    ),
    "Crosswords-v0": KnownGame("Crosswords", "row, column and letter, e.g. [0 3 A]"),
    "Cryptarithm-v0": KnownGame(
        "Cryptarithm", "a letter and its digit, e.g. [S 9]", seeds_vary=False
    ),
    "FifteenPuzzle-v0": KnownGame(
        "Fifteen puzzle", "the direction a tile slides: [up], [down], [left] or [right]"
    ),
    "FrozenLake-v0": KnownGame("Frozen lake", "a step: [up], [down], [left] or [right]"),
    "GuessTheNumber-v0": KnownGame("Guess the number", "a number in brackets, e.g. [10]"),
    "LightsOut-v0": KnownGame("Lights out", "the light to press, row then column: [2 3]"),
    "LogicPuzzle-v0": KnownGame(
        "Logic puzzle", "a row item, a column item and a mark X or O, e.g. [park Alice O]"
    ),
    "Mastermind-v0": KnownGame(
        "Mastermind", "the guessed code, digits separated by spaces: [1 2 3 4]"
    ),
    "Minesweeper-v0": KnownGame("Minesweeper", "the cell to reveal, row then column: [3 2]"),
    "PegJump-v0": KnownGame(
        "Peg solitaire",
        "the peg's hole and the empty hole it jumps to, e.g. [4 1]",
        seeds_vary=False,
    ),
    "RushHour-v0": KnownGame("Rush hour", "a car and a direction, e.g. [A+] or [B-]"),
    "Slitherlink-v0": KnownGame(
        "Slitherlink", "an edge to toggle: [h row col] (horizontal) or [v row col] (vertical)"
    ),
    "Sudoku-v0": KnownGame("Sudoku", "row, column and digit (1-9), e.g. [5 3 7]"),
    "TowerOfHanoi-v0": KnownGame(
        "Tower of Hanoi", "the source and target towers, e.g. [A C]", seeds_vary=False
    ),
}
"""The single-player games that reset with no download (no NLTK data, no network)."""

NEEDS_DOWNLOAD: dict[str, str] = {
    "Wordle-v0": "python -m nltk.downloader words averaged_perceptron_tagger_eng",
}
"""Games known to need data fetched at run time, and the command that fetches it."""
