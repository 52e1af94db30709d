"""Supervised warm-up: teach a model the game's answer format before GRPO.

A model that never answers in the expected format earns no reward, and GRPO then has nothing
to compare. The warm-up trains on demonstrations (the game's prompt as the one user message,
a worked reply) with loss on the reply alone, rendered exactly as training and evaluation
render prompts, and stops on purpose: once greedy decoding solves ``stop_at`` of a validation
set drawn from the *train* pool (the held-out split is never looked at), so that sampling still
solves more than greedy does and GRPO has headroom.

A game offers a warm-up by declaring ``GameSpec.demonstrations`` (worked replies to a first
observation); the warm-up picks the episodes, plays them and validation in this process, and
leaves out of validation every episode it demonstrated, as ``GameSpec.episode_key`` compares
them.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clients.agent import GameAgent
from clients.trl import make_env_factory
from env_servers.core.spec import GameSpec, load_attribute
from trainer.models import chat_prompt, generate

Validator = Callable[[Any, Any], float]
"""``(model, tokenizer) → greedy solve rate`` on a validation set."""


@dataclass(frozen=True)
class WarmupConfig:
    """Settings of the supervised warm-up."""

    learning_rate: float = 1e-3
    batch_size: int = 128
    max_steps: int = 3000
    lr_warmup_steps: int = 50
    eval_every: int = 50
    stop_at: float = 0.15
    """Stop once the validation solve rate reaches this (1.0: never stop early)."""
    seed: int = 0
    device: str | None = None

    def __post_init__(self) -> None:
        if not 0 < self.stop_at <= 1:
            raise ValueError("stop_at must be in (0, 1]")
        if self.batch_size < 1 or self.max_steps < 1 or self.eval_every < 1:
            raise ValueError("batch_size, max_steps and eval_every must be at least 1")


def encode(tokenizer: Any, examples: Sequence[tuple[str, str]]) -> list[tuple[list[int], int]]:
    """Token ids of each ``(prompt, reply)`` as generation sees them, and the prompt's length."""
    prompts = [chat_prompt(tokenizer, [{"role": "user", "content": p}]) for p, _ in examples]
    replies = [reply + tokenizer.eos_token for _, reply in examples]
    prompt_ids = tokenizer(prompts, add_special_tokens=False)["input_ids"]
    reply_ids = tokenizer(replies, add_special_tokens=False)["input_ids"]
    return [(p + r, len(p)) for p, r in zip(prompt_ids, reply_ids, strict=True)]


def _batch(rows: Sequence[tuple[list[int], int]], pad_id: int, device: Any) -> dict[str, Any]:
    import torch

    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for i, (row, prompt_len) in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
        labels[i, prompt_len : len(row)] = ids[i, prompt_len : len(row)]
    return {
        "input_ids": ids.to(device),
        "attention_mask": mask.to(device),
        "labels": labels.to(device),
    }


