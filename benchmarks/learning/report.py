"""The benchmark's report: ``learning.json``, ``learning.md`` and ``learning.png``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.learning.stages import Run

TARGET_GAIN_POINTS = 15.0
TARGET_FIX_RATIO = 3.0
TARGET_DISTINCT = 200
TARGET_OVERHEAD_PERCENT = 3.0


def _load(path: Path) -> Any:
    return json.loads(path.read_text()) if path.is_file() else None


def _metrics(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _sampled(data: dict[str, Any] | None) -> dict[str, Any]:
    if not data:
        return {}
    model = data["models"][-1]
    return {k: model.get(k) for k in ("samples", "pass_at_1", "pass_at_k")}


def puzzles(model: dict[str, Any]) -> list[dict[str, Any]]:
    """A model's greedy episodes of ``results.json`` (first samples, by seed): ``numbers``,
    ``target`` and ``solved``."""
    return [
        {
            "numbers": e["details"]["numbers"],
            "target": e["details"]["target"],
            "solved": e["solved"],
        }
        for e in model["episodes"]
        if e.get("sample", 0) == 0
    ]


def _trained_steps(run: Run, metrics: list[dict[str, Any]]) -> int:
    """The optimiser steps the run took: its last checkpoint's count (with ``num_iterations``
    > 1 TRL logs rewards only on the steps that generate), else the last logged step."""
    steps = [
        int((_load(path) or {}).get("global_step", 0))
        for path in run.path("train").glob("checkpoint-*/trainer_state.json")
    ]
    return max([metrics[-1]["step"], *steps])


def _calls(count: int) -> str:
    return "one `arenagym train` call" if count == 1 else f"{count} `arenagym train` calls"


def summarise(run: Run) -> dict[str, Any]:
    """Every figure of the report, from the stages' outputs."""
    greedy = _load(run.path("eval-trained/results.json"))
    base_only = _load(run.path("eval-base/results.json"))
    metrics = _metrics(run.path("train/metrics.jsonl"))
    train = _load(run.path("train.json")) or {}
    warm = _load(run.path("warmup.json")) or {}
    summary: dict[str, Any] = {
        "seed": run.seed,
        "settings": run.settings.to_dict(),
        "model": {**(_load(run.path("build.json")) or {})},
        "warmup": {k: v for k, v in warm.items() if k != "config"},
        "commands": {
            "base_eval": (_load(run.path("base-eval.json")) or {}),
            "train": train.get("command"),
            "eval": (_load(run.path("eval.json")) or {}),
        },
    }
    if greedy:
        base, trained = greedy["models"]
        counts = greedy["bucket_counts"]
        base_puzzles = puzzles(base)
        keys = {(tuple(sorted(p["numbers"])), p["target"]) for p in base_puzzles}
        ratio = counts["fixed"] / counts["regressed"] if counts["regressed"] else None
        distinct = distinct_figures(base_puzzles, puzzles(trained))
        summary["eval"] = {
            "episodes": greedy["episodes"],
            "distinct_puzzles": len(keys),
            "base_greedy": base["solve_rate"],
            "trained_greedy": trained["solve_rate"],
            "gain_points": 100 * (trained["solve_rate"] - base["solve_rate"]),
            "buckets": counts,
            "fixed_per_regressed": ratio,
            "distinct": distinct,
            "base_sampled": _sampled(_load(run.path("eval-base-sampled/results.json"))),
            "trained_sampled": _sampled(_load(run.path("eval-trained-sampled/results.json"))),
            "base_eval_greedy_agrees": bool(
                base_only and base_only["models"][0]["solve_rate"] == base["solve_rate"]
            ),
        }
        fixed, regressed = distinct["fixed"], distinct["regressed"]
        summary["targets"] = {
            "gain_points_at_least_15": distinct["gain_points"] >= TARGET_GAIN_POINTS,
            "fixed_per_regressed_at_least_3": fixed >= TARGET_FIX_RATIO * regressed and fixed > 0,
            "distinct_puzzles_at_least_200": len(keys) >= TARGET_DISTINCT,
        }
    if metrics:
        batch = run.settings.batch_size
        tokens = sum(batch * m.get("completions/mean_length", 0.0) for m in metrics)
        step_seconds = sum(m.get("step_time", 0.0) for m in metrics)
        summary["training"] = {
            "steps": _trained_steps(run, metrics),
            "wall_s": train.get("seconds"),
            "calls": len(train.get("calls", [])) or 1,
            "completions": batch * len(metrics),
            "generated_tokens": tokens,
            "generated_tokens_per_s": tokens / train["seconds"] if train.get("seconds") else None,
            "generated_tokens_per_step_s": tokens / step_seconds if step_seconds else None,
            "gpu_memory_mib": train.get("gpu_memory_mib"),
            "first_reward": metrics[0].get("reward"),
            "last_reward_mean_20": sum(m.get("reward", 0.0) for m in metrics[-20:])
            / len(metrics[-20:]),
        }
    selection = _load(run.path("select.json"))
    if selection and selection.get("puzzles"):
        summary["selection"] = selection
    overhead = _load(run.path("overhead.json"))
    if overhead:
        summary["overhead"] = {
            k: ({kk: vv for kk, vv in v.items() if kk != "per_step"} if isinstance(v, dict) else v)
            for k, v in overhead.items()
        }
        summary.setdefault("targets", {})["remote_overhead_under_3_percent"] = (
            overhead["remote_extra_percent"] < TARGET_OVERHEAD_PERCENT
        )
    return summary


