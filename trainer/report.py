"""Reports of an evaluation, for any game: ``results.json``, ``report.md`` with PNG plots, and
a terminal summary.

The Markdown and the plots are drawn from the very dict written to ``results.json``, so the
report cannot disagree with the per-episode results. The generic report has the rates table
(with pass@1 and pass@K when episodes were sampled several times), the base-vs-trained
buckets, how episodes ended (tools mode), the training curve, every episode side by side and
sample transcripts; the game's evaluation view (``trainer.views``) adds columns and sections
and words things the game's way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from env_servers.core.spec import GameSpec
from trainer.evaluate import BUCKETS, Evaluation
from trainer.plots import (
    BUCKET_TITLES,
    has_training_curve,
    plot_buckets,
    plot_rates,
    plot_training,
    read_metrics,
)
from trainer.rollouts import ENDINGS
from trainer.tiny import TINY_MODEL, is_tiny_model
from trainer.views import EvaluationView, Record, cell, percent, rate_name

__all__ = [
    "eval_markdown",
    "find_metrics",
    "has_training_curve",
    "plot_training",
    "print_summary",
    "read_metrics",
    "write_eval_report",
]

SIDE_BY_SIDE_ORDER = ("fixed", "regressed", "both_solved", "both_failed")


def _rate_file(spec: GameSpec) -> str:
    return rate_name(spec.solved_word).replace(" ", "_") + "s.png"


def _tiny(model: dict[str, Any]) -> bool:
    """Whether a model is the tiny offline one (by its name, or the cache folder it came from)."""
    return model["model"] == TINY_MODEL or is_tiny_model(model["source"])


def _header(data: dict[str, Any], spec: GameSpec, view: EvaluationView) -> str:
    first, last = data["seed"], data["seed"] + data["episodes"] - 1
    settings = data["settings"]
    temperature = settings["temperature"]
    decoding = "greedy decoding" if temperature == 0 else f"sampling at temperature {temperature}"
    if data["samples"] > 1:
        decoding = f"each played {data['samples']} times, {decoding}"
    reset = ", ".join(f"`{key}={json.dumps(value)}`" for key, value in settings["reset"].items())
    text = (
        f"Split `{data['split']}`, {data['episodes']} {spec.unit} (seeds {first}–{last}), "
        f"{decoding}, at most {settings['max_new_tokens']} new tokens per reply"
        + (f", reset with {reset}" if reset else "")
        + ". Every verdict comes from the game server."
    )
    one = view.episode_word.removesuffix("s")
    if data["mode"] == "tools":
        tools = ", ".join(f"`{name}`" for name in spec.tool_names())
        plural = "s" if len(spec.tool_names()) > 1 else ""
        text += (
            f" Each {one} is played through the {tools} tool{plural} of "
            f"`{spec.agent.__name__}`, at most {settings['max_turns']} replies per {one}."
        )
    else:
        text += f" Each {one} is one reply, which the server checks as the answer."
    return text


def _rates_table(data: dict[str, Any], spec: GameSpec, view: EvaluationView) -> list[str]:
    total, samples = data["episodes"], data["samples"]
    rate = rate_name(spec.solved_word).capitalize()
    headers = ["Model", "Loaded from", spec.solved_word.capitalize(), rate]
    if samples > 1:
        headers += ["Pass@1", f"Pass@{samples}"]
    headers += [column.header for column in view.columns]
    tools = data["mode"] == "tools"
    if tools:
        headers.append("Broken tool calls")
    lines = ["| " + " | ".join(headers) + " |", "|---|---|" + "---:|" * (len(headers) - 2)]
    for m in data["models"]:
        cells = [m["label"], f"`{m['source']}`", f"{m['solved']} / {total}"]
        cells.append(percent(m["solved"], total))
        if samples > 1:
            cells += [f"{100 * m['pass_at_1']:.1f}%", f"{100 * m['pass_at_k']:.1f}%"]
        cells += [column.cell(m) for column in view.columns]
        if tools:
            cells.append(f"{m['broken_calls']} / {m['tool_calls']}")
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _notes(data: dict[str, Any], spec: GameSpec, view: EvaluationView) -> list[str]:
    """What the rates table's columns mean, as one paragraph (none when all is plain)."""
    samples = data["samples"]
    notes = list(view.notes(data))
    if samples > 1:
        notes.append(
            f"{rate_name(spec.solved_word).capitalize()}: each {spec.unit.removesuffix('s')}'s "
            f"first sample. Pass@1: mean over all {samples} samples. Pass@{samples}: solved in "
            "at least one."
        )
    if data["mode"] == "tools":
        notes.append(
            "Broken tool calls: calls that never reached the game (unparseable, unknown tool, "
            "bad arguments)."
        )
    return [" ".join(notes), ""] if notes else []


def _first(model: dict[str, Any]) -> list[Record]:
    return [e for e in model["episodes"] if e["sample"] == 0]


def _side_by_side(data: dict[str, Any], spec: GameSpec, view: EvaluationView) -> list[str]:
    columns = view.episode_columns
    extra_headers = "".join(f" {c.header} |" for c in columns)
    extra_align = "".join(f"{c.align}|" for c in columns)
    models = data["models"]
    lines = ["## Side by side", ""]

    def extra(record: Record) -> str:
        return "".join(f" {cell(c.cell(record))} |" for c in columns)

    if data["buckets"]:
        bucket_of = {seed: b for b, seeds in data["buckets"].items() for seed in seeds}
        order = {b: i for i, b in enumerate(SIDE_BY_SIDE_ORDER)}
        lines += [f"| Seed |{extra_headers} Base | Trained | Bucket |"]
        lines += [f"|---:|{extra_align}---|---|---|"]
        pairs = sorted(
            zip(_first(models[0]), _first(models[1]), strict=True),
            key=lambda pair: (order[bucket_of[pair[0]["seed"]]], pair[0]["seed"]),
        )
        for before, after in pairs:
            bucket = bucket_of[before["seed"]].replace("_", " ")
            lines.append(
                f"| {before['seed']} |{extra(before)} {view.answer(before, spec)} | "
                f"{view.answer(after, spec)} | {bucket} |"
            )
    else:
        lines += [f"| Seed |{extra_headers} Outcome |", f"|---:|{extra_align}---|"]
        for r in _first(models[0]):
            lines.append(f"| {r['seed']} |{extra(r)} {view.answer(r, spec)} |")
    return [*lines, ""]


