"""The training configuration: one dataclass whose fields carry their help text.

Loaded from YAML (``--config``), then overridden by CLI flags (``--max-steps 5``, ``--model
tiny``, any field as ``--field-name``) and ``ARENAGYM_*_URL`` variables; validated before any
model loads, with messages that say what to change.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import yaml

Game = Literal["wordle", "countdown"]
Backend = Literal["transformers", "vllm-colocate", "vllm-server"]
Logger = Literal["none", "tensorboard", "trackio", "wandb"]

DEFAULT_REWARDS: dict[str, dict[str, float]] = {
    "wordle": {"correct": 3.0, "greens": 1.0, "yellows": 0.5, "repetition": 1.5},
    "countdown": {"correct": 1.0},
}


def _help(text: str, default: Any = dataclasses.MISSING, **kw: Any) -> Any:
    if default is not dataclasses.MISSING:
        kw["default"] = default
    return field(metadata={"help": text}, **kw)


@dataclass
class TrainConfig:
    # what to train
    game: Game = _help(
        "Game to train on: wordle (multi-turn, guess tool) or countdown.", "countdown"
    )
    model: str = _help(
        "Hub id or local path of the policy; 'tiny' builds a tiny model offline.", "tiny"
    )
    output_dir: str = _help(
        "Checkpoints, metrics.jsonl and the final model go here.", "outputs/run"
    )
    seed: int = _help("Seed of the run: the episodes and the trainer's randomness.", 0)
    episodes: int = _help("Training episodes (dataset rows), each one seed of the game.", 300)
    reset: dict[str, Any] = _help(
        "Game reset fields for every episode, e.g. {n_numbers: 3, max_num: 9} or {hard_mode: true}.",
        default_factory=dict,
    )
    prompt: str | None = _help(
        "Instruction before the game's text (Wordle); a default is used if empty.", None
    )

    # game servers
    wordle_url: str | None = _help(
        "Wordle server URL (else ARENAGYM_WORDLE_URL, else a local server).", None
    )
    countdown_url: str | None = _help(
        "Countdown server URL (else ARENAGYM_COUNTDOWN_URL, else a local server).", None
    )
    transport: Literal["websocket", "http", "inprocess"] = _help(
        "How the trainer talks to the game servers (inprocess: the game in this process).",
        "websocket",
    )
    verify_connections: int = _help(
        "Server sessions that verify single-turn answers in parallel.", 8
    )

    # fine-tuning
    lora: bool = _help("Train a LoRA adapter (true) or all weights (false).", True)
    lora_r: int = _help("LoRA rank.", 16)
    lora_alpha: int = _help("LoRA alpha.", 32)
    lora_dropout: float = _help("LoRA dropout.", 0.05)
    lora_target_modules: list[str] | str = _help(
        "Modules LoRA adapts, or 'all-linear'.", "all-linear"
    )

    # GRPO
    num_generations: int = _help("Completions per prompt (the GRPO group).", 8)
    per_device_train_batch_size: int = _help(
        "Completions per device per step (a multiple of num_generations).", 8
    )
    gradient_accumulation_steps: int = _help("Micro-batches per optimiser step.", 1)
    learning_rate: float = _help("Peak learning rate.", 1e-5)
    beta: float = _help("KL coefficient against the reference model (0 disables it).", 0.005)
    loss_type: str = _help("TRL's GRPO loss: grpo, dapo, dr_grpo, bnpo…", "dapo")
    max_completion_length: int = _help(
        "Token budget of a completion (the whole multi-turn episode).", 320
    )
    temperature: float = _help("Sampling temperature of rollouts.", 1.0)
    num_train_epochs: float = _help("Passes over the episodes.", 1.0)
    max_steps: int = _help("Stop after this many optimiser steps (-1: as the epochs say).", -1)
    max_time_s: float | None = _help(
        "Stop after this many seconds of training (the final model is saved as usual).", None
    )
    warmup_steps: int = _help("Steps of linear learning-rate warm-up.", 0)
    enable_thinking: bool = _help("Let Qwen3-style templates think before answering.", False)
    rewards: dict[str, float] = _help(
        "Reward functions and weights; defaults to the game's published recipe.",
        default_factory=dict,
    )

    # generation backend
    backend: Backend = _help(
        "transformers, vllm-colocate (one GPU) or vllm-server (its own GPU).", "transformers"
    )
    vllm_gpu_memory_utilization: float = _help("GPU memory share of vLLM in colocate mode.", 0.3)
    vllm_server_host: str = _help("Host of `trl vllm-serve` in vllm-server mode.", "127.0.0.1")
    vllm_server_port: int = _help("Port of `trl vllm-serve` in vllm-server mode.", 8000)
    vllm_launch: bool = _help(
        "In vllm-server mode, start `trl vllm-serve` here instead of connecting.", False
    )
    vllm_launch_gpus: str = _help("CUDA_VISIBLE_DEVICES of a launched vLLM server.", "1")
    vllm_max_model_len: int = _help("Context length vLLM reserves (prompt + completion).", 4096)

    # bookkeeping
    logging: Logger = _help("Where metrics go besides metrics.jsonl.", "none")
    logging_steps: int = _help("Log every N steps.", 1)
    save_steps: int = _help("Write a checkpoint every N steps.", 50)
    save_total_limit: int | None = _help("Keep at most N checkpoints (None: all).", 3)
    resume: bool = _help("Resume from the last complete checkpoint in output_dir, if any.", True)
    push_to_hub: bool = _help("Push the final model to the Hub (needs HF_TOKEN).", False)
    hub_model_id: str | None = _help("Hub repository for push_to_hub.", None)
    use_cpu: bool = _help("Train on the CPU even if a GPU is present.", False)
    bf16: bool | None = _help("bfloat16 training (default: on when a GPU supports it).", None)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Fail before any model loads, saying what to change."""
        problems = []
        for name, kind in (("game", Game), ("backend", Backend), ("logging", Logger)):
            if getattr(self, name) not in get_args(kind):
                problems.append(
                    f"{name} must be one of {', '.join(get_args(kind))}, not {getattr(self, name)!r}"
                )
        if self.episodes < 1:
            problems.append("episodes must be at least 1")
        if self.num_generations < 2:
            problems.append(
                "num_generations must be at least 2: GRPO compares completions within a group"
            )
        elif self.per_device_train_batch_size % self.num_generations:
            problems.append(
                f"per_device_train_batch_size ({self.per_device_train_batch_size}) must be a multiple "
                f"of num_generations ({self.num_generations})"
            )
        if self.max_completion_length < 8:
            problems.append("max_completion_length must be at least 8 tokens")
        if self.learning_rate <= 0:
            problems.append("learning_rate must be positive")
        if self.beta < 0:
            problems.append("beta must not be negative")
        if self.backend.startswith("vllm") and (self.use_cpu or self.model == "tiny"):
            problems.append(
                f"backend {self.backend} needs a GPU and a real model: use backend: transformers"
            )
        if self.vllm_launch and self.backend != "vllm-server":
            problems.append("vllm_launch only applies to backend: vllm-server")
        if not 0 < self.vllm_gpu_memory_utilization <= 1:
            problems.append("vllm_gpu_memory_utilization must be in (0, 1]")
        if self.push_to_hub and not self.hub_model_id:
            problems.append("push_to_hub needs hub_model_id (e.g. you/wordle-grpo)")
        unknown = set(self.rewards) - set(DEFAULT_REWARDS.get(self.game, {}))
        if unknown:
            problems.append(
                f"unknown reward(s) for {self.game}: {', '.join(sorted(unknown))}; "
                f"known: {', '.join(DEFAULT_REWARDS[self.game])}"
            )
        if problems:
            raise ValueError("Invalid training config: " + "; ".join(problems) + ".")

    @property
    def reward_weights(self) -> dict[str, float]:
        return self.rewards or dict(DEFAULT_REWARDS[self.game])

    def server_url(self) -> str | None:
        """The game's server: the config, else ``ARENAGYM_<GAME>_URL``, else none (start one)."""
        url = self.wordle_url if self.game == "wordle" else self.countdown_url
        return url or os.environ.get(f"ARENAGYM_{self.game.upper()}_URL") or None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


FIELDS = {f.name: f for f in dataclasses.fields(TrainConfig)}


def load_config(path: str | Path | None = None, **overrides: Any) -> TrainConfig:
    """A config from YAML (optional) with ``overrides`` (field → value, ``None`` = unset)."""
    values: dict[str, Any] = {}
    if path is not None:
        text = Path(path).read_text()
        loaded = yaml.safe_load(text) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} must hold a mapping of config fields.")
        values.update(loaded)
    values.update({k: v for k, v in overrides.items() if v is not None})
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise ValueError(
            f"Unknown config field(s): {', '.join(sorted(unknown))}. "
            "See `arenagym train --help` for the fields."
        )
    return TrainConfig(**values)


def parse_override(name: str, text: str) -> Any:
    """A ``--field value`` from the command line, typed by YAML (``3``, ``true``, ``[a, b]``)."""
    if name not in FIELDS:
        raise ValueError(f"Unknown config field '{name}'. See `arenagym train --help`.")
    value = yaml.safe_load(text)
    return text if value is None and text not in ("null", "~", "") else value
