"""What the TextArena tests share: the offline games and a well-formed first move of each."""

from __future__ import annotations

from typing import Any

from env_servers.core.config import ServerSettings
from env_servers.core.registry import load_environment
from env_servers.core.sessions import Session, SessionManager
from env_servers.textarena.games import OFFLINE

GAMES = [f"textarena:{env_id}" for env_id in OFFLINE]
FIRST_MOVES = {
    "2048-v0": ["[Up]", "[Left]", "[Down]"],
    "Bandit-v0": ["[red]", "[blue]", "[green]"],
    "Blackjack-v0": ["[Hit]", "[Stand]", "[Stand]"],
    "Countdown-v0": ["[0 1 +]", "[0 1 *]", "[0 1 -]"],
    "Crosswords-v0": ["[0 0 A]", "[1 1 E]", "[2 2 S]"],
    "Cryptarithm-v0": ["[S 9]", "[E 5]", "[N 6]"],
    "FifteenPuzzle-v0": ["[up]", "[left]", "[down]"],
    "FrozenLake-v0": ["[right]", "[down]", "[down]"],
    "GuessTheNumber-v0": ["[10]", "[5]", "[15]"],
    "LightsOut-v0": ["[2 2]", "[0 0]", "[4 4]"],
    "LogicPuzzle-v0": ["[park Alice O]", "[park Bob X]", "[home Alice X]"],
    "Mastermind-v0": ["[1 2 3 4]", "[2 3 4 5]", "[3 4 5 6]"],
    "Minesweeper-v0": ["[3 3]", "[0 0]", "[7 7]"],
    "PegJump-v0": ["[4 1]", "[6 4]", "[1 6]"],
    "RushHour-v0": ["[A+]", "[B-]", "[X+]"],
    "Slitherlink-v0": ["[h 0 0]", "[v 0 0]", "[h 1 1]"],
    "Sudoku-v0": ["[1 1 1]", "[2 2 2]", "[3 3 3]"],
    "TowerOfHanoi-v0": ["[A C]", "[A B]", "[C B]"],
}
"""Moves in each game's format (not all legal): three, as a fixed script for every seed."""


def manager(game: str) -> SessionManager:
    return SessionManager(load_environment(game), ServerSettings())


def play(manager: SessionManager, session: Session, seed: int, moves: list[str]) -> list[Any]:
    """The dumped observations of an episode: its reset, then ``moves`` until it ends."""
    seen = [manager.reset(session, {"seed": seed}).model_dump()]
    for move in moves:
        observation = manager.step(session, {"move": move})
        seen.append(observation.model_dump())
        if observation.done:
            break
    return seen