def _transcript(record: Record) -> str:
    if record["transcript"] is None:
        return f"assistant: {(record['completion'] or '').strip()}".replace("```", "'''")
    lines = []
    for message in record["transcript"]:
        content = message.get("content") or ""
        for call in message.get("tool_calls") or []:
            function = call["function"]
            content += f"\n→ {function['name']}({json.dumps(function['arguments'])})"
        lines.append(f"{message['role']}: {content.strip()}")
    return "\n".join(lines).replace("```", "'''")


def eval_markdown(
    data: dict[str, Any],
    spec: GameSpec,
    view: EvaluationView,
    output_dir: Path,
    training_png: str | None = None,
) -> str:
    """The report's Markdown; the view's sections may draw their plots into ``output_dir``."""
    rate = rate_name(spec.solved_word)
    lines = [f"# {spec.name.capitalize()} evaluation", "", _header(data, spec, view), ""]
    if any(_tiny(model) for model in data["models"]):
        lines += [
            "> The tiny offline model checks the pipeline end to end; it is not expected to "
            "learn, so equal (and near-zero) rates are what this report should show.",
            "",
        ]
    lines += _rates_table(data, spec, view)
    lines += _notes(data, spec, view)
    lines += [f"![{rate.capitalize()}s]({_rate_file(spec)})", ""]
    counts = data["bucket_counts"]
    if counts:
        unit = spec.unit.capitalize()
        lines += ["## Base vs trained", "", f"| Bucket | {unit} |", "|---|---:|"]
        lines += [f"| {BUCKET_TITLES[b]} | {counts[b]} |" for b in BUCKETS]
        lines += [f"| **Total** | **{sum(counts.values())}** |", ""]
        if data["samples"] > 1:
            lines += ["Buckets compare each episode's first sample.", ""]
        lines += ["![Buckets](buckets.png)", ""]
    lines += view.sections(data, output_dir)
    if data["mode"] == "tools":
        names = [view.ending(name, spec) for name in ENDINGS]
        lines += [f"## How {view.episode_word} ended", "", "| Model | " + " | ".join(names) + " |"]
        lines.append("|---|" + "---:|" * len(ENDINGS))
        for m in data["models"]:
            ended = [sum(e["ended"] == name for e in _first(m)) for name in ENDINGS]
            lines.append(f"| {m['label']} | " + " | ".join(map(str, ended)) + " |")
        lines.append("")
    if training_png:
        lines += ["## Training", "", f"![Training]({training_png})", ""]
    if view.side_by_side:
        lines += _side_by_side(data, spec, view)
    if view.transcripts:
        lines += ["## Sample transcripts", ""]
        for m in data["models"]:
            first = _first(m)
            solved = [e for e in first if e["solved"]][:1]
            rest = [e for e in first if not e["solved"]]
            for e in (solved + rest)[: view.transcripts]:
                heading = f"### {m['label']}, seed {e['seed']}: {view.outcome(e, spec)}"
                lines += [heading, "", "```text", _transcript(e), "```", ""]
    return "\n".join(lines) + "\n"


def write_eval_report(
    result: Evaluation, output_dir: str | Path, *, metrics: str | Path | None = None
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
    spec = result.spec
    title = f"{spec.name.capitalize()} {rate_name(spec.solved_word)}"
    plot_rates(data, "solve_rate", title, output_dir / _rate_file(spec))
    if data["bucket_counts"]:
        plot_buckets(data, spec.unit, output_dir / "buckets.png")
    text = eval_markdown(data, spec, result.view, output_dir, training)
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


def print_summary(result: Evaluation, console: Any = None) -> None:
    """A few lines for the terminal; the report has the rest."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    spec, view = result.spec, result.view
    data = result.to_dict()
    total, samples = data["episodes"], data["samples"]
    table = Table(title=f"{spec.name.capitalize()}: {total} {data['split']} {spec.unit}")
    headers = ["model", spec.solved_word, "rate"]
    if samples > 1:
        headers += ["pass@1", f"pass@{samples}"]
    columns = [c for c in view.columns if c.terminal]
    headers += [c.header.lower() for c in columns]
    tools = data["mode"] == "tools"
    if tools:
        headers.append("broken calls")
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index == 0 else "right")
    for m in data["models"]:
        row = [f"{m['label']}: {m['model']}", f"{m['solved']}/{total}"]
        row.append(percent(m["solved"], total))
        if samples > 1:
            row += [f"{100 * m['pass_at_1']:.1f}%", f"{100 * m['pass_at_k']:.1f}%"]
        row += [c.cell(m) for c in columns]
        if tools:
            row.append(f"{m['broken_calls']}/{m['tool_calls']}")
        table.add_row(*row)
    console.print(table)
    counts = data["bucket_counts"]
    if counts:
        console.print(
            f"fixed [green]{counts['fixed']}[/]  both solved {counts['both_solved']}  "
            f"both failed {counts['both_failed']}  regressed [red]{counts['regressed']}[/]"
        )
