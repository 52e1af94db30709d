"""TextArena games for language-model agents: one tool, ``move(move)``, whose docstring gives the
game's move format (made per game by :func:`agent_type`)."""

from __future__ import annotations

from typing import Any

from clients.agent import GameAgent
from env_servers.textarena.models import TextArenaObservation

MOVE_DOC = """Make one move in {title}.

Args:
    move: The move, {moves}.

Returns:
    What the game answers: the board, the verdict on the move, and the end of the game.
"""


class TextArenaAgent(GameAgent):
    """A TextArena game played through ``move``; its attributes are what the rewards read."""

    def _clear(self) -> None:
        self.solved = False
        self.score: float | None = None
        """TextArena's own reward at the end (1.0 for a win), None before."""
        self.invalid_count = 0
        self.turns = 0

    def _opening(self, observation: TextArenaObservation) -> str:
        return f"\n\n{observation.prompt}\n{observation.feedback}".rstrip()

    def _move(self, action: str) -> str:
        result = self._step({"move": action})
        observation: TextArenaObservation = result.observation
        lines = [observation.feedback] if observation.feedback else []
        if observation.invalid_move and not result.done:
            lines.append(f"Invalid move: {observation.reason} Try another move.")
        if result.done:
            lines.append(f"The game is over: {observation.reason or 'finished'}.")
        return "\n".join(lines) or "(no reply)"

    def _record(self, observation: TextArenaObservation) -> None:
        self.solved = observation.solved
        self.score = observation.score
        self.invalid_count = observation.invalid_count
        self.turns = observation.turn


def agent_type(game: str, title: str, moves: str) -> type[TextArenaAgent]:
    """The agent class of one game, its ``move`` tool documented with the game's format."""

    def move(self, move: str) -> str:  # ``self`` unannotated: TRL makes a schema of each hint
        agent: TextArenaAgent = self
        return agent._move(move)

    move.__doc__ = MOVE_DOC.format(title=title, moves=moves)
    namespace: dict[str, Any] = {"_game": game, "move": move, "__module__": __name__}
    return type("TextArenaToolEnv", (TextArenaAgent,), namespace)
