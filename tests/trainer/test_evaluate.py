"""Evaluation against live game servers with the tiny offline model, and model loading."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from clients.trl import make_env_factory
from env_servers.countdown.client import CountdownClient
from tests.live import LiveServer
from trainer.evaluate import BUCKETS, evaluate, record
from trainer.models import (
    ModelLoadError,
    chat_prompt,
    generate,
    latest_checkpoint,
    load_model,
    resolve_model,
    stop_token_ids,
)
from trainer.rollouts import ENDINGS, ReplyParser, Rollout, agent_tools, parse_tool_calls, play_turn
from trainer.views import load_view


@pytest.fixture(scope="module")
def tiny_copy(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model under another name: a second "model" with the same weights."""
    return Path(shutil.copytree(tiny_model, tmp_path_factory.mktemp("copy") / "trained"))


# -- answer mode ---------------------------------------------------------------------------


def test_answer_mode_eval_of_two_models_is_judged_by_the_server(
    tiny_model: Path, tiny_copy: Path, countdown_server: LiveServer
) -> None:
    counters = countdown_server.sessions.counters
    steps_before = counters.steps
    result = evaluate(
        "countdown",
        [str(tiny_model), str(tiny_copy)],
        url=countdown_server.url,
        episodes=6,
        seed=3,
        max_new_tokens=24,
        batch_size=4,
        progress=False,
    )
    assert result.mode == "answer"
    assert counters.steps - steps_before == 6 * 2  # one server verdict per puzzle and model
    base, trained = result.models
    assert [r.seed for r in base.records] == [r.seed for r in trained.records] == list(range(3, 9))
    for model in result.models:
        assert model.solved == sum(r.solved for r in model.records)
        assert model.solve_rate == model.solved / 6 == model.pass_at_1 == model.pass_at_k
        for r in model.records:
            assert r.ended == ("solved" if r.solved else "failed")
            assert r.transcript is None and isinstance(r.completion, str)
            assert r.server_reward == float(r.solved) and r.turns == 1
            assert len(r.details["numbers"]) == 3 and r.details["target"] > 0
    buckets = result.buckets()
    assert list(buckets) == list(BUCKETS)
    assert sorted(seed for seeds in buckets.values() for seed in seeds) == list(range(3, 9))
    # same weights, greedy decoding: the same replies, so nothing fixed or regressed
    assert [r.completion for r in base.records] == [r.completion for r in trained.records]
    assert buckets["fixed"] == buckets["regressed"] == []

    # replaying a reply gives the recorded verdict: nothing was judged on this side
    with CountdownClient.from_url(countdown_server.url) as client:
        for recorded in base.records[:2]:
            client.reset(seed=recorded.seed, split="eval")
            replay = client.step({"message": recorded.completion}).observation
            assert (replay.correct, replay.expression, replay.reason) == (
                recorded.solved,
                recorded.details["expression"],
                recorded.details["reason"],
            )
    data = json.loads(json.dumps(result.to_dict()))  # JSON-clean
    assert sum(data["bucket_counts"].values()) == 6
    assert [m["samples"] for m in data["models"]] == [1, 1]


def test_eval_fails_fast_on_a_missing_model(tiny_model: Path, countdown_server: LiveServer) -> None:
    steps_before = countdown_server.sessions.counters.steps
    with pytest.raises(FileNotFoundError, match="No such model directory"):
        evaluate(
            "countdown", [str(tiny_model), "./no/such/model"], url=countdown_server.url, episodes=2
        )
    assert countdown_server.sessions.counters.steps == steps_before


def test_eval_refuses_bad_settings_before_any_server(tiny_model: Path) -> None:
    nowhere = "http://127.0.0.1:9"
    with pytest.raises(ValueError, match="temperature above 0"):
        evaluate("countdown", [str(tiny_model)], url=nowhere, samples=2)
    with pytest.raises(ValueError, match="played in mode tools"):
        evaluate("wordle", [str(tiny_model)], url=nowhere, mode="answer")
    with pytest.raises(ValueError, match="Unknown reset field"):
        evaluate("wordle", [str(tiny_model)], url=nowhere, reset={"colour": 1})


