"""Random legal moves of the TextArena games, for ``arenagym check``'s random-play baseline.

Each reads only the observation (TextArena's last ``board``, kept after an invalid move, and
the ``moves`` taken) and draws only from ``rng``, so a seed replays it; data only, no
TextArena import (clients and the checker read it). A game is here only when a move read off its observation
is always legal (but Minesweeper's, see there); Crosswords has none (a letter is legal only
if it is right).
"""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

from env_servers.core.spec import RandomMove

BANDIT_BUTTONS = ("red", "blue", "green", "yellow", "purple")
"""TextArena's Bandit-v0 buttons (its registration)."""
LIGHTS_SIZE = 5
SLITHERLINK_SIZE = 4
DIRECTIONS = ("up", "down", "left", "right")


def _move(text: str) -> dict[str, Any]:
    return {"move": f"[{text}]"}


def bandit(observation: Any, rng: random.Random) -> dict[str, Any]:
    """Any button, any time."""
    return _move(rng.choice(BANDIT_BUTTONS))


def blackjack(observation: Any, rng: random.Random) -> dict[str, Any]:
    return _move(rng.choice(("Hit", "Stand")))


def lights_out(observation: Any, rng: random.Random) -> dict[str, Any]:
    """Any light of the 5x5 grid."""
    return _move(f"{rng.randrange(LIGHTS_SIZE)} {rng.randrange(LIGHTS_SIZE)}")


def slitherlink(observation: Any, rng: random.Random) -> dict[str, Any]:
    """Any edge of the 4x4 grid: toggling one is always legal."""
    size = SLITHERLINK_SIZE
    if rng.random() < 0.5:
        return _move(f"h {rng.randrange(size + 1)} {rng.randrange(size)}")
    return _move(f"v {rng.randrange(size)} {rng.randrange(size + 1)}")


def fifteen_puzzle(observation: Any, rng: random.Random) -> dict[str, Any]:
    """One of the moves the board lists as available."""
    listed = re.search(r"Available Moves:(.*)", observation.board)
    moves = re.findall(r"\[(\w+)\]", listed[1]) if listed else []
    return _move(rng.choice(moves or list(DIRECTIONS)))


