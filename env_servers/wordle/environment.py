"""The Wordle ``Environment``: the rules of ``game.py`` behind TextArena-compatible text.

What we reproduce of TextArena 0.7.4's ``Wordle-v0`` as OpenEnv's textarena server sends it
(``ta.make("Wordle-v0")``: ``LLMObservationWrapper`` + ``ActionFormattingWrapper``):

- ``messages`` is one ``TextArenaMessage(sender_id=-1, category="MESSAGE")`` whose ``content``
  is the whole transcript so far; every step only appends to it, so clients slice the new
  part off the end. After reset it is ``"\\n[GAME] " + prompt`` (the prompt ends in ``\\n``).
- A step appends ``"\\n[Player] " + the action`` (a message without brackets is echoed
  wrapped in them; ``[Player]``/``[GAME]`` tags in it are removed; a long one is cut at
  ``MAX_ECHO_CHARS``), then ``"\\n[GAME] "`` and
  ``"You submitted [crane].\\nFeedback:\\nC R A N E\\nG Y G X X\\nYou have 5 guesses left."``
  ("guesses" even for 1), or ``"You attempted an invalid move. Reason: … Please resubmit a
  valid move and remember to follow the game rules to avoid penalties."``.
- Guesses are found by TextArena's rule (first ``[word]``, or the whole bracketless message);
  invalid moves keep TextArena's key phrases ("wrong format", "must be exactly", "You have
  already guessed", "is not an English word"). ``info`` is ``{}`` after reset, then
  ``{"reward_signals": {"wordle.greens", "wordle.yellows", "wordle.repetitions",
  "wordle.correct"}}`` as OpenEnv's Wordle reward provider computes them.

Where we differ, on purpose:
- Secrets come from the original game's answers list with train/eval splits, guesses are
  checked against its allowed list; TextArena draws ~100 Basic-English nouns via NLTK.
- The final guess also gets its feedback, then a ``[GAME]`` line saying how the game ended
  (and the secret); TextArena appends nothing to the transcript when the game ends.
- Invalid moves cost no guess and the episode is lost on the ``MAX_INVALID_MOVES``-th;
  TextArena ends it on the second consecutive one. A lost game scores 0.0, not TextArena's
  fraction of letters matched. ``reward`` is None after reset (OpenEnv sends 0.0).
- ``prompt`` is the rules until the first accepted guess, then ``"Wordle-v0"``, as OpenEnv's
  server sends it (it sends the transcript before that; the rules are its start). The rules
  stay at the start of ``messages[0].content``, and the reply stays small.
- Optional hard mode (TextArena's "hardcore" is a larger word list, not hard mode).
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar
from uuid import uuid4

from pydantic import BaseModel

from env_servers.core.environment import Environment
from env_servers.wordle import game
from env_servers.wordle.models import (
    GuessFeedback,
    TextArenaMessage,
    WordleAction,
    WordleObservation,
    WordleResetOptions,
    WordleRewardSignals,
    WordleState,
)

_RULES = (
    "You are Playing Wordle.\n"
    f"A secret {game.WORD_LENGTH}-letter word has been chosen. "
    f"You have {game.MAX_GUESSES} attempts to guess it.\n"
    "For each guess, wrap your word in square brackets (e.g., '[apple]').\n"
    "Feedback for each letter will be given as follows:\n"
    "  - G (green): correct letter in the correct position\n"
    "  - Y (yellow): letter exists in the word but in the wrong position\n"
    "  - X (wrong): letter is not in the word\n"
    "Invalid guesses (wrong format, not a word, repeated) do not use an attempt, but after "
    f"{game.MAX_INVALID_MOVES} of them the game is lost.\n"
)
_HARD_RULES = (
    "Hard mode is on: every revealed hint must be used in later guesses (green letters stay "
    "in place, yellow letters must appear again).\n"
)
_BEGIN = "Enter your guess to begin.\n"
PROMPT = _RULES + _BEGIN
HARD_MODE_PROMPT = _RULES + _HARD_RULES + _BEGIN

_ENV_ID = "Wordle-v0"
_GAME = "\n[GAME] "
_PLAYER = "\n[Player] "
_INVALID = "You attempted an invalid move. Reason: "
MAX_ECHO_CHARS = 500
"""A move's text is echoed into the transcript up to this many characters (then ``…``): an
episode's transcript, sent whole on every step, grows by a bounded amount per move."""
_RESUBMIT = (
    " Please resubmit a valid move and remember to follow the game rules to avoid penalties."
)
_WIN = "Congratulations! You guessed the word correctly!"
_OUT_OF_GUESSES = "The turn limit has been reached. You didn't guess the word."
_TOO_MANY_INVALID = f"Too many invalid moves ({game.MAX_INVALID_MOVES}): the game is over."

_ModelT = TypeVar("_ModelT", bound=BaseModel)
_new = object.__new__
_set = object.__setattr__


