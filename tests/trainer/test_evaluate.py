"""Evaluation against live game servers with the tiny offline model, and model loading."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

from clients.games import CountdownClient
from clients.trl import make_env_factory
from tests.live import LiveServer
from trainer.evaluate import (
    BUCKETS,
    _finish,
    _Game,
    _play_turn,
    _ReplyParser,
    evaluate_countdown,
    evaluate_wordle,
    parse_tool_calls,
)
from trainer.models import (
    ModelLoadError,
    chat_prompt,
    generate,
    latest_checkpoint,
    load_model,
    resolve_model,
    stop_token_ids,
)


@pytest.fixture(scope="module")
def tiny_copy(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model under another name: a second "model" with the same weights."""
    return Path(shutil.copytree(tiny_model, tmp_path_factory.mktemp("copy") / "trained"))


# -- Countdown -----------------------------------------------------------------------------


def test_countdown_eval_of_two_models_is_judged_by_the_server(
    tiny_model: Path, tiny_copy: Path, countdown_server: LiveServer
) -> None:
    counters = countdown_server.sessions.counters
    steps_before = counters.steps
    result = evaluate_countdown(
        [str(tiny_model), str(tiny_copy)],
        url=countdown_server.url,
        episodes=6,
        seed=3,
        max_new_tokens=24,
        batch_size=4,
        progress=False,
    )
    assert counters.steps - steps_before == 6 * 2  # one server verdict per puzzle and model
    base, trained = result.models
    assert [r.seed for r in base.results] == [r.seed for r in trained.results] == list(range(3, 9))
    for model in result.models:
        assert model.solved == sum(r.correct for r in model.results)
        assert model.solve_rate == model.solved / 6
    buckets = result.buckets()
    assert list(buckets) == list(BUCKETS)
    assert sorted(seed for seeds in buckets.values() for seed in seeds) == list(range(3, 9))
    # same weights, greedy decoding: the same replies, so nothing fixed or regressed
    assert [r.completion for r in base.results] == [r.completion for r in trained.results]
    assert buckets["fixed"] == buckets["regressed"] == []

    # replaying a reply gives the recorded verdict: nothing was judged on this side
    with CountdownClient.from_url(countdown_server.url) as client:
        for recorded in base.results[:2]:
            client.reset(seed=recorded.seed, split="eval")
            replay = client.step({"message": recorded.completion}).observation
            assert (replay.correct, replay.expression, replay.reason) == (
                recorded.correct,
                recorded.expression,
                recorded.reason,
            )
    data = json.loads(json.dumps(result.to_dict()))  # JSON-clean
    assert sum(data["bucket_counts"].values()) == 6


def test_countdown_eval_fails_fast_on_a_missing_model(
    tiny_model: Path, countdown_server: LiveServer
) -> None:
    steps_before = countdown_server.sessions.counters.steps
    with pytest.raises(FileNotFoundError, match="No such model directory"):
        evaluate_countdown(
            [str(tiny_model), "./no/such/model"], url=countdown_server.url, episodes=2
        )
    assert countdown_server.sessions.counters.steps == steps_before


# -- Wordle --------------------------------------------------------------------------------


