"""Typed clients over every transport, resume after a dropped socket, and plain OpenEnv."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from pydantic import Field

from clients import AsyncWordleClient, WordleClient
from clients.base import Episode, space_url
from clients.errors import CapacityError, ConnectError, InvalidRequestError, SessionError
from clients.transports import WebSocketTransport
from env_servers.wordle.models import WordleAction, WordleObservation
from tests.live import LiveServer, live_server


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_sync_client_plays_a_typed_game(wordle_server: LiveServer, transport: Any) -> None:
    with WordleClient.from_url(wordle_server.url, transport=transport) as client:
        result = client.reset(word="crane")
        assert isinstance(result.observation, WordleObservation) and not result.done
        result = client.step(WordleAction(guess="slate"))
        assert result.observation.guesses[-1].feedback == "XXGXG" and result.reward == 0.0
        invalid = client.step({"guess": "zzzzz"})
        assert invalid.observation.invalid_move and invalid.observation.reason
        result = client.step(WordleAction(message="[crane]"))
        assert result.done and result.reward == 1.0 and result.observation.answer == "crane"
        assert client.state().step_count == 3
        with pytest.raises(SessionError, match="episode is over"):
            client.step(WordleAction(guess="slate"))
        session_id = client.session_id
    assert session_id not in wordle_server.sessions.sessions  # closing ended the session


def test_in_process_client_matches_the_server(wordle_server: LiveServer) -> None:
    with WordleClient.in_process() as local, WordleClient.from_url(wordle_server.url) as remote:
        for seed in (1, 2, 3):
            a, b = local.reset(seed=seed, split="eval"), remote.reset(seed=seed, split="eval")
            assert a.observation == b.observation
            assert local.step({"guess": "crane"}) == remote.step({"guess": "crane"})


async def test_async_client_and_validation_errors(wordle_server: LiveServer) -> None:
    async with AsyncWordleClient.from_url(wordle_server.url) as client:
        await client.reset(word="crane")
        with pytest.raises(InvalidRequestError, match="action"):
            await client.step({"bogus": 1})
        result = await client.step({"guess": "crane"})
        assert result.done


def test_dropped_socket_is_resumed_without_losing_the_episode(wordle_server: LiveServer) -> None:
    with WordleClient.from_url(wordle_server.url) as client:
        client.reset(word="crane")
        client.step({"guess": "slate"})
        transport = client.transport
        assert isinstance(transport, WebSocketTransport)
        session_id = client.session_id
        # cut the connection under the client, as a network failure would
        transport._ws.close()  # type: ignore[union-attr]
        result = client.step({"guess": "crane"})
        assert result.done and result.reward == 1.0
        assert transport.reconnects == 1 and client.session_id == session_id
        assert client.state().step_count == 2  # the episode went on, nothing replayed twice


def test_a_client_silent_longer_than_the_idle_timeout_carries_on() -> None:
    """A TRL rollout worker sits silent between training steps: the server closes its idle
    socket (4408) but keeps the session, and the next step resumes it transparently."""
    with (
        live_server("wordle", idle_timeout=0.3, session_ttl=5) as server,
        WordleClient.from_url(server.url) as client,
    ):
        client.reset(word="crane")
        client.step({"guess": "slate"})
        session_id = client.session_id
        time.sleep(1.2)  # several idle timeouts: the server has closed the socket
        assert server.sessions.sessions[session_id].socket is None
        result = client.step({"guess": "crane"})
        assert result.done and result.reward == 1.0
        assert client.transport.reconnects == 1 and client.session_id == session_id
        assert client.state().step_count == 2


def test_resume_of_an_expired_session_is_a_session_error() -> None:
    with live_server("wordle", session_ttl=0.2) as server:
        client = WordleClient.from_url(server.url, max_retries=1)
        client.reset(word="crane")
        client.transport._ws.close()  # type: ignore[attr-defined]
        time.sleep(1.0)  # the detached session expires
        with pytest.raises(SessionError, match="Unknown session"):
            client.step({"guess": "crane"})
        assert client.reset(word="crane").done is False  # a reset starts afresh
        client.close()


def test_capacity_and_unreachable_servers() -> None:
    with (
        live_server("wordle", max_sessions=1) as server,
        WordleClient.from_url(server.url) as first,
    ):
        first.reset()
        second = WordleClient.from_url(server.url)
        with pytest.raises(CapacityError, match="max-sessions"):
            second.reset()
        second.close()
    with pytest.raises(ConnectError, match="Is the server running"):
        WordleClient.from_url("http://127.0.0.1:9")


def test_space_urls() -> None:
    assert space_url("burtenshaw/textarena") == "https://burtenshaw-textarena.hf.space"
    assert space_url("User_Name/My.Env") == "https://user-name-my-env.hf.space"
    with pytest.raises(ValueError, match="user/name"):
        space_url("nope")


def test_clients_never_import_fastapi() -> None:
    code = (
        "import sys, clients, clients.trl, clients.transports, clients.play; "
        "from clients import WordleClient, CountdownClient; "
        "assert 'fastapi' not in sys.modules and 'starlette' not in sys.modules, 'fastapi'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- a plain OpenEnv server, built the stock way --------------------------------------------


@pytest.fixture(scope="module")
def openenv_server() -> Iterator[str]:
    from openenv.core.env_server import create_app
    from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment
    from openenv.core.env_server.types import Action, Observation, State

    from env_servers.wordle.environment import WordleEnvironment
    from env_servers.wordle.models import WordleResetOptions

    class PlainAction(Action):
        guess: str | None = None
        message: str | None = None

    class PlainObservation(Observation):
        payload: dict[str, Any] = Field(default_factory=dict)

    class PlainWordle(OpenEnvEnvironment):
        """Our Wordle rules behind OpenEnv's stock server, observations as our JSON."""

        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self.game = WordleEnvironment()

        def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
            return self._wrap(self.game.reset(WordleResetOptions(seed=seed)))

        def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
            fields = action.model_dump(exclude={"metadata"}, exclude_none=True)
            return self._wrap(self.game.step(WordleEnvironment.action_type(**fields)))

        def _wrap(self, observation: Any) -> Any:
            data = observation.model_dump(exclude={"reward", "done", "metadata"})
            return PlainObservation(payload=data, reward=observation.reward, done=observation.done)

        @property
        def state(self) -> State:
            return State(step_count=self.game.state.step_count)

    app = create_app(PlainWordle, PlainAction, PlainObservation, max_concurrent_envs=4)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.mark.openenv
def test_our_client_works_against_a_plain_openenv_server(openenv_server: str) -> None:
    from openenv.core.env_server.types import Observation

    class PlainObservation(Observation):
        payload: dict[str, Any] = Field(default_factory=dict)

    class PlainClient(AsyncWordleClient):
        observation_type = PlainObservation  # type: ignore[assignment]

    class SyncPlainClient(WordleClient):
        async_type = PlainClient

    with SyncPlainClient.from_url(openenv_server) as client:
        # no extensions advertised: no request ids (OpenEnv's models would reject them)
        assert client.transport.extensions == frozenset()  # type: ignore[attr-defined]
        result = client.reset(seed=5)
        assert result.observation.payload["guesses_left"] == 6
        result = client.step({"guess": "crane"})
        assert result.observation.payload["guesses_left"] == 5
        assert client.state().step_count == 1
        # whole episodes: a request per reset and step, as the server offers no batches
        played = client.play([Episode({"seed": 5}, [{"guess": "crane"}, {"guess": "slate"}])])
        assert [r.observation.payload["guesses_left"] for r in played[0].results] == [6, 5, 4]
