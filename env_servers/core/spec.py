"""A game's declaration: everything the rest of arenagym knows about a game, in one place.

A game package exposes one ``GameSpec`` and registers it under the ``arenagym.envs``
entry-point group; ``arenagym serve|play|train|eval``, the TRL adapters and the clients all
read it, so none of them names a game. The spec module is imported by clients and trainers
as well as by servers: it holds the game's wire models and agent (tools) by value, and names
everything heavier (the server ``Environment``, the terminal view, the evaluation report) by
``"module:attribute"`` string, imported only when used. It must never import FastAPI.

What a game declares:
- ``agent``: the class whose public methods are the tools a language model calls (name,
  typed signature and Google-style docstring are the tool's schema, for TRL and others), and
  whose attributes the rewards read (see ``clients.agent.GameAgent``);
- ``instruction``: the user message before the agent's opening text when played with tools;
- ``modes``: ``tools`` (multi-turn, through the agent's tools) and/or ``answer`` (one text
  reply per episode, which the game server verifies: ``answer_prompt`` and ``answer_action``);
- ``rewards``: named reward functions of a finished episode's agent, with default weights, and
  ``solved``, the reward that is 1.0 exactly when the episode was solved (progress bars and
  evaluation read it);
- ``episode_key``: what makes two training episodes the same (duplicates are dropped), if
  seeds can repeat episodes; ``seeds_vary``: whether different seeds give different episodes;
- ``hidden_reset_fields`` come from the reset model's ``SECRET_FIELDS``;
- what ``arenagym check`` (``env_servers.check``) holds the game to, all optional (a check
  whose declaration is missing is skipped, saying which field would enable it):
  ``max_steps`` (the step limit), ``reward_range``, ``random_move`` (a random legal move, for
  the random-play baseline and for playing episodes at all), ``invalid_moves`` (an illegal
  move and what it costs), ``hidden_fields`` (observation and state fields that hold hidden
  information) and ``repeat_probe`` (repeating one move must not pay);
- ``web``: the game's own page for playing by hand, if it has one (see ``core.web``);
- ``demonstrations``: worked answer-mode replies for a supervised warm-up, if it has them.
"""

from __future__ import annotations

import importlib
import inspect
import random
import re
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from env_servers.core.models import Action, Observation, ResetOptions, State

if TYPE_CHECKING:
    from clients.agent import GameAgent
    from clients.base import EnvClient

Mode = Literal["tools", "answer"]
MODES: tuple[Mode, ...] = ("tools", "answer")
RewardFunction = Callable[[Any], float]
"""A finished episode's agent → its reward."""


