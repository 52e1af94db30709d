"""A whole winning Wordle game driven through TRL's own tool-call loop, with a scripted
``generate`` (as TRL's tests script generation), checking every reward function's value."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from clients.trl import make_env_factory
from tests.live import LiveServer
from trainer.rewards import WORDLE_REWARDS

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
pytestmark = pytest.mark.slow

SCRIPT = ["slate", "slate", "trace", "crane"]
"""The model's guesses, turn by turn: a miss, a repeat (refused), a closer miss, the win."""


def tool_call(word: str) -> str:
    return f'<tool_call>\n{{"name": "guess", "arguments": {{"word": "{word}"}}}}\n</tool_call><|im_end|>'


def test_scripted_winning_game_through_trl(
    tiny_model: Path, wordle_server: LiveServer, tmp_path: Path
) -> None:
    rows = [{"prompt": [{"role": "user", "content": "Play Wordle."}], "word": "crane", "seed": 0}]
    steps_before = wordle_server.sessions.counters.steps
    trainer = GRPOTrainer(
        model=str(tiny_model),
        reward_funcs=[function for function, _ in WORDLE_REWARDS.values()],
        args=GRPOConfig(
            output_dir=str(tmp_path),
            per_device_train_batch_size=2,
            num_generations=2,
            max_completion_length=512,
            max_steps=1,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            use_cpu=True,
            reward_weights=[weight for _, weight in WORDLE_REWARDS.values()],
            chat_template_kwargs={"enable_thinking": False},
        ),
        train_dataset=Dataset.from_list(rows * 2),
        environment_factory=make_env_factory("wordle", url=wordle_server.url),
    )
    tokenizer = trainer.processing_class
    responses: list[str] = []

    def scripted_generate(prompt_ids: list[list[int]], *args: Any, **kwargs: Any) -> Any:
        """Reply by turn: the number of tool responses already in a prompt says which."""
        completions = []
        for ids in prompt_ids:
            text = tokenizer.decode(ids)
            turn = text.count("<tool_response>")
            if turn:
                responses.append(text.rsplit("<tool_response>", 1)[1])
            reply = tool_call(SCRIPT[turn]) if turn < len(SCRIPT) else "Solved.<|im_end|>"
            completions.append(tokenizer.encode(reply, add_special_tokens=False))
        return completions, None

    trainer._generate_single_turn = scripted_generate  # type: ignore[method-assign]
    trainer.train()

    # both rollouts played all four guesses on the server, through the tool
    assert wordle_server.sessions.counters.steps - steps_before == 2 * len(SCRIPT)
    assert any("Invalid guess" in r and "already guessed" in r for r in responses)
    assert any("Solved!" in r for r in responses)
    logged = trainer.state.log_history[0]
    assert logged["rewards/wordle_correct/mean"] == pytest.approx(1.0)
    assert logged["rewards/wordle_greens/mean"] == pytest.approx(1.0)  # 5 greens / 5
    assert logged["rewards/wordle_yellows/mean"] == pytest.approx(0.2)  # trace: 1 yellow
    assert logged["rewards/wordle_repetition/mean"] == pytest.approx(0.75)  # 3 distinct / 4
    assert logged["reward"] == pytest.approx(3.0 + 1.0 + 0.5 * 0.2 + 1.5 * 0.75)
    assert logged["tools/call_frequency"] > 0 and logged["tools/failure_frequency"] == 0