def _grid(board: str) -> list[list[str]]:
    """The cells of a board drawn as ``|  P  |     |``, row by row."""
    rows = [line for line in board.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def frozen_lake(observation: Any, rng: random.Random) -> dict[str, Any]:
    """A step that stays on the board (a hole is a legal, if fatal, step)."""
    grid = _grid(observation.board)
    row, col = next((r, c) for r, cells in enumerate(grid) for c, v in enumerate(cells) if v == "P")
    steps = {"up": (row - 1, col), "down": (row + 1, col), "left": (row, col - 1)}
    steps["right"] = (row, col + 1)
    inside = [d for d, (r, c) in steps.items() if 0 <= r < len(grid) and 0 <= c < len(grid[0])]
    return _move(rng.choice(inside))


def _tiles(board: str) -> list[list[int]]:
    """2048's tiles (0 for an empty cell) from rows drawn as ``|  2      .   |``."""
    rows = [line.strip("|").split() for line in board.splitlines() if line.startswith("|")]
    return [[int(v) if v.isdigit() else 0 for v in row] for row in rows]


def _slides(line: list[int]) -> bool:
    """Whether sliding ``line`` towards its start changes it."""
    tiles = [v for v in line if v]
    return tiles != line[: len(tiles)] or any(a == b for a, b in itertools.pairwise(tiles))


def game_2048(observation: Any, rng: random.Random) -> dict[str, Any]:
    """A direction that changes the board (one that does not is an invalid move)."""
    rows = _tiles(observation.board)
    columns = [list(column) for column in zip(*rows, strict=True)]
    lines = {
        "Left": rows,
        "Right": [row[::-1] for row in rows],
        "Up": columns,
        "Down": [column[::-1] for column in columns],
    }
    moves = [name for name, of in lines.items() if any(_slides(line) for line in of)]
    return _move(rng.choice(moves))


def tower_of_hanoi(observation: Any, rng: random.Random) -> dict[str, Any]:
    """A top disk onto an empty tower or a bigger disk."""
    towers = {
        name: [int(d) for d in re.findall(r"\d+", disks)]
        for name, disks in re.findall(r"^([ABC]): \[(.*)\]", observation.board, re.M)
    }
    moves = [
        f"{a} {b}"
        for a in towers
        for b in towers
        if a != b and towers[a] and (not towers[b] or towers[b][-1] > towers[a][-1])
    ]
    return _move(rng.choice(moves))


def minesweeper(observation: Any, rng: random.Random) -> dict[str, Any]:
    """A cell not revealed yet. Legal but for a mine, which TextArena counts as an invalid
    move: so this game fails the checker's "random moves are legal"."""
    rows = re.findall(r"^ *(\d+)((?: +[.\dF])+) *$", observation.board, re.M)[1:]
    hidden = [
        f"{row} {col}" for row, cells in rows for col, v in enumerate(cells.split()) if v == "."
    ]
    return _move(rng.choice(hidden))


def guess_the_number(observation: Any, rng: random.Random) -> dict[str, Any]:
    """A number of 1 to 20 not guessed yet."""
    guessed = set(observation.moves)
    return _move(str(rng.choice([n for n in range(1, 21) if f"[{n}]" not in guessed])))


def mastermind(observation: Any, rng: random.Random) -> dict[str, Any]:
    """Four different digits of 1 to 6, a code not guessed yet."""
    while (code := " ".join(map(str, rng.sample(range(1, 7), 4)))) in _inner(observation.moves):
        pass
    return _move(code)


def _inner(moves: list[str]) -> set[str]:
    return {move.strip().strip("[]") for move in moves}


def logic_puzzle(observation: Any, rng: random.Random) -> dict[str, Any]:
    """A row item, a column item of the same grid, and a mark the cell does not hold."""
    cells = []
    for table in re.split(r"^=+\n[^=]*\n=+$", observation.board, flags=re.M)[1:]:
        lines = [line for line in table.splitlines() if "|" in line]
        if not lines:
            continue
        columns = [name.strip() for name in lines[0].split("|")[:-1]]
        for line in lines[1:]:
            row, *marks = (part.strip() for part in line.split("|"))
            label, _, first = row.partition(" ")
            marks = [first.strip(), *marks]
            for column, mark in zip(columns, marks, strict=False):
                cells += [(label, column, m) for m in "XO" if mark != m]
    row, column, mark = rng.choice(cells)
    return _move(f"{row} {column} {mark}")


def _solve(grid: list[list[int]]) -> bool:
    """Fill ``grid`` (0 for empty) with a Sudoku solution, in place: the most constrained
    cell first, so a puzzle of TextArena's size takes milliseconds."""
    best: tuple[int, int, set[int]] | None = None
    for r in range(9):
        for c in range(9):
            if grid[r][c]:
                continue
            box = {
                grid[i][j]
                for i in range(r - r % 3, r - r % 3 + 3)
                for j in range(c - c % 3, c - c % 3 + 3)
            }
            used = set(grid[r]) | {grid[i][c] for i in range(9)} | box
            options = set(range(1, 10)) - used
            if best is None or len(options) < len(best[2]):
                best = (r, c, options)
    if best is None:
        return True
    r, c, options = best
    for digit in sorted(options):
        grid[r][c] = digit
        if _solve(grid):
            return True
    grid[r][c] = 0
    return False


def sudoku(observation: Any, rng: random.Random) -> dict[str, Any]:
    """An empty cell and its digit in the solution (TextArena's puzzles have one solution, and
    it takes only the solution's digit)."""
    rows = [line.split()[1:] for line in observation.board.splitlines() if re.match(r"R\d", line)]
    grid = [[int(v) if v.isdigit() else 0 for v in row if v != "|"] for row in rows]
    empty = [(r, c) for r in range(9) for c in range(9) if not grid[r][c]]
    _solve(grid)
    r, c = rng.choice(empty)
    return _move(f"{r + 1} {c + 1} {grid[r][c]}")


CRYPTARITHM = "SEND + MORE = MONEY"
"""TextArena's Cryptarithm-v0 equation (its registration)."""


def cryptarithm(observation: Any, rng: random.Random) -> dict[str, Any]:
    """A letter of the equation and a digit no other letter holds (no leading zero), the
    letters' digits replayed from the moves taken."""
    words = re.findall(r"[A-Z]+", CRYPTARITHM)
    mapping: dict[str, str] = {}
    for move in observation.moves:  # in order: a later move re-assigns a letter
        letter, digit = move.strip().strip("[]").split()
        mapping[letter.upper()] = digit
    letter = rng.choice(sorted(set("".join(words))))
    taken = {digit for other, digit in mapping.items() if other != letter}
    lowest = 1 if any(word[0] == letter for word in words) else 0
    digits = [str(d) for d in range(lowest, 10) if str(d) not in taken]
    return _move(f"{letter} {rng.choice(digits)}")


PEG_JUMPS = (
    (1, 2, 4), (1, 3, 6), (2, 4, 7), (2, 5, 9), (3, 5, 8), (3, 6, 10), (4, 5, 6), (4, 7, 11),
    (4, 8, 13), (5, 8, 12), (5, 9, 14), (6, 9, 13), (6, 10, 15), (7, 8, 9), (7, 11, 13),
    (8, 9, 10), (8, 12, 14), (9, 12, 13), (9, 13, 15), (10, 9, 8),
)  # fmt: skip
"""TextArena's PegJump-v0 jumps (from, over, to), each also taken backwards."""


def peg_jump(observation: Any, rng: random.Random) -> dict[str, Any]:
    """A peg over a peg into an empty hole, of the jumps TextArena allows."""
    holes = {int(n): peg == "●" for n, peg in re.findall(r"(\d+)([●○])", observation.board)}
    jumps = {*PEG_JUMPS, *((c, b, a) for a, b, c in PEG_JUMPS)}
    legal = [(a, c) for a, b, c in sorted(jumps) if holes[a] and holes[b] and not holes[c]]
    a, c = rng.choice(legal)
    return _move(f"{a} {c}")


RUSH_HOUR_SIZE = 6


def rush_hour(observation: Any, rng: random.Random) -> dict[str, Any]:
    """A car one cell forward (right or down, ``+``) or back (``-``) into a free cell."""
    rows = [line.split()[:RUSH_HOUR_SIZE] for line in observation.board.splitlines()]
    grid = [row for row in rows if len(row) == RUSH_HOUR_SIZE]
    cars: dict[str, list[tuple[int, int]]] = {}
    for r, row in enumerate(grid):
        for c, cell in enumerate(row):
            if cell != ".":
                cars.setdefault(cell, []).append((r, c))

    def free(r: int, c: int) -> bool:
        return 0 <= r < RUSH_HOUR_SIZE and 0 <= c < RUSH_HOUR_SIZE and grid[r][c] == "."

    moves = []
    for car, cells in sorted(cars.items()):
        (r0, c0), (r1, c1) = min(cells), max(cells)
        across = r0 == r1
        ahead, behind = ((r0, c1 + 1), (r0, c0 - 1)) if across else ((r1 + 1, c0), (r0 - 1, c0))
        moves += [f"{car}+"] if free(*ahead) else []
        moves += [f"{car}-"] if free(*behind) else []
    return _move(rng.choice(moves))


def countdown(observation: Any, rng: random.Random) -> dict[str, Any]:
    """Two of the numbers left, added (an addition is always legal)."""
    count = len(re.findall(r"^\s*\[\d+\]", observation.board, re.M))
    i, j = rng.sample(range(count), 2)
    return _move(f"{i} {j} +")


MOVES: dict[str, RandomMove] = {
    "2048-v0": game_2048,
    "Bandit-v0": bandit,
    "Blackjack-v0": blackjack,
    "Countdown-v0": countdown,
    "Cryptarithm-v0": cryptarithm,
    "FifteenPuzzle-v0": fifteen_puzzle,
    "FrozenLake-v0": frozen_lake,
    "GuessTheNumber-v0": guess_the_number,
    "LightsOut-v0": lights_out,
    "LogicPuzzle-v0": logic_puzzle,
    "Mastermind-v0": mastermind,
    "PegJump-v0": peg_jump,
    "RushHour-v0": rush_hour,
    "Minesweeper-v0": minesweeper,
    "Slitherlink-v0": slitherlink,
    "Sudoku-v0": sudoku,
    "TowerOfHanoi-v0": tower_of_hanoi,
}
