"""``play``: whole episodes on one session, in one frame per batch where the server offers
``episodes`` and a request per reset and step elsewhere, with the same results either way;
and the answer-mode judging built on it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from clients import AsyncWordleClient, Episode, WordleClient
from clients.agent import GameAgent
from clients.base import episode_batches
from clients.errors import InvalidRequestError
from clients.protocol import EPISODES_FRAME_BYTES, ConnectionOptions
from clients.transports import WebSocketTransport
from clients.trl import make_env_factory
from env_servers.core import episodes
from env_servers.core.protocol import EXT_EPISODES, MAX_EPISODES_PER_FRAME
from tests.live import LiveServer, live_server

EPISODES = [
    Episode({"word": "crane"}, [{"guess": "slate"}, {"guess": "crane"}]),
    Episode({"word": "light"}, [{"guess": 5}, {"guess": "light"}]),  # refused: stops there
    Episode({"seed": 3}),
    Episode({"word": "pious"}, [{"guess": "xyzzy"}, {"guess": "pious"}]),  # invalid move
]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live_server("wordle") as live:
        yield live


def summary(played: list[Any]) -> list[Any]:
    """What a played episode shows, without per-session details."""
    return [
        (
            [(r.observation.model_dump(), r.reward, r.done) for r in episode.results],
            None if episode.error is None else (type(episode.error), episode.error.code),
        )
        for episode in played
    ]


def frames_sent(client: WordleClient) -> int:
    return int(client.transport._session._next_id)  # type: ignore[attr-defined]


def test_play_is_the_same_over_every_transport(server: LiveServer) -> None:
    with WordleClient.from_url(server.url) as batched:
        expected = summary(batched.play(EPISODES))
        assert frames_sent(batched) == 1  # one frame for the four episodes
    assert [len(results) for results, _ in expected] == [3, 1, 1, 3]
    assert expected[0][0][-1][1:] == (1.0, True)
    assert expected[1][1] == (InvalidRequestError, "VALIDATION_ERROR")
    assert all(error is None for _, error in expected[2:])

    plain = ConnectionOptions(frozenset({"request-id", "session-id", "resume"}))
    with WordleClient(WebSocketTransport(server.url, plain)) as one_at_a_time:
        assert summary(one_at_a_time.play(EPISODES)) == expected
        assert frames_sent(one_at_a_time) == 9  # a frame per reset and step
    with WordleClient.from_url(server.url, transport="http") as http:
        assert summary(http.play(EPISODES)) == expected
    with WordleClient.in_process() as local:
        assert summary(local.play(EPISODES)) == expected


def test_play_sends_again_what_the_server_left_unplayed(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with WordleClient.in_process() as local:
        expected = summary(local.play(EPISODES))
    monkeypatch.setattr(episodes, "FRAME_SECONDS", 0.0)  # one episode per frame
    with WordleClient.from_url(server.url) as client:
        assert summary(client.play(EPISODES)) == expected
        assert frames_sent(client) == len(EPISODES)


async def test_the_async_client_plays_the_same(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with WordleClient.in_process() as local:
        expected = summary(local.play(EPISODES))
    async with AsyncWordleClient.from_url(server.url) as client:
        assert EXT_EPISODES in client.transport.extensions  # type: ignore[attr-defined]
        assert summary(await client.play(EPISODES)) == expected
        monkeypatch.setattr(episodes, "FRAME_SECONDS", 0.0)  # one episode per frame
        assert summary(await client.play(EPISODES)) == expected
    async with AsyncWordleClient.from_url(server.url, transport="http") as client:
        assert summary(await client.play(EPISODES)) == expected


def test_batches_stay_within_the_frame_limits() -> None:
    small = [Episode({"seed": i}, [{"guess": "crane"}]) for i in range(150)]
    assert [len(b) for b in episode_batches(small)] == [MAX_EPISODES_PER_FRAME] * 2 + [22]
    big = [Episode({"seed": i}, [{"message": "x" * 5000}]) for i in range(30)]
    batches = episode_batches(big)
    assert sum(len(b) for b in batches) == 30 and len(batches) == 4
    assert all(len(b) * 5000 < EPISODES_FRAME_BYTES for b in batches)
    assert episode_batches([]) == []


def test_play_waits_when_the_server_refuses_a_batch_for_its_rate() -> None:
    """200 messages a second: the second frame of 64 episodes (128 messages) must wait."""
    episodes = [Episode({"word": "crane"}, [{"guess": "crane"}]) for _ in range(150)]
    with (
        live_server("wordle", max_message_rate=200) as limited,
        WordleClient.from_url(limited.url) as client,
    ):
        played = client.play(episodes)
    assert len(played) == 150
    assert all(p.error is None and p.results[-1].reward == 1.0 for p in played)


def answer_rows(count: int) -> tuple[list[dict[str, Any]], list[str]]:
    rows = [{"seed": 100 + i, "split": "train"} for i in range(count)]
    texts = ["<answer>1 + 2</answer>", "no answer", "<answer>(9 - 3) * 4</answer>"] * count
    return rows, texts[:count]


def test_judging_a_batch_equals_judging_each_reply(server: LiveServer) -> None:
    rows, texts = answer_rows(70)  # two frames
    with live_server("countdown") as countdown:
        factory = make_env_factory("countdown", url=countdown.url, mode="answer")
        batched = factory()._answer_all(rows, texts)
        agent = factory()
        each = [agent._answer_one(row, text) for row, text in zip(rows, texts, strict=True)]

    def seen(agents: list[GameAgent]) -> list[Any]:
        return [
            (a.observation.model_dump(), a.server_reward, a.steps, a.done, a.answered, a.lost)
            for a in agents
        ]

    assert seen(batched) == seen(each)
    assert {a.steps for a in batched} == {1} and all(a.answered for a in batched)
    assert len({id(a) for a in batched}) == 70  # a copy per episode


def test_judging_against_a_vanished_server_loses_the_episodes() -> None:
    rows, texts = answer_rows(2)
    with live_server("countdown") as countdown:
        agent = make_env_factory("countdown", url=countdown.url, mode="answer")()
        agent._answer_all(rows, texts)
    lost_before = GameAgent.lost_episodes
    judged = agent._answer_all(rows, texts)  # each tries again for 2 s, then is lost
    assert [a.lost is not None and a.server_reward == 0.0 for a in judged] == [True, True]
    assert GameAgent.lost_episodes == lost_before + 2
