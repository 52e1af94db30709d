"""A real GRPOTrainer with the tiny offline model, trained against live game servers through
the adapters."""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from clients.trl import make_env_factory
from env_servers.core.registry import load_spec
from env_servers.countdown.game import solve
from tests.live import LiveServer
from trainer.rewards import WORDLE_REWARDS, reward_functions

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
pytestmark = pytest.mark.slow


def grpo_config(output_dir: Path, **overrides: Any) -> GRPOConfig:
    values: dict[str, Any] = {
        "output_dir": str(output_dir),
        "per_device_train_batch_size": 4,
        "num_generations": 2,
        "max_completion_length": 96,
        "max_steps": 2,
        "learning_rate": 1e-3,
        "logging_steps": 1,
        "report_to": "none",
        "save_strategy": "no",
        "use_cpu": True,
        "bf16": False,
        "seed": 0,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    return GRPOConfig(**{**values, **overrides})


def episodes(game: str, n: int) -> Dataset:
    prompt = load_spec(game).instruction
    rows = [
        {"prompt": [{"role": "user", "content": prompt}], "seed": i, "split": "train"}
        for i in range(n)
    ]
    return Dataset.from_list(rows)


def test_grpo_trains_wordle_through_the_guess_tool(
    tiny_model: Path, wordle_server: LiveServer, tmp_path: Path
) -> None:
    played: dict[int, set[str]] = defaultdict(set)
    rollouts: dict[int, int] = defaultdict(int)

    def record_secret(
        completions: list[Any], environments: list[Any], seed: list[int], **_: Any
    ) -> list[float]:
        """Peek at the server's side of each rollout's session: which word it played."""
        for env, row_seed in zip(environments, seed, strict=True):
            session = wordle_server.sessions.sessions[env._client.session_id]
            played[row_seed].add(session.env._game.secret)
            rollouts[row_seed] += 1
        return [0.0] * len(completions)

    resets_before = wordle_server.sessions.counters.resets
    functions = [function for function, _ in WORDLE_REWARDS.values()]
    weights = [weight for _, weight in WORDLE_REWARDS.values()]
    trainer = GRPOTrainer(
        model=str(tiny_model),
        reward_funcs=[*functions, record_secret],
        args=grpo_config(tmp_path, reward_weights=[*weights, 0.0]),
        train_dataset=episodes("wordle", 8),
        environment_factory=make_env_factory("wordle", url=wordle_server.url),
    )
    trainer.train()

    # every rollout's episode was started on the server (2 steps x 4 rollouts); whether the
    # sampled replies call the tool depends on the model (the scripted tests cover that path)
    assert wordle_server.sessions.counters.resets - resets_before == 8
    logged = {key for entry in trainer.state.log_history for key in entry}
    for name in ("wordle_correct", "wordle_greens", "wordle_yellows", "wordle_repetition"):
        assert f"rewards/{name}/mean" in logged
    assert rollouts and all(count % 2 == 0 for count in rollouts.values())
    assert all(len(words) == 1 for words in played.values()), played  # a GRPO group, one word


def test_grpo_trains_countdown_through_the_submit_tool(
    tiny_model: Path, countdown_server: LiveServer, tmp_path: Path
) -> None:
    """Generation is scripted, so the tool path is exercised on any machine: in each GRPO
    group one rollout submits a solution and the other a wrong answer, and the server's
    verdicts become the rewards GRPO learns from."""
    resets_before = countdown_server.sessions.counters.resets
    steps_before = countdown_server.sessions.counters.steps
    trainer = GRPOTrainer(
        model=str(tiny_model),
        reward_funcs=reward_functions(load_spec("countdown"), {"correct": 1.0})[0],
        args=grpo_config(tmp_path, max_completion_length=128),
        train_dataset=episodes("countdown", 8),
        environment_factory=make_env_factory("countdown", url=countdown_server.url, attempts=2),
    )
    tokenizer = trainer.processing_class
    verdicts: list[str] = []

    def scripted_generate(prompt_ids: list[list[int]], *args: Any, **kwargs: Any) -> Any:
        """First turn: even rollouts solve the puzzle in their prompt, odd ones add the
        numbers up (wrong unless that happens to be the target); then stop."""
        completions = []
        for index, ids in enumerate(prompt_ids):
            text = tokenizer.decode(ids)
            if "<tool_response>" in text:
                verdicts.append(text.rsplit("<tool_response>", 1)[1])
                reply = "Done.<|im_end|>"
            else:
                numbers, target = puzzle_in(text)
                expression = solve(numbers, target) if index % 2 == 0 else None
                reply = submit_call(expression or " + ".join(map(str, numbers)))
            completions.append(tokenizer.encode(reply, add_special_tokens=False))
        return completions, None

    trainer._generate_single_turn = scripted_generate  # type: ignore[method-assign]
    trainer.train()

    assert countdown_server.sessions.counters.resets - resets_before == 8
    assert countdown_server.sessions.counters.steps - steps_before == 8  # one submit each
    assert sum(v.startswith("\nCorrect:") for v in verdicts) >= 4
    assert any(v.startswith("\nWrong:") for v in verdicts)
    for logged in trainer.state.log_history[:2]:
        assert logged["rewards/countdown_correct/mean"] >= 0.5
        assert logged["tools/call_frequency"] > 0 and logged["tools/failure_frequency"] == 0


def puzzle_in(prompt: str) -> tuple[list[int], int]:
    """The numbers and target of the adapter's opening text in a rendered prompt."""
    found = re.search(r"Numbers: ([\d, ]+)\. Target: (\d+)\.", prompt)
    assert found, prompt
    return [int(n) for n in found.group(1).split(", ")], int(found.group(2))


def submit_call(expression: str) -> str:
    call = {"name": "submit", "arguments": {"expression": expression}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call><|im_end|>"
