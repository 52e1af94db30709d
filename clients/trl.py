"""Adapters for TRL's ``GRPOTrainer(environment_factory=…)``.

How TRL (1.16) uses these classes shapes them:
- the factory is called with no arguments, so server URLs come from ``ARENAGYM_WORDLE_URL`` /
  ``ARENAGYM_COUNTDOWN_URL`` or from ``make_env_factory(url=…)``;
- every public method other than ``reset`` becomes a tool the model sees, and a public
  ``get_reward`` an extra reward: so there is exactly one public tool per class, and all
  helpers are private;
- ``reset(**row)`` receives the whole dataset row (``prompt`` included): only the game's
  reset fields are forwarded, so every rollout of a GRPO group, which gets the same row and so
  the same ``seed``, plays the same word or puzzle;
- a tool that raises has its message returned to the model: a finished game raises
  ``ValueError("Game over.")``;
- TRL never closes an environment: each instance holds one remote session, reused across
  episodes, released by a finalizer (the server's TTL reaps whatever is left).

Reward functions read the attributes these classes keep up to date (``trainer.rewards``).
"""

from __future__ import annotations

import contextlib
import os
import weakref
from typing import Any, ClassVar

from clients.base import EnvClient, StepResult
from clients.errors import ClientError
from clients.games import CountdownClient, WordleClient
from env_servers.countdown.models import CountdownObservation, CountdownResetOptions
from env_servers.wordle.models import WordleObservation, WordleResetOptions

TRANSPORTS = ("websocket", "http", "inprocess")


def _release(client: EnvClient[Any, Any, Any]) -> None:
    with contextlib.suppress(Exception):  # at interpreter exit the server may be gone
        client.close()


class _RemoteGame:
    """One remote session of a game, opened on the first reset."""

    _client_type: ClassVar[type[EnvClient[Any, Any, Any]]]
    _reset_fields: ClassVar[frozenset[str]]
    _url_variable: ClassVar[str]
    _url: ClassVar[str | None] = None
    _transport: ClassVar[str] = "websocket"
    _reset_defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self._client: EnvClient[Any, Any, Any] | None = None
        self._done = True

    def _connect(self) -> EnvClient[Any, Any, Any]:
        if self._client is None:
            if self._transport == "inprocess":
                self._client = self._client_type.in_process()
            else:
                url = self._url or os.environ.get(self._url_variable)
                if not url:
                    raise ClientError(
                        f"No server for {type(self).__name__}: set {self._url_variable} or use "
                        "make_env_factory(url=...)."
                    )
                self._client = self._client_type.from_url(url, transport=self._transport)
            weakref.finalize(self, _release, self._client)
        return self._client

    def _reset(self, row: dict[str, Any]) -> StepResult[Any]:
        fields = {k: v for k, v in row.items() if k in self._reset_fields and v is not None}
        result = self._connect().reset(**{**self._reset_defaults, **fields})
        self._done = result.done
        return result

    def _step(self, action: dict[str, Any]) -> StepResult[Any]:
        if self._done or self._client is None:
            raise ValueError("Game over.")
        result = self._client.step(action)
        self._done = result.done
        return result


def _spaced(text: str) -> str:
    return " ".join(text.upper())


