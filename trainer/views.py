"""A game's evaluation view: what it adds to the generic evaluation and its report.

Evaluation and its report know no game. A game that wants more than the generic report (a
rates table, base-vs-trained buckets, how episodes ended, a side-by-side table, sample
transcripts, a training curve) declares an :class:`EvaluationView` in its own folder and
names it in its spec (``evaluation="package.module:VIEW"``). Every hook has a default, so a
view overrides only what it needs, and a game without one gets the generic report.

Hooks read the JSON-ready data written to ``results.json`` (never live objects), so a report
can be redrawn from that file and cannot disagree with it; only :meth:`details` sees the
finished episode's agent and server state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from env_servers.core.spec import GameSpec

Record = dict[str, Any]
"""One episode in ``results.json``: ``seed``, ``sample``, ``solved``, ``ended``, …, ``details``."""
ModelData = dict[str, Any]
"""One model in ``results.json``: identity, rates, the view's summary, ``episodes``."""


@dataclass(frozen=True, slots=True)
class Column:
    """An extra column of the rates table (and of the terminal summary when ``terminal``)."""

    header: str
    cell: Callable[[ModelData], str]
    terminal: bool = True


@dataclass(frozen=True, slots=True)
class EpisodeColumn:
    """An extra column of the side-by-side table: what the episode was (e.g. its numbers)."""

    header: str
    cell: Callable[[Record], str]
    align: str = "---"


class EvaluationView:
    """The generic view; games subclass it. Class attributes are the simple choices, methods
    the computed parts."""

    episode_word: str = "episodes"
    """What the report calls an episode in prose ("games")."""
    ending_words: Mapping[str, str] = {}
    """How endings are called, where the generic names do not fit (``{"failed": "lost"}``)."""
    columns: tuple[Column, ...] = ()
    episode_columns: tuple[EpisodeColumn, ...] = ()
    side_by_side: bool = True
    """Whether the report lists every episode, each model's outcome side by side."""
    transcripts: int = 2
    """Sample transcripts per model (a solved one first, if any); 0 for none."""

    def details(self, agent: Any, state: Any) -> dict[str, Any]:
        """What to keep of a finished episode beyond the generic record (JSON-ready), from
        the game's agent (a ``clients.agent.GameAgent``) and the server's state."""
        return {}

    def summary(self, episodes: list[Record]) -> dict[str, Any]:
        """A model's extra aggregates, from its first-sample records."""
        return {}

    def notes(self, data: dict[str, Any]) -> list[str]:
        """Sentences under the rates table: what the extra columns mean."""
        return []

    def sections(self, data: dict[str, Any], output_dir: Path) -> list[str]:
        """Extra Markdown sections, before the training curve; may draw plots into
        ``output_dir`` and link them."""
        return []

    def answer(self, record: Record, spec: GameSpec) -> str:
        """One model's cell for an episode in the side-by-side table."""
        mark = "✓" if record["solved"] else "✗"
        return f"{mark} {self.ending(record['ended'], spec)}"

    def outcome(self, record: Record, spec: GameSpec) -> str:
        """A sample transcript's heading after the seed."""
        return self.ending(record["ended"], spec)

    def ending(self, name: str, spec: GameSpec) -> str:
        if name in self.ending_words:
            return self.ending_words[name]
        return spec.solved_word if name == "solved" else name.replace("_", " ")


def load_view(spec: GameSpec) -> EvaluationView:
    """The game's view (``spec.evaluation``), or the generic one."""
    if spec.evaluation is None:
        return EvaluationView()
    from env_servers.core.spec import load_attribute

    view = load_attribute(spec.evaluation)
    if not isinstance(view, EvaluationView):
        raise TypeError(
            f"{spec.name}'s evaluation {spec.evaluation!r} must name an EvaluationView "
            f"instance (trainer.views), got {view!r}."
        )
    return view


def rate_name(word: str) -> str:
    """``won`` → ``win rate``, ``solved`` → ``solve rate``: the rate of a solved word."""
    return {"won": "win rate", "solved": "solve rate"}.get(word, f"{word} rate")


def percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def cell(text: str) -> str:
    """Text safe in a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")
