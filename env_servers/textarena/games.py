"""The TextArena games known to play offline here, and what a model needs to know of each.

TextArena's own prompt explains every game in full; this table adds the one line a tool's
docstring shows (the move format), whether a seed changes the episode, and what
``arenagym check`` holds the game to (its move limit, the repeat probe, the checks it fails for
a flaw of TextArena's). Data only: reading it never imports TextArena, so clients and
trainers list and declare these games without it.
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
    max_moves: int | None = None
    """The most legal moves an episode takes (None: unbounded): TextArena's turn limit under
    its registration, plus one where the game checks the limit before counting the move."""
    repeat_probe: bool = False
    """Whether repeating one move is no fair strategy (see ``GameSpec.repeat_probe``)."""

    @property
    def max_steps(self) -> int | None:
        """Most steps of an episode: TextArena forgives one invalid move in a row, so each
        legal move may follow one (and the turn limit counts legal moves only)."""
        return None if self.max_moves is None else 2 * self.max_moves


OFFLINE: dict[str, KnownGame] = {
    "2048-v0": KnownGame(
        "2048",
        "a direction in brackets: [Up], [Down], [Left] or [Right]",
        max_moves=16 * 1024 // 2,  # each move adds 2 or more to the board, < 16 * 1024 till 2048
        repeat_probe=True,
    ),
    "Bandit-v0": KnownGame(
        "Multi-armed bandit",
        "a button in brackets, e.g. [red]; at the end, the best button",
        max_moves=21,
    ),
    "Blackjack-v0": KnownGame(
        "Blackjack", "[Hit] to draw a card or [Stand] to hold", max_moves=5 * 11
    ),
    "Countdown-v0": KnownGame(
        "Countdown (TextArena's)",
        "two indices and an operation, e.g. [0 2 *] combines the numbers at indices 0 and 2",
        seeds_vary=False,
        max_moves=13,
        repeat_probe=True,
    ),
    "Crosswords-v0": KnownGame("Crosswords", "row, column and letter, e.g. [0 3 A]", max_moves=31),
    "Cryptarithm-v0": KnownGame(
        "Cryptarithm",
        "a letter and its digit, e.g. [S 9]",
        seeds_vary=False,
        max_moves=101,
        repeat_probe=True,
    ),
    "FifteenPuzzle-v0": KnownGame(
        "Fifteen puzzle",
        "the direction a tile slides: [up], [down], [left] or [right]",
        max_moves=201,
        repeat_probe=True,
    ),
    "FrozenLake-v0": KnownGame(
        "Frozen lake",
        "a step: [up], [down], [left] or [right]",
        max_moves=101,
        repeat_probe=True,
    ),
    "GuessTheNumber-v0": KnownGame(
        "Guess the number", "a number in brackets, e.g. [10]", max_moves=11
    ),
    "LightsOut-v0": KnownGame(
        "Lights out",
        "the light to press, row then column: [2 3]",
        max_moves=20,
        repeat_probe=True,
    ),
    "LogicPuzzle-v0": KnownGame(
        "Logic puzzle",
        "a row item, a column item and a mark X or O, e.g. [park Alice O]",
        max_moves=31,
        repeat_probe=True,
    ),
    "Mastermind-v0": KnownGame(
        "Mastermind",
        "the guessed code, digits separated by spaces: [1 2 3 4]",
        max_moves=21,
        repeat_probe=True,
    ),
    "Minesweeper-v0": KnownGame(
        "Minesweeper",
        "the cell to reveal, row then column: [3 2]",
        max_moves=101,
        repeat_probe=True,
    ),
    "PegJump-v0": KnownGame(
        "Peg solitaire",
        "the peg's hole and the empty hole it jumps to, e.g. [4 1]",
        seeds_vary=False,
        max_moves=13,
        repeat_probe=True,
    ),
    "RushHour-v0": KnownGame(
        "Rush hour", "a car and a direction, e.g. [A+] or [B-]", repeat_probe=True
    ),
    "Slitherlink-v0": KnownGame(
        "Slitherlink",
        "an edge to toggle: [h row col] (horizontal) or [v row col] (vertical)",
        max_moves=201,
        repeat_probe=True,
    ),
    "Sudoku-v0": KnownGame(
        "Sudoku", "row, column and digit (1-9), e.g. [5 3 7]", max_moves=101, repeat_probe=True
    ),
    "TowerOfHanoi-v0": KnownGame(
        "Tower of Hanoi",
        "the source and target towers, e.g. [A C]",
        seeds_vary=False,
        max_moves=101,
        repeat_probe=True,
    ),
}
"""The single-player games that reset with no download (no NLTK data, no network)."""

NEEDS_DOWNLOAD: dict[str, str] = {
    "Wordle-v0": "python -m nltk.downloader words averaged_perceptron_tagger_eng",
}
"""Games known to need data fetched at run time, and the command that fetches it."""

CHECK_FAILURES: dict[str, dict[str, str]] = {
    "Cryptarithm-v0": {
        "probe_repeat_move": "TextArena pays a complete but wrong mapping 0 and the turn limit "
        "its progress: one letter assigned again and again (1/8) out-earns random play"
    },
    "Minesweeper-v0": {
        "random_moves_legal": "TextArena counts a step on a mine as an invalid move (forgiven "
        "once, like any): no move that reveals a cell is legal for sure, so random play is not"
    },
}
"""Checks of ``arenagym check`` that a game fails for a flaw of TextArena's own, and why."""
