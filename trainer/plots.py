"""Plots of evaluation reports and training runs, as PNG files.

Figures are drawn with matplotlib's object API on an Agg canvas: no display needed, and no
global backend switched under a caller. Every plot reads the JSON-ready data of
``results.json`` (or a run's ``metrics.jsonl``), never live objects.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trainer.views import rate_name

BUCKET_TITLES = {
    "fixed": "Fixed (base failed, trained solved)",
    "both_solved": "Both solved",
    "both_failed": "Both failed",
    "regressed": "Regressed (base solved, trained failed)",
}
BUCKET_COLORS = {
    "fixed": "#2e7d32",
    "both_solved": "#81c784",
    "both_failed": "#bdbdbd",
    "regressed": "#c62828",
}
MODEL_COLORS = ("#607d8b", "#1565c0")
LINE_COLORS = ("#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#ad1457")


def figure(width: float, height: float, rows: int = 1) -> tuple[Any, Any]:
    """A figure on an Agg canvas and its ``rows`` axes (sharing x)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return fig, axes


def whole_numbers(axis: Any, which: str = "y") -> None:
    from matplotlib.ticker import MaxNLocator

    getattr(axis, f"{which}axis").set_major_locator(MaxNLocator(integer=True))


def label_bars(axis: Any, bars: Any, texts: Iterable[str]) -> None:
    for bar, text in zip(bars, texts, strict=True):
        axis.annotate(
            text,
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            xytext=(0, 2),
            textcoords="offset points",
            fontsize=9,
        )


def model_name(model: dict[str, Any]) -> str:
    return f"{model['label']}\n{Path(model['model']).name or model['model']}"


def plot_buckets(data: dict[str, Any], unit: str, out_png: Path) -> Path:
    """Base vs trained: episodes per bucket."""
    counts = data["bucket_counts"]
    fig, (axis,) = figure(7, 3.6)
    names = [BUCKET_TITLES[name].replace(" (", "\n(") for name in BUCKET_TITLES]
    bars = axis.bar(names, [counts[b] for b in BUCKET_TITLES], color=list(BUCKET_COLORS.values()))
    label_bars(axis, bars, [str(counts[b]) for b in BUCKET_TITLES])
    axis.set_ylabel(unit)
    whole_numbers(axis)
    axis.set_ylim(0, max(1, *counts.values()) * 1.15)
    axis.tick_params(axis="x", labelsize=8)
    game = data["game"].capitalize()
    axis.set_title(f"{game}, base vs trained: {data['episodes']} {data['split']} {unit}")
    fig.savefig(out_png)
    return out_png


def plot_rates(data: dict[str, Any], key: str, title: str, out_png: Path) -> Path:
    """One bar per model: its rate under ``key`` (e.g. ``solve_rate``)."""
    models = data["models"]
    fig, (axis,) = figure(1.8 + 1.6 * len(models), 3.4)
    bars = axis.bar(
        [model_name(m) for m in models],
        [100 * m[key] for m in models],
        color=MODEL_COLORS[-len(models) :],
        width=0.6,
    )
    label_bars(axis, bars, [f"{100 * m[key]:.1f}%" for m in models])
    axis.set_ylim(0, 105)
    axis.set_ylabel("%")
    axis.tick_params(axis="x", labelsize=8)
    axis.set_title(title, fontsize=10)
    fig.savefig(out_png)
    return out_png


# -- training curves -----------------------------------------------------------------------


def read_metrics(metrics_path: str | Path) -> list[dict[str, Any]]:
    """The objects of a JSON-lines metrics file. Lines that do not parse are skipped: the last
    one is often cut short when a run is stopped while writing."""
    rows = []
    for line in Path(metrics_path).read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _series(rows: list[dict[str, Any]], key: str) -> tuple[list[float], list[float]]:
    points = [
        (float(row["step"]), float(row[key]))
        for row in rows
        if isinstance(row.get("step"), int | float)
        and isinstance(row.get(key), int | float)
        and math.isfinite(row[key])
    ]
    return [x for x, _ in points], [y for _, y in points]


