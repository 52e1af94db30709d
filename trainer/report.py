"""Reports of an evaluation: ``results.json``, ``report.md`` with PNG plots, and a terminal
summary; and the training curves from a run's ``metrics.jsonl``.

The Markdown and the plots are drawn from the very dict written to ``results.json``, so the
report cannot disagree with the per-puzzle results. Figures are drawn with matplotlib's
object API on an Agg canvas: no display needed, and no global backend switched under a caller.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trainer.evaluate import BUCKETS, CountdownEval, WordleEval

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
ENDINGS = ("won", "lost", "no_tool_call", "broken_call", "max_turns")
RATE_KEYS = {
    "solve_rate": "solve rate",
    "win_rate": "win rate",
    "rewards/countdown_correct/mean": "solve rate",
    "rewards/countdown_solved/mean": "solve rate",
    "rewards/wordle_correct/mean": "win rate",
}
"""Series drawn under the reward curve, the first one a metrics file has."""
SAMPLE_TRANSCRIPTS = 2


def _figure(width: float, height: float, rows: int = 1) -> tuple[Any, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=120, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return figure, axes


def _whole_numbers(axis: Any, which: str = "y") -> None:
    from matplotlib.ticker import MaxNLocator

    getattr(axis, f"{which}axis").set_major_locator(MaxNLocator(integer=True))


def _label_bars(axis: Any, bars: Any, texts: Iterable[str]) -> None:
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


def _model_name(model: dict[str, Any]) -> str:
    return f"{model['label']}\n{Path(model['model']).name or model['model']}"


def plot_buckets(data: dict[str, Any], out_png: Path) -> Path:
    counts = data["bucket_counts"]
    figure, (axis,) = _figure(7, 3.6)
    names = [BUCKET_TITLES[name].replace(" (", "\n(") for name in BUCKETS]
    bars = axis.bar(names, [counts[b] for b in BUCKETS], color=[BUCKET_COLORS[b] for b in BUCKETS])
    _label_bars(axis, bars, [str(counts[b]) for b in BUCKETS])
    axis.set_ylabel("puzzles")
    _whole_numbers(axis)
    axis.set_ylim(0, max(1, *counts.values()) * 1.15)
    axis.tick_params(axis="x", labelsize=8)
    axis.set_title(f"Countdown, base vs trained: {data['episodes']} {data['split']} puzzles")
    figure.savefig(out_png)
    return out_png


def plot_rates(data: dict[str, Any], key: str, title: str, out_png: Path) -> Path:
    """One bar per model: its solve rate (Countdown) or win rate (Wordle)."""
    models = data["models"]
    figure, (axis,) = _figure(1.8 + 1.6 * len(models), 3.4)
    bars = axis.bar(
        [_model_name(m) for m in models],
        [100 * m[key] for m in models],
        color=MODEL_COLORS[-len(models) :],
        width=0.6,
    )
    _label_bars(axis, bars, [f"{100 * m[key]:.1f}%" for m in models])
    axis.set_ylim(0, 105)
    axis.set_ylabel("%")
    axis.tick_params(axis="x", labelsize=8)
    axis.set_title(title, fontsize=10)
    figure.savefig(out_png)
    return out_png


def plot_guesses(data: dict[str, Any], out_png: Path) -> Path:
    """Wordle: games won in 1..6 guesses and games lost, side by side per model."""
    models = data["models"]
    columns = list(models[0]["distribution"])
    figure, (axis,) = _figure(7, 3.4)
    width = 0.8 / len(models)
    for index, model in enumerate(models):
        xs = [i + (index - (len(models) - 1) / 2) * width for i in range(len(columns))]
        counts = [model["distribution"][c] for c in columns]
        bars = axis.bar(
            xs,
            counts,
            width=width,
            label=_model_name(model).replace("\n", ": "),
            color=MODEL_COLORS[-len(models) :][index],
        )
        _label_bars(axis, bars, [str(c) for c in counts])
    axis.set_xticks(range(len(columns)), columns)
    axis.set_xlabel("guesses to win")
    axis.set_ylabel("games")
    _whole_numbers(axis)
    most = max(max(m["distribution"].values()) for m in models)
    axis.set_ylim(0, max(1, most) * 1.18)
    axis.legend(fontsize=8)
    axis.set_title(f"Wordle: {data['episodes']} {data['split']} words")
    figure.savefig(out_png)
    return out_png


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


def plot_training(metrics_path: str | Path, out_png: str | Path) -> Path:
    """Reward over training steps (with its spread when ``reward_std`` was logged) and, below,
    the solve or win rate when the file has one. Raises ``ValueError`` when no line has both
    ``step`` and ``reward``."""
    rows = read_metrics(metrics_path)
    steps, rewards = _series(rows, "reward")
    if not steps:
        raise ValueError(f"{metrics_path} has no line with both 'step' and 'reward' to plot.")
    rate_key = next((key for key in RATE_KEYS if _series(rows, key)[0]), None)
    figure, axes = _figure(7, 5.2 if rate_key else 3.2, rows=2 if rate_key else 1)
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
    if rate_key:
        rate_steps, rates = _series(rows, rate_key)
        axes[1].plot(rate_steps, [100 * r for r in rates], color=BUCKET_COLORS["fixed"], marker=".")
        wordle = any(key.startswith("rewards/wordle") for row in rows for key in row)
        label = "win rate" if wordle else RATE_KEYS[rate_key]  # the trainer logs solve_rate
        axes[1].set_ylabel(f"{label} (%)")
        axes[1].set_ylim(-2, 102)
        axes[1].grid(alpha=0.3)
    axes[-1].set_xlabel("step")
    _whole_numbers(axes[-1], "x")
    out_png = Path(out_png)
    figure.savefig(out_png)
    return out_png


# -- Markdown ------------------------------------------------------------------------------


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _number(value: float | None) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _answer(result: dict[str, Any]) -> str:
    mark = "✓" if result["correct"] else "✗"
    if result["expression"] is None:
        return _cell(f"{mark} {result['reason'] or 'no answer'}")
    text = f"`{result['expression']}` → {_number(result['value'])} {mark}"
    if not result["correct"] and result["reason"] and result["value"] is not None:
        text += f" ({result['reason']})"
    return _cell(text)


def _header(data: dict[str, Any], what: str) -> list[str]:
    first, last = data["seed"], data["seed"] + data["episodes"] - 1
    settings = data["settings"]
    decoding = (
        "greedy decoding"
        if settings["temperature"] == 0
        else f"sampling at temperature {settings['temperature']}"
    )
    reset = ", ".join(f"`{key}={json.dumps(value)}`" for key, value in settings["reset"].items())
    return [
        f"Split `{data['split']}`, {data['episodes']} {what} (seeds {first}–{last}), {decoding}, "
        f"at most {settings['max_new_tokens']} new tokens per reply"
        + (f", reset with {reset}" if reset else "")
        + ". Every verdict comes from the game server.",
        "",
    ]


def countdown_markdown(data: dict[str, Any], training_png: str | None = None) -> str:
    total = data["episodes"]
    lines = ["# Countdown evaluation", "", *_header(data, "puzzles")]
    lines += ["| Model | Loaded from | Solved | Solve rate |", "|---|---|---:|---:|"]
    for m in data["models"]:
        row = f"| {m['label']} | `{m['source']}` | {m['solved']} / {total} | "
        lines.append(row + f"{_percent(m['solved'], total)} |")
    lines += ["", "![Solve rates](solve_rates.png)", ""]
    counts = data["bucket_counts"]
    if counts:
        lines += ["## Base vs trained", "", "| Bucket | Puzzles |", "|---|---:|"]
        lines += [f"| {BUCKET_TITLES[b]} | {counts[b]} |" for b in BUCKETS]
        lines += [f"| **Total** | **{sum(counts.values())}** |", "", "![Buckets](buckets.png)", ""]
    if training_png:
        lines += ["## Training", "", f"![Training]({training_png})", ""]
    lines += ["## Side by side", ""]
    models = data["models"]
    if counts:
        bucket_of = {seed: b for b, seeds in data["buckets"].items() for seed in seeds}
        lines += [
            "| Seed | Numbers | Target | Base | Trained | Bucket |",
            "|---:|---|---:|---|---|---|",
        ]
        order = {b: i for i, b in enumerate(("fixed", "regressed", "both_solved", "both_failed"))}
        pairs = sorted(
            zip(models[0]["results"], models[1]["results"], strict=True),
            key=lambda pair: (order[bucket_of[pair[0]["seed"]]], pair[0]["seed"]),
        )
        for before, after in pairs:
            numbers = ", ".join(map(str, before["numbers"]))
            lines.append(
                f"| {before['seed']} | {numbers} | {before['target']} | {_answer(before)} | "
                f"{_answer(after)} | {bucket_of[before['seed']].replace('_', ' ')} |"
            )
    else:
        lines += ["| Seed | Numbers | Target | Answer |", "|---:|---|---:|---|"]
        for r in models[0]["results"]:
            numbers = ", ".join(map(str, r["numbers"]))
            lines.append(f"| {r['seed']} | {numbers} | {r['target']} | {_answer(r)} |")
    return "\n".join(lines) + "\n"


def _transcript(episode: dict[str, Any]) -> str:
    lines = []
    for message in episode["transcript"]:
        content = message.get("content") or ""
        for call in message.get("tool_calls") or []:
            function = call["function"]
            content += f"\n→ {function['name']}({json.dumps(function['arguments'])})"
        lines.append(f"{message['role']}: {content.strip()}")
    return "\n".join(lines).replace("```", "'''")


def wordle_markdown(data: dict[str, Any], training_png: str | None = None) -> str:
    total = data["episodes"]
    settings = data["settings"]
    lines = ["# Wordle evaluation", "", *_header(data, "words")]
    lines[-2] += (
        f" Each game is played through the `guess` tool of `WordleToolEnv`, at most "
        f"{settings['max_turns']} replies per game."
    )
    lines += [
        "| Model | Loaded from | Won | Win rate | Mean guesses (wins) | Invalid moves | "
        "Broken tool calls |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for m in data["models"]:
        mean = m["mean_guesses_on_wins"]
        lines.append(
            f"| {m['label']} | `{m['source']}` | {m['wins']} / {total} | "
            f"{_percent(m['wins'], total)} | {'—' if mean is None else f'{mean:.2f}'} | "
            f"{_percent(m['invalid'], m['judged_guesses'])} ({m['invalid']} / "
            f"{m['judged_guesses']}) | {m['broken_calls']} / {m['tool_calls']} |"
        )
    lines += [
        "",
        "Invalid moves: guesses the server refused, over all it ruled on. Broken tool calls: "
        "calls that never reached the game (unparseable, unknown tool, bad arguments).",
        "",
        "## Guess distribution",
        "",
    ]
    columns = list(data["models"][0]["distribution"])
    lines += ["| Model | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for m in data["models"]:
        lines.append(
            f"| {m['label']} | " + " | ".join(str(m["distribution"][c]) for c in columns) + " |"
        )
    lines += ["", "![Guess distribution](guesses.png)", "", "![Win rates](win_rates.png)", ""]
    lines += [
        "## How games ended",
        "",
        "| Model | " + " | ".join(e.replace("_", " ") for e in ENDINGS) + " |",
    ]
    lines.append("|---|" + "---:|" * len(ENDINGS))
    for m in data["models"]:
        ended = [sum(e["ended"] == name for e in m["episodes"]) for name in ENDINGS]
        lines.append(f"| {m['label']} | " + " | ".join(map(str, ended)) + " |")
    lines.append("")
    if training_png:
        lines += ["## Training", "", f"![Training]({training_png})", ""]
    lines += ["## Sample transcripts", ""]
    for m in data["models"]:
        wins = [e for e in m["episodes"] if e["won"]][:1]
        rest = [e for e in m["episodes"] if not e["won"]]
        for e in (wins + rest)[:SAMPLE_TRANSCRIPTS]:
            outcome = f"won in {len(e['guesses'])}" if e["won"] else e["ended"].replace("_", " ")
            answer = e["answer"] or "not revealed"
            lines += [f"### {m['label']}, seed {e['seed']}: {outcome} (answer: {answer})", ""]
            lines += ["```text", _transcript(e), "```", ""]
    return "\n".join(lines) + "\n"


# -- Writing -------------------------------------------------------------------------------


def write_eval_report(
    result: CountdownEval | WordleEval,
    output_dir: str | Path,
    *,
    metrics: str | Path | None = None,
) -> Path:
    """Write ``results.json``, the plots and ``report.md`` (returned) to ``output_dir``.
    ``metrics``: a training run's ``metrics.jsonl``, drawn as ``training.png`` when given."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    data = result.to_dict()
    (output_dir / "results.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    training = None
    if metrics is not None:
        training = plot_training(metrics, output_dir / "training.png").name
    if isinstance(result, CountdownEval):
        plot_rates(data, "solve_rate", "Countdown solve rate", output_dir / "solve_rates.png")
        if data["bucket_counts"]:
            plot_buckets(data, output_dir / "buckets.png")
        text = countdown_markdown(data, training)
    else:
        plot_rates(data, "win_rate", "Wordle win rate", output_dir / "win_rates.png")
        plot_guesses(data, output_dir / "guesses.png")
        text = wordle_markdown(data, training)
    report = output_dir / "report.md"
    report.write_text(text, encoding="utf-8")
    return report


def find_metrics(models: Iterable[str]) -> Path | None:
    """The ``metrics.jsonl`` of the training run a model came from: in the model's directory,
    or the one above when it is a ``checkpoint-N``; the trained model (the last) first."""
    for name in reversed(list(models)):
        path = Path(name).expanduser()
        if not path.is_dir():
            continue  # a Hub id, or 'tiny'
        candidates = [path, path.parent] if path.name.startswith("checkpoint-") else [path]
        for directory in candidates:
            if (directory / "metrics.jsonl").is_file():
                return directory / "metrics.jsonl"
    return None


def print_summary(result: CountdownEval | WordleEval, console: Any = None) -> None:
    """A few lines for the terminal; the report has the rest."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    data = result.to_dict()
    total = data["episodes"]
    table = Table(title=f"{data['game'].capitalize()}: {total} {data['split']} episodes")
    table.add_column("model")
    if isinstance(result, CountdownEval):
        table.add_column("solved", justify="right")
        table.add_column("rate", justify="right")
        for m in data["models"]:
            table.add_row(
                f"{m['label']}: {m['model']}",
                f"{m['solved']}/{total}",
                _percent(m["solved"], total),
            )
    else:
        for column in ("won", "rate", "mean guesses", "invalid", "broken calls"):
            table.add_column(column, justify="right")
        for m in data["models"]:
            mean = m["mean_guesses_on_wins"]
            table.add_row(
                f"{m['label']}: {m['model']}",
                f"{m['wins']}/{total}",
                _percent(m["wins"], total),
                "—" if mean is None else f"{mean:.2f}",
                _percent(m["invalid"], m["judged_guesses"]),
                f"{m['broken_calls']}/{m['tool_calls']}",
            )
    console.print(table)
    counts = data.get("bucket_counts")
    if counts:
        console.print(
            f"fixed [green]{counts['fixed']}[/]  both solved {counts['both_solved']}  "
            f"both failed {counts['both_failed']}  regressed [red]{counts['regressed']}[/]"
        )