def supervised_warmup(
    model_dir: str | Path,
    output_dir: str | Path,
    examples: Sequence[tuple[str, str]],
    validate: Validator,
    config: WarmupConfig = WarmupConfig(),
    log: Callable[[str], None] = print,
    extra: Mapping[str, Any] | None = None,
    on_step: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Train ``model_dir`` on ``examples`` until ``validate`` reaches ``config.stop_at`` (or
    ``max_steps``), save the model and tokenizer to ``output_dir`` with ``warmup.json``
    (settings, validation curve, why it stopped, and ``extra``), and return that record.
    ``on_step(step)`` follows each optimiser step (a progress bar)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trainer.models import default_device

    device = config.device or default_device()
    torch.manual_seed(config.seed)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model: Any = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    model = model.to(device)
    tokenizer.padding_side = "left"
    rows = encode(tokenizer, examples)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / max(1, config.lr_warmup_steps))
    )
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.startswith("cuda"))
    rng = random.Random(config.seed)
    order: list[int] = []
    history: list[dict[str, float]] = []
    started = time.perf_counter()
    stopped = "max_steps"
    step = 0
    for step in range(1, config.max_steps + 1):
        model.train()
        if len(order) < config.batch_size:
            order += rng.sample(range(len(rows)), len(rows))
        picked, order = order[: config.batch_size], order[config.batch_size :]
        batch = _batch([rows[i] for i in picked], tokenizer.pad_token_id, device)
        with autocast:
            loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        if on_step is not None:
            on_step(step)
        if step % config.eval_every == 0 or step == config.max_steps:
            loss = loss.detach()
            model.eval()
            rate = validate(model, tokenizer)
            epoch = step * config.batch_size / len(rows)
            history.append({"step": step, "loss": float(loss), "solve_rate": rate, "epoch": epoch})
            log(f"warm-up step {step}: loss {float(loss):.3f}, validation solve rate {rate:.1%}")
            if rate >= config.stop_at:
                stopped = f"validation solve rate {rate:.3f} reached stop_at {config.stop_at}"
                break
            if not math.isfinite(float(loss)):
                stopped = "loss is not finite"
                break
    model.eval()
    output_dir = Path(output_dir)
    model.save_pretrained(output_dir)
    tokenizer.padding_side = "right"
    tokenizer.save_pretrained(output_dir)
    record = {
        "config": asdict(config),
        "examples": len(rows),
        "steps": step,
        "stopped": stopped,
        "seconds": time.perf_counter() - started,
        "history": history,
        **(extra or {}),
    }
    (output_dir / "warmup.json").write_text(json.dumps(record, indent=2))
    return record


# -- a game's demonstrations and validation ------------------------------------------------

DEMONSTRATION_SEED_STRIDE = 10**7
"""Warm-up seed ``s`` demonstrates the train-pool episodes of game seeds ``s * STRIDE ..``."""
VALIDATION_SEED_BASE = 10**9
"""Validation episodes come from train-pool seeds far from any demonstration's."""
VALIDATION_TRIES_PER_EPISODE = 50
"""Seeds tried per validation episode before the game is judged too small for it."""


class NoDemonstrations(ValueError):
    """The game declares no demonstrations (``GameSpec.demonstrations``)."""


@dataclass(frozen=True)
class Demonstration:
    """A worked reply to an episode's answer-mode prompt, and the episode it answers (as
    ``GameSpec.episode_key`` identifies it, else its prompt)."""

    prompt: str
    reply: str
    episode: Hashable


def demonstration_maker(spec: GameSpec) -> Callable[..., Iterable[str]]:
    """The game's ``GameSpec.demonstrations`` function; ``NoDemonstrations`` where it declares
    none."""
    if spec.demonstrations is None:
        raise NoDemonstrations(
            f"{spec.name} declares no demonstrations (GameSpec.demonstrations), so it has no "
            "warm-up."
        )
    return load_attribute(spec.demonstrations)


def demonstrations(
    spec: GameSpec, seed: int, count: int, per_episode: int, reset: Mapping[str, Any]
) -> list[Demonstration]:
    """``per_episode`` different worked replies (as the game gives them) to each of ``count``
    train-pool episodes (game seeds ``seed * DEMONSTRATION_SEED_STRIDE ..``, made with the
    ``reset`` fields, played in this process), shuffled by ``seed``."""
    replies = demonstration_maker(spec)
    rng = random.Random(f"{spec.name}-demonstrations-{seed}")
    agent = _answer_agent(spec, reset)
    found: list[Demonstration] = []
    try:
        first = seed * DEMONSTRATION_SEED_STRIDE
        for game_seed in range(first, first + count):
            observation = _first_observation(agent, game_seed)
            prompt, episode = _prompt(spec, observation), _episode(spec, observation)
            found += [
                Demonstration(prompt, reply, episode)
                for reply in replies(observation, per_episode, rng)
            ]
    finally:
        _close(agent)
    rng.shuffle(found)
    return found


