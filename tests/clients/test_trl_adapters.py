"""The TRL adapters against live servers: tool surface, row forwarding, lifecycle."""

from __future__ import annotations

import gc
import inspect
import time

import pytest

from clients.errors import ClientError
from clients.trl import make_env_factory
from env_servers.countdown.agent import CountdownToolEnv
from env_servers.wordle.agent import WordleToolEnv
from tests.live import LiveServer


def tools_of(cls: type) -> list[str]:
    """What TRL 1.16 exposes as tools: public functions of the class other than reset."""
    return [
        name
        for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


def test_exactly_one_tool_each_and_no_reward_hook() -> None:
    assert tools_of(WordleToolEnv) == ["guess"]
    assert tools_of(CountdownToolEnv) == ["submit"]
    for cls in (WordleToolEnv, CountdownToolEnv, make_env_factory("wordle", url="http://x")):
        assert not hasattr(cls, "get_reward") and not hasattr(cls, "close")


def test_modes_and_the_servers_own_reward() -> None:
    assert tools_of(make_env_factory("countdown", mode="tools")) == ["submit"]
    answer = make_env_factory("countdown", mode="answer")  # one text answer, no tools
    assert answer._mode == "answer" and tools_of(answer) == []
    with pytest.raises(ValueError, match="is played in mode tools"):
        make_env_factory("wordle", mode="answer")
    owned = make_env_factory("countdown", mode="tools", server_reward=True, transport="inprocess")
    assert tools_of(owned) == ["submit"]  # get_reward is TRL's reward hook, not a tool
    env = owned()
    env.reset(numbers=[3, 9, 7], target=20)
    assert env.get_reward() == 0.0
    env.submit("3 * 9 - 7")
    assert env.get_reward() == 1.0 and env.solved


def test_answer_mode_sends_the_whole_reply_to_the_server() -> None:
    env = make_env_factory("countdown", mode="answer", transport="inprocess")()
    assert env.reset(numbers=[3, 9, 7], target=20) is None  # the row's prompt is the question
    env._answer("Let me think. 3 * 9 = 27, minus 7 is 20. <answer>3 * 9 - 7</answer>")
    assert env.solved and env.answered and env.expression == "3 * 9 - 7" and env.value == 20


def test_guess_tool_schema_is_what_trl_renders() -> None:
    from transformers.utils import get_json_schema

    schema = get_json_schema(WordleToolEnv().guess)["function"]
    assert schema["name"] == "guess"
    assert schema["parameters"]["properties"]["word"]["type"] == "string"
    assert "five-letter" in schema["description"]


def test_wordle_adapter_plays_and_tracks_reward_signals(wordle_server: LiveServer) -> None:
    env = make_env_factory("wordle", url=wordle_server.url)()
    row = {"prompt": [{"role": "user", "content": "play"}], "seed": 3, "split": "train", "x": 1}
    opening = env.reset(**row, word="crane")
    assert "guess" in opening and "6 guesses" in opening
    text = env.guess("slate")
    assert "S L A T E" in text and "X X G X G" in text and "5 guesses left" in text
    assert env.best_greens == 2 and env.best_yellows == 0 and env.guesses_used == 1
    assert "Invalid guess" in env.guess("slate")  # a repeat: refused, costs no guess
    assert env.repetition_score == pytest.approx(0.5) and env.invalid_count == 1
    assert "Solved!" in env.guess("[crane]")
    assert env.solved and env.best_greens == 5 and env.guesses_used == 2
    with pytest.raises(ValueError, match=r"Game over\."):
        env.guess("crane")
    env.reset(seed=4)  # the same session, a new episode
    assert not env.solved and env.guesses_used == 0 and env.repetition_score == 0.0


def test_rows_with_the_same_seed_play_the_same_word(wordle_server: LiveServer) -> None:
    factory = make_env_factory("wordle", url=wordle_server.url, split="eval")
    envs = [factory() for _ in range(3)]
    for env in envs:
        env.reset(prompt="p", seed=42)
        env.guess("crane")
    answers = {env._client.state().model_dump()["guesses"][0]["feedback"] for env in envs}  # type: ignore[union-attr]
    assert len(answers) == 1


def test_url_from_environment_variable_and_errors(
    wordle_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENAGYM_WORDLE_URL", raising=False)
    with pytest.raises(ClientError, match="ARENAGYM_WORDLE_URL"):
        WordleToolEnv().reset(seed=1)
    monkeypatch.setenv("ARENAGYM_WORDLE_URL", wordle_server.url)
    assert "guess" in WordleToolEnv().reset(seed=1)
    with pytest.raises(ValueError, match="Unknown reset field"):
        make_env_factory("wordle", hardmode=True)
    with pytest.raises(ValueError, match="transport"):
        make_env_factory("wordle", transport="pigeon")


def test_finalizer_releases_the_session(wordle_server: LiveServer) -> None:
    before = wordle_server.sessions.active
    env = make_env_factory("wordle", url=wordle_server.url)()
    env.reset(seed=1)
    assert wordle_server.sessions.active == before + 1
    del env
    gc.collect()
    deadline = time.monotonic() + 5
    while wordle_server.sessions.active != before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert wordle_server.sessions.active == before


def test_countdown_adapter(countdown_server: LiveServer) -> None:
    env = make_env_factory("countdown", url=countdown_server.url, attempts=2)()
    opening = env.reset(prompt="p", numbers=[3, 9, 7], target=20)
    assert "3, 9, 7" in opening and "20" in opening and "2 attempt" in opening
    wrong = env.submit("3 + 9 + 7")
    assert wrong.startswith("Wrong") and "19" in wrong and not env.solved
    assert env.submit("3 * 9 - 7").startswith("Correct") and env.solved
    with pytest.raises(ValueError, match=r"Game over\."):
        env.submit("3 * 9 - 7")


def test_in_process_transport_needs_no_server() -> None:
    env = make_env_factory("wordle", transport="inprocess")()
    env.reset(seed=1)
    assert "guesses left" in env.guess("crane") or env.solved


def test_every_games_tools_have_the_schemas_trl_renders() -> None:
    """Each tool of each game (families' listed members too) converts as TRL converts it."""
    from transformers.utils import get_json_schema

    from env_servers.core.registry import game_names, load_spec

    for game in game_names():
        spec = load_spec(game)
        agent = spec.agent()
        for name in spec.tool_names():
            schema = get_json_schema(getattr(agent, name))["function"]
            assert schema["name"] == name and schema["description"], (game, name)
