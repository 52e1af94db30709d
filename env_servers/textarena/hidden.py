"""What a TextArena game hides from its player, as text shown once the episode is over.

TextArena keeps a game's secret in its env (the code, the number, the mines); the adapter
puts it in the final observation's ``secret``, so the checker tells apart episodes that differ
only there, and sees that nothing before the end gave it away. A game that hides nothing has
no entry here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Secret = Callable[[Any], str | None]
"""TextArena's (unwrapped) env at the end of an episode → its hidden information as text."""


def _best_button(env: Any) -> str:
    truth: dict[str, float] = env.state.game_state["ground_truth"]
    return max(truth, key=lambda button: truth[button])


def _mines(env: Any) -> str | None:
    """Mines are laid at the first reveal: an episode over before it has none."""
    cells = [f"{r} {c}" for r, row in enumerate(env.grid) for c, v in enumerate(row) if v == -1]
    return "mines at " + ", ".join(cells) if cells else None


def _words(env: Any) -> str:
    return ", ".join(sorted(env.state.game_state["placed_words"]))


def _sudoku(env: Any) -> str:
    """The solution, row by row."""
    return " ".join("".join(map(str, row)) for row in env.full_grid)


SECRETS: dict[str, Secret] = {
    "Bandit-v0": _best_button,
    "Crosswords-v0": _words,
    "GuessTheNumber-v0": lambda env: str(env.state.game_state["game_number"]),
    "Mastermind-v0": lambda env: " ".join(map(str, env.state.game_state["secret_code"])),
    "LogicPuzzle-v0": lambda env: json.dumps(env.game_board_solution, sort_keys=True),
    "Minesweeper-v0": _mines,
    "Sudoku-v0": _sudoku,
}


def secret_of(env_id: str, env: Any) -> str | None:
    """The hidden information of a finished episode of ``env_id`` (None if it hides none)."""
    secret = SECRETS.get(env_id)
    while secret is not None and hasattr(env, "env"):  # TextArena's wrappers
        env = env.env
    return None if secret is None else secret(env)
