"""Wordle's evaluation view: wins, mean guesses on wins, the guess distribution (and its
plot), refused guesses, and sample transcripts.

The distribution has a column per number of guesses a win took, then ``lost`` (games the
server ended unsolved: out of guesses) and ``unfinished`` (games the model left before the
server ended them); ``lost`` counts exactly the games that "How games ended" calls lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from env_servers.wordle.game import MAX_GUESSES
from trainer.plots import MODEL_COLORS, figure, label_bars, model_name, whole_numbers
from trainer.views import Column, EvaluationView, ModelData, Record, percent

if TYPE_CHECKING:
    from env_servers.core.spec import GameSpec
    from env_servers.wordle.agent import WordleToolEnv


def distribution(episodes: list[Record]) -> dict[str, int]:
    """Games won in 1..6 guesses, ``lost`` and ``unfinished``."""
    counts = {str(n): 0 for n in range(1, MAX_GUESSES + 1)} | {"lost": 0, "unfinished": 0}
    for e in episodes:
        if e["solved"]:
            counts[str(len(e["details"]["guesses"]))] += 1
        else:
            counts["lost" if e["ended"] == "failed" else "unfinished"] += 1
    return counts


def _mean(m: ModelData) -> str:
    mean = m["mean_guesses_on_wins"]
    return "—" if mean is None else f"{mean:.2f}"


def _invalid(m: ModelData) -> str:
    share = percent(m["invalid"], m["judged_guesses"])
    return f"{share} ({m['invalid']} / {m['judged_guesses']})"


def plot_guesses(data: dict[str, Any], out_png: Path) -> Path:
    """Games won in 1..6 guesses, lost and unfinished, side by side per model."""
    models = data["models"]
    columns = list(models[0]["distribution"])
    fig, (axis,) = figure(7, 3.4)
    width = 0.8 / len(models)
    colors = MODEL_COLORS[-len(models) :]
    for index, model in enumerate(models):
        xs = [i + (index - (len(models) - 1) / 2) * width for i in range(len(columns))]
        counts = [model["distribution"][c] for c in columns]
        name = model_name(model).replace("\n", ": ")
        bars = axis.bar(xs, counts, width=width, label=name, color=colors[index])
        label_bars(axis, bars, [str(c) for c in counts])
    axis.set_xticks(range(len(columns)), columns)
    axis.set_xlabel("guesses to win")
    axis.set_ylabel("games")
    whole_numbers(axis)
    most = max(max(m["distribution"].values()) for m in models)
    axis.set_ylim(0, max(1, most) * 1.18)
    axis.legend(fontsize=8)
    axis.set_title(f"Wordle: {data['episodes']} {data['split']} words")
    fig.savefig(out_png)
    return out_png


class WordleView(EvaluationView):
    episode_word = "games"
    ending_words: Mapping[str, str] = {"solved": "won", "failed": "lost"}
    columns = (
        Column("Mean guesses (wins)", _mean),
        Column("Invalid moves", _invalid),
    )
    side_by_side = False

    def details(self, agent: WordleToolEnv, state: Any) -> dict[str, Any]:
        """The server's record of the game: accepted guesses with marks, refused guesses, and
        the secret once the game is over (a game the model left keeps it hidden)."""
        return {
            "answer": state.answer,
            "guesses": [g.model_dump() for g in state.guesses],
            "invalid": state.invalid_count,
        }

    def summary(self, episodes: list[Record]) -> dict[str, Any]:
        won = [len(e["details"]["guesses"]) for e in episodes if e["solved"]]
        invalid = sum(e["details"]["invalid"] for e in episodes)
        judged = invalid + sum(len(e["details"]["guesses"]) for e in episodes)
        return {
            "mean_guesses_on_wins": sum(won) / len(won) if won else None,
            "distribution": distribution(episodes),
            "invalid": invalid,
            "judged_guesses": judged,
            "invalid_rate": invalid / judged if judged else 0.0,
        }

    def notes(self, data: dict[str, Any]) -> list[str]:
        return ["Invalid moves: guesses the server refused, over all it ruled on."]

    def sections(self, data: dict[str, Any], output_dir: Path) -> list[str]:
        plot_guesses(data, output_dir / "guesses.png")
        columns = list(data["models"][0]["distribution"])
        lines = ["## Guess distribution", ""]
        lines += ["| Model | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
        for m in data["models"]:
            counts = " | ".join(str(m["distribution"][c]) for c in columns)
            lines.append(f"| {m['label']} | {counts} |")
        lines += [
            "",
            "Lost: out of guesses. Unfinished: the model stopped, sent a broken call or ran out "
            "of replies before the game was over.",
            "",
            "![Guess distribution](guesses.png)",
            "",
        ]
        return lines

    def outcome(self, record: Record, spec: GameSpec) -> str:
        details = record["details"]
        if record["solved"]:
            text = f"won in {len(details['guesses'])}"
        else:
            text = self.ending(record["ended"], spec)
        return f"{text} (answer: {details['answer'] or 'not revealed'})"


VIEW = WordleView()