def _build(cls: type[_ModelT], values: dict[str, Any]) -> _ModelT:
    """An instance of ``cls`` from complete, already-valid field values, without validation.

    Sets the same four slots pydantic's ``model_construct`` sets, but without its per-field
    default lookup (3-4 us for an observation; this is ~1 us). ``values`` must hold every
    field with a value of the right type; the tests compare the result to validated models.
    As every field is set, all instances of a class share one set of set fields (pydantic
    only ever adds field names to it, which changes nothing).
    """
    model = _new(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", _all_fields(cls))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


@functools.cache
def _all_fields(cls: type[BaseModel]) -> set[str]:
    return set(cls.model_fields)


class WordleEnvironment(
    Environment[WordleResetOptions, WordleAction, WordleObservation, WordleState]
):
    """Wordle with TextArena ``Wordle-v0`` text and structured fields; see the module doc."""

    name = "wordle"
    description = "Find the secret 5-letter word in 6 guesses from G/Y/X letter feedback."
    reset_type = WordleResetOptions
    action_type = WordleAction
    observation_type = WordleObservation
    state_type = WordleState

    def __init__(self) -> None:
        self._game: game.WordleGame | None = None
        self._split: game.Split = "train"
        self._episode_id: str | None = None
        self._step_count = 0
        self._prompt = ""
        self._transcript = ""
        self._guesses: list[GuessFeedback] = []

    def reset(self, options: WordleResetOptions) -> WordleObservation:
        secret = options.word or game.choose_secret(options.split, options.seed)
        hard_mode = options.hard_mode
        self._game = game.WordleGame(secret, hard_mode)
        self._split = options.split
        self._episode_id = options.episode_id  # or a uuid4, made when ``state`` first asks
        self._step_count = 0
        prompt = HARD_MODE_PROMPT if hard_mode else PROMPT
        self._prompt = "[GAME] " + prompt.strip()
        self._transcript = _GAME + prompt
        self._guesses = []
        return self._observation(None, None, {})

    def step(self, action: WordleAction) -> WordleObservation:
        current = self._game
        assert current is not None, "the session layer resets before the first step"
        self._step_count += 1
        if action.guess is not None:
            word: str | None = game.parse_guess(action.guess)
            echo = f"[{word}]"
        else:
            message = action.message or ""
            echo = _echo(message)
            word = game.parse_message(message)

        reason = current.attempt(word)
        if reason is None:
            self._prompt = _ENV_ID  # as OpenEnv's server, once the first guess is accepted
            guessed, marks = current.guesses[-1]
            self._guesses.append(_build(GuessFeedback, {"word": guessed, "feedback": marks}))
            text = (
                f"{_PLAYER}{echo}{_GAME}You submitted [{guessed}].\nFeedback:\n"
                f"{' '.join(guessed.upper())}\n{' '.join(marks)}"
            )
            if current.won:
                text += _GAME + _WIN
            else:
                text += f"\nYou have {current.guesses_left} guesses left."
                if current.done:
                    text += f"{_GAME}{_OUT_OF_GUESSES}\nThe secret word was: **{current.secret}**."
        else:
            text = f"{_PLAYER}{echo}{_GAME}{_INVALID}{reason}{_RESUBMIT}"
            if current.done:
                text += f"{_GAME}{_TOO_MANY_INVALID}\nThe secret word was: **{current.secret}**."
        self._transcript += text

        reward = 1.0 if current.won else 0.0
        seen = current.attempts.get(word, 1) if word is not None else 1
        info = {
            "reward_signals": {
                "wordle.greens": current.greens / game.WORD_LENGTH,
                "wordle.yellows": current.yellows / game.WORD_LENGTH,
                "wordle.repetitions": float(2 - seen),
                "wordle.correct": reward,
            }
        }
        return self._observation(reward, reason, info)

    @property
    def state(self) -> WordleState:
        current = self._game
        if current is None:
            return WordleState()
        if self._episode_id is None:
            self._episode_id = str(uuid4())
        return WordleState.model_construct(
            episode_id=self._episode_id,
            step_count=self._step_count,
            split=self._split,
            hard_mode=current.hard_mode,
            guesses=list(self._guesses),
            guesses_left=current.guesses_left,
            invalid_count=current.invalid_count,
            done=current.done,
            won=current.won,
            answer=current.secret if current.done else None,
        )

    def _observation(
        self, reward: float | None, reason: str | None, info: dict[str, Any]
    ) -> WordleObservation:
        """Assemble an observation from known-good parts, without re-validating them."""
        current = self._game
        assert current is not None
        attempted = current.attempted
        distinct = len(current.attempts)
        done = current.done
        signals = _build(
            WordleRewardSignals,
            {
                "greens": current.greens,
                "yellows": current.yellows,
                "best_greens": current.best_greens,
                "best_yellows": current.best_yellows,
                "attempted_guesses": attempted,
                "distinct_attempted": distinct,
                "repeats_attempted": attempted - distinct,
                "correct": current.won,
                "invalid_count": current.invalid_count,
            },
        )
        message = _build(
            TextArenaMessage,
            {"sender_id": -1, "content": self._transcript, "category": "MESSAGE"},
        )
        return _build(
            WordleObservation,
            {
                "done": done,
                "reward": reward,
                "metadata": {},
                "prompt": self._prompt,
                "messages": [message],
                "current_player_id": 0,
                "legal_players": [0],
                "info": info,
                "guesses": self._guesses.copy(),
                "guesses_left": game.MAX_GUESSES - len(current.guesses),
                "invalid_move": reason is not None,
                "reason": reason,
                "reward_signals": signals,
                "hard_mode": current.hard_mode,
                "answer": current.secret if done else None,
            },
        )


def _echo(message: str) -> str:
    """A message as the transcript repeats it: wrapped in brackets when it has none, without
    ``[Player]``/``[GAME]`` tags (removed until none is left, so ``[GA[GAME]ME]`` cannot
    forge one), and at most ``MAX_ECHO_CHARS`` long."""
    if "[" not in message and "]" not in message:
        echo = "[" + message.strip() + "]"
    else:
        echo = message
        while (stripped := echo.replace("[Player]", "").replace("[GAME]", "")) != echo:
            echo = stripped
    return echo if len(echo) <= MAX_ECHO_CHARS else echo[:MAX_ECHO_CHARS] + "…"
