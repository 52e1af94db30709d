"""Sessions: the one place where reset, step and state run, for both transports.

A session is one game instance plus its bookkeeping. While a WebSocket is bound to it, it
lives as long as the socket. Without a socket (HTTP, or a dropped socket that may re-attach)
it expires ``session_ttl`` seconds after its last request; a reaper task that always runs
frees it. The same task closes sockets that stay silent: before their first message for
``first_frame_timeout``, after it for ``idle_timeout`` (a TRL rollout worker may sit idle for
minutes between episodes, so that is no shorter than the TTL, and its session then waits for
a resume). The number of sessions is bounded by ``max_sessions``, and closing a session
closes its socket, so a socket never plays on without a slot.

A session id is a secret: whoever holds it can play the game, so it is never logged, a
second socket cannot take a session over from the live one that holds it, and with auth on a
session answers only the token (its ``owner``) that opened it.

Game steps take microseconds, so everything here runs on the event loop: no locks, no thread
per session. Requests arrive as already-parsed JSON values and are validated here, so both
transports report the same errors.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from env_servers.core.config import ServerSettings
from env_servers.core.environment import Environment
from env_servers.core.errors import (
    CapacityReached,
    EnvironmentFailed,
    EnvServerError,
    EpisodeStateError,
    FactoryFailed,
    InvalidRequest,
    SessionTaken,
    UnknownSession,
)
from env_servers.core.metrics import Metrics
from env_servers.core.models import Observation, State
from env_servers.core.protocol import WS_CLOSE_IDLE, WS_CLOSE_NO_FIRST_FRAME, WS_CLOSE_SESSION_GONE

logger = logging.getLogger("arenagym.sessions")


@dataclass(eq=False, slots=True)
class Session:
    """One game instance. ``socket`` is the WebSocket bound to it, if any."""

    id: str
    env: Environment[Any, Any, Any, Any]
    last_seen: float
    socket: Any = None
    started: bool = False
    done: bool = False
    last_frame: bytes | str | None = None
    """The last reset/step frame that carried an id, and the reply it got: a client that
    re-sends it after a reconnect gets the same reply instead of a second step."""
    last_reply: bytes = b""
    agent: Any = None
    """The game's agent that runs MCP ``tools/call`` in this episode; a reset drops it."""
    spoke: bool = False
    """Whether the bound socket has sent a message (``last_seen`` is then its last one)."""
    tokens: float = float("inf")
    refilled: float = 0.0
    """The bound socket's message allowance (a token bucket, full when a socket binds)."""
    owner: str | None = None
    """Digest of the token that opened it (``access.owner_of``); None with auth off."""

    def bind(self, socket: Any, now: float) -> None:
        """Bind ``socket``, with a fresh allowance."""
        self.socket = socket
        self.spoke, self.tokens, self.last_seen = False, float("inf"), now


@dataclass(slots=True)
class Counters:
    """Totals since start, served by ``/health`` (tests read them to see traffic arrive)."""

    sessions_opened: int = 0
    sessions_expired: int = 0
    sockets_idle_closed: int = 0
    """Sockets closed for silence after they spoke (their sessions wait for a resume)."""
    resets: int = 0
    steps: int = 0
    errors: int = 0


