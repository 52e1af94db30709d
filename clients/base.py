"""The typed game client: ``AsyncEnvClient`` and its sync twin ``EnvClient``.

Both share everything but I/O, as httpx's two clients do: the constructors, how an action
becomes request fields and a reply a ``StepResult`` live in ``_BaseClient``; request ids,
retries and reconnect-and-resume live in the sans-I/O ``clients.protocol``. Each client drives
transports of its own kind: the sync one does blocking I/O on the caller's thread, so a call
costs a round trip on the wire and no hop to an event-loop thread (TRL calls every tool of
every rollout one after another, from synchronous code).

A client is typed by its game's models (``env_servers.<game>.models``): results are parsed
with ``model_validate`` into ``StepResult(observation, reward, done)``.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, Self, TypeVar

import httpx
import orjson

from clients.async_transports import (
    AsyncHTTPTransport,
    AsyncInProcessTransport,
    AsyncTransport,
    AsyncWebSocketTransport,
)
from clients.errors import (
    NEEDS_TOKEN,
    AccessError,
    CapacityError,
    ClientError,
    ConnectError,
    ExecutionError,
    InvalidRequestError,
    ServerError,
    server_error,
)
from clients.protocol import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MESSAGE_TIMEOUT,
    EPISODES_FRAME_BYTES,
    ConnectionOptions,
)
from clients.tls import https_context
from clients.transports import HTTPTransport, InProcessTransport, Transport, WebSocketTransport
from env_servers.core.models import Action, Observation, State
from env_servers.core.protocol import AUTH_TOKEN_ENV, MAX_EPISODES_PER_FRAME, ErrorCode

ActionT = TypeVar("ActionT", bound=Action)
ObservationT = TypeVar("ObservationT", bound=Observation)
StateT = TypeVar("StateT", bound=State)

TransportName = Literal["websocket", "http"]


@dataclass(frozen=True, slots=True)
class StepResult(Generic[ObservationT]):
    """One reply to ``reset`` or ``step``."""

    observation: ObservationT
    reward: float | None
    done: bool


@dataclass(frozen=True, slots=True)
class Episode:
    """A whole episode to play: its reset fields and the actions that follow, in order."""

    reset: Mapping[str, Any]
    actions: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True, slots=True)
class PlayedEpisode(Generic[ObservationT]):
    """What ``play`` got for one ``Episode``: the replies to its reset and steps, and the
    error that stopped it early (a refused action, a step after the end), if one did."""

    results: list[StepResult[ObservationT]]
    error: ServerError | None = None


BATCH_RATE_WAITS = (0.25, 0.5, 1.0, 2.0)
"""Pauses before sending again an ``episodes`` frame refused for the server's message rate."""
EPISODE_ERRORS = (InvalidRequestError, ExecutionError)
"""What stops one episode of a batch played a request at a time, and not the others."""


def episode_batches(episodes: Sequence[Episode]) -> list[list[dict[str, Any]]]:
    """``episodes`` as the data of ``episodes`` frames: at most ``MAX_EPISODES_PER_FRAME``
    each, and small enough for a server's default frame limit."""
    batches: list[list[dict[str, Any]]] = [[]]
    size = 0
    for episode in episodes:
        data = {"reset": dict(episode.reset), "actions": [dict(a) for a in episode.actions]}
        cost = len(orjson.dumps(data))
        if batches[-1] and (
            len(batches[-1]) == MAX_EPISODES_PER_FRAME or size + cost > EPISODES_FRAME_BYTES
        ):
            batches.append([])
            size = 0
        batches[-1].append(data)
        size += cost
    return [batch for batch in batches if batch]


def fetch_extensions(base_url: str, headers: dict[str, str], timeout: float) -> frozenset[str]:
    """The protocol extensions a server advertises in ``/metadata`` (none for a plain
    OpenEnv server), so a client only sends what the server understands."""
    try:
        response = httpx.get(
            f"{base_url.rstrip('/')}/metadata",
            headers=headers,
            timeout=timeout,
            trust_env=False,
            verify=https_context(),
        )
    except httpx.TransportError as error:
        raise ConnectError(f"Cannot reach {base_url}: {error}. Is the server running?") from None
    if response.status_code == 401:
        raise AccessError(ErrorCode.ACCESS_DENIED, NEEDS_TOKEN)
    if response.status_code != 200:
        return frozenset()
    protocol = response.json().get("protocol")
    return frozenset(protocol.get("extensions", ())) if isinstance(protocol, dict) else frozenset()


def space_url(space_id: str) -> str:
    """``user/name`` → ``https://user-name.hf.space`` (Hugging Face's subdomain rule)."""
    if space_id.count("/") != 1:
        raise ValueError(f"A Space id looks like 'user/name', got {space_id!r}.")
    return "https://" + re.sub(r"[^a-z0-9]+", "-", space_id.lower()).strip("-") + ".hf.space"


