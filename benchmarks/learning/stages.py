"""The stages of the benchmark. Each reads the previous stage's output under the run's
directory, writes its own, and is skipped when that output is already there."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.learning.gpu import GpuMemory
from benchmarks.learning.settings import Settings

STAGES = ("build", "warmup", "base-eval", "train", "select", "eval", "overhead", "report")


@dataclass
class Run:
    """One run of the benchmark: its seed, directory, settings and game server."""

    seed: int
    out: Path
    settings: Settings
    url: str
    log: Callable[[str], None] = print

    def path(self, name: str) -> Path:
        return self.out / name

    def record(self, name: str, data: dict[str, Any]) -> None:
        (self.out / name).write_text(json.dumps(data, indent=2))


def arenagym(run: Run, *args: str, log_name: str) -> tuple[list[str], float]:
    """Run an ``arenagym`` command (as ``python -m env_servers``), output to a log; returns the
    command as a user types it and its wall time. Raises when it fails."""
    command = [sys.executable, "-m", "env_servers", *args]
    started = time.perf_counter()
    with (run.out / log_name).open("w") as log:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    seconds = time.perf_counter() - started
    if done.returncode:
        tail = (run.out / log_name).read_text()[-3000:]
        raise RuntimeError(f"arenagym {' '.join(args[:2])} failed ({done.returncode}):\n{tail}")
    return ["arenagym", *args], seconds


def _reset_flags(settings: Settings) -> list[str]:
    flags: list[str] = []
    for key, value in settings.reset.items():
        flags += ["--reset", f"{key}={value}"]
    return flags


def build(run: Run) -> None:
    from env_servers.core.registry import load_spec
    from trainer.smallmodel import build_model, parameter_count
    from trainer.warmup import demonstrations

    s = run.settings
    shown = demonstrations(
        load_spec("countdown"), run.seed, min(2000, s.warmup_puzzles), 1, s.reset
    )
    # the chat template's own words too, so the rendered prompt is short
    template = "<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    corpus = [template.format(d.prompt) + d.reply for d in shown]
    directory = build_model(
        run.path("model-base"), corpus, arch=s.arch, vocab_size=s.vocab_size, seed=run.seed
    )
    run.record("build.json", {"parameters": parameter_count(directory), "arch": s.arch})


def warmup(run: Run) -> None:
    """``arenagym warmup countdown``: the game's demonstrations, validated on train-pool
    puzzles that none of them shows."""
    s = run.settings
    args = ["warmup", "countdown", "-m", str(run.path("model-base"))]
    args += ["--output-dir", str(run.path("model-warm")), "--seed", str(run.seed)]
    args += ["--episodes", str(s.warmup_puzzles), "--per-episode", str(s.solutions_per_puzzle)]
    args += ["--learning-rate", str(s.warmup_lr), "--batch-size", str(s.warmup_batch)]
    args += ["--max-steps", str(s.warmup_max_steps), "--eval-every", str(s.warmup_eval_every)]
    args += ["--stop-at", str(s.warmup_stop_at), "--validation", str(s.validation_puzzles)]
    args += ["--max-new-tokens", str(s.max_new_tokens), *_reset_flags(s)]
    if s.use_cpu:
        args += ["--device", "cpu"]
    with GpuMemory() as memory:
        command, seconds = arenagym(run, *args, log_name="warmup.log")
    record = json.loads(run.path("model-warm/warmup.json").read_text())
    record |= {"command": command, "wall_s": seconds, "gpu_memory_mib": memory.peak_mib}
    record["distinct_puzzles"] = record.pop("distinct_episodes")
    run.record("warmup.json", record)


def _eval(run: Run, models: list[str], name: str, sampled: bool) -> dict[str, Any]:
    s = run.settings
    args = ["eval", "countdown"]
    for model in models:
        args += ["-m", str(run.path(model))]
    args += ["--episodes", str(s.eval_episodes), "--split", "eval", "--url", run.url]
    args += ["--output-dir", str(run.path(name)), "--max-new-tokens", str(s.max_new_tokens)]
    args += ["--batch-size", str(s.eval_batch), "--seed", "0", *_reset_flags(s)]
    if sampled:
        args += ["--samples", str(s.eval_samples), "--temperature", str(s.eval_temperature)]
    if s.use_cpu:
        args += ["--device", "cpu"]
    command, seconds = arenagym(run, *args, log_name=f"{name}.log")
    return {"command": command, "seconds": seconds}


def base_eval(run: Run) -> None:
    greedy = _eval(run, ["model-warm"], "eval-base", sampled=False)
    sampled = _eval(run, ["model-warm"], "eval-base-sampled", sampled=True)
    run.record("base-eval.json", {"greedy": greedy, "sampled": sampled})


def train_config(run: Run, output_dir: Path, **overrides: Any) -> Path:
    """This run's ``arenagym train`` config (``overrides``: other fields), written next to
    ``output_dir`` as ``<name>.yaml``; returns its path."""
    import yaml

    s = run.settings
    fields: dict[str, Any] = {
        "game": "countdown",
        "model": str(run.path("model-warm")),
        "output_dir": str(output_dir),
        "url": run.url,
        "transport": "websocket",
        "seed": run.seed,
        "episodes": s.train_episodes,
        "reset": dict(s.reset),
        "lora": False,
        "num_generations": s.num_generations,
        "per_device_train_batch_size": s.batch_size,
        "learning_rate": s.learning_rate,
        "warmup_steps": s.lr_warmup_steps,
        "beta": s.beta,
        "loss_type": s.loss_type,
        "temperature": s.temperature,
        "max_completion_length": s.max_new_tokens,
        "max_steps": s.max_steps,
        "max_time_s": s.max_time_s,
        "num_iterations": s.num_iterations,
        "save_steps": s.save_steps,
        "save_total_limit": None,
        "logging_steps": 1,
        "use_cpu": s.use_cpu,
        **overrides,
    }
    path = output_dir.with_name(f"{output_dir.name}.yaml")
    path.write_text(yaml.safe_dump(fields, sort_keys=False))
    return path


def train(run: Run) -> None:
    """``arenagym train``, for ``max_time_s``. Run again (``--force``), it trains another
    ``max_time_s`` from the last checkpoint (``arenagym train`` resumes in its output
    directory), so training can span several 10-minute runs; the record adds up the calls."""
    record = run.path("train.json")
    calls = json.loads(record.read_text()).get("calls", []) if record.is_file() else []
    with GpuMemory() as memory:
        config = train_config(run, run.path("train"))
        command, seconds = arenagym(
            run, "train", "--config", str(config), log_name=f"train-{len(calls) + 1}.log"
        )
    calls.append(
        {
            "command": command,
            "max_steps": run.settings.max_steps,
            "max_time_s": run.settings.max_time_s,
            "seconds": seconds,
            "gpu_memory_mib": memory.peak_mib,
        }
    )
    run.record(
        "train.json",
        {
            "command": command,
            "seconds": sum(call["seconds"] for call in calls),
            "gpu_memory_mib": max(call["gpu_memory_mib"] or 0 for call in calls) or None,
            "calls": calls,
        },
    )


def select(run: Run) -> None:
    from benchmarks.learning.selection import choose

    if run.settings.selection_puzzles:
        run.record("select.json", choose(run))
    else:
        run.record("select.json", {"selected": "train", "puzzles": 0})


def evaluate(run: Run) -> None:
    from benchmarks.learning.selection import selected_model

    trained = selected_model(run)
    greedy = _eval(run, ["model-warm", trained], "eval-trained", sampled=False)
    sampled = _eval(run, [trained], "eval-trained-sampled", sampled=True)
    run.record("eval.json", {"greedy": greedy, "sampled": sampled, "model": trained})


def overhead(run: Run) -> None:
    from benchmarks.learning.overhead import time_transports

    run.record("overhead.json", time_transports(run))


def report(run: Run) -> None:
    from benchmarks.learning.report import write_report

    write_report(run)


STAGE_FUNCTIONS: dict[str, tuple[Callable[[Run], None], str]] = {
    "build": (build, "build.json"),
    "warmup": (warmup, "warmup.json"),
    "base-eval": (base_eval, "base-eval.json"),
    "train": (train, "train.json"),
    "select": (select, "select.json"),
    "eval": (evaluate, "eval.json"),
    "overhead": (overhead, "overhead.json"),
    "report": (report, "report/learning.json"),
}
"""Each stage and the file whose presence means it is done."""
