"""The experiment's settings: one frozen object, a GPU profile and a CPU-sized one."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from trainer.smallmodel import DEFAULT_ARCH


@dataclass(frozen=True)
class Settings:
    """Everything a run of the benchmark depends on besides its seed."""

    reset: dict[str, int] = field(default_factory=lambda: {"n_numbers": 4, "max_num": 9})
    arch: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ARCH))
    vocab_size: int = 1024
    # warm-up
    warmup_puzzles: int = 12_000
    solutions_per_puzzle: int = 3
    warmup_lr: float = 1e-3
    warmup_batch: int = 256
    warmup_max_steps: int = 1500
    """At most about 4 minutes on an H200 (with validation), so build, warm-up and base
    evaluation fit in one 10-minute run even if the warm-up never reaches ``warmup_stop_at``."""
    warmup_eval_every: int = 50
    warmup_stop_at: float = 0.15
    """Where the warm-up stops: greedy on train-pool puzzles that no demonstration shows, in
    any order of their numbers. Before that was checked, 58 % of them were demonstrated
    puzzles reordered, and the runs stopped at 0.25 of that easier set, where the puzzles never
    seen are solved at about 0.12 to 0.2 (H200, seeds 0 and 1, 256 puzzles)."""
    validation_puzzles: int = 512
    # evaluation
    eval_episodes: int = 500
    eval_samples: int = 16
    eval_temperature: float = 1.0
    eval_batch: int = 500
    max_new_tokens: int = 64
    # GRPO
    num_generations: int = 16
    batch_size: int = 1024
    learning_rate: float = 3e-5
    lr_warmup_steps: int = 10
    temperature: float = 1.0
    train_episodes: int = 12_000
    max_steps: int = 2000
    max_time_s: float = 500.0
    num_iterations: int = 2
    save_steps: int = 25
    """A checkpoint every this many steps: the ``select`` stage's candidates."""
    loss_type: str = "dapo"
    beta: float = 0.04
    """KL penalty towards the warmed-up model (0: none, and no reference model)."""
    # checkpoint selection
    selection_puzzles: int = 1000
    """Validation puzzles (eval-pool puzzles that the ``eval`` stage does not score) the
    ``select`` stage scores each candidate on (0: evaluate the final model, no selection)."""
    average_windows: tuple[int, ...] = (4, 8)
    """The ``select`` stage's averaged candidates: the average of the last this many
    checkpoints, for each."""
    # overhead timing
    overhead_steps: int = 24
    overhead_skip: int = 4
    use_cpu: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


GPU = Settings()
"""One H200: every stage well inside 10 minutes."""

TINY = replace(
    GPU,
    arch={
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 16,
    },
    vocab_size=400,
    warmup_puzzles=60,
    warmup_batch=16,
    warmup_max_steps=20,
    warmup_eval_every=10,
    warmup_stop_at=1.0,
    validation_puzzles=8,
    eval_episodes=6,
    eval_samples=2,
    eval_batch=6,
    max_new_tokens=24,
    num_generations=2,
    batch_size=4,
    train_episodes=8,
    max_steps=2,
    max_time_s=120.0,
    save_steps=1,
    selection_puzzles=8,
    overhead_steps=4,
    overhead_skip=2,
    use_cpu=True,
)
"""A pipeline check on a CPU in a minute or two (it learns nothing)."""

PROFILES = {"gpu": GPU, "tiny": TINY}
