"""The typed game client: ``AsyncEnvClient`` and its sync twin ``EnvClient``.

Both share everything but I/O: the sync client runs the async one on a private event-loop
thread, which also keeps the socket's keep-alive pings answered while the caller is busy
elsewhere (a trainer generating text for minutes between two steps).

A client is typed by its game's models (``env_servers.<game>.models``): results are parsed
with ``model_validate`` into ``StepResult(observation, reward, done)``.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, Self, TypeVar

import httpx

from clients.errors import ClientError, ConnectError
from clients.transports import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MESSAGE_TIMEOUT,
    ConnectionOptions,
    HTTPTransport,
    InProcessTransport,
    Transport,
    WebSocketTransport,
)
from env_servers.core.models import Action, Observation, State

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


def fetch_extensions(base_url: str, headers: dict[str, str], timeout: float) -> frozenset[str]:
    """The protocol extensions a server advertises in ``/metadata`` (none for a plain
    OpenEnv server), so a client only sends what the server understands."""
    try:
        response = httpx.get(
            f"{base_url.rstrip('/')}/metadata", headers=headers, timeout=timeout, trust_env=False
        )
    except httpx.TransportError as error:
        raise ConnectError(f"Cannot reach {base_url}: {error}. Is the server running?") from None
    if response.status_code != 200:
        return frozenset()
    protocol = response.json().get("protocol")
    return frozenset(protocol.get("extensions", ())) if isinstance(protocol, dict) else frozenset()


def space_url(space_id: str) -> str:
    """``user/name`` → ``https://user-name.hf.space`` (Hugging Face's subdomain rule)."""
    if space_id.count("/") != 1:
        raise ValueError(f"A Space id looks like 'user/name', got {space_id!r}.")
    return "https://" + re.sub(r"[^a-z0-9]+", "-", space_id.lower()).strip("-") + ".hf.space"


def _saved_hf_token() -> str | None:
    try:
        from huggingface_hub import get_token
    except ImportError:
        return None
    return get_token()


class AsyncEnvClient(Generic[ActionT, ObservationT, StateT]):
    """Async client for one session of one game. Connects on first use."""

    game: ClassVar[str]
    action_type: ClassVar[type[Action]]
    observation_type: ClassVar[type[Observation]]
    state_type: ClassVar[type[State]]

    def __init__(
        self, transport: Transport, *, on_close: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.transport = transport
        self._on_close = on_close

    # -- constructors ----------------------------------------------------------------------

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        transport: TransportName = "websocket",
        headers: dict[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        message_timeout: float = DEFAULT_MESSAGE_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> Self:
        """A client for the server at ``url`` (``http://host:port``)."""
        headers = dict(headers or {})
        extensions = fetch_extensions(url, headers, connect_timeout)
        options = ConnectionOptions(
            extensions, headers, connect_timeout, message_timeout, max_retries
        )
        if transport == "websocket":
            return cls(WebSocketTransport(url, options))
        if transport == "http":
            return cls(HTTPTransport(url, options))
        raise ValueError(f"transport must be 'websocket' or 'http', not {transport!r}")

    @classmethod
    def in_process(cls) -> Self:
        """The game itself in this process, behind the server's session layer."""
        return cls(InProcessTransport(cls.game))

    @classmethod
    def from_space(cls, space_id: str, *, token: str | None = None, **options: Any) -> Self:
        """A client for a game deployed as the Hugging Face Space ``user/name``. The token
        (default: ``HF_TOKEN``, else the one ``huggingface-cli login`` saved) is sent for
        private Spaces."""
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

        async def stop() -> None:
            await asyncio.to_thread(container.stop)

        client._on_close = stop
        return client

    # -- the game ----------------------------------------------------------------------------

    async def reset(self, **kwargs: Any) -> StepResult[ObservationT]:
        """Start an episode; ``kwargs`` are the game's reset fields (``seed``, ``split``…)."""
        return self._result(await self.transport.reset(kwargs))

    async def step(self, action: ActionT | dict[str, Any]) -> StepResult[ObservationT]:
        """Apply an action (a model of the game or a dict of its fields)."""
        if isinstance(action, Action):
            action = action.model_dump(exclude_defaults=True)
        return self._result(await self.transport.step(action))

    async def state(self) -> StateT:
        return self.state_type.model_validate(await self.transport.state())  # type: ignore[return-value]

    @property
    def session_id(self) -> str | None:
        return self.transport.session_id

    def _result(self, data: dict[str, Any]) -> StepResult[ObservationT]:
        try:
            fields = {**data["observation"], "reward": data.get("reward"), "done": data["done"]}
            observation = self.observation_type.model_validate(fields)
        except (KeyError, TypeError, ValueError) as error:
            raise ClientError(f"Unexpected reply for {self.game}: {error}") from None
        return StepResult(observation, data.get("reward"), bool(data["done"]))  # type: ignore[arg-type]

    async def aclose(self) -> None:
        """End the session and release the connection (and the container, if any)."""
        try:
            await self.transport.close()
        finally:
            if self._on_close is not None:
                on_close, self._on_close = self._on_close, None
                await on_close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


T = TypeVar("T")
CLOSE_TIMEOUT = 30.0


class _LoopThread:
    """One daemon thread running an event loop, shared by every sync client."""

    _shared: ClassVar[_LoopThread | None] = None
    _guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="arenagym-client", daemon=True).start()

    @classmethod
    def shared(cls) -> _LoopThread:
        with cls._guard:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)


class EnvClient(Generic[ActionT, ObservationT, StateT]):
    """The sync twin of ``AsyncEnvClient``: same constructors and methods, ``close``
    instead of ``aclose``."""

    async_type: ClassVar[type[AsyncEnvClient[Any, Any, Any]]]

    def __init__(self, async_client: AsyncEnvClient[ActionT, ObservationT, StateT]) -> None:
        self._async = async_client
        self._loop = _LoopThread.shared()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Self:
        return cls(cls.async_type.from_url(url, **options))

    @classmethod
    def in_process(cls) -> Self:
        return cls(cls.async_type.in_process())

    @classmethod
    def from_space(cls, space_id: str, **options: Any) -> Self:
        return cls(cls.async_type.from_space(space_id, **options))

    @classmethod
    def from_docker_image(cls, image: str, **options: Any) -> Self:
        return cls(cls.async_type.from_docker_image(image, **options))

    def reset(self, **kwargs: Any) -> StepResult[ObservationT]:
        return self._loop.run(self._async.reset(**kwargs))

    def step(self, action: ActionT | dict[str, Any]) -> StepResult[ObservationT]:
        return self._loop.run(self._async.step(action))

    def state(self) -> StateT:
        return self._loop.run(self._async.state())

    @property
    def session_id(self) -> str | None:
        return self._async.session_id

    @property
    def transport(self) -> Transport:
        return self._async.transport

    def close(self) -> None:
        # bounded: a finalizer may close a client at interpreter exit, with the server gone
        self._loop.run(self._async.aclose(), timeout=CLOSE_TIMEOUT)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
