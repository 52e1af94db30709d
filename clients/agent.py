"""``GameAgent``: one remote session of a game, played by a language model.

Every game subclasses it once, in its own folder: its public methods are the tools the model calls, each a typed method with a Google-style
docstring, which is the tool's schema; its attributes are what the game's rewards read. The
same class serves TRL (``clients.trl.make_env_factory``), evaluation and the answer mode, in
which the model replies once in text and the server verifies that reply.

How TRL (1.16) uses such a class shapes it:
- the factory is called with no arguments, so the server comes from the class (configured by
  ``make_env_factory``) or from ``ARENAGYM_<GAME>_URL``;
- every public method other than ``reset`` and ``get_reward`` is a tool, so helpers and
  hooks are private, and a public ``get_reward`` (added only on request) makes the
  environment own the reward;
- ``reset(**row)`` receives the whole dataset row: only the game's reset fields are sent;
- a tool that raises has its message returned to the model: a finished game raises
  ``ValueError("Game over.")``;
- TRL never closes an environment: the session is released by a finalizer, and the server's
  TTL reaps whatever is left;
- an exception from ``reset`` ends the whole training run: so when the game server vanishes
  (killed, restarted, unreachable) the episode is *lost* instead (``lost`` says why; it scores
  0, is counted in ``GameAgent.lost_episodes`` and logged), the agent drops its connection, and
  the next reset opens a new one. A tool of a lost episode raises ``EpisodeLost``.

What a subclass writes: ``_clear`` (reset its bookkeeping), ``_record(observation)`` (update
it from each observation), ``_opening(observation)`` (the text appended to the prompt after a
reset, tools mode) and its tools, which call ``self._step(action)``.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import threading
import time
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

from clients.base import EnvClient, Episode, StepResult
from clients.errors import (
    ClientError,
    ConnectError,
    ConnectionLost,
    EpisodeLost,
    RequestTimeout,
    SessionError,
)

if TYPE_CHECKING:
    from env_servers.core.spec import GameSpec

TRANSPORTS = ("websocket", "http", "inprocess")
REGAIN_WAITS = (0.0, 0.5, 1.5)
"""Seconds before each new try of a reset whose server vanished: a restarting server has a
couple of seconds to come back before the episode is lost."""
SERVER_GONE = (ConnectError, ConnectionLost, RequestTimeout, SessionError)
"""What a vanished server (or one restarted, which forgot its sessions) raises mid-episode."""

logger = logging.getLogger("arenagym.agent")
_lost_lock = threading.Lock()


def _release(client: EnvClient[Any, Any, Any]) -> None:
    with contextlib.suppress(Exception):  # at interpreter exit the server may be gone
        client.close()


class GameAgent:
    """One session of a game, opened on the first reset and reused across episodes."""

    _game: ClassVar[str]
    """The registered name of the game, set by each game's agent class."""
    _spec: ClassVar[GameSpec | None] = None
    """The game's declaration, found in the registry by ``_game`` (or set by
    ``make_env_factory``)."""
    _url: ClassVar[str | None] = None
    _auth_token: ClassVar[str | None] = None
    _transport: ClassVar[str] = "websocket"
    _reset_defaults: ClassVar[dict[str, Any]] = {}
    _mode: ClassVar[str] = "tools"
    """``tools``, or ``answer``: the model's whole reply is the answer (``_answer``)."""
    lost_episodes: ClassVar[int] = 0
    """Episodes lost to a vanished server, by every agent of this process."""

    def __init__(self) -> None:
        cls = type(self)
        if cls._spec is None:
            from env_servers.core.registry import load_spec

            cls._spec = load_spec(cls._game)
        self._game_spec: GameSpec = cls._spec
        self._client: EnvClient[Any, Any, Any] | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._done = True
        self._clear_episode()

    @classmethod
    def _playing(cls, client: Any) -> Self:
        """An agent joining an episode under way, stepping through ``client`` (anything with
        ``step(action) -> StepResult``): a game server runs the tools over its own sessions
        this way, so an MCP ``tools/call`` answers with the very text TRL's model reads."""
        agent = cls()
        agent._client = client
        agent._done = False
        return agent

    # -- what TRL calls ----------------------------------------------------------------------

    def reset(self, **row: Any) -> str | None:
        """Start an episode with the row's reset fields; returns the text that TRL appends to
        the prompt (None in answer mode, whose prompt is the row's own). Never raises for a
        vanished server: the episode is lost instead, and the text says so."""
        result = self._begin(row)
        if result is None:
            return None if self._mode == "answer" else f"\n\n{self.lost} This episode is void."
        return self._opening(result.observation)

    # -- for subclasses ------------------------------------------------------------------------

    def _clear(self) -> None:
        """Reset the game's bookkeeping before an episode."""

    def _record(self, observation: Any) -> None:
        """Update the game's bookkeeping from an observation (after reset and every step)."""

    def _opening(self, observation: Any) -> str | None:
        """The text appended to the prompt after a reset (tools mode)."""
        return None

    def _step(self, action: dict[str, Any]) -> StepResult[Any]:
        """Send one action of the episode; raises ``ValueError("Game over.")`` after the end,
        ``EpisodeLost`` (a ``ValueError`` too) when the server vanished."""
        if self.lost:
            raise EpisodeLost(f"{self.lost} This episode is over and scores 0.")
        if self._done or self._client is None:
            raise ValueError("Game over.")
        try:
            result = self._client.step(action)
        except SERVER_GONE as error:
            self._lose(error)
            raise EpisodeLost(f"{self.lost} This episode is over and scores 0.") from None
        self.steps += 1
        self._observe(result)
        return result

    # -- answer mode and bookkeeping -------------------------------------------------------------

    def _answer(self, text: str) -> StepResult[Any] | None:
        """Answer mode: send a whole reply as the game's answer action, once per episode;
        ``None`` when the episode is lost (it then scores 0)."""
        action = self._game_spec.answer_action
        if action is None:
            raise TypeError(f"{self._game_spec.name} has no answer mode.")
        self.answered = True
        if self.lost:
            return None
        try:
            return self._step(action(text))
        except EpisodeLost:
            return None

    def _answer_all(self, rows: Sequence[dict[str, Any]], texts: Sequence[str]) -> list[Self]:
        """Answer mode, many episodes on this agent's session: row ``i`` answered with
        ``texts[i]``, each returned as a copy of the agent at its end. One frame per batch
        where the server offers ``episodes``; should the server vanish meanwhile, the batch is
        played an episode at a time, each regained or lost on its own as ``_begin`` does."""
        action = self._game_spec.answer_action
        if action is None:
            raise TypeError(f"{self._game_spec.name} has no answer mode.")
        episodes = [
            Episode(self._reset_fields(row), [action(text)])
            for row, text in zip(rows, texts, strict=True)
        ]
        try:
            played = self._connect().play(episodes)
        except SERVER_GONE:
            self._disconnect()
            return [self._answer_one(row, text) for row, text in zip(rows, texts, strict=True)]
        finished = []
        for episode in played:
            self._clear_episode()
            self.answered = True
            for index, result in enumerate(episode.results):
                if index:  # a step; the first is the reset
                    self.steps += 1
                self._observe(result)
            if episode.error is not None:
                raise episode.error
            finished.append(copy.copy(self))
        return finished

    def _answer_one(self, row: dict[str, Any], text: str) -> Self:
        self._begin(row)  # a server gone: the episode is lost, and scores 0
        self._answer(text)
        return copy.copy(self)

    def _clear_episode(self) -> None:
        self.steps = 0
        self.server_reward = 0.0
        """The sum of the rewards the server gave in this episode."""
        self.done = False
        self.answered = False
        self.observation: Any = None
        """The latest observation the server sent (what a viewer shows of the episode)."""
        self.lost: str | None = None
        """Why the episode was lost to a vanished server; None while it stands."""
        self._clear()

    def _observe(self, result: StepResult[Any]) -> None:
        self._done = self.done = result.done
        if result.reward is not None:
            self.server_reward += result.reward
        self.observation = result.observation
        self._record(result.observation)

    def _reset_fields(self, row: dict[str, Any]) -> dict[str, Any]:
        """The reset fields of an episode: the row's game fields over the class defaults."""
        fields = {
            k: v for k, v in row.items() if k in self._game_spec.reset_fields and v is not None
        }
        return {**self._reset_defaults, **fields}

    def _reset(self, row: dict[str, Any]) -> StepResult[Any]:
        self._clear_episode()
        result = self._connect().reset(**self._reset_fields(row))
        self._observe(result)
        return result

    def _begin(self, row: dict[str, Any]) -> StepResult[Any] | None:
        """``_reset`` for a training run, which must go on when a server vanishes: a failed
        reset is tried again on a new connection after each of ``REGAIN_WAITS`` (a restarted
        server has forgotten the old session, and may take a moment to listen again), then the
        episode is lost (``None``)."""
        for wait in (*REGAIN_WAITS, None):
            try:
                return self._reset(row)
            except SERVER_GONE as error:
                self._disconnect()
                if wait is None:
                    self._lose(error)
                else:
                    time.sleep(wait)
        return None

    def _lose(self, error: Exception) -> None:
        """Give up the episode: it scores 0, is counted and logged; the connection goes, so the
        next reset opens a new one."""
        self.lost = f"The game server was lost: {error}."
        self._done = self.done = True
        self._disconnect()
        with _lost_lock:
            GameAgent.lost_episodes += 1
            total = GameAgent.lost_episodes
        logger.warning(
            "%s episode lost, scored 0 (%d lost in this run): %s",
            self._game_spec.name,
            total,
            error,
        )

    def _disconnect(self) -> None:
        """Drop the connection without waiting on a server that is gone."""
        finalizer, self._finalizer, self._client = self._finalizer, None, None
        if finalizer is not None:
            finalizer()

    def _state(self) -> Any:
        """The session's state on the server: the source of every verdict."""
        if self._client is None:
            raise ClientError("No episode yet: reset first.")
        return self._client.state()

    def _connect(self) -> EnvClient[Any, Any, Any]:
        if self._client is None:
            client_type = self._game_spec.client
            if self._transport == "inprocess":
                self._client = client_type.in_process()
            else:
                variable = self._game_spec.url_variable
                url = self._url or os.environ.get(variable)
                if not url:
                    raise ClientError(
                        f"No server for {type(self).__name__}: set {variable} or use "
                        "make_env_factory(url=...)."
                    )
                self._client = client_type.from_url(
                    url, transport=self._transport, auth_token=self._auth_token
                )
            self._finalizer = weakref.finalize(self, _release, self._client)
        return self._client
