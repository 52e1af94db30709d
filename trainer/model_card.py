"""The model card (``README.md``) of a training run's output directory.

TRL's own card links the base model on the Hub and names a local base "None"; this one says
what was trained, from what, on which games and how it went, and links only Hub ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainer.config import TrainConfig
from trainer.tiny import TINY_MODEL


def hub_id(name: str) -> str | None:
    """``name`` when it reads as a Hub id (``owner/model``) and is no local path."""
    local = name.startswith((".", "/", "~")) or Path(name).expanduser().exists()
    return name if name.count("/") == 1 and not local else None


def model_card(config: TrainConfig, metrics: dict[str, Any] | None = None) -> str:
    """The card's Markdown, with Hugging Face front matter."""
    from env_servers.core.registry import load_spec

    games = config.game_list
    hub_base = hub_id(config.model)
    tags = ", ".join(["arenagym", "grpo", "trl", *games])
    front = ["---", "library_name: transformers", f"tags: [{tags}]"]
    if hub_base:
        front.append(f"base_model: {hub_base}")
    front.append("---")
    base = f"[{hub_base}](https://huggingface.co/{hub_base})" if hub_base else f"`{config.model}`"
    lines = [*front, "", f"# {Path(config.output_dir).name}", ""]
    lines.append(
        f"Trained from {base} with GRPO (TRL) by arenagym, against the game servers of "
        + ", ".join(f"**{game}** ({config.mode_for(game)} mode)" for game in games)
        + "; every reward was verified by a game server."
    )
    lines += ["", "| Game | Rewards (weight) |", "|---|---|"]
    for game in games:
        weights = config.reward_weights(game)
        if config.server_reward:
            weights = {"the server's own reward": 1.0}
        described = ", ".join(f"{name} ({weight:g})" for name, weight in weights.items())
        lines.append(f"| {game}: {load_spec(game).description} | {described} |")
    lines += [
        "",
        f"Settings: {config.episodes} episodes, {config.num_generations} completions per "
        f"prompt, learning rate {config.learning_rate:g}, "
        + ("LoRA" if config.lora else "full fine-tuning")
        + f", {config.max_completion_length} completion tokens.",
    ]
    if metrics:
        rate = metrics.get("solve_rate")
        lines += [
            "",
            f"At step {metrics.get('step')}: reward {metrics.get('reward', float('nan')):.3f}"
            + (f", solve rate {rate:.1%}" if isinstance(rate, int | float) else "")
            + " (training batch). Evaluate held-out episodes with `arenagym eval`.",
        ]
    if config.model == TINY_MODEL:
        lines += [
            "",
            "The tiny offline model checks the pipeline end to end; it is not expected to learn.",
        ]
    return "\n".join(lines) + "\n"


def write_model_card(config: TrainConfig, metrics: dict[str, Any] | None = None) -> Path:
    path = Path(config.output_dir) / "README.md"
    path.write_text(model_card(config, metrics), encoding="utf-8")
    return path
