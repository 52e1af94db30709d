"""``arenagym serve-model`` over real HTTP with the tiny offline model on CPU: OpenAI chat
completions through the ``openai`` client, ``/play`` against live game servers (each verdict
checked by replaying the episode's moves on a fresh session), streaming, bad input, queueing.

The tiny model plays badly; what is checked is that the server reports what the model did and
what the game server said of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai
import pytest
from transformers.utils import get_json_schema

from clients.trl import make_env_factory
from env_servers.core.registry import load_spec
from tests.trainer.conftest import ModelServer
from trainer.models import chat_prompt
from trainer.rollouts import ReplyParser
from trainer.serve_model import game_urls
from trainer.serving.app import create_app
from trainer.serving.play import observation_fields

EPISODES = [
    pytest.param("wordle", {"seed": 7}, id="wordle-seed"),
    pytest.param("countdown", {"numbers": [3, 7, 9], "target": 20}, id="countdown-puzzle"),
    pytest.param("countdown", {"seed": 3}, id="countdown-seed"),
    pytest.param("textarena:GuessTheNumber-v0", {"seed": 3}, id="textarena-seed"),
]
"""Episodes played through ``/play``: a new game is one more line (and one in SERVED_GAMES)."""
PLAY = {"max_turns": 2, "max_new_tokens": 48}
"""Short episodes: the tiny model gets two turns of 48 tokens."""


def client(server: ModelServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)


def game_tools(game: str) -> list[dict[str, Any]]:
    """The game's tools as OpenAI function schemas, from the agent's methods (as TRL makes them)."""
    agent = load_spec(game).agent
    return [get_json_schema(getattr(agent, name)) for name in load_spec(game).tool_names()]


def tools_prompt(game: str, server: ModelServer) -> list[dict[str, Any]]:
    """The first user message of a tools episode, as training words it."""
    spec = load_spec(game)
    agent = make_env_factory(spec, url=server.games[game], mode="tools")()
    return [{"role": "user", "content": spec.instruction + (agent.reset(seed=7) or "")}]


# -- chat completions ----------------------------------------------------------------------------


def test_health_names_the_model_and_games(model_server: ModelServer) -> None:
    health = httpx.get(f"{model_server.url}/health").json()
    assert health["status"] == "ok"
    assert health["backend"] == "transformers (cpu)"
    assert health["games"] == sorted(model_server.games)


def test_plain_chat_completion(model_server: ModelServer, tiny_engine: Any) -> None:
    reply = client(model_server).chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": "Say hello."}], max_tokens=8
    )
    choice = reply.choices[0]
    assert choice.message.role == "assistant" and choice.message.tool_calls is None
    assert isinstance(choice.message.content, str)
    assert choice.finish_reason in ("stop", "length")
    assert reply.usage is not None and 0 < reply.usage.completion_tokens <= 8


@pytest.mark.parametrize("game", ["wordle", "countdown"])
def test_tool_calls_are_parsed_as_training_parses_them(
    game: str, model_server: ModelServer, tiny_engine: Any
) -> None:
    messages, tools = tools_prompt(game, model_server), game_tools(game)
    reply = client(model_server).chat.completions.create(
        model="tiny", messages=messages, tools=tools, max_tokens=48
    )
    prompt = chat_prompt(tiny_engine.tokenizer, messages, tools)
    ids = tiny_engine.generate([prompt], 48, 0.0)[0]
    try:
        content, calls = ReplyParser(tiny_engine.tokenizer)(ids, prompt, tools)
    except ValueError:  # a malformed call: the reply is plain text
        content, calls = tiny_engine.tokenizer.decode(ids, skip_special_tokens=True), None
    message = reply.choices[0].message
    assert (message.content or "") == (content or "").strip()
    if calls is None:
        assert message.tool_calls is None
        return
    assert reply.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls is not None
    sent = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
    assert sent == [(c["function"]["name"], c["function"]["arguments"]) for c in calls]


def test_a_conversation_with_tool_results_continues(model_server: ModelServer) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "guess", "arguments": '{"word": "crane"}'},
    }
    messages: list[Any] = [
        *tools_prompt("wordle", model_server),
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "C(X) R(Y) A(X) N(X) E(G)"},
    ]
    reply = client(model_server).chat.completions.create(
        model="tiny",
        messages=messages,
        tools=game_tools("wordle"),
        max_tokens=8,
    )
    assert reply.choices[0].finish_reason in ("stop", "length", "tool_calls")


def test_streaming_sends_the_same_reply_in_chunks(model_server: ModelServer) -> None:
    request: dict[str, Any] = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "Count to ten."}],
        "max_tokens": 24,
    }
    whole = client(model_server).chat.completions.create(**request)
    chunks = list(client(model_server).chat.completions.create(**request, stream=True))
    assert len(chunks) > 2 and chunks[0].choices[0].delta.role == "assistant"
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    assert text == whole.choices[0].message.content
    assert chunks[-1].choices[0].finish_reason == whole.choices[0].finish_reason


def test_streamed_tool_calls(model_server: ModelServer) -> None:
    request: dict[str, Any] = {
        "model": "tiny",
        "messages": tools_prompt("wordle", model_server),
        "tools": game_tools("wordle"),
        "max_tokens": 48,
    }
    whole = client(model_server).chat.completions.create(**request).choices[0]
    chunks = list(client(model_server).chat.completions.create(**request, stream=True))
    streamed = [
        (call.function.name, call.function.arguments)
        for chunk in chunks
        for call in chunk.choices[0].delta.tool_calls or []
        if call.function is not None
    ]
    expected = [(c.function.name, c.function.arguments) for c in whole.message.tool_calls or []]
    assert expected, "the tiny model calls a tool on this prompt (greedy): the test needs one"
    assert streamed == expected
    assert chunks[-1].choices[0].finish_reason == whole.finish_reason


@pytest.mark.parametrize(
    ("request_body", "says"),
    [
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "robot", "content": "hi"}]}, "role"),
        ({"messages": [{"role": "user", "content": "hi"}], "n": 2}, "n"),
        ({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}, "max_tokens"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
            "only text content",
        ),
    ],
)
def test_bad_chat_requests_get_a_clear_400(
    model_server: ModelServer, request_body: dict[str, Any], says: str
) -> None:
    reply = httpx.post(f"{model_server.url}/v1/chat/completions", json=request_body)
    assert reply.status_code == 400
    assert says in reply.json()["error"]["message"]
    with pytest.raises(openai.BadRequestError, match=says):
        client(model_server).chat.completions.create(model="tiny", **request_body)


# -- /play ---------------------------------------------------------------------------------------


def replay(server: ModelServer, game: str, reset: dict[str, Any], result: dict[str, Any]) -> Any:
    """The episode's moves sent again on a fresh session: the agent, with the server's word."""
    spec = load_spec(game)
    agent = make_env_factory(spec, url=server.games[game], mode=result["mode"])()
    agent._reset(reset)
    if result["mode"] == "answer":
        agent._answer(result["answer"])
    for move in result["moves"]:
        try:
            output = str(getattr(agent, move["tool"])(**move["arguments"]))
        except (TypeError, ValueError, AttributeError) as error:
            output = str({"error": str(error)})
        assert output == move["output"]
    return agent


@pytest.mark.parametrize(("game", "reset"), EPISODES)
def test_play_reports_the_game_servers_verdicts(
    model_server: ModelServer, game: str, reset: dict[str, Any]
) -> None:
    reply = httpx.post(f"{model_server.url}/play/{game}", json=reset, params=PLAY, timeout=120)
    assert reply.status_code == 200, reply.text
    result = reply.json()
    spec = load_spec(game)
    assert result["game"] == game and result["mode"] == spec.default_mode
    assert result["transcript"][0]["role"] == "user"
    assert 1 <= result["turns"] <= PLAY["max_turns"]
    agent = replay(model_server, game, reset, result)
    assert result["observation"] == observation_fields(agent.observation)
    assert result["reward"] == agent.server_reward
    assert result["solved"] == (spec.rewards[spec.solved].function(agent) >= 1.0)
    if result["mode"] == "answer":
        for name in ("expression", "value", "correct", "reason"):
            assert result[name] == result["observation"][name]


@pytest.mark.parametrize(("game", "reset"), EPISODES)
def test_play_streams_turn_by_turn(
    model_server: ModelServer, game: str, reset: dict[str, Any]
) -> None:
    url = f"{model_server.url}/play/{game}"
    whole = httpx.post(url, json=reset, params=PLAY, timeout=120).json()
    events = []
    headers = {"Accept": "text/event-stream"}
    with httpx.stream("POST", url, json=reset, params=PLAY, headers=headers, timeout=120) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in reply.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                event = json.loads(line.split(":", 1)[1])
                assert event["event"] == kind
                events.append(event)
    assert [e["event"] for e in events] == ["start"] + ["turn"] * whole["turns"] + ["result"]
    turns = [message for e in events if e["event"] == "turn" for message in e["messages"]]
    assert events[0]["prompt"] == whole["transcript"][0]["content"]
    assert turns == whole["transcript"][1:]
    assert {k: v for k, v in events[-1].items() if k != "event"} == whole


@pytest.mark.parametrize(
    ("path", "body", "params", "status", "says"),
    [
        ("/play/chess", {}, {}, 404, "chess"),
        ("/play/countdown", {"numbers": [3, 7], "target": "x"}, {}, 422, "target"),
        ("/play/countdown", {"colour": "red"}, {}, 422, "reset fields"),
        ("/play/countdown", [1, 2], {}, 400, "JSON object"),
        ("/play/wordle", {"seed": 1}, {"mode": "answer"}, 400, "played in tools"),
        ("/play/wordle", {"seed": 1}, {"max_turns": 0}, 400, "max_turns"),
        ("/play/wordle", {"seed": -1}, {}, 422, "seed"),
    ],
)
def test_bad_play_requests_get_a_clear_4xx(
    model_server: ModelServer,
    path: str,
    body: Any,
    params: dict[str, Any],
    status: int,
    says: str,
) -> None:
    reply = httpx.post(f"{model_server.url}{path}", json=body, params=params)
    assert reply.status_code == status, reply.text
    assert says in reply.json()["error"]["message"]


def test_a_game_without_a_server_or_with_a_dead_one(tiny_engine: Any) -> None:
    from tests.live import live_app

    with live_app(create_app(tiny_engine, {"wordle": "http://127.0.0.1:9"})) as url:
        missing = httpx.post(f"{url}/play/countdown", json={})
        assert missing.status_code == 409
        assert "ARENAGYM_COUNTDOWN_URL" in missing.json()["error"]["message"]
        dead = httpx.post(f"{url}/play/wordle", json={"seed": 1}, timeout=60)
        assert dead.status_code == 502
        assert "wordle's server failed" in dead.json()["error"]["message"]


def test_concurrent_requests_are_queued_not_dropped(model_server: ModelServer) -> None:
    def chat(_: int) -> int:
        body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}
        return httpx.post(
            f"{model_server.url}/v1/chat/completions", json=body, timeout=120
        ).status_code

    def play(seed: int) -> int:
        url = f"{model_server.url}/play/wordle"
        return httpx.post(url, json={"seed": seed}, params=PLAY, timeout=120).status_code

    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(chat, i) for i in range(3)] + [
            pool.submit(play, i) for i in range(3)
        ]
        statuses = [future.result() for future in futures]
    assert statuses == [200] * 6


def test_game_urls_from_flags_and_environment() -> None:
    environ = {"ARENAGYM_WORDLE_URL": "http://a:1/"}
    assert game_urls(["countdown=http://b:2"], environ) == {
        "wordle": "http://a:1",
        "countdown": "http://b:2",
    }
    with pytest.raises(ValueError, match="GAME=http"):
        game_urls(["countdown"], {})
    with pytest.raises(ValueError, match="chess"):
        game_urls(["chess=http://c:3"], {})


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (["--game-url", "countdown"], "GAME=http"),
        (["--backend", "onnx"], "auto, transformers, vllm"),
        (["--checkpoint", "5"], "checkpoint-5"),
    ],
)
def test_serve_model_refuses_bad_flags_before_serving(arguments: list[str], says: str) -> None:
    command = [sys.executable, "-m", "env_servers", "serve-model", "-m", "tiny", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert says in " ".join(done.stderr.split()), done.stderr