def with_token(headers: dict[str, str] | None, auth_token: str | None) -> dict[str, str]:
    """``headers`` with ``Authorization: Bearer <auth_token>`` (default: the environment's
    ``ARENAGYM_AUTH_TOKEN``), which replaces any other ``Authorization``."""
    headers = dict(headers or {})
    token = auth_token if auth_token is not None else os.environ.get(AUTH_TOKEN_ENV)
    if token:
        headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _saved_hf_token() -> str | None:
    try:
        from huggingface_hub import get_token
    except ImportError:
        return None
    return get_token()


class _BaseClient(Generic[ActionT, ObservationT, StateT]):
    """What both clients share: constructors, request fields and reply parsing."""

    game: ClassVar[str]
    action_type: ClassVar[type[Action]]
    observation_type: ClassVar[type[Observation]]
    state_type: ClassVar[type[State]]

    _websocket_transport: ClassVar[type[Any]]
    _http_transport: ClassVar[type[Any]]
    _in_process_transport: ClassVar[type[Any]]
    """The transport classes a client drives: sync or async ones."""

    def __init__(self, transport: Any, *, on_close: Callable[[], None] | None = None) -> None:
        self.transport = transport
        self._on_close = on_close
        """Run once after the transport closed (``from_docker_image`` stops its container)."""

    # -- constructors ----------------------------------------------------------------------

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        transport: TransportName | str = "websocket",
        headers: dict[str, str] | None = None,
        auth_token: str | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        message_timeout: float = DEFAULT_MESSAGE_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> Self:
        """A client for the server at ``url`` (``http://host:port``), over ``transport``
        ``websocket`` (the default) or ``http``. ``auth_token`` (default:
        ``ARENAGYM_AUTH_TOKEN``) is sent as ``Authorization: Bearer …`` to a server started
        with ``--auth-token``."""
        headers = with_token(headers, auth_token)
        extensions = fetch_extensions(url, headers, connect_timeout)
        options = ConnectionOptions(
            extensions, headers, connect_timeout, message_timeout, max_retries
        )
        if transport == "websocket":
            return cls(cls._websocket_transport(url, options))
        if transport == "http":
            return cls(cls._http_transport(url, options))
        raise ValueError(f"transport must be 'websocket' or 'http', not {transport!r}")

    @classmethod
    def in_process(cls) -> Self:
        """The game itself in this process, behind the server's session layer."""
        return cls(cls._in_process_transport(cls.game))

    @classmethod
    def from_space(cls, space_id: str, *, token: str | None = None, **options: Any) -> Self:
        """A client for a game deployed as the Hugging Face Space ``user/name``. The token
        (default: ``HF_TOKEN``, else the one ``huggingface-cli login`` saved) is sent for
        private Spaces; a public Space started with an auth token takes ``auth_token=`` (or
        ``ARENAGYM_AUTH_TOKEN``) instead, in the same header."""
        token = token or os.environ.get("HF_TOKEN") or _saved_hf_token()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return cls.from_url(space_url(space_id), headers=headers, **options)

    @classmethod
    def from_docker_image(cls, image: str, **options: Any) -> Self:
        """Start ``image`` (an arenagym or OpenEnv server image) and connect to it; the
        container is stopped and removed when the client closes. See ``clients.docker``."""
        from clients.docker import start_container

        container = start_container(image, **options.pop("docker", {}))
        try:
            client = cls.from_url(container.url, **options)
        except BaseException:
            container.stop()
            raise
        client._on_close = container.stop
        return client

    # -- shared by both ------------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        return self.transport.session_id

    @staticmethod
    def _fields(action: Action | dict[str, Any]) -> dict[str, Any]:
        return action.model_dump(exclude_defaults=True) if isinstance(action, Action) else action

    def _result(self, data: dict[str, Any]) -> StepResult[ObservationT]:
        try:
            fields = {**data["observation"], "reward": data.get("reward"), "done": data["done"]}
            observation = self.observation_type.model_validate(fields)
        except (KeyError, TypeError, ValueError) as error:
            raise ClientError(f"Unexpected reply for {self.game}: {error}") from None
        return StepResult(observation, data.get("reward"), bool(data["done"]))  # type: ignore[arg-type]

    def _played(self, data: dict[str, Any]) -> PlayedEpisode[ObservationT]:
        """One episode of an ``episodes`` reply."""
        error = data.get("error")
        results = [self._result(result) for result in data.get("results", ())]
        return PlayedEpisode(results, server_error(error) if error is not None else None)

    def _state(self, data: dict[str, Any]) -> StateT:
        return self.state_type.model_validate(data)  # type: ignore[return-value]

    def _closed(self) -> Callable[[], None] | None:
        on_close, self._on_close = self._on_close, None
        return on_close


