"""A family of games: many games made from one adapter, named ``<family>:<member>``.

Some games come in bulk from another library (TextArena's dozens of environments): writing a
folder per game would repeat the same adapter. A family is registered once, under the
``arenagym.families`` entry-point group, and makes each member's ``GameSpec`` on demand::

    [project.entry-points."arenagym.families"]
    textarena = "env_servers.textarena.spec:FAMILY"

so ``textarena:Mastermind-v0`` is a game name wherever one is accepted. ``listed`` members are
those ``game_names()`` shows (e.g. the ones known to work offline); ``spec`` may also accept
members it does not list, and raises ``LookupError`` or ``ValueError`` with a message that
says what to do for a member it cannot make.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from env_servers.core.spec import GameSpec

SEPARATOR = ":"
"""Between a family's name and its member's: ``textarena:Mastermind-v0``."""


@dataclass(frozen=True, kw_only=True)
class GameFamily:
    """The declaration of a family of games. Making a member's spec must not import the
    library the games come from (clients and trainers read specs without it)."""

    name: str
    description: str
    listed: Callable[[], Sequence[str]]
    """The members ``game_names()`` lists, without the family prefix."""
    spec: Callable[[str], GameSpec]
    """A member's name (no prefix) → its declaration, named ``<family>:<member>``."""

    def game_name(self, member: str) -> str:
        return f"{self.name}{SEPARATOR}{member}"


def split_name(game: str) -> tuple[str, str] | None:
    """``"family:member"`` → ``("family", "member")``; None for a plain game name."""
    family, separator, member = game.partition(SEPARATOR)
    return (family, member) if separator and family and member else None
