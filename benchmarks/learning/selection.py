"""Which of the training run's models to evaluate: the one that solves the most validation
puzzles greedily.

Greedy held-out gains move by a point or two from one checkpoint to the next while the
training reward keeps rising, so the run saves a checkpoint every ``save_steps`` and this
stage scores each, the final model, and averages of the last few (:mod:`averaging`) on
validation puzzles: eval-pool puzzles, drawn as the held-out ones are, that are none of the
puzzles the ``eval`` stage scores. Those held-out puzzles are never looked at before the
``eval`` stage, and no stage trains on the eval pool.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks.learning.stages import Run


def selection_seeds(run: Run) -> list[int]:
    """``selection_puzzles`` eval-pool seeds of distinct puzzles, none of which is one of the
    ``eval`` stage's (its episodes ``0 .. eval_episodes - 1``): puzzles, not prompts, are
    compared, so a reordering of a held-out puzzle's numbers is excluded too. They are drawn
    as the held-out ones are, less those, which are the pool's commoner puzzles: harder than
    the held-out set, but far less so than the train-pool puzzles that training left unseen."""
    from env_servers.core.registry import load_spec
    from trainer.warmup import episode_keys, validation_seeds

    s = run.settings
    spec = load_spec("countdown")
    held_out = episode_keys(spec, range(s.eval_episodes), s.reset, split="eval")
    return validation_seeds(
        spec, run.seed, s.selection_puzzles, s.reset, exclude=held_out, split="eval"
    )


def candidates(run: Run) -> list[tuple[str, int]]:
    """The training run's complete checkpoints, as ``(path relative to the run's directory,
    optimiser step)`` in training order, then its final model where no checkpoint holds it
    (a run that stops, on its step or time limit, saves a checkpoint of its last step)."""
    import json

    from trainer.checkpoints import TRAINER_STATE, checkpoints, is_complete, is_model_dir

    train = run.path("train")
    found = []
    for checkpoint in checkpoints(train):
        if is_complete(checkpoint):
            step = json.loads((checkpoint / TRAINER_STATE).read_text())["global_step"]
            found.append((str(checkpoint.relative_to(run.out)), int(step)))
    if not found and is_model_dir(train):
        found.append(("train", 0))
    return found


def averages(run: Run, found: list[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    """For each of ``average_windows``, the average of the last that many checkpoints of
    ``found`` (all of them where there are fewer), as ``(path relative to the run's directory,
    the steps averaged)``: made once under ``select/``, then reused. Fewer than two
    checkpoints make no average."""
    from benchmarks.learning.averaging import average_models

    made: list[tuple[str, list[int]]] = []
    for window in run.settings.average_windows:
        last = found[-window:]
        steps = [step for _, step in last]
        if len(last) < 2 or any(steps == done for _, done in made):
            continue
        path = f"select/average-{steps[0]}-{steps[-1]}"
        if not run.path(path).is_dir():
            run.path("select").mkdir(exist_ok=True)
            average_models([run.path(source) for source, _ in last], run.path(path))
        made.append((path, steps))
    return made


def choose(run: Run) -> dict[str, Any]:
    """Score the warmed-up model and every candidate (the checkpoints, then their averages) on
    the validation puzzles; the best candidate (the first of equals) is the one evaluated."""
    from env_servers.core.registry import load_spec
    from trainer.models import load_model
    from trainer.warmup import answer_validator

    s = run.settings
    started = time.perf_counter()
    seeds = selection_seeds(run)
    validate = answer_validator(
        load_spec("countdown"),
        seeds,
        s.reset,
        max_new_tokens=s.max_new_tokens,
        batch_size=s.eval_batch,
        split="eval",
    )
    device = "cpu" if s.use_cpu else None

    def score(path: str) -> float:
        model, tokenizer = load_model(str(run.path(path)), device=device)
        rate = validate(model, tokenizer)
        del model, tokenizer
        return rate

    warm = score("model-warm")
    found = candidates(run)
    if not found:
        raise RuntimeError(f"no trained model in {run.path('train')}: run the train stage")
    scored: list[dict[str, Any]] = []
    for path, step in found:
        scored.append({"model": path, "step": step, "solve_rate": score(path)})
    for path, steps in averages(run, found):
        scored.append(
            {"model": path, "step": steps[-1], "averaged": steps, "solve_rate": score(path)}
        )
    for candidate in scored:
        run.log(
            f"select: {candidate['model']} (step {candidate['step']}) solves "
            f"{candidate['solve_rate']:.1%} of {len(seeds)}"
        )
    best = max(scored, key=lambda c: c["solve_rate"])
    return {
        "puzzles": len(seeds),
        "warm_solve_rate": warm,
        "candidates": scored,
        "selected": best["model"],
        "selected_step": best["step"],
        "seconds": time.perf_counter() - started,
    }


def selected_model(run: Run) -> str:
    """The trained model the ``eval`` stage evaluates, relative to the run's directory: the
    ``select`` stage's choice, or the final model."""
    import json

    path: Path = run.path("select.json")
    return str(json.loads(path.read_text())["selected"]) if path.is_file() else "train"
