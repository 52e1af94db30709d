"""The ``Environment`` of a TextArena game: one TextArena env per session, played by one player.

``environment_type("Mastermind-v0")`` is the class that serves ``textarena:Mastermind-v0``;
this module's attributes are those classes by TextArena id, so a spec names one as
``"env_servers.textarena.environment:Mastermind-v0"``.

How TextArena's habits are mapped:
- randomness: every call into TextArena runs with the session's own ``random`` state
  (:mod:`env_servers.textarena.isolation`), and the env is built anew under the seeded state
  at each reset, so games that draw their puzzle at construction follow the seed too;
- invalid moves: TextArena's ``set_invalid_move`` is watched to report the move as
  ``invalid_move`` with TextArena's reason; TextArena's error allowance stays (one refused
  move in a row is forgiven, the next ends the episode with TextArena's reward);
- rewards: TextArena gives its reward once, at the end: 1.0 for a win, else a measure of
  progress (0..1) or -1.0; it is the last observation's ``reward`` and ``score``;
- the board: the last board TextArena showed stays in ``board``, so a player who just made an
  invalid move (answered with no board) still sees it; ``moves`` lists the moves it took, as
  TextArena's own history wrapper shows them (games such as Mastermind forbid a repeat);
- hidden information (a secret code, the mines): in ``secret`` once the episode is over
  (:mod:`env_servers.textarena.hidden`), so a checker can tell episodes apart by it;
- NLTK data or a network the game needs and cannot get: a ``ValueError`` naming the fix.
"""

from __future__ import annotations

import re
import secrets
from functools import cache
from typing import Any, ClassVar

from env_servers.core.environment import Environment
from env_servers.textarena.games import NEEDS_DOWNLOAD, OFFLINE
from env_servers.textarena.hidden import secret_of
from env_servers.textarena.isolation import SessionRandom
from env_servers.textarena.models import (
    TextArenaAction,
    TextArenaObservation,
    TextArenaResetOptions,
    TextArenaState,
)

try:
    import textarena
    from textarena.envs.registration import ENV_REGISTRY
    from textarena.wrappers import ActionFormattingWrapper
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        f"Serving TextArena games needs TextArena ({error}): pip install 'arenagym[textarena]'."
    ) from error

FAMILY = "textarena"


class TextArenaEnvironment(
    Environment[TextArenaResetOptions, TextArenaAction, TextArenaObservation, TextArenaState]
):
    """One TextArena game for one player. Subclassed per id by :func:`environment_type`."""

    env_id: ClassVar[str]
    reset_type = TextArenaResetOptions
    action_type = TextArenaAction
    observation_type = TextArenaObservation
    state_type = TextArenaState

    def __init__(self) -> None:
        self._random = SessionRandom()
        self._env: Any = None
        self._prompt = ""
        self._board = ""
        self._moves: list[str] = []
        self._secret: str | None = None
        self._refusals: list[str] = []
        self._state = TextArenaState(env_id=self.env_id)

    def reset(self, options: TextArenaResetOptions) -> TextArenaObservation:
        seed = options.seed if options.seed is not None else secrets.randbelow(2**31)
        self._random.seed(seed)
        self._refusals = []
        self._env = None
        self._board = ""
        self._moves = []
        self._secret = None
        with self._random.active():
            try:
                env = ActionFormattingWrapper(_unwrapped(textarena.make(self.env_id)))
                env.reset(num_players=1, seed=seed)
            except (LookupError, OSError) as error:
                hint = _download_hint(self.env_id, error)
                if hint is None:
                    raise
                raise ValueError(hint) from error
            except AssertionError as error:  # TextArena asserts its number of players
                raise ValueError(
                    f"TextArena's {self.env_id} cannot be played by one player ({error}); "
                    "serve one of its single-player games (`arenagym serve --list`)."
                ) from error
            _watch_invalid_moves(env.state, self._refusals)
            messages = env.get_observation()[1]
        self._env = env
        self._prompt = "\n".join(_game_messages(messages, prompt=True))
        self._state = TextArenaState(
            episode_id=options.episode_id or secrets.token_hex(16), env_id=self.env_id, seed=seed
        )
        return self._observation(messages, invalid=False)

    def step(self, action: TextArenaAction) -> TextArenaObservation:
        env = self._env
        if env is None:
            raise ValueError("No episode: call reset before step.")
        refused = len(self._refusals)
        with self._random.active():
            env.step(action.move)
            messages = env.get_observation()[1]
        invalid = len(self._refusals) > refused
        if not invalid:
            self._moves.append(action.move)
        state = self._state
        state.step_count += 1
        state.invalid_count += invalid
        state.turn = env.state.turn
        state.done = bool(env.state.done)
        if state.done:
            rewards = env.state.rewards or {}
            score: Any = rewards.get(0)
            state.score = max(-1.0, min(1.0, float(score))) if _is_number(score) else None
            state.solved = state.score is not None and state.score >= 1.0
            state.reason = env.state.game_info[0].get("reason")
            self._secret = secret_of(self.env_id, env)
        return self._observation(messages, invalid=invalid)

    @property
    def state(self) -> TextArenaState:
        return self._state.model_copy(deep=True)

    def _observation(self, messages: list[Any], *, invalid: bool) -> TextArenaObservation:
        state = self._state
        feedback = "\n".join(f"[GAME] {text}" for text in _game_messages(messages))
        boards = _game_messages(messages, kind=textarena.ObservationType.GAME_BOARD)
        self._board = boards[-1] if boards else self._board
        return TextArenaObservation(
            prompt=self._prompt,
            feedback=feedback,
            turn=state.turn,
            invalid_move=invalid,
            reason=self._refusals[-1] if invalid else state.reason,
            invalid_count=state.invalid_count,
            score=state.score,
            solved=state.solved,
            board=self._board,
            moves=list(self._moves),
            secret=self._secret,
            done=state.done,
            reward=_reward(state),
        )