def test_wordle_eval_counts_whatever_the_tiny_model_does(
    tiny_model: Path, wordle_server: LiveServer
) -> None:
    resets_before = wordle_server.sessions.counters.resets
    result = evaluate_wordle(
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
    assert [e.seed for e in model.episodes] == [5, 6, 7]
    assert wordle_server.sessions.counters.resets - resets_before >= 3
    assert sum(model.distribution.values()) == 3
    for episode in model.episodes:
        assert episode.ended in {"won", "lost", "no_tool_call", "broken_call", "max_turns"}
        assert 1 <= episode.turns <= 3
        assert episode.broken_calls <= episode.tool_calls
        assert episode.judged <= episode.tool_calls - episode.broken_calls
        assert episode.transcript[0]["role"] == "user"
        assert sum(m["role"] == "assistant" for m in episode.transcript) == episode.turns
    summary = model.summary()
    assert summary["tool_calls"] == sum(e.tool_calls for e in model.episodes)
    assert 0.0 <= summary["invalid_rate"] <= 1.0
    assert 0.0 <= summary["broken_call_rate"] <= 1.0
    json.dumps(result.to_dict())


class ScriptedReplies:
    """Stands in for the reply parser: hands out prepared ``(content, tool_calls)`` replies,
    or raises for a malformed call, as ``_ReplyParser`` does."""

    def __init__(self, tokenizer: Any, replies: list[Any]) -> None:
        self.tokenizer = tokenizer
        self.replies = list(replies)

    def __call__(self, ids: list[int], prompt: str, tools: list[Any]) -> Any:
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def guess(**arguments: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "guess", "arguments": arguments}}


def test_wordle_turns_count_valid_invalid_and_broken_calls(
    tiny_model: Path, wordle_server: LiveServer
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    env = make_env_factory("wordle", url=wordle_server.url)()
    text = env.reset(word="crane")
    game = _Game(env, 0, [{"role": "user", "content": text}])  # type: ignore[arg-type]
    submit = {"type": "function", "function": {"name": "submit", "arguments": {"x": 1}}}
    replies = ScriptedReplies(
        tokenizer,
        [
            ("", [guess(word="slate")]),
            ("two at once", [guess(word="zzzzz"), submit]),  # refused word, unknown tool
            ("", [guess(wrd="crane")]),  # wrong argument name
            ("", [guess(word="crane")]),
        ],
    )
    for _ in range(4):
        _play_turn(game, replies, [1], "", [env.guess])
    assert game.ended == "game_over"
    episode = _finish(game)
    assert episode.won and episode.ended == "won" and episode.answer == "crane"
    assert [g["word"] for g in episode.guesses] == ["slate", "crane"]
    assert episode.guesses[-1]["feedback"] == "GGGGG"
    assert (episode.invalid, episode.judged) == (1, 3)
    assert (episode.tool_calls, episode.broken_calls, episode.turns) == (5, 2, 4)
    tool_messages = [m for m in episode.transcript if m["role"] == "tool"]
    assert len(tool_messages) == 5 and "Tool submit not found." in tool_messages[2]["content"]

    for reply, ended in (
        (ValueError("malformed"), "broken_call"),
        (("no call", None), "no_tool_call"),
    ):
        env.reset(word="crane")
        game = _Game(env, 1, [{"role": "user", "content": text}])  # type: ignore[arg-type]
        _play_turn(game, ScriptedReplies(tokenizer, [reply]), [1], "", [env.guess])
        episode = _finish(game)
        assert (episode.ended, episode.won, episode.answer) == (ended, False, None)
        assert episode.broken_calls == episode.tool_calls == (ended == "broken_call")


def test_reply_parser_reads_the_tiny_models_tool_calls(tiny_model: Path) -> None:
    from transformers import AutoTokenizer

    from clients.trl import WordleToolEnv

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    parser = _ReplyParser(tokenizer)
    assert parser.native  # TRL knows the Qwen3 template
    tools = [WordleToolEnv.guess]
    call = '<tool_call>\n{"name": "guess", "arguments": {"word": "crane"}}\n</tool_call>'
    ids = tokenizer(call, add_special_tokens=False)["input_ids"]
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
    parser = _ReplyParser(tokenizer)
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
        for text in ("Numbers: 3, 9, 7. Target: 20.", "Play Wordle.", "Hi")
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
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelLoadError) as error:
        load_model("nobody/no-such-model")
    message = str(error.value)
    assert message.startswith("could not load nobody/no-such-model: ")
    assert "no network? set HF_HUB_OFFLINE=0 / pass a local path" in message
    assert "\n" not in message
