"""Which of the training run's models to evaluate: the one that solves the most validation
puzzles greedily.

Greedy held-out gains move by a point or two from one checkpoint to the next while the
training reward keeps rising, so the run saves a checkpoint every ``save_steps`` and this
stage scores each (and the final model) on train-pool puzzles that neither the warm-up's
demonstrations, nor its own validation, nor GRPO's episodes show. The held-out split is never
looked at before the ``eval`` stage.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks.learning.stages import Run

SELECTION_SEED_OFFSET = 500_000
"""Selection seeds start this far after the warm-up's validation seeds."""


def selection_seeds(run: Run) -> list[int]:
    """``selection_puzzles`` train-pool seeds of distinct puzzles that none of the run's other
    episodes shows (the demonstrations, the warm-up's validation, training): puzzles, not
    prompts, are compared, so a reordering of a seen puzzle's numbers is seen too."""
    from clients.trl import make_env_factory
    from env_servers.core.registry import load_spec
    from env_servers.countdown.solutions import FIRST_SEED_STRIDE
    from trainer.data import game_rows
    from trainer.warmup import VALIDATION_SEED_BASE, demonstrations, validation_seeds

    s = run.settings
    spec = load_spec("countdown")
    assert spec.episode_key is not None
    agent = make_env_factory(spec, mode="answer", transport="inprocess", **s.reset)()

    def key(seed: int) -> Any:
        return spec.episode_key(agent._reset({"seed": seed, "split": "train"}).observation)

    try:
        first_demonstration = run.seed * FIRST_SEED_STRIDE
        seen = {key(first_demonstration + i) for i in range(s.warmup_puzzles)}
        seen |= {key(row["seed"]) for row in game_rows(agent, run.seed, s.train_episodes)}
        shown = demonstrations(spec, run.seed, s.warmup_puzzles, s.solutions_per_puzzle, s.reset)
        warmup_validation = validation_seeds(
            spec, run.seed, s.validation_puzzles, s.reset, exclude={p for p, _ in shown}
        )
        seen |= {key(seed) for seed in warmup_validation}
        seeds: list[int] = []
        candidate = VALIDATION_SEED_BASE + run.seed * 10**6 + SELECTION_SEED_OFFSET
        while len(seeds) < s.selection_puzzles:
            puzzle = key(candidate)
            if puzzle not in seen:
                seen.add(puzzle)
                seeds.append(candidate)
            candidate += 1
    finally:
        if agent._client is not None:
            agent._client.close()
    return seeds


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


def choose(run: Run) -> dict[str, Any]:
    """Score the warmed-up model and every candidate on the selection puzzles; the best
    candidate (the earliest of equals) is the one evaluated."""
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
    )
    device = "cpu" if s.use_cpu else None

    def score(path: str) -> float:
        model, tokenizer = load_model(str(run.path(path)), device=device)
        rate = validate(model, tokenizer)
        del model, tokenizer
        return rate

    warm = score("model-warm")
    scored = []
    for path, step in candidates(run):
        rate = score(path)
        scored.append({"model": path, "step": step, "solve_rate": rate})
        run.log(f"select: {path} (step {step}) solves {rate:.1%} of {len(seeds)}")
    if not scored:
        raise RuntimeError(f"no trained model in {run.path('train')}: run the train stage")
    best = max(scored, key=lambda c: (c["solve_rate"], -c["step"]))
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