def test_sampled_eval_reports_pass_at_k(tiny_model: Path, countdown_server: LiveServer) -> None:
    """Two samples per puzzle: pass@1 is the mean over both, pass@2 any success; the rates and
    buckets read the first samples, and the same seed samples the same replies."""
    settings: dict[str, Any] = {
        "url": countdown_server.url,
        "episodes": 3,
        "seed": 1,
        "samples": 2,
        "temperature": 1.0,
        "max_new_tokens": 16,
        "batch_size": 4,
        "progress": False,
    }
    result = evaluate("countdown", [str(tiny_model)], **settings)
    (model,) = result.models
    assert [(r.seed, r.sample) for r in model.records] == [
        (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1),
    ]  # fmt: skip
    solved = {(r.seed, r.sample): r.solved for r in model.records}
    assert model.pass_at_1 == sum(solved.values()) / 6
    assert model.pass_at_k == sum(solved[s, 0] or solved[s, 1] for s in (1, 2, 3)) / 3
    assert model.solve_rate == sum(solved[s, 0] for s in (1, 2, 3)) / 3
    assert model.pass_at_1 <= model.pass_at_k and model.solve_rate <= model.pass_at_k
    data = result.to_dict()
    assert data["samples"] == 2 and data["models"][0]["samples"] == 2
    assert len(data["models"][0]["episodes"]) == 6
    again = evaluate("countdown", [str(tiny_model)], **settings)
    assert [r.completion for r in again.models[0].records] == [r.completion for r in model.records]


# -- tools mode ----------------------------------------------------------------------------


def test_tools_mode_eval_counts_whatever_the_tiny_model_does(
    tiny_model: Path, wordle_server: LiveServer
) -> None:
    resets_before = wordle_server.sessions.counters.resets
    result = evaluate(
        "wordle",
        [str(tiny_model)],
        url=wordle_server.url,
        episodes=3,
        seed=5,
        max_turns=3,
        max_new_tokens=40,
        batch_size=2,
        progress=False,
    )
    (model,) = result.models
    assert [e.seed for e in model.records] == [5, 6, 7]
    assert wordle_server.sessions.counters.resets - resets_before >= 3
    data = result.to_dict()
    summary = data["models"][0]
    assert sum(summary["distribution"].values()) == 3
    for episode in model.records:
        assert episode.ended in ENDINGS
        assert 1 <= episode.turns <= 3
        assert episode.broken_calls <= episode.tool_calls
        judged = len(episode.details["guesses"]) + episode.details["invalid"]
        assert judged <= episode.tool_calls - episode.broken_calls
        assert episode.transcript is not None and episode.transcript[0]["role"] == "user"
        assert sum(m["role"] == "assistant" for m in episode.transcript) == episode.turns
        if episode.ended == "no_tool_call":
            assert not any(m.get("tool_calls") for m in episode.transcript)
    assert summary["tool_calls"] == sum(e.tool_calls for e in model.records)
    assert 0.0 <= summary["invalid_rate"] <= 1.0
    assert 0.0 <= summary["broken_call_rate"] <= 1.0
    json.dumps(data)


class ScriptedReplies:
    """Stands in for the reply parser: hands out prepared ``(content, tool_calls)`` replies,
    or raises for a malformed call, as ``ReplyParser`` does."""

    def __init__(self, tokenizer: Any, replies: list[Any]) -> None:
        self.tokenizer = tokenizer
        self.replies = list(replies)

    def __call__(self, ids: list[int], prompt: str, tools: list[Any]) -> Any:
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def guess(**arguments: Any) -> dict[str, Any]:
    return call("guess", **arguments)


def _wordle_rollout(url: str, seed: int = 0) -> Rollout:
    agent = make_env_factory("wordle", url=url)()
    text = agent.reset(word="crane")
    return Rollout(agent, seed, 0, [{"role": "user", "content": text}])


