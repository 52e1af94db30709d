"""The learning benchmark's pieces on a CPU: solutions, the small model, the warm-up, answer
judging over several sessions, the time limit, and (slow) every stage end to end at tiny
sizes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from env_servers.countdown.expression import verify_message
from env_servers.countdown.solutions import solutions

ROOT = Path(__file__).resolve().parents[2]
RESET = {"n_numbers": 4, "max_num": 9}


def test_every_solution_is_right_and_its_worked_steps_distinct() -> None:
    found = solutions((3, 9, 7, 2), 20)
    assert found
    assert len({(s.expression, s.steps) for s in found}) == len(found)
    for solution in found:
        assert verify_message(solution.reply(), [3, 9, 7, 2], 20).correct
        assert solution.steps[-1].endswith("=20")


def _countdown_demonstrations(count: int, per_episode: int, seed: int = 0) -> list[Any]:
    from env_servers.core.registry import load_spec
    from trainer.warmup import demonstrations

    return demonstrations(load_spec("countdown"), seed, count, per_episode, RESET)


def test_demonstrations_come_from_the_train_pool_with_several_solutions() -> None:
    from env_servers.countdown.game import pool_of

    shown = _countdown_demonstrations(40, 3)
    assert len(shown) > 40  # several solutions for most puzzles
    assert len({d.episode for d in shown}) <= 40
    for demonstration in shown:
        numbers, target = demonstration.episode
        assert pool_of(numbers, target) == "train"
        assert verify_message(demonstration.reply, list(numbers), target).correct
    assert shown == _countdown_demonstrations(40, 3)
    assert shown != _countdown_demonstrations(40, 3, seed=1)


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trainer.smallmodel import build_model

    corpus = [text for pair in _examples(20) for text in pair]
    arch = {
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 16,
    }
    return build_model(tmp_path_factory.mktemp("small"), corpus, arch=arch, vocab_size=400)


def _examples(puzzles: int) -> list[tuple[str, str]]:
    return [(d.prompt, d.reply) for d in _countdown_demonstrations(puzzles, 2)]


def test_demonstrations_answer_the_game_s_own_prompt_and_validation_avoids_their_puzzles() -> None:
    from env_servers.core.registry import load_spec
    from trainer.warmup import validation_seeds

    spec = load_spec("countdown")
    shown = _countdown_demonstrations(300, 1)
    agent = spec.client.in_process()
    try:
        observation = agent.reset(seed=0, split="train", **RESET).observation
        assert spec.answer_prompt is not None and spec.episode_key is not None
        assert spec.answer_prompt(observation) in {d.prompt for d in shown}  # seeds 0..299
        demonstrated = {d.episode for d in shown}
        seeds = validation_seeds(spec, 0, 60, RESET, exclude=demonstrated)
        validated = {
            spec.episode_key(agent.reset(seed=s, split="train", **RESET).observation) for s in seeds
        }
    finally:
        agent.close()
    assert len(seeds) == 60 == len(validated)  # distinct puzzles, not only distinct prompts
    assert not validated & demonstrated  # a demonstrated puzzle reordered is excluded too


def test_small_model_splits_digits_and_renders_the_qwen3_template(small_model: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(small_model))
    assert tokenizer.tokenize("123") == ["1", "2", "3"]
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert text.startswith("<|im_start|>user\nhi<|im_end|>")


def test_warmup_learns_only_the_reply_and_records_its_curve(
    small_model: Path, tmp_path: Path
) -> None:
    from transformers import AutoTokenizer

    from trainer.warmup import WarmupConfig, encode, supervised_warmup

    examples = _examples(10)
    tokenizer = AutoTokenizer.from_pretrained(str(small_model))
    (ids, prompt_len), *_ = encode(tokenizer, examples)
    assert tokenizer.decode(ids[prompt_len:]).startswith(examples[0][1])
    calls: list[int] = []

    def validate(model: object, tokenizer: object) -> float:
        calls.append(1)
        return 0.5 if len(calls) == 2 else 0.0

    config = WarmupConfig(batch_size=4, max_steps=10, eval_every=2, stop_at=0.5, device="cpu")
    record = supervised_warmup(small_model, tmp_path / "warm", examples, validate, config)
    assert record["steps"] == 4 and "stop_at" in record["stopped"]
    assert [h["step"] for h in record["history"]] == [2, 4]
    assert json.loads((tmp_path / "warm" / "warmup.json").read_text())["steps"] == 4
    assert (tmp_path / "warm" / "config.json").is_file()


def test_answer_judge_over_several_sessions_gives_one_sessions_verdicts(
    countdown_server: object,
) -> None:
    from clients.trl import make_env_factory
    from trainer.rewards import AnswerJudge, reward_functions

    seeds = list(range(12))
    local = make_env_factory("countdown", mode="answer", transport="inprocess", **RESET)()
    answers = []
    for seed in seeds:
        observation = local._reset({"seed": seed, "split": "train"}).observation
        found = solutions(observation.numbers, observation.target)
        answers.append(found[0].reply() if seed % 2 and found else "<answer>1</answer>")
    columns = {"seed": seeds, "split": ["train"] * 12}
    spec = local._game_spec
    (one,), _ = reward_functions(spec, {"correct": 1.0}, AnswerJudge(local))
    expected = one(answers, **columns)
    url = countdown_server.url  # type: ignore[attr-defined]
    remote = make_env_factory("countdown", url=url, mode="answer", **RESET)
    judge = AnswerJudge([remote() for _ in range(3)])
    try:
        (pooled,), _ = reward_functions(spec, {"correct": 1.0}, judge)
        assert pooled(answers, **columns) == expected
        early = list(answers)  # judged as soon as the replies exist, collected by the reward
        judge.start(early, columns)
        assert pooled(early, **columns) == expected
        judge.start(list(answers), columns)  # started on other replies: judged again
        flipped = [answers[1], answers[0], *answers[2:]]
        flipped_columns = {"seed": [1, 0, *seeds[2:]], "split": columns["split"]}
        assert pooled(flipped, **flipped_columns) == [expected[1], expected[0], *expected[2:]]
    finally:
        judge.close()
        for agent in judge.agents:
            assert agent._client is not None
            agent._client.close()
    assert sum(v or 0.0 for v in expected) >= 3


def test_time_limit_stops_training() -> None:
    from types import SimpleNamespace

    from trainer.timelimit import TimeLimit

    control = SimpleNamespace(should_training_stop=False, should_save=False)
    TimeLimit(None).on_step_end(None, None, control)
    assert not control.should_training_stop
    limit = TimeLimit(0.0)
    limit.on_train_begin(None, None, control)
    limit.on_step_end(None, None, control)
    assert control.should_training_stop and control.should_save


def test_selection_puzzles_are_eval_pool_puzzles_the_eval_stage_does_not_score(
    tmp_path: Path,
) -> None:
    from benchmarks.learning.selection import selection_seeds
    from benchmarks.learning.settings import TINY
    from benchmarks.learning.stages import Run
    from clients.trl import make_env_factory
    from env_servers.core.registry import load_spec

    settings = replace(TINY, selection_puzzles=40, eval_episodes=300)
    run = Run(3, tmp_path, settings, url="")
    seeds = selection_seeds(run)
    assert len(seeds) == 40 == len(set(seeds))
    spec = load_spec("countdown")
    assert spec.episode_key is not None
    agent = make_env_factory(spec, mode="answer", transport="inprocess", **settings.reset)()

    def key(seed: int, split: str) -> object:
        return spec.episode_key(agent._reset({"seed": seed, "split": split}).observation)

    chosen = {key(seed, "eval") for seed in seeds}
    assert len(chosen) == 40  # distinct puzzles, not only distinct prompts
    held_out = {key(seed, "eval") for seed in range(settings.eval_episodes)}
    assert not chosen & held_out
    assert selection_seeds(run) == seeds
    assert selection_seeds(Run(4, tmp_path, settings, url="")) != seeds


def _perturbed_copy(source: Path, out: Path, scale: float) -> Path:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(source), dtype=torch.float32)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(scale)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(str(source)).save_pretrained(out)
    return out


def test_an_average_of_models_has_the_mean_weights_and_loads(
    small_model: Path, tmp_path: Path
) -> None:
    import torch

    from benchmarks.learning.averaging import average_models
    from trainer.models import load_model

    double = _perturbed_copy(small_model, tmp_path / "double", 2.0)
    out = average_models([small_model, double], tmp_path / "mean")
    assert not (tmp_path / "mean.partial").exists()
    mean, tokenizer = load_model(str(out), device="cpu")
    one, _ = load_model(str(small_model), device="cpu")
    for (name, got), (_, want) in zip(
        mean.state_dict().items(), one.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(got, want * 1.5, msg=name)
    assert tokenizer.tokenize("123") == ["1", "2", "3"]


def test_averages_are_of_the_last_checkpoints_and_made_once(
    small_model: Path, tmp_path: Path
) -> None:
    from benchmarks.learning.selection import averages
    from benchmarks.learning.settings import TINY
    from benchmarks.learning.stages import Run

    (tmp_path / "train").mkdir()
    found = []
    for step, scale in ((10, 1.0), (20, 2.0), (30, 3.0)):
        _perturbed_copy(small_model, tmp_path / f"train/checkpoint-{step}", scale)
        found.append((f"train/checkpoint-{step}", step))
    run = Run(0, tmp_path, replace(TINY, average_windows=(2, 3, 8)), url="")
    made = averages(run, found)
    assert made == [("select/average-20-30", [20, 30]), ("select/average-10-30", [10, 20, 30])]
    written = (tmp_path / "select/average-20-30/model.safetensors").stat().st_mtime_ns
    assert averages(run, found) == made  # the same windows again: reused, not rewritten
    assert (tmp_path / "select/average-20-30/model.safetensors").stat().st_mtime_ns == written
    assert averages(run, found[:1]) == []  # one checkpoint: nothing to average


def test_averaging_refuses_lora_adapters(tmp_path: Path) -> None:
    from benchmarks.learning.averaging import average_models

    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text("{}")
    with pytest.raises(ValueError, match="LoRA adapter"):
        average_models([tmp_path / "adapter"], tmp_path / "out")


@pytest.mark.slow
def test_every_stage_runs_at_tiny_sizes(tmp_path: Path) -> None:
    from benchmarks.learning.__main__ import main

    main(["countdown", "--seed", "1", "--profile", "tiny", "--out", str(tmp_path)])
    summary = json.loads((tmp_path / "report" / "learning.json").read_text())
    assert summary["eval"]["episodes"] == 6
    assert set(summary["eval"]["buckets"]) == {"fixed", "both_solved", "both_failed", "regressed"}
    assert summary["eval"]["base_sampled"]["samples"] == 2
    assert summary["overhead"]["inprocess"]["step_s"] > 0
    assert summary["training"]["steps"] == 2
    assert summary["training"]["calls"] == 1
    selection = summary["selection"]
    assert selection["puzzles"] == 8
    assert [c["step"] for c in selection["candidates"]] == [1, 2, 2]
    assert selection["candidates"][-1]["averaged"] == [1, 2]
    evaluated = json.loads((tmp_path / "eval.json").read_text())["model"]
    assert evaluated == selection["selected"]
    trained = json.loads((tmp_path / "eval-trained" / "results.json").read_text())["models"][1]
    assert trained["source"] == str(tmp_path / selection["selected"])
    assert (tmp_path / "report" / "learning.png").stat().st_size > 0

    # the train stage again: training goes on from the last checkpoint, the record adds up
    again = ["--stage", "train", "--force", "--set", "max_steps=3"]
    main(["countdown", "--seed", "1", "--profile", "tiny", "--out", str(tmp_path), *again])
    record = json.loads((tmp_path / "train.json").read_text())
    assert [call["max_steps"] for call in record["calls"]] == [2, 3]  # each call's own limits
    assert record["seconds"] == sum(call["seconds"] for call in record["calls"])
    assert (tmp_path / "train" / "checkpoint-3").is_dir()
    steps = [json.loads(line)["step"] for line in (tmp_path / "train" / "metrics.jsonl").open()]
    assert steps == [1, 3]  # rewards are logged on generation steps, every num_iterations


def test_the_small_model_config_trains_as_the_learning_benchmark(tmp_path: Path) -> None:
    """``configs/countdown-small.yaml`` is what the README offers for the measured result, so
    every training field it sets is the benchmark's (its time limit is for one whole run)."""
    import yaml

    from benchmarks.learning.settings import GPU
    from benchmarks.learning.stages import Run, train_config
    from trainer.config import load_config

    shipped = yaml.safe_load((ROOT / "configs" / "countdown-small.yaml").read_text())
    run = Run(0, tmp_path, GPU, "http://127.0.0.1:1")
    benchmark = yaml.safe_load(train_config(run, tmp_path / "train").read_text())
    differ = {
        key: (value, benchmark[key])
        for key, value in shipped.items()
        if key not in {"model", "output_dir", "max_time_s"} and benchmark.get(key) != value
    }
    assert not differ
    assert load_config(ROOT / "configs" / "countdown-small.yaml").max_time_s == 2 * GPU.max_time_s