class AsyncEnvClient(_BaseClient[ActionT, ObservationT, StateT]):
    """Async client for one session of one game. Connects on first use."""

    transport: AsyncTransport
    _websocket_transport = AsyncWebSocketTransport
    _http_transport = AsyncHTTPTransport
    _in_process_transport = AsyncInProcessTransport

    async def reset(self, **kwargs: Any) -> StepResult[ObservationT]:
        """Start an episode; ``kwargs`` are the game's reset fields (``seed``, ``split``…)."""
        return self._result(await self.transport.reset(kwargs))

    async def step(self, action: ActionT | dict[str, Any]) -> StepResult[ObservationT]:
        """Apply an action (a model of the game or a dict of its fields)."""
        return self._result(await self.transport.step(self._fields(action)))

    async def state(self) -> StateT:
        return self._state(await self.transport.state())

    async def play(self, episodes: Sequence[Episode]) -> list[PlayedEpisode[ObservationT]]:
        """As ``EnvClient.play``."""
        played: list[PlayedEpisode[ObservationT]] = []
        for batch in episode_batches(episodes):
            replies = await self._send_episodes(batch)
            if replies is None:
                played += [await self._play_one(episode) for episode in batch]
            else:
                played += [self._played(reply) for reply in replies]
        return played

    async def _send_episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        replies: list[dict[str, Any]] = []
        waits = iter(BATCH_RATE_WAITS)
        while len(replies) < len(batch):
            try:
                answered = await self.transport.episodes(batch[len(replies) :])
            except CapacityError:
                wait = next(waits, None)
                if wait is None:
                    raise
                await asyncio.sleep(wait)
                continue
            if answered is None:
                return None
            if not answered:
                raise ClientError("The server answered an episodes frame with no episode.")
            replies += answered
        return replies

    async def _play_one(self, episode: dict[str, Any]) -> PlayedEpisode[ObservationT]:
        results: list[StepResult[ObservationT]] = []
        try:
            results.append(await self.reset(**episode["reset"]))
            for action in episode["actions"]:
                results.append(await self.step(action))
        except EPISODE_ERRORS as error:
            return PlayedEpisode(results, error)
        return PlayedEpisode(results)

    async def aclose(self) -> None:
        """End the session and release the connection (and the container, if any)."""
        try:
            await self.transport.close()
        finally:
            if (on_close := self._closed()) is not None:
                await asyncio.to_thread(on_close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class EnvClient(_BaseClient[ActionT, ObservationT, StateT]):
    """The sync twin of ``AsyncEnvClient``: same constructors and methods, ``close``
    instead of ``aclose``. A game declares its models once, on the async client: a subclass
    names it as ``async_type`` and reads them from there."""

    async_type: ClassVar[type[AsyncEnvClient[Any, Any, Any]]]
    transport: Transport
    _websocket_transport = WebSocketTransport
    _http_transport = HTTPTransport
    _in_process_transport = InProcessTransport

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        twin = cls.__dict__.get("async_type")
        if twin is not None:
            cls.game = twin.game
            cls.action_type = twin.action_type
            cls.observation_type = twin.observation_type
            cls.state_type = twin.state_type

    def reset(self, **kwargs: Any) -> StepResult[ObservationT]:
        """Start an episode; ``kwargs`` are the game's reset fields (``seed``, ``split``…)."""
        return self._result(self.transport.reset(kwargs))

    def step(self, action: ActionT | dict[str, Any]) -> StepResult[ObservationT]:
        """Apply an action (a model of the game or a dict of its fields)."""
        return self._result(self.transport.step(self._fields(action)))

    def state(self) -> StateT:
        return self._state(self.transport.state())

    def play(self, episodes: Sequence[Episode]) -> list[PlayedEpisode[ObservationT]]:
        """Play whole ``episodes`` on this session, one after another, each from its reset:
        one frame per batch where the server offers ``episodes`` (a trainer judging a batch
        of replies), else a request per reset and step. A refused action stops its own
        episode (``PlayedEpisode.error``); a lost connection raises."""
        played: list[PlayedEpisode[ObservationT]] = []
        for batch in episode_batches(episodes):
            replies = self._send_episodes(batch)
            if replies is None:
                played += [self._play_one(episode) for episode in batch]
            else:
                played += [self._played(reply) for reply in replies]
        return played

    def _send_episodes(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The replies to ``batch``, over as many ``episodes`` frames as the server takes to
        play it (it may answer the first episodes only); a frame refused for coming faster
        than the server's message rate (nothing of it played) is sent again after a pause."""
        replies: list[dict[str, Any]] = []
        waits = iter(BATCH_RATE_WAITS)
        while len(replies) < len(batch):
            try:
                answered = self.transport.episodes(batch[len(replies) :])
            except CapacityError:
                wait = next(waits, None)
                if wait is None:
                    raise
                time.sleep(wait)
                continue
            if answered is None:
                return None
            if not answered:
                raise ClientError("The server answered an episodes frame with no episode.")
            replies += answered
        return replies

    def _play_one(self, episode: dict[str, Any]) -> PlayedEpisode[ObservationT]:
        results: list[StepResult[ObservationT]] = []
        try:
            results.append(self.reset(**episode["reset"]))
            for action in episode["actions"]:
                results.append(self.step(action))
        except EPISODE_ERRORS as error:
            return PlayedEpisode(results, error)
        return PlayedEpisode(results)

    def close(self) -> None:
        """End the session and release the connection (and the container, if any); bounded
        by the transport's timeouts, since a finalizer may run it at interpreter exit."""
        try:
            self.transport.close()
        finally:
            if (on_close := self._closed()) is not None:
                on_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