def _game_messages(messages: list[Any], *, prompt: bool = False, kind: Any = None) -> list[str]:
    """The texts of the game's messages: its prompt (``prompt``), those of one ``kind`` (its
    boards), or all it said but the prompt (not the echo of the player's move)."""
    return [
        text
        for sender, text, sort in messages
        if sender == textarena.GAME_ID
        and isinstance(text, str)
        and (kind is None or sort == kind)
        and (sort == textarena.ObservationType.PROMPT) == prompt
    ]


def _unwrapped(env: Any) -> Any:
    """TextArena's env without its default wrappers: they would re-send the whole history as
    one string at every turn, where ours sends what is new."""
    while isinstance(env, textarena.Wrapper):
        env = env.env
    return env


def _watch_invalid_moves(state: Any, refusals: list[str]) -> None:
    """Record each reason TextArena gives ``set_invalid_move``. Some games pass the reward
    first and the reason second: the text is taken as the reason either way."""
    original = state.set_invalid_move

    def set_invalid_move(reason: Any = None, reward: Any = -1.0) -> None:
        if not isinstance(reason, str) and isinstance(reward, str):
            reason, reward = reward, reason
        refusals.append(str(reason))
        original(reason=reason, reward=reward)

    state.set_invalid_move = set_invalid_move


def _reward(state: TextArenaState) -> float | None:
    """None at reset, 0.0 for a move, TextArena's reward for the last one, as 0..1 (a loss by
    invalid moves, -1.0 in TextArena's ``score``, is 0.0)."""
    if state.done:
        return max(0.0, state.score or 0.0)
    return 0.0 if state.step_count else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _download_hint(env_id: str, error: BaseException) -> str | None:
    """What to do when a game needs data or a network it could not reach (NLTK's corpora);
    None for an error of another kind."""
    text = str(error).strip()
    first_line = text.splitlines()[0] if text else ""
    if "nltk" in text.lower():
        found = re.search(r"Resource\W+(\w+)\W+not found", text)
        fix = NEEDS_DOWNLOAD.get(env_id) or (
            f"python -m nltk.downloader {found[1]}" if found else "python -m nltk.downloader all"
        )
        return (
            f"TextArena's {env_id} needs NLTK data it downloads at run time, and it is not "
            f"there ({type(error).__name__}: {first_line}). Install it on the server's machine "
            f"with `{fix}` (or set NLTK_DATA to a folder holding it), then reset again; the "
            "offline games (`arenagym serve --list`) need none."
        )
    if isinstance(error, OSError):
        return (
            f"TextArena's {env_id} needs a network connection it could not make "
            f"({type(error).__name__}: {first_line}). Serve it where that is reachable, or "
            "serve one of the offline games (`arenagym serve --list`)."
        )
    return None


@cache
def environment_type(env_id: str) -> type[TextArenaEnvironment]:
    """The ``Environment`` class of TextArena's ``env_id``."""
    if env_id not in ENV_REGISTRY:
        raise ValueError(f"TextArena has no environment '{env_id}'.")
    identifier = re.sub(r"\W", "_", env_id)
    return type(
        f"TextArena_{identifier}_Environment",
        (TextArenaEnvironment,),
        {
            "name": f"{FAMILY}:{env_id}",
            "description": f"{_title(env_id)}: TextArena's {env_id}, for one player.",
            "env_id": env_id,
            "__module__": __name__,
        },
    )


def _title(env_id: str) -> str:
    known = OFFLINE.get(env_id)
    return known.title if known is not None else env_id


def __getattr__(name: str) -> type[TextArenaEnvironment]:
    """``environment.<TextArena id>`` → its class (ids such as '2048-v0' are no identifiers)."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return environment_type(name)
    except ValueError as error:
        raise AttributeError(str(error)) from None