@dataclass(frozen=True, slots=True)
class Reward:
    """One reward of a game: a function of the episode's agent, and its default weight."""

    function: RewardFunction
    weight: float = 1.0
    description: str = ""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A well-formed move, as a language model would make it: a tool and its arguments."""

    name: str
    arguments: dict[str, Any]


def tool_names(agent: type) -> list[str]:
    """The tools of an agent class: its public methods but ``reset`` and ``get_reward``, as TRL
    finds them, in definition order (an attribute set to None withholds a tool)."""
    names: dict[str, None] = {}
    for klass in reversed(agent.__mro__):
        for name in vars(klass):
            if not name.startswith("_") and name not in ("reset", "get_reward"):
                names[name] = None
    return [name for name in names if inspect.isfunction(getattr(agent, name, None))]


def load_attribute(reference: str) -> Any:
    """``"package.module:attribute"`` → the attribute, imported now."""
    module_name, _, attribute = reference.partition(":")
    if not attribute:
        raise ValueError(f"Expected 'module:attribute', got {reference!r}.")
    return getattr(importlib.import_module(module_name), attribute)


@dataclass(frozen=True, slots=True)
class InvalidMoves:
    """How a game treats a well-formed but illegal move (a guess that is not a word), so the
    checker can hold it to that. An illegal move is data, not an error: the server answers
    with an observation (``flag`` set), never with an error frame."""

    example: Mapping[str, Any]
    """The fields of an action that passes the action model but is illegal in every position
    of every episode (Wordle: ``{"guess": "zzzzz"}``)."""
    ends_after: int | None = None
    """The invalid move that ends the episode: 1 means the first one does, ``n`` the ``n``-th
    (the checker sends them in a row, so a count "in a row" and one "per episode" agree);
    None: invalid moves never end an episode (then ``max_steps`` must bound it)."""
    free: bool = True
    """Whether an invalid move uses none of the game's moves (guesses, attempts, turns):
    fewer than ``ends_after`` of them, slipped between the legal moves of an episode, change
    neither its outcome nor how many legal moves it takes. False when one costs a move."""
    reward: float | None = 0.0
    """The reward of every invalid move, the one ending the episode included; None when it
    varies."""
    flag: str | None = "invalid_move"
    """The observation field that is true after an invalid move (None: the game has none)."""

    def __post_init__(self) -> None:
        if self.ends_after is not None and self.ends_after < 1:
            raise ValueError(f"InvalidMoves.ends_after must be 1 or more, got {self.ends_after}.")


RandomMove = Callable[[Any, random.Random], dict[str, Any]]
"""A typed observation of an episode under way, and a random source → a random legal move
(the action's fields)."""


@dataclass(frozen=True, kw_only=True)
class GameSpec:
    """The declaration of one game. See the module docstring for what each part is for."""

    name: str
    description: str
    environment: str
    """``"module:Class"`` of the server-side ``Environment``, imported only to serve or to
    play in-process."""
    reset_type: type[ResetOptions]
    action_type: type[Action]
    observation_type: type[Observation]
    state_type: type[State]
    client: type[EnvClient[Any, Any, Any]]
    """The typed sync client (its ``async_type`` is the async twin)."""
    agent: type[GameAgent]
    instruction: str
    """The user message before the agent's opening text, when played through tools."""
    rewards: Mapping[str, Reward]
    solved: str
    """The reward that is 1.0 exactly when an episode was solved (won)."""
    modes: tuple[Mode, ...] = ("tools",)
    """How a language model plays it; the first is the default."""
    answer_prompt: Callable[[Any], str] | None = None
    """Answer mode: the first observation → the whole user message."""
    answer_action: Callable[[str], dict[str, Any]] | None = None
    """Answer mode: a model's whole reply → the action that the server verifies."""
    example_call: Callable[[Any, random.Random], ToolCall] | None = None
    """A well-formed tool call for a first observation (warm-up data for tiny models)."""
    example_answer: Callable[[Any, random.Random], str] | None = None
    """A well-formed answer-mode reply for a first observation."""
    demonstrations: str | None = None
    """``"module:function"`` giving worked answer-mode replies for a supervised warm-up
    (``arenagym warmup``): ``(observation, count, rng) -> [reply, …]``, up to ``count``
    different replies to the episode whose first observation is ``observation`` (a
    ``random.Random`` picks among more); None if the game has none. The warm-up picks the
    episodes, so it knows which ones its validation must leave out."""
    episode_key: Callable[[Any], Hashable] | None = None
    """A first observation → what identifies the episode, for dropping duplicate episodes."""
    seeds_vary: bool = True
    """Whether different seeds give different episodes (the conformance checker tests it)."""
    solved_word: str = "solved"
    """How a solved episode is called in progress bars and reports ("won" for Wordle)."""
    unit: str = "episodes"
    """What one episode is called in reports ("puzzles", "words")."""
    evaluation: str | None = None
    """``"module:attribute"`` of the game's ``EvaluationView`` (extra columns, sections and
    plots in evaluation reports); the generic report when None."""
    terminal: str | None = None
    """``"module:attribute"`` of the game's terminal view for ``arenagym play``; a generic
    text view when None."""
    web: str | None = None
    """``"package:folder"`` of the game's own page (package data: ``index.html`` and what it
    loads; files it lacks come from the generic view); the generic view when None."""
    max_steps: int | None = None
    """The most steps any episode takes under the default reset fields, whatever the moves
    (legal or not): the step limit ``arenagym check`` holds every episode to. None: not
    declared (the checker then gives an episode up after
    ``env_servers.check.play.DEFAULT_STEP_CAP`` steps)."""
    reward_range: tuple[float, float] | None = None
    """The least and the most reward one step can earn; None: not declared."""
    random_move: RandomMove | None = None
    """A random legal move for an episode under way (the checker's random-legal baseline, and
    how it plays episodes at all); it must use only ``rng`` for randomness, so a seed replays
    it. None: the checker cannot play this game, only reset it."""
    invalid_moves: InvalidMoves | None = None
    """An illegal move and what it costs; None: not declared."""
    hidden_fields: frozenset[str] = frozenset()
    """Observation and state fields that hold hidden information (a secret word, a solution):
    None (or empty) until the episode is over. Their final values must appear nowhere in an
    observation or a state before that. Fields named like the reset model's
    ``SECRET_FIELDS`` count as hidden too."""
    repeat_probe: bool = False
    """Whether repeating one legal move, every step, is an unfair strategy here, so it must
    not out-score random legal play (the checker's "repeat one move" probe)."""
    extras: Mapping[str, Any] = field(default_factory=dict)
    """Anything else a game wants to publish (e.g. its word lists' sizes)."""

    def __post_init__(self) -> None:
        problems = []
        if not self.modes or any(mode not in MODES for mode in self.modes):
            problems.append(f"modes must be a non-empty subset of {MODES}, got {self.modes}")
        if "answer" in self.modes and (self.answer_prompt is None or self.answer_action is None):
            problems.append("answer mode needs answer_prompt and answer_action")
        if self.demonstrations is not None and not all(self.demonstrations.partition(":")[::2]):
            problems.append(
                f"demonstrations must name 'module:function', got {self.demonstrations!r}"
            )
        if self.demonstrations is not None and "answer" not in self.modes:
            problems.append("demonstrations are answer-mode replies: they need answer mode")
        if self.web is not None and not all(self.web.partition(":")[::2]):
            problems.append(f"web must name 'package:folder', got {self.web!r}")
        if self.max_steps is not None and self.max_steps < 1:
            problems.append(f"max_steps must be 1 or more, got {self.max_steps}")
        if self.reward_range is not None and not self.reward_range[0] <= self.reward_range[1]:
            problems.append(f"reward_range must be (least, most), got {self.reward_range}")
        if self.repeat_probe and self.random_move is None:
            problems.append("repeat_probe repeats a random legal move: it needs random_move")
        if self.solved not in self.rewards:
            problems.append(f"solved names reward {self.solved!r}, not one of {list(self.rewards)}")
        if problems:
            raise ValueError(f"Invalid GameSpec for {self.name!r}: " + "; ".join(problems) + ".")

    @property
    def default_mode(self) -> Mode:
        return self.modes[0]

    @property
    def hidden_reset_fields(self) -> frozenset[str]:
        """Reset fields that fix hidden information (a secret word): never sent by trainers."""
        return self.reset_type.SECRET_FIELDS

    @property
    def hidden(self) -> frozenset[str]:
        """Every observation or state field that must stay hidden until the episode is over:
        ``hidden_fields`` and the fields named like a ``SECRET_FIELDS`` reset field."""
        fields = set(self.observation_type.model_fields) | set(self.state_type.model_fields)
        return self.hidden_fields | (self.hidden_reset_fields & fields)

    @property
    def reset_fields(self) -> frozenset[str]:
        return frozenset(self.reset_type.model_fields)

    @property
    def url_variable(self) -> str:
        """The environment variable that names this game's server (``textarena:2048-v0`` →
        ``ARENAGYM_TEXTARENA_2048_V0_URL``: whatever is not a letter or digit becomes ``_``)."""
        return f"ARENAGYM_{re.sub(r'[^A-Z0-9]+', '_', self.name.upper())}_URL"

    @property
    def file_name(self) -> str:
        """The name as a file or folder name (``textarena:2048-v0`` → ``textarena-2048-v0``)."""
        return re.sub(r"[^\w.-]+", "-", self.name)

    @property
    def default_weights(self) -> dict[str, float]:
        return {name: reward.weight for name, reward in self.rewards.items()}

    def tool_names(self) -> list[str]:
        """The agent's tools, in definition order."""
        return tool_names(self.agent)

    def load_environment(self) -> type[Any]:
        environment: type[Any] = load_attribute(self.environment)
        return environment