def distinct_figures(base: list[dict[str, Any]], trained: list[dict[str, Any]]) -> dict[str, Any]:
    """Greedy figures over distinct puzzles (two seeds can give the same puzzle: the first
    episode of each counts), which the targets are judged on."""
    seen: set[tuple[tuple[int, ...], int]] = set()
    pairs = []
    for before, after in zip(base, trained, strict=True):
        key = (tuple(sorted(before["numbers"])), before["target"])
        if key not in seen:
            seen.add(key)
            pairs.append((bool(before["solved"]), bool(after["solved"])))
    n = max(1, len(pairs))
    base_rate = sum(b for b, _ in pairs) / n
    trained_rate = sum(a for _, a in pairs) / n
    return {
        "puzzles": len(pairs),
        "base_greedy": base_rate,
        "trained_greedy": trained_rate,
        "gain_points": 100 * (trained_rate - base_rate),
        "fixed": sum(a and not b for b, a in pairs),
        "regressed": sum(b and not a for b, a in pairs),
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _selection_parts(
    sel: dict[str, Any],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The ``select`` stage's checkpoints and averages, apart, and the candidate it chose."""
    checkpoints = [c for c in sel["candidates"] if "averaged" not in c]
    averages = [c for c in sel["candidates"] if "averaged" in c]
    chosen = next(c for c in sel["candidates"] if c["model"] == sel["selected"])
    return checkpoints, averages, chosen


def markdown(summary: dict[str, Any], png: str) -> str:
    """The report as Markdown."""
    lines = [f"# Countdown: GRPO through the game server, seed {summary['seed']}", ""]
    model = summary.get("model", {})
    if model:
        lines += [
            f"Model: Qwen3 architecture, {model.get('parameters', 0) / 1e6:.1f}M parameters, "
            f"built offline ({json.dumps(model.get('arch'))}).",
            "",
        ]
    warm = summary.get("warmup", {})
    if warm:
        lines += [
            f"Warm-up: {warm.get('steps')} steps on {warm.get('examples')} demonstrations "
            f"({warm.get('distinct_puzzles')} train-pool puzzles) in "
            f"{warm.get('seconds', 0):.0f} s; stopped: {warm.get('stopped')}.",
            "",
        ]
    ev = summary.get("eval")
    if ev:
        k = ev["base_sampled"].get("samples")
        lines += [
            f"Held-out evaluation: {ev['episodes']} episodes of the eval split "
            f"({ev['distinct_puzzles']} distinct puzzles), judged by a live Countdown server.",
            "",
            f"| | greedy solve rate | pass@1 (T=1) | pass@{k} |",
            "|---|---|---|---|",
            f"| base (warm-up) | {_pct(ev['base_greedy'])} | {_pct(ev['base_sampled'].get('pass_at_1'))} "
            f"| {_pct(ev['base_sampled'].get('pass_at_k'))} |",
            f"| GRPO-trained | {_pct(ev['trained_greedy'])} | "
            f"{_pct(ev['trained_sampled'].get('pass_at_1'))} | "
            f"{_pct(ev['trained_sampled'].get('pass_at_k'))} |",
            "",
            f"Gain: **{ev['gain_points']:+.1f} points** greedy. Buckets: "
            + ", ".join(f"{name} {count}" for name, count in ev["buckets"].items())
            + (
                f" ({ev['fixed_per_regressed']:.1f} fixed per regressed)."
                if ev["fixed_per_regressed"]
                else "."
            ),
            "",
            f"Over the {ev['distinct']['puzzles']} distinct puzzles (what the targets are judged "
            f"on): base {_pct(ev['distinct']['base_greedy'])}, trained "
            f"{_pct(ev['distinct']['trained_greedy'])}, **{ev['distinct']['gain_points']:+.1f} "
            f"points**; fixed {ev['distinct']['fixed']}, regressed {ev['distinct']['regressed']}.",
            "",
        ]
    tr = summary.get("training")
    if tr:
        lines += [
            f"Training: {tr['steps']} GRPO steps, {tr['completions']} completions, "
            f"{tr['wall_s']:.0f} s wall ({_calls(tr['calls'])}, model load included); "
            f"{tr['generated_tokens_per_s']:.0f} generated tokens/s over the wall time "
            f"({tr['generated_tokens_per_step_s']:.0f} over the steps); "
            f"peak GPU memory in use {tr['gpu_memory_mib']} MiB (nvidia-smi, whole GPU). Reward {tr['first_reward']:.3f} at "
            f"step 1, {tr['last_reward_mean_20']:.3f} over the last 20 steps.",
            "",
        ]
    sel = summary.get("selection")
    if sel:
        checkpoints, _, chosen = _selection_parts(sel)
        what = (
            f"the average of the checkpoints of steps {', '.join(map(str, chosen['averaged']))}"
            if "averaged" in chosen
            else f"the checkpoint of step {chosen['step']}"
        )
        lines += [
            f"Model evaluated: `{sel['selected']}`, {what}: of the checkpoints and their "
            f"averages, the one that solved the most of {sel['puzzles']} validation puzzles "
            f"(eval-pool puzzles, none of those scored here; greedy): "
            f"{_pct(chosen['solve_rate'])}; warm-up {_pct(sel['warm_solve_rate'])}, last "
            f"checkpoint (step {checkpoints[-1]['step']}) {_pct(checkpoints[-1]['solve_rate'])}.",
            "",
        ]
    oh = summary.get("overhead")
    if oh:
        lines += [
            f"Step time, mean of {oh['steps'] - oh['skipped']} steps (seconds):",
            "",
            "| transport | step | generation | verification | scoring | optimisation |",
            "|---|---|---|---|---|---|",
        ]
        for name in ("inprocess", "websocket"):
            row = oh[name]
            lines.append(
                f"| {name} | {row['step_s']:.3f} | {row['generation_s']:.3f} | "
                f"{row['verification_s']:.3f} | {row['scoring_s']:.3f} | {row['optimisation_s']:.3f} |"
            )
        lines += [
            "",
            f"Remote (WebSocket) adds **{oh['remote_extra_percent']:+.1f} %** per step "
            f"(verification alone {oh['verification_extra_percent']:+.1f} % of a step).",
            "",
        ]
    targets = summary.get("targets", {})
    if targets:
        lines += [
            "Targets: " + ", ".join(f"{k}: {'met' if v else 'MISSED'}" for k, v in targets.items()),
            "",
        ]
    lines += [f"![curves and results]({png})", ""]
    return "\n".join(lines)


def plot(summary: dict[str, Any], metrics: list[dict[str, Any]], out_png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    if metrics:
        steps = [m["step"] for m in metrics]
        window = max(1, len(metrics) // 25)
        for key, label in (("solve_rate", "training solve rate = reward"),):
            values = [m.get(key, 0.0) for m in metrics]
            smooth = [
                sum(values[max(0, i - window + 1) : i + 1])
                / len(values[max(0, i - window + 1) : i + 1])
                for i in range(len(values))
            ]
            axes[0].plot(steps, smooth, label=f"{label} (mean of {window})")
    sel = summary.get("selection")
    if sel:
        checkpoints, averages, chosen = _selection_parts(sel)
        points = [(0, sel["warm_solve_rate"])]
        points += [(c["step"], c["solve_rate"]) for c in checkpoints]
        axes[0].plot(
            *zip(*points, strict=True), "o-", label=f"validation greedy ({sel['puzzles']} puzzles)"
        )
        if averages:
            averaged = [(c["step"], c["solve_rate"]) for c in averages]
            axes[0].plot(*zip(*averaged, strict=True), "s", label="averages (at their last step)")
        axes[0].plot(
            [chosen["step"]], [chosen["solve_rate"]], "k*", markersize=12, label="evaluated"
        )
    if metrics or sel:
        axes[0].set_xlabel("GRPO step")
        axes[0].set_ylim(0, 1)
        axes[0].legend()
        axes[0].set_title("Training (rollouts, T=1)")
    ev = summary.get("eval")
    if ev:
        k = ev["base_sampled"].get("samples")
        names = ["greedy", "pass@1", f"pass@{k}"]
        base = [
            ev["base_greedy"],
            ev["base_sampled"].get("pass_at_1") or 0,
            ev["base_sampled"].get("pass_at_k") or 0,
        ]
        trained = [
            ev["trained_greedy"],
            ev["trained_sampled"].get("pass_at_1") or 0,
            ev["trained_sampled"].get("pass_at_k") or 0,
        ]
        xs = range(len(names))
        axes[1].bar([x - 0.2 for x in xs], base, 0.4, label="base (warm-up)")
        axes[1].bar([x + 0.2 for x in xs], trained, 0.4, label="GRPO-trained")
        for x, (b, t) in enumerate(zip(base, trained, strict=True)):
            axes[1].text(x - 0.2, b + 0.01, f"{100 * b:.0f}", ha="center")
            axes[1].text(x + 0.2, t + 0.01, f"{100 * t:.0f}", ha="center")
        axes[1].set_xticks(list(xs), names)
        axes[1].set_ylim(0, 1)
        axes[1].legend()
        axes[1].set_title(f"Held-out solve rate ({ev['episodes']} puzzles)")
        buckets = ev["buckets"]
        bars = axes[2].bar(
            list(buckets),
            list(buckets.values()),
            color=["tab:green", "tab:blue", "tab:gray", "tab:red"],
        )
        axes[2].bar_label(bars)
        axes[2].set_title("Base → trained, per puzzle (greedy)")
    figure.suptitle(f"Countdown GRPO through the game server, seed {summary['seed']}")
    figure.tight_layout()
    figure.savefig(out_png, dpi=110)
    plt.close(figure)


def write_report(run: Run) -> Path:
    """Write ``report/learning.{json,md,png}`` under the run's directory."""
    directory = run.path("report")
    directory.mkdir(parents=True, exist_ok=True)
    summary = summarise(run)
    plot(summary, _metrics(run.path("train/metrics.jsonl")), directory / "learning.png")
    (directory / "learning.md").write_text(markdown(summary, "learning.png"))
    (directory / "learning.json").write_text(json.dumps(summary, indent=2))
    return directory