class WordleToolEnv(_RemoteGame):
    """Wordle for tool-calling GRPO: the model plays through one tool, ``guess``."""

    _client_type = WordleClient
    _reset_fields = frozenset(WordleResetOptions.model_fields)
    _url_variable = "ARENAGYM_WORDLE_URL"

    def __init__(self) -> None:
        super().__init__()
        self._clear()

    def _clear(self) -> None:
        self.solved = False
        self.best_greens = 0
        self.best_yellows = 0
        self.repetition_score = 0.0
        """Distinct words / all attempted guesses (0.0 before any guess): repeats cost."""
        self.invalid_count = 0
        self.guesses_used = 0
        self.attempted = 0

    def reset(self, **row: Any) -> str:
        self._clear()
        result = self._reset(row)
        left = result.observation.guesses_left
        return (
            f"\n\nA secret five-letter word has been chosen. You have {left} guesses: call the "
            "`guess` tool with one word at a time. Feedback gives one letter per position: "
            "G = right letter, right place; Y = in the word, wrong place; X = not in the word."
        )

    def guess(self, word: str) -> str:
        """Guess the secret five-letter word.

        Args:
            word: A five-letter English word, e.g. "crane".

        Returns:
            The feedback for each letter (G: right place, Y: wrong place, X: not in the word) and the guesses left.
        """
        result = self._step({"guess": word})  # the game normalises case, spaces, [brackets]
        observation: WordleObservation = result.observation
        self._record(observation)
        if observation.invalid_move:
            text = f"Invalid guess: {observation.reason} No guess used; {observation.guesses_left} left."
        else:
            last = observation.guesses[-1]
            text = f"{_spaced(last.word)}\n{' '.join(last.feedback)}"
            if not result.done:
                text += f"\n{observation.guesses_left} guesses left."
        if result.done:
            text += (
                "\nSolved!" if self.solved else f"\nGame over. The word was {observation.answer}."
            )
        return text

    def _record(self, observation: WordleObservation) -> None:
        signals = observation.reward_signals
        self.solved = signals.correct
        self.best_greens = signals.best_greens
        self.best_yellows = signals.best_yellows
        self.invalid_count = signals.invalid_count
        self.guesses_used = len(observation.guesses)
        self.attempted = signals.attempted_guesses
        if signals.attempted_guesses:
            self.repetition_score = signals.distinct_attempted / signals.attempted_guesses


class CountdownToolEnv(_RemoteGame):
    """Countdown for tool-calling GRPO: the model answers through one tool, ``submit``."""

    _client_type = CountdownClient
    _reset_fields = frozenset(CountdownResetOptions.model_fields)
    _url_variable = "ARENAGYM_COUNTDOWN_URL"

    def __init__(self) -> None:
        super().__init__()
        self.solved = False
        self.attempts_used = 0

    def reset(self, **row: Any) -> str:
        self.solved, self.attempts_used = False, 0
        observation: CountdownObservation = self._reset(row).observation
        numbers = ", ".join(map(str, observation.numbers))
        return (
            f"\n\nNumbers: {numbers}. Target: {observation.target}. Use each number exactly once "
            "with + - * / and parentheses. Call the `submit` tool with your expression; you have "
            f"{observation.attempts_left} attempt(s)."
        )

    def submit(self, expression: str) -> str:
        """Submit an arithmetic expression that makes the target.

        Args:
            expression: An expression using each given number exactly once, e.g. "(3 + 9) * 2".

        Returns:
            Whether it reaches the target, its value, and the attempts left.
        """
        result = self._step({"expression": expression})
        observation: CountdownObservation = result.observation
        self.attempts_used += 1
        self.solved = observation.correct
        if observation.correct:
            return f"Correct: {observation.expression} = {observation.target}."
        text = f"Wrong: {observation.feedback}"
        if not result.done:
            text += f" {observation.attempts_left} attempt(s) left."
        return text


ADAPTERS: dict[str, type[_RemoteGame]] = {"wordle": WordleToolEnv, "countdown": CountdownToolEnv}


def make_env_factory(
    game: str | type[_RemoteGame],
    *,
    url: str | None = None,
    transport: str = "websocket",
    **reset_defaults: Any,
) -> type[_RemoteGame]:
    """A configured adapter class to pass as ``environment_factory``.

    ``url`` defaults to the game's ``ARENAGYM_*_URL`` variable; ``transport`` is
    ``websocket`` (default), ``http`` or ``inprocess`` (the game in this process, no server);
    ``reset_defaults`` apply to every episode unless the dataset row sets them
    (e.g. ``split="eval"``, ``hard_mode=True``).
    """
    base = ADAPTERS[game] if isinstance(game, str) else game
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    unknown = set(reset_defaults) - base._reset_fields
    if unknown:
        raise ValueError(
            f"Unknown reset field(s) for {base.__name__}: {', '.join(sorted(unknown))}. "
            f"Known: {', '.join(sorted(base._reset_fields))}."
        )
    attributes = {"_url": url, "_transport": transport, "_reset_defaults": dict(reset_defaults)}
    return type(base.__name__, (base,), attributes)