def _answer_agent(spec: GameSpec, reset: Mapping[str, Any]) -> GameAgent:
    """A fresh answer-mode agent with the game in this process."""
    fields = {k: v for k, v in reset.items() if k != "split"}
    factory = make_env_factory(spec, mode="answer", transport="inprocess", **fields)
    return factory()


def _first_observation(agent: GameAgent, seed: int, split: str = "train") -> Any:
    return agent._reset({"seed": seed, "split": split}).observation


def _prompt(spec: GameSpec, observation: Any) -> str:
    assert spec.answer_prompt is not None  # answer mode: the spec checks it
    return spec.answer_prompt(observation)


def _episode(spec: GameSpec, observation: Any) -> Hashable:
    """What identifies the episode: the game's ``episode_key``, else its prompt."""
    if spec.episode_key is not None:
        return spec.episode_key(observation)
    return _prompt(spec, observation)


def _close(agent: GameAgent) -> None:
    if agent._client is not None:
        agent._client.close()


def episode_keys(
    spec: GameSpec, seeds: Iterable[int], reset: Mapping[str, Any], split: str = "train"
) -> set[Hashable]:
    """The episodes of ``seeds`` of ``split``, as the game identifies them."""
    agent = _answer_agent(spec, reset)
    try:
        return {_episode(spec, _first_observation(agent, seed, split)) for seed in seeds}
    finally:
        _close(agent)


def validation_seeds(
    spec: GameSpec,
    seed: int,
    count: int,
    reset: Mapping[str, Any],
    exclude: Collection[Hashable] = (),
    split: str = "train",
) -> list[int]:
    """``count`` seeds of ``split`` (the train pool by default) of episodes that differ from
    each other and from ``exclude`` (e.g. the demonstrations' ``episode``), compared as the
    game identifies episodes (``GameSpec.episode_key``: a puzzle shown in another order is the
    same episode), so the warm-up's stop is judged on episodes it never saw."""
    if count <= 0:
        return []
    agent = _answer_agent(spec, reset)
    seen = set(exclude)
    seeds: list[int] = []
    first = VALIDATION_SEED_BASE + seed * 10**6
    tries = VALIDATION_TRIES_PER_EPISODE * count
    try:
        for candidate in range(first, first + tries):
            episode = _episode(spec, _first_observation(agent, candidate, split))
            if episode not in seen:
                seen.add(episode)
                seeds.append(candidate)
                if len(seeds) == count:
                    return seeds
    finally:
        _close(agent)
    raise ValueError(
        f"only {len(seeds)} of {tries} {spec.name} episodes tried differ from those left "
        f"out (the demonstrated ones) and each other, short of the {count} needed: these reset "
        "fields make too few different episodes (a fixed one, or too small a game)"
    )


def answer_validator(
    spec: GameSpec,
    seeds: Sequence[int],
    reset: Mapping[str, Any],
    max_new_tokens: int = 64,
    batch_size: int = 256,
    split: str = "train",
) -> Validator:
    """Greedy solve rate on episodes ``seeds`` of ``split`` in answer mode, each reply judged
    by the game (in this process)."""
    solved_reward = spec.rewards[spec.solved].function

    def validate(model: Any, tokenizer: Any) -> float:
        solved = 0
        agent = _answer_agent(spec, reset)
        try:
            episodes = [(s, _prompt(spec, _first_observation(agent, s, split))) for s in seeds]
            for start in range(0, len(episodes), batch_size):
                chunk = episodes[start : start + batch_size]
                prompts = [
                    chat_prompt(tokenizer, [{"role": "user", "content": p}]) for _, p in chunk
                ]
                replies = generate(model, tokenizer, prompts, max_new_tokens=max_new_tokens)
                for (seed, _), ids in zip(chunk, replies, strict=True):
                    agent._reset({"seed": seed, "split": split})
                    agent._answer(tokenizer.decode(ids, skip_special_tokens=True))
                    solved += solved_reward(agent) >= 1.0
        finally:
            _close(agent)
        return solved / max(1, len(episodes))

    return validate
