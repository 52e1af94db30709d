"""A tiny Qwen3 model and tokenizer built offline, deterministically.

``model: tiny`` in a config names this model: the whole pipeline (train, checkpoint, evaluate,
report) then runs on a CPU in a minute with no network. The tokenizer is a byte-level BPE
trained in memory on a fixed corpus, with Qwen's special tokens and TRL's exact Qwen3 chat
template, so TRL recognises it for tool calling; the weights are a random initialisation
from a fixed seed, warmed up briefly on every registered game's example moves (tool calls
and answers), as their declarations give them.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

TINY_MODEL = "tiny"
"""The reserved model name."""
MARKER = "arenagym-tiny-model.json"
"""A file in the tiny model's folder that says what the folder holds."""

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
]
VOCAB_SIZE = 512
SEED = 1234
WARMUP_STEPS = 150
WARMUP_EXAMPLES = 12
"""Next-token steps on game-shaped replies, so the tiny model already calls tools and
writes answer tags: a random model never would, and GRPO would have nothing to reward."""
_CORPUS = [
    "0 1 2 3 4 5 6 7 8 9 + - * / ( ) = . , : ; ! ? user assistant system tool",
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    '<tool_call>\n{"name": "x", "arguments": {"y": "z"}}\n</tool_call> <answer></answer>',
]
"""The tokenizer's base corpus; every game's warm-up conversations are added to it."""


def _config_version() -> str:
    """Changes whenever what would be built here changes, so a stale cache is rebuilt: the
    settings, the warm-up conversations (the games' texts), and the versions of the libraries
    whose numerics and templates shape the result."""
    from importlib.metadata import version

    conversations = [
        (messages, [f"{tool.__qualname__}{tool.__doc__}" for tool in tools or ()])
        for messages, tools in _warmup_conversations()
    ]
    libraries = [version(name) for name in ("torch", "transformers", "tokenizers", "trl")]
    parts = [SPECIAL_TOKENS, VOCAB_SIZE, SEED, _CORPUS, WARMUP_STEPS, _ARCH, conversations]
    return hashlib.sha256(json.dumps([*parts, libraries, 4]).encode()).hexdigest()[:12]


_ARCH: dict[str, Any] = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 16,
}


Conversation = tuple[list[dict[str, str]], list[Any] | None]


def _warmup_conversations() -> list[Conversation]:
    """Conversations exactly as training renders them (each game's instruction, opening text
    and prompts, tool schemas included), each ending in a well-formed reply that the game's
    declaration provides: a tool call in tools mode, an answer in answer mode; every
    registered game and mode in turn. Families' members (dozens of games behind one adapter,
    some with long boards) are left out: they would crowd the few examples and lengthen every
    padded row, for a model that only checks the pipeline."""
    import random

    from clients.trl import make_env_factory
    from env_servers.core.registry import load_spec, registered

    kinds = []
    for game in registered():
        spec = load_spec(game)
        if "tools" in spec.modes and spec.example_call is not None:
            kinds.append((spec, "tools"))
        if "answer" in spec.modes and spec.example_answer is not None:
            kinds.append((spec, "answer"))
    rng = random.Random(SEED)
    agents = {
        (spec.name, mode): make_env_factory(spec, transport="inprocess", mode=mode)()  # type: ignore[arg-type]
        for spec, mode in kinds
    }
    conversations: list[Conversation] = []
    for i in range(WARMUP_EXAMPLES if kinds else 0):
        spec, mode = kinds[i % len(kinds)]
        agent = agents[spec.name, mode]
        observation = agent._reset({"seed": i}).observation
        tools: list[Any] | None = None
        if mode == "tools":
            assert spec.example_call is not None
            user = spec.instruction + (agent._opening(observation) or "")
            call = spec.example_call(observation, rng)
            reply = f"<tool_call>\n{json.dumps({'name': call.name, 'arguments': call.arguments})}\n</tool_call>"
            tools = [getattr(spec.agent, name) for name in spec.tool_names()]
        else:
            assert spec.answer_prompt is not None and spec.example_answer is not None
            user, reply = spec.answer_prompt(observation), spec.example_answer(observation, rng)
        messages = [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
        conversations.append((messages, tools))
    for agent in agents.values():
        if agent._client is not None:
            agent._client.close()
    return conversations


def _warmup_texts(tokenizer: Any) -> list[str]:
    return [
        tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, enable_thinking=False)
        for messages, tools in _warmup_conversations()
    ]


def _warm_up(model: object, tokenizer: object, progress: bool = False) -> None:
    import torch

    from trainer.progress import step_bars

    texts = _warmup_texts(tokenizer)
    batch = tokenizer(texts, return_tensors="pt", padding=True)  # type: ignore[operator]
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    # learn only the replies: everything up to the last assistant header is context
    header = tokenizer("<|im_start|>assistant", add_special_tokens=False)["input_ids"][0]  # type: ignore[operator]
    for row in range(labels.shape[0]):
        starts = (batch["input_ids"][row] == header).nonzero()
        labels[row, : int(starts[-1]) + 1] = -100
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)  # type: ignore[attr-defined]
    model.train()  # type: ignore[attr-defined]
    with step_bars(progress, stderr=True) as bars:
        task = bars.add_task("Warming the tiny model up", total=WARMUP_STEPS)
        for _ in range(WARMUP_STEPS):
            loss = model(**batch, labels=labels).loss  # type: ignore[operator]
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            bars.advance(task)
    model.eval()  # type: ignore[attr-defined]


def default_cache_dir() -> Path:
    root = os.environ.get("ARENAGYM_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "arenagym"
    )
    return Path(root) / f"tiny-model-{_config_version()}"


def write_tiny_model(directory: str | Path, progress: bool = False) -> Path:
    """Build the tiny model and tokenizer and save both to ``directory``."""
    from trainer.smallmodel import build_tokenizer, new_model, save_model

    texts = [m["content"] for messages, _ in _warmup_conversations() for m in messages]
    tokenizer = build_tokenizer((_CORPUS + texts) * 4, VOCAB_SIZE, split_digits=False)
    model = new_model(tokenizer, _ARCH, max_positions=4096, seed=SEED)
    _warm_up(model, tokenizer, progress)
    directory = save_model(model, tokenizer, directory)
    (directory / MARKER).write_text(json.dumps({"version": _config_version()}) + "\n")
    return directory


def is_tiny_model(directory: str | Path) -> bool:
    """Whether a model folder holds the tiny offline model (reports say what it shows)."""
    return (Path(directory) / MARKER).is_file()


def tiny_model_path(cache_dir: str | Path | None = None) -> Path:
    """The cached tiny model, built on first use (atomically, so parallel runs are safe)."""
    import shutil
    import sys

    target = Path(cache_dir) if cache_dir else default_cache_dir()
    if (target / "config.json").exists():
        return target
    print(f"Building the tiny offline model (once; cached in {target})…", file=sys.stderr)
    staging = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    try:
        write_tiny_model(staging, progress=True)
        staging.rename(target)
    except OSError:  # another process finished first
        if not (target / "config.json").exists():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # never leave a half-built model behind
    return target