def test_tool_turns_count_valid_invalid_and_broken_calls(
    tiny_model: Path, wordle_server: LiveServer
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    rollout = _wordle_rollout(wordle_server.url)
    tools = agent_tools(rollout.agent)
    replies = ScriptedReplies(
        tokenizer,
        [
            ("", [guess(word="slate")]),
            ("two at once", [guess(word="zzzzz"), call("submit", x=1)]),  # refused, unknown
            ("", [guess(wrd="crane")]),  # wrong argument name
            ("", [guess(word="crane")]),
        ],
    )
    for _ in range(4):
        play_turn(rollout, replies, [1], "", tools)
    assert rollout.stop == "over"
    episode = record(rollout, load_view(rollout.agent._game_spec))
    assert episode.solved and episode.ended == "solved" and episode.server_reward == 1.0
    assert episode.details["answer"] == "crane"
    assert [g["word"] for g in episode.details["guesses"]] == ["slate", "crane"]
    assert episode.details["guesses"][-1]["feedback"] == "GGGGG"
    assert episode.details["invalid"] == 1
    assert (episode.tool_calls, episode.broken_calls, episode.turns) == (5, 2, 4)
    assert episode.transcript is not None
    tool_messages = [m for m in episode.transcript if m["role"] == "tool"]
    assert len(tool_messages) == 5 and "Tool submit not found." in tool_messages[2]["content"]


@pytest.mark.parametrize(
    ("replies", "ended", "calls", "broken"),
    [
        ([ValueError("malformed")], "broken_call", 1, 1),
        ([("no call", None)], "no_tool_call", 0, 0),
        # a reply without a call after a valid one: the model stopped; it did call a tool
        ([("", [guess(word="slate")]), ("done", None)], "stopped", 1, 0),
        # six refused-free misses: the server ends the game, lost, even with a call after it
        (
            [("", [guess(word=w)]) for w in ("slate", "adieu", "pound", "fight", "lymph")]
            + [("", [guess(word="gawky"), guess(word="crane")])],
            "failed",
            7,
            1,
        ),
    ],
)
def test_tool_episode_endings(
    tiny_model: Path,
    wordle_server: LiveServer,
    replies: list[Any],
    ended: str,
    calls: int,
    broken: int,
) -> None:
    from transformers import AutoTokenizer

    rollout = _wordle_rollout(wordle_server.url, seed=1)
    scripted = ScriptedReplies(AutoTokenizer.from_pretrained(tiny_model), replies)
    for _ in replies:
        play_turn(rollout, scripted, [1], "", agent_tools(rollout.agent))
    episode = record(rollout, load_view(rollout.agent._game_spec))
    assert (episode.ended, episode.solved) == (ended, False)
    assert (episode.tool_calls, episode.broken_calls) == (calls, broken)
    assert episode.details["answer"] == ("crane" if ended == "failed" else None)


def test_tools_mode_eval_of_countdown_through_submit(
    tiny_model: Path, countdown_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Countdown in tools mode: the model's tool calls (scripted here, whatever the tiny model
    generates) go through the agent's ``submit`` tool, and the server judges each."""
    plays = iter(
        [
            ("", [call("submit", expression="3 + 9 + 7")]),  # wrong: 19, one attempt left
            ("", [call("submit", expression="3 * 9 - 7")]),  # right: the game is over
            ("", [call("submit", expression="3 * 9 - 7")]),  # next puzzle: right at once
        ]
    )

    class Scripted:
        def __init__(self, tokenizer: Any) -> None:
            self.tokenizer = tokenizer

        def __call__(self, ids: list[int], prompt: str, tools: list[Any]) -> Any:
            assert [tool.__name__ for tool in tools] == ["submit"]
            return next(plays)

    monkeypatch.setattr("trainer.evaluate.ReplyParser", Scripted)
    puzzle = {"numbers": [3, 9, 7], "target": 20, "attempts": 2}
    result = evaluate(
        "countdown",
        [str(tiny_model)],
        url=countdown_server.url,
        mode="tools",
        episodes=2,
        max_turns=3,
        max_new_tokens=4,
        batch_size=1,
        reset=puzzle,
        progress=False,
    )
    first, second = result.models[0].records
    assert (first.solved, first.ended, first.turns, first.tool_calls) == (True, "solved", 2, 2)
    assert (second.solved, second.turns) == (True, 1)
    assert first.details == {
        "numbers": [3, 9, 7],
        "target": 20,
        "expression": "3 * 9 - 7",
        "value": 20,
        "reason": None,
    }
    assert first.transcript is not None
    assert "Wrong: " in first.transcript[2]["content"]
    assert result.to_dict()["settings"]["max_turns"] == 3


def test_reply_parser_reads_the_tiny_models_tool_calls(tiny_model: Path) -> None:
    from transformers import AutoTokenizer

    from env_servers.wordle.agent import WordleToolEnv

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    parser = ReplyParser(tokenizer)
    assert parser.native  # TRL knows the Qwen3 template
    tools = [WordleToolEnv.guess]
    text = '<tool_call>\n{"name": "guess", "arguments": {"word": "crane"}}\n</tool_call>'
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    _, calls = parser(ids, "", tools)
    assert calls == [guess(word="crane")]
    broken = tokenizer("<tool_call>\n{oops\n</tool_call>", add_special_tokens=False)["input_ids"]
    with pytest.raises(ValueError, match="malformed"):
        parser(broken, "", tools)
    plain = tokenizer("I give up.", add_special_tokens=False)["input_ids"]
    assert parser(plain, "", tools) == ("I give up.", None)


def test_reply_parser_falls_back_for_templates_trl_does_not_know(tiny_model: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    tokenizer.chat_template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    parser = ReplyParser(tokenizer)
    assert not parser.native
    text = 'Try this. <tool_call>{"name": "guess", "arguments": {"word": "slate"}}</tool_call>'
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert parser(ids, "", []) == ("Try this.", [guess(word="slate")])


def test_batched_generation_matches_one_prompt_at_a_time(tiny_model: Path) -> None:
    """Left padding must not change a greedy reply. Padded and unpadded forward passes differ
    in the last bits, so where the best two tokens are within float noise either may win:
    the batched reply must be one the unpadded model would also have chosen greedily."""
    import torch

    model, tokenizer = load_model(str(tiny_model), device="cpu")
    prompts = [
        chat_prompt(tokenizer, [{"role": "user", "content": text}])
        for text in ("Numbers: 3, 9, 7. Target: 20.", "Play a word game.", "Hi")
    ]
    batched = generate(model, tokenizer, prompts, max_new_tokens=12)
    stops = set(stop_token_ids(model, tokenizer))
    assert all(not stops & set(ids) for ids in batched)
    for prompt, reply in zip(prompts, batched, strict=True):
        prefix = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            logits = model(torch.tensor([prefix + reply])).logits[0, len(prefix) - 1 :]
        for position, token in enumerate(reply):
            best = float(logits[position].max())
            assert float(logits[position, token]) >= best - 1e-4, (prompt, position)
        if len(reply) < 12:  # it stopped: a stop token was a greedy choice there too
            stop_best = float(logits[len(reply), sorted(stops)].max())
            assert stop_best >= float(logits[len(reply)].max()) - 1e-4, prompt


def test_parse_tool_calls() -> None:
    assert parse_tool_calls("no call here") is None
    text = 'a <tool_call>{"name": "guess", "arguments": {"word": "crane"}}</tool_call> b'
    assert parse_tool_calls(text) == [guess(word="crane")]
    as_string = '<tool_call>{"name": "guess", "arguments": "{\\"word\\": \\"slate\\"}"}</tool_call>'
    assert parse_tool_calls(as_string) == [guess(word="slate")]
    unterminated = '<tool_call>{"name": "guess", "arguments": {"word": "crane"}}'
    assert parse_tool_calls(unterminated) == [guess(word="crane")]
    for bad in (
        "<tool_call>{</tool_call>",
        '<tool_call>{"arguments": {}}</tool_call>',
        "<tool_call>[1]",
    ):
        with pytest.raises(ValueError, match="malformed tool call"):
            parse_tool_calls(bad)


# -- Models --------------------------------------------------------------------------------


def _checkpoint(directory: Path, *files: str) -> Path:
    directory.mkdir(parents=True)
    for name in files or ("config.json", "trainer_state.json"):
        (directory / name).write_text("{}")
    return directory


def test_latest_checkpoint_orders_by_step_number(tmp_path: Path) -> None:
    for step in (2, 10, 9):
        _checkpoint(tmp_path / f"checkpoint-{step}")
    _checkpoint(tmp_path / "checkpoint-11", "config.json")  # cut short: no trainer_state.json
    _checkpoint(tmp_path / "checkpoint-12", "trainer_state.json")  # no model in it
    _checkpoint(tmp_path / "checkpoint-x")
    assert latest_checkpoint(tmp_path) == tmp_path / "checkpoint-10"


def test_latest_checkpoint_prefers_the_final_model(tmp_path: Path) -> None:
    _checkpoint(tmp_path / "checkpoint-5", "adapter_config.json", "trainer_state.json")
    (tmp_path / "adapter_config.json").write_text("{}")
    assert latest_checkpoint(tmp_path) == tmp_path
    assert latest_checkpoint(tmp_path / "checkpoint-5") == tmp_path / "checkpoint-5"


def test_latest_checkpoint_without_a_model_says_what_it_looked_for(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as error:
        latest_checkpoint(tmp_path)
    message = str(error.value)
    assert str(tmp_path) in message and "config.json" in message and "checkpoint-N" in message
    _checkpoint(tmp_path / "checkpoint-3", "config.json")
    with pytest.raises(FileNotFoundError, match="1 checkpoint-N folder"):
        latest_checkpoint(tmp_path)
    with pytest.raises(FileNotFoundError, match="not a directory"):
        latest_checkpoint(tmp_path / "missing")


def test_load_model_by_every_kind_of_name(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch
    from peft import LoraConfig, get_peft_model

    monkeypatch.setattr("trainer.models.tiny_model_path", lambda: tiny_model)
    assert resolve_model("tiny") == str(tiny_model)
    model, tokenizer = load_model("tiny", device="cpu")
    assert tokenizer.padding_side == "left" and tokenizer.pad_token is not None

    # a LoRA adapter saved in a training run's checkpoint: base + adapter, merged
    lora = get_peft_model(model, LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():
        for name, parameter in lora.named_parameters():
            if "lora_B" in name:
                parameter.fill_(0.01)  # a nonzero update, so merging changes the weights
    adapter_dir = tmp_path / "run" / "checkpoint-4"
    lora.save_pretrained(adapter_dir)
    (adapter_dir / "trainer_state.json").write_text("{}")
    assert not (adapter_dir / "config.json").exists()
    merged, _ = load_model(str(tmp_path / "run"), device="cpu")
    assert not hasattr(merged, "peft_config")
    reference, _ = load_model(str(tiny_model), device="cpu")
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert not torch.allclose(merged(ids).logits, reference(ids).logits)


def test_load_model_errors_are_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub

    with pytest.raises(FileNotFoundError, match="No such model directory"):
        load_model(str(tmp_path / "missing"))
    adapter = tmp_path / "run"
    adapter.mkdir()
    config = {"peft_type": "LORA", "base_model_name_or_path": str(tmp_path / "gone"), "r": 2}
    (adapter / "adapter_config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match=r"LoRA adapter's base model .*gone does not exist"):
        load_model(str(adapter))
    monkeypatch.chdir(tmp_path)  # `run/` is here: `run/nope` means a folder, not a Hub repo
    with pytest.raises(FileNotFoundError, match=r"run/nope \(run/ exists, nope not\)"):
        load_model("run/nope")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelLoadError) as error:
        load_model("nobody/no-such-model")
    message = str(error.value)
    assert "nobody/no-such-model is no local directory and not in the Hugging Face cache" in message
    assert "HF_HUB_OFFLINE is set: pass a local model directory" in message
    assert "\n" not in message
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: unreachable
    with pytest.raises(ModelLoadError, match=r"http://127.0.0.1:9 cannot be reached"):
        load_model("nobody/no-such-model")
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a CPU machine
    with pytest.raises(ModelLoadError, match="this machine has no CUDA GPU"):
        load_model(str(tmp_path / "run"), device="cuda")