@dataclass(eq=False)
class SessionManager:
    """Creates, finds, runs and expires sessions of one game."""

    env_type: type[Environment[Any, Any, Any, Any]]
    settings: ServerSettings
    clock: Callable[[], float] = time.monotonic
    sessions: dict[str, Session] = field(default_factory=dict)
    counters: Counters = field(default_factory=Counters)
    draining: bool = False
    metrics: Metrics = field(init=False)

    def __post_init__(self) -> None:
        self.metrics = Metrics(self.env_type.name, lambda: len(self.sessions))

    # -- lifecycle -----------------------------------------------------------------------

    def open(self, owner: str | None = None) -> Session:
        """A new session of ``owner``, or ``CapacityReached`` when ``max_sessions`` are open."""
        if self.draining:
            self.metrics.refused("draining")
            raise CapacityReached("The server is shutting down; connect to another instance.")
        if len(self.sessions) >= self.settings.max_sessions:
            self.metrics.refused("capacity")
            raise CapacityReached(
                f"All {self.settings.max_sessions} sessions are in use. Close finished sessions "
                "(DELETE /sessions/{id} or a 'close' frame), retry later, or start the server "
                "with a larger --max-sessions."
            )
        try:
            env = self.env_type()
        except Exception as error:  # a broken game must not take the server down
            logger.exception("creating a %s environment failed", self.env_type.name)
            raise FactoryFailed(f"Could not create a {self.env_type.name} game: {error}") from None
        session = Session(id=secrets.token_urlsafe(16), env=env, last_seen=self.clock())
        session.owner = owner
        self.sessions[session.id] = session
        self.counters.sessions_opened += 1
        self.metrics.opened += 1
        return session

    def get(self, session_id: str | None, owner: str | None = None) -> Session:
        """The live session with this id, if ``owner`` opened it; ``UnknownSession`` (the same
        for another owner's session, so ids cannot be probed) says how to get one."""
        session = self.sessions.get(session_id) if session_id else None
        if session is not None and session.owner != owner:
            session = None
        if session is None:
            if not session_id:
                raise UnknownSession(
                    "No session id given. POST /reset first and pass the session_id it returns "
                    "(in the body or the X-Session-Id header)."
                )
            raise UnknownSession(
                "Unknown session: it was closed or expired after "
                f"{self.settings.session_ttl:g} s without requests. Reset to start a new one."
            )
        session.last_seen = self.clock()
        return session

    def close(self, session: Session) -> None:
        """End the session and free its slot; a socket still bound to it is closed."""
        socket, session.socket = session.socket, None
        if socket is not None:
            close_soon(socket, WS_CLOSE_SESSION_GONE, "session closed")
        if self.sessions.pop(session.id, None) is not None:
            try:
                session.env.close()
            except Exception:
                logger.exception("closing a %s session failed", self.env_type.name)

    def attach(self, session_id: str, socket: Any, owner: str | None = None) -> Session:
        """Bind a socket to an existing session whose socket dropped. A session another live
        socket holds is refused (``SessionTaken``): an id in the wrong hands takes nothing."""
        session = self.get(session_id, owner)
        if session.socket is not None:
            self.metrics.refused("taken")
            raise SessionTaken(
                "This session is held by another open connection. Close that one first; a "
                "dropped connection frees it at once (or after missed pings), then re-attach."
            )
        session.bind(socket, self.clock())
        return session

    def detach(self, session: Session, socket: Any) -> None:
        """The socket is gone. A session with an episode worth resuming waits for the TTL;
        one that never started is freed at once."""
        if session.socket is not socket:
            return  # already re-attached elsewhere
        session.socket = None
        session.last_seen = self.clock()
        if not session.started or self.draining:
            self.close(session)

    def admit(self, session: Session, cost: float = 1) -> bool:
        """Count ``cost`` messages from the session's socket: False when they come faster
        than ``max_message_rate`` allows (bursts of one second's worth pass)."""
        now = self.clock()
        session.last_seen, session.spoke = now, True
        rate = self.settings.max_message_rate
        if not rate:
            return True
        tokens = min(rate, session.tokens + (now - session.refilled) * rate) - cost
        session.refilled = now
        if tokens < 0:
            return False
        session.tokens = tokens
        return True

    def refund(self, session: Session, cost: float) -> None:
        """Give back ``cost`` messages that ``admit`` counted and that were not answered."""
        if self.settings.max_message_rate:
            session.tokens += cost

    @property
    def active(self) -> int:
        return len(self.sessions)

    # -- the game ------------------------------------------------------------------------

    def reset(self, session: Session, kwargs: Any) -> Observation:
        env = session.env
        if kwargs is None:
            kwargs = {}
        elif not isinstance(kwargs, dict):
            raise InvalidRequest('Reset parameters must be a JSON object, e.g. {"seed": 7}.')
        try:
            options = env.reset_type.model_validate(kwargs)
        except ValidationError as error:
            raise InvalidRequest.from_validation("reset parameters", error) from None
        secret = options.SECRET_FIELDS & options.model_fields_set
        if secret and not self.settings.allow_explicit_secrets:
            raise InvalidRequest(
                f"Reset field(s) {', '.join(sorted(secret))} fix hidden information and are only "
                "accepted when the server runs with --allow-explicit-secrets."
            )
        observation = self._run(env.reset, options)
        session.started, session.done, session.agent = True, observation.done, None
        self.counters.resets += 1
        self.metrics.resets += 1
        return observation

    def step(self, session: Session, action_data: Any) -> Observation:
        if not session.started:
            raise EpisodeStateError("No episode is running in this session: send a reset first.")
        if session.done:
            raise EpisodeStateError("This episode is over: send a reset to start a new one.")
        env = session.env
        if not isinstance(action_data, dict):
            raise InvalidRequest(
                f"The action must be a JSON object with the fields of {env.action_type.__name__}."
            )
        try:
            action = env.action_type.model_validate(action_data)
        except ValidationError as error:
            raise InvalidRequest.from_validation("action", error) from None
        started = time.perf_counter()
        observation = self._run(env.step, action)
        self.metrics.stepped(observation, time.perf_counter() - started)
        session.done = observation.done
        self.counters.steps += 1
        return observation

    def state(self, session: Session) -> State:
        if not session.started:
            raise EpisodeStateError("No episode is running in this session: send a reset first.")
        try:
            return session.env.state
        except Exception as error:
            raise self._failure(error) from None

    def _run(self, method: Callable[[Any], Observation], argument: Any) -> Observation:
        try:
            return method(argument)
        except EnvServerError:
            raise
        except Exception as error:
            raise self._failure(error) from None

    def count_error(self, code: str) -> None:
        """An error answered to a client (an ``ErrorCode``, or MCP's ``jsonrpc:<code>``):
        counted for ``/health`` and ``/metrics``."""
        self.counters.errors += 1
        self.metrics.error(code)

    def _failure(self, error: Exception) -> EnvironmentFailed:
        if isinstance(error, ValueError):
            return EnvironmentFailed(str(error), status=400)
        logger.exception("%s raised", self.env_type.name, exc_info=error)
        return EnvironmentFailed(f"The game failed: {type(error).__name__}: {error}")

    # -- expiry --------------------------------------------------------------------------

    def reap(self) -> int:
        """Close sessions without a socket that have been silent longer than the TTL, and
        the sockets that have been silent too long (their sessions stay, for resume)."""
        settings, now = self.settings, self.clock()
        expired = []
        for session in self.sessions.values():
            silent = now - session.last_seen
            if session.socket is None:
                if silent > settings.session_ttl:
                    expired.append(session)
            elif session.spoke and silent > settings.idle_timeout:
                reason = f"idle for {settings.idle_timeout:g} s; resume with ?session_id="
                close_soon(session.socket, WS_CLOSE_IDLE, reason)
                self.counters.sockets_idle_closed += 1
            elif not session.spoke and silent > settings.first_frame_timeout:
                reason = f"no message within {settings.first_frame_timeout:g} s"
                close_soon(session.socket, WS_CLOSE_NO_FIRST_FRAME, reason)
        for session in expired:
            self.close(session)
        self.counters.sessions_expired += len(expired)
        self.metrics.reaped += len(expired)
        return len(expired)

    async def reap_forever(self) -> None:
        settings = self.settings
        shortest = min(settings.session_ttl, settings.idle_timeout, settings.first_frame_timeout)
        interval = min(max(shortest / 4, 0.05), 30.0)
        while True:
            await asyncio.sleep(interval)
            try:
                if expired := self.reap():
                    logger.info("expired %d idle session(s)", expired)
            except Exception:  # the reaper must outlive any bug in a game's close()
                logger.exception("session reaper failed")


def close_soon(socket: Any, code: int, reason: str) -> None:
    """Close a socket from synchronous code (its ``close`` is a coroutine, and a no-op on a
    socket already closing)."""
    task = asyncio.get_running_loop().create_task(socket.close(code, reason))
    _PENDING.add(task)
    task.add_done_callback(_PENDING.discard)


_PENDING: set[asyncio.Task[None]] = set()
"""Tasks of ``close_soon`` still running: held so they are not collected mid-way."""