def has_training_curve(metrics_path: str | Path) -> bool:
    """Whether ``plot_training`` can draw this file (it exists and logs a reward)."""
    path = Path(metrics_path)
    return path.is_file() and bool(_series(read_metrics(path), "reward")[0])


def solved_words(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Registered game → its solved word, for the games a metrics file logs (their solved
    reward ``rewards/<game>_<solved>/mean``, or their ``solve_rate/<game>``)."""
    from env_servers.core.registry import UnknownGame, game_names, load_spec

    present = {key for row in rows for key in row}
    words = {}
    for game in game_names():
        try:
            spec = load_spec(game)
        except UnknownGame:
            continue  # a broken third-party registration must not break a plot
        if {f"rewards/{game}_{spec.solved}/mean", f"solve_rate/{game}"} & present:
            words[game] = spec.solved_word
    return words


def rate_series(rows: list[dict[str, Any]]) -> dict[str, tuple[list[float], list[float]]]:
    """The solve-rate lines to draw: one per game in a mixed run (``solve_rate/<game>``),
    else ``solve_rate``, else (older files) each game's solved reward."""
    keys = sorted({key for row in rows for key in row if key.startswith("solve_rate/")})
    per_game = {key.removeprefix("solve_rate/"): _series(rows, key) for key in keys}
    per_game = {game: series for game, series in per_game.items() if series[0]}
    if per_game:
        return per_game
    if _series(rows, "solve_rate")[0]:
        return {"": _series(rows, "solve_rate")}
    from env_servers.core.registry import load_spec

    lines = {}
    for game in solved_words(rows):
        series = _series(rows, f"rewards/{game}_{load_spec(game).solved}/mean")
        if series[0]:
            lines[game] = series
    if len(lines) == 1:
        return {"": next(iter(lines.values()))}
    return lines


def plot_training(metrics_path: str | Path, out_png: str | Path) -> Path:
    """Reward over training steps (with its spread when ``reward_std`` was logged) and, below,
    the solve rate when the file has one (one line per game in a mixed run), called as the
    games call it ("win rate" where every game logged says "won"). Raises ``ValueError``
    when no line has both ``step`` and ``reward``."""
    rows = read_metrics(metrics_path)
    steps, rewards = _series(rows, "reward")
    if not steps:
        raise ValueError(f"{metrics_path} has no line with both 'step' and 'reward' to plot.")
    rates = rate_series(rows)
    fig, axes = figure(7, 5.2 if rates else 3.2, rows=2 if rates else 1)
    axis = axes[0]
    axis.plot(steps, rewards, color=MODEL_COLORS[1], marker="." if len(steps) < 40 else None)
    std_steps, stds = _series(rows, "reward_std")
    if std_steps == steps:
        low = [r - s for r, s in zip(rewards, stds, strict=True)]
        high = [r + s for r, s in zip(rewards, stds, strict=True)]
        axis.fill_between(steps, low, high, color=MODEL_COLORS[1], alpha=0.15, label="± std")
        axis.legend(fontsize=8)
    axis.set_ylabel("reward")
    axis.set_title("Training")
    axis.grid(alpha=0.3)
    if rates:
        words = set(solved_words(rows).values())
        label = rate_name(words.pop() if len(words) == 1 else "solved")
        for index, (game, (xs, ys)) in enumerate(rates.items()):
            color = LINE_COLORS[index % len(LINE_COLORS)]
            axes[1].plot(xs, [100 * y for y in ys], color=color, marker=".", label=game or None)
        if len(rates) > 1:
            axes[1].legend(fontsize=8)
        axes[1].set_ylabel(f"{label} (%)")
        axes[1].set_ylim(-2, 102)
        axes[1].grid(alpha=0.3)
    axes[-1].set_xlabel("step")
    whole_numbers(axes[-1], "x")
    out_png = Path(out_png)
    fig.savefig(out_png)
    return out_png
