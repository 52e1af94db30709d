"""The ``Environment`` base class: one game, one episode at a time, no I/O.

The server holds one instance per session and calls it from the event loop, so ``reset`` and
``step`` must be fast and must not block. The session layer (``sessions.py``) validates what
reaches them, enforces reset-before-step and no-step-after-done, and serialises what they
return, so an environment only plays the game.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Generic, TypeVar

from env_servers.core.models import Action, Observation, ResetOptions, State

ActionT = TypeVar("ActionT", bound=Action)
ObservationT = TypeVar("ObservationT", bound=Observation)
StateT = TypeVar("StateT", bound=State)
ResetT = TypeVar("ResetT", bound=ResetOptions)


class Environment(ABC, Generic[ResetT, ActionT, ObservationT, StateT]):
    """Base class of every game.

    Subclasses set the four model types and ``name``/``description``, and implement
    ``reset``, ``step`` and ``state``.

    Contract:
    - ``reset(options)`` starts a new episode (``options`` already validated) and returns the
      first observation; the same ``options.seed`` gives the same episode.
    - ``step(action)`` is only called between a reset and the observation with ``done=True``.
      An illegal move is not an exception: it is reported in the observation.
    - An exception raised by ``reset``/``step`` reaches the client as ``EXECUTION_ERROR``;
      raise ``ValueError`` with a message that says what to do.
    - ``state`` must not reveal hidden information before the episode is over.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    version: ClassVar[str] = "1.0"
    reset_type: ClassVar[type[ResetOptions]] = ResetOptions
    action_type: ClassVar[type[Action]]
    observation_type: ClassVar[type[Observation]]
    state_type: ClassVar[type[State]] = State

    @abstractmethod
    def reset(self, options: ResetT) -> ObservationT:
        """Start a new episode."""

    @abstractmethod
    def step(self, action: ActionT) -> ObservationT:
        """Apply one action."""

    @property
    @abstractmethod
    def state(self) -> StateT:
        """Bookkeeping of the current episode, with hidden information withheld."""

    def close(self) -> None:
        """Release resources when the session ends."""
