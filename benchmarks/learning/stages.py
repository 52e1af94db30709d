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

STAGES = ("build", "warmup", "base-eval", "train", "eval", "overhead", "report")
VALIDATION_SEED_BASE = 10**9
"""Validation puzzles of the warm-up come from train-pool seeds far from the demonstrations'."""


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
    from trainer.smallmodel import build_model, parameter_count
    from trainer.warmup import countdown_examples

    s = run.settings
    corpus_pairs = countdown_examples(run.seed, min(2000, s.warmup_puzzles), 1, s.reset)
    # the chat template's own words too, so the rendered prompt is short
    template = "<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    corpus = [template.format(prompt) + reply for prompt, reply in corpus_pairs]
    directory = build_model(
        run.path("model-base"), corpus, arch=s.arch, vocab_size=s.vocab_size, seed=run.seed
    )
    run.record("build.json", {"parameters": parameter_count(directory), "arch": s.arch})


def validation_seeds(run: Run, demo_keys: set[str]) -> list[int]:
    """Train-pool puzzles that no demonstration shows, so the warm-up's stop is honest."""
    from env_servers.countdown.game import generate_puzzle

    seeds: list[int] = []
    seen = set(demo_keys)
    candidate = VALIDATION_SEED_BASE + run.seed * 10**6
    while len(seeds) < run.settings.validation_puzzles:
        puzzle = generate_puzzle(split="train", seed=candidate, **run.settings.reset)
        if puzzle.key not in seen:
            seen.add(puzzle.key)
            seeds.append(candidate)
        candidate += 1
    return seeds


def warmup(run: Run) -> None:
    from env_servers.countdown.solutions import demonstrations
    from trainer.warmup import WarmupConfig, countdown_validator, supervised_warmup

    s = run.settings
    first = run.seed * 10**7
    pairs = demonstrations(
        run.seed, s.warmup_puzzles, s.solutions_per_puzzle, first_puzzle_seed=first, **s.reset
    )
    from env_servers.countdown.game import render_prompt

    examples = [(render_prompt(p.numbers, p.target), reply) for p, reply in pairs]
    seeds = validation_seeds(run, {p.key for p, _ in pairs})
    config = WarmupConfig(
        learning_rate=s.warmup_lr,
        batch_size=s.warmup_batch,
        max_steps=s.warmup_max_steps,
        eval_every=s.warmup_eval_every,
        stop_at=s.warmup_stop_at,
        seed=run.seed,
        device="cpu" if s.use_cpu else None,
    )
    validator = countdown_validator(seeds, s.reset, max_new_tokens=s.max_new_tokens)
    with GpuMemory() as memory:
        record = supervised_warmup(
            run.path("model-base"), run.path("model-warm"), examples, validator, config, run.log
        )
    record["gpu_memory_mib"] = memory.peak_mib
    record["distinct_puzzles"] = len({p.key for p, _ in pairs})
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


def train_args(run: Run, output_dir: Path, **overrides: Any) -> list[str]:
    """``arenagym train`` flags of this run (``overrides``: other config fields)."""
    s = run.settings
    fields: dict[str, Any] = {
        "game": "countdown",
        "model": run.path("model-warm"),
        "output_dir": output_dir,
        "countdown_url": run.url,
        "transport": "websocket",
        "seed": run.seed,
        "episodes": s.train_episodes,
        "reset": json.dumps(s.reset),
        "lora": "false",
        "num_generations": s.num_generations,
        "per_device_train_batch_size": s.batch_size,
        "learning_rate": s.learning_rate,
        "warmup_steps": s.lr_warmup_steps,
        "beta": 0.0,
        "loss_type": s.loss_type,
        "temperature": s.temperature,
        "max_completion_length": s.max_new_tokens,
        "max_steps": s.max_steps,
        "max_time_s": s.max_time_s,
        "save_steps": s.save_steps,
        "logging_steps": 1,
        "use_cpu": str(s.use_cpu).lower(),
        **overrides,
    }
    args = ["train"]
    for key, value in fields.items():
        text = f"{value:.12f}".rstrip("0") if isinstance(value, float) else str(value)
        args += [f"--{key.replace('_', '-')}", text]
    return args


def train(run: Run) -> None:
    with GpuMemory() as memory:
        command, seconds = arenagym(run, *train_args(run, run.path("train")), log_name="train.log")
    run.record(
        "train.json", {"command": command, "seconds": seconds, "gpu_memory_mib": memory.peak_mib}
    )


def evaluate(run: Run) -> None:
    greedy = _eval(run, ["model-warm", "train"], "eval-trained", sampled=False)
    sampled = _eval(run, ["train"], "eval-trained-sampled", sampled=True)
    run.record("eval.json", {"greedy": greedy, "sampled": sampled})


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
    "eval": (evaluate, "eval.json"),
    "overhead": (overhead, "overhead.json"),
    "report": (report, "report/learning.json"),
}
"""Each stage and the file whose presence means it is done."""
