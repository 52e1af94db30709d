"""The Wordle environment: whole games, invalid moves, reward signals, secrecy, and text that
existing TextArena/OpenEnv client code parses unchanged."""

from __future__ import annotations

import pytest

from env_servers.core.environment import Environment
from env_servers.wordle import game
from env_servers.wordle.environment import PROMPT, WordleEnvironment
from env_servers.wordle.models import (
    WordleAction,
    WordleObservation,
    WordleResetOptions,
    WordleState,
)


def start(word: str = "abide", **options: object) -> tuple[WordleEnvironment, WordleObservation]:
    env = WordleEnvironment()
    return env, env.reset(WordleResetOptions(word=word, **options))


def say(env: WordleEnvironment, message: str) -> WordleObservation:
    return env.step(WordleAction(message=message))


class RecipeParser:
    """The published Wordle recipe's wrapper (and TRL's examples/scripts/openenv/wordle.py):
    remember the transcript's length, slice the new part off the end, read the G/Y/X line,
    and spot invalid moves by their text."""

    def __init__(self, first: WordleObservation) -> None:
        self.last = first.messages[0].content

    def feed(self, observation: WordleObservation) -> tuple[str, bool, tuple[int, int] | None]:
        full = observation.messages[0].content
        new = full[len(self.last) :]
        self.last = full
        invalid = "You attempted an invalid move" in new
        counts = None
        if "Feedback:" in new:
            lines = [line.strip() for line in new.split("Feedback:", 1)[1].split("\n")]
            for line in reversed(lines):
                tokens = line.split(" ")
                if len(tokens) == 5 and all(t in ("G", "Y", "X") for t in tokens):
                    counts = (tokens.count("G"), tokens.count("Y"))
                    break
        return new, invalid, counts


def test_class_contract() -> None:
    assert issubclass(WordleEnvironment, Environment)
    assert WordleEnvironment.name == "wordle"
    assert WordleEnvironment.description
    assert WordleEnvironment.reset_type is WordleResetOptions
    assert WordleEnvironment.action_type is WordleAction
    assert WordleEnvironment.observation_type is WordleObservation
    assert WordleEnvironment.state_type is WordleState
    assert isinstance(WordleEnvironment().state, WordleState)


def test_reset_looks_like_openenv_textarena() -> None:
    _, obs = start()
    assert len(obs.messages) == 1
    message = obs.messages[0]
    assert (message.sender_id, message.category) == (-1, "MESSAGE")
    assert message.content == "\n[GAME] " + PROMPT
    assert message.content.startswith("\n[GAME] You are Playing Wordle.\n")
    assert message.content.endswith("Enter your guess to begin.\n")
    assert "6 attempts" in obs.prompt and "'[apple]'" in obs.prompt
    assert obs.prompt == message.content.strip()
    assert obs.current_player_id == 0 and obs.legal_players == [0]
    assert obs.info == {}
    assert obs.reward is None and not obs.done
    assert obs.guesses == [] and obs.guesses_left == 6 and obs.answer is None


def test_winning_game() -> None:
    env, obs = start()
    obs = say(env, "[crane]")
    assert not obs.done and obs.reward == 0.0 and not obs.invalid_move
    assert [(g.word, g.feedback) for g in obs.guesses] == [("crane", "XXYXG")]
    assert obs.guesses_left == 5
    obs = env.step(WordleAction(guess="Abide"))
    assert obs.done and obs.reward == 1.0 and obs.answer == "abide"
    assert obs.reward_signals.correct and obs.reward_signals.greens == 5
    assert obs.info["reward_signals"]["wordle.correct"] == 1.0
    assert obs.messages[0].content.endswith(
        "\n[Player] [abide]\n[GAME] You submitted [abide].\nFeedback:\nA B I D E\nG G G G G"
        "\n[GAME] Congratulations! You guessed the word correctly!"
    )
    state = env.state
    assert state.done and state.won and state.answer == "abide" and state.step_count == 2


def test_losing_game() -> None:
    env, _ = start()
    for word in ("crane", "moldy", "slate", "pious", "theme"):
        obs = say(env, f"[{word}]")
        assert not obs.done and obs.reward == 0.0
    obs = say(env, "[lunar]")
    assert obs.done and obs.reward == 0.0 and obs.answer == "abide"
    assert obs.guesses_left == 0 and not obs.reward_signals.correct
    assert obs.messages[0].content.endswith(
        "You have 0 guesses left.\n[GAME] The turn limit has been reached. You didn't guess "
        "the word.\nThe secret word was: **abide**."
    )
    assert env.state.done and not env.state.won and env.state.answer == "abide"


def test_invalid_moves_cost_no_guess_and_are_counted() -> None:
    env, _ = start()
    say(env, "[crane]")
    for message in ("no brackets here", "[cran]", "[xyzzy]", "[crane]"):
        obs = say(env, message)
        assert obs.invalid_move and obs.reason and not obs.done and obs.reward == 0.0
        assert obs.guesses_left == 5
    assert obs.reward_signals.invalid_count == 4
    assert env.state.invalid_count == 4 and env.state.guesses_left == 5
    assert env.state.step_count == 5
    obs = say(env, "[slate]")
    assert not obs.invalid_move and obs.reason is None and obs.guesses_left == 4


def test_too_many_invalid_moves_lose() -> None:
    env, _ = start()
    for _ in range(game.MAX_INVALID_MOVES - 1):
        assert not say(env, "[xyzzy]").done
    obs = say(env, "[xyzzy]")
    assert obs.done and obs.invalid_move and obs.reward == 0.0 and obs.answer == "abide"
    assert "Too many invalid moves" in obs.messages[0].content
    assert env.state.done and not env.state.won


def test_hard_mode() -> None:
    env, obs = start(hard_mode=True)
    assert obs.hard_mode and "Hard mode is on" in obs.prompt
    say(env, "[crane]")
    obs = say(env, "[moldy]")
    assert obs.invalid_move and "5th letter must be E" in (obs.reason or "")
    assert env.state.hard_mode


def test_reward_signals() -> None:
    env, _ = start()
    obs = say(env, "[speed]")  # XXYXY
    signals = obs.reward_signals
    assert (signals.greens, signals.yellows, signals.best_greens, signals.best_yellows) == (
        0,
        2,
        0,
        2,
    )
    obs = say(env, "[crane]")  # XXYXG
    obs = say(env, "[crane]")  # repeat: invalid, still an attempt
    obs = say(env, "[xyzzy]")  # not a word: invalid, still an attempt
    obs = say(env, "garbage in")  # no word at all: not an attempt
    signals = obs.reward_signals
    assert (signals.greens, signals.yellows, signals.best_greens, signals.best_yellows) == (
        1,
        1,
        1,
        2,
    )
    assert signals.attempted_guesses == 4
    assert signals.distinct_attempted == 3
    assert signals.repeats_attempted == 1
    assert signals.invalid_count == 3 and not signals.correct


def test_info_reward_signals_follow_openenv() -> None:
    env, _ = start()
    obs = say(env, "[crane]")  # XXYXG
    assert obs.info == {
        "reward_signals": {
            "wordle.greens": 0.2,
            "wordle.yellows": 0.2,
            "wordle.repetitions": 1.0,
            "wordle.correct": 0.0,
        }
    }
    obs = say(env, "[crane]")
    assert obs.info["reward_signals"]["wordle.repetitions"] == 0.0
    obs = say(env, "[crane]")
    assert obs.info["reward_signals"]["wordle.repetitions"] == -1.0


def test_secret_stays_hidden_until_the_end() -> None:
    env, obs = start()
    assert "abide" not in obs.model_dump_json() and "abide" not in env.state.model_dump_json()
    for message in ("[crane]", "[xyzzy]", "[moldy]"):
        obs = say(env, message)
        assert obs.answer is None and env.state.answer is None
        assert "abide" not in obs.model_dump_json().lower()
        assert "abide" not in env.state.model_dump_json().lower()
    obs = say(env, "[abide]")
    assert obs.answer == "abide" and env.state.answer == "abide"


def test_seeds_fix_the_secret() -> None:
    def secret(seed: int, split: str) -> str | None:
        env = WordleEnvironment()
        env.reset(WordleResetOptions(seed=seed, split=split))
        for word in ("crane", "moldy", "slate", "pious", "theme", "lunar"):
            obs = env.step(WordleAction(guess=word))
            if obs.done:
                return obs.answer
        return None

    assert secret(3, "eval") == secret(3, "eval") == game.choose_secret("eval", 3)
    assert secret(3, "train") == game.choose_secret("train", 3)


def test_transcript_format_and_recipe_parsing() -> None:
    env, obs = start()
    parser = RecipeParser(obs)

    new, invalid, counts = parser.feed(say(env, "[crane]"))
    assert new == (
        "\n[Player] [crane]\n[GAME] You submitted [crane].\nFeedback:\nC R A N E\nX X Y X G"
        "\nYou have 5 guesses left."
    )
    assert (invalid, counts) == (False, (1, 1))

    new, invalid, counts = parser.feed(say(env, "Let me think. [xyzzy]"))
    assert invalid and counts is None
    assert new == (
        "\n[Player] Let me think. [xyzzy]\n[GAME] You attempted an invalid move. Reason: "
        "'xyzzy' is not an English word in the Wordle word list. Guess a real 5-letter word. "
        "Please resubmit a valid move and remember to follow the game rules to avoid penalties."
    )

    new, invalid, counts = parser.feed(env.step(WordleAction(guess="speed")))
    assert (invalid, counts) == (False, (0, 2))
    assert new.endswith("S P E E D\nX X Y X Y\nYou have 4 guesses left.")

    new, invalid, counts = parser.feed(say(env, "abide"))  # bracketless, as TextArena
    assert new.startswith("\n[Player] [abide]\n")
    assert (invalid, counts) == (False, (5, 0))


def test_transcript_only_grows() -> None:
    env, obs = start()
    seen = obs.messages[0].content
    for message in ("[crane]", "oops", "[moldy]", "[abide]"):
        content = say(env, message).messages[0].content
        assert content.startswith(seen) and len(content) > len(seen)
        seen = content


def test_role_tags_in_messages_are_not_echoed() -> None:
    env, _ = start()
    obs = say(env, "[crane] [GAME] I win [Player]")
    assert "\n[Player] [crane]  I win \n" in obs.messages[0].content
    assert [g.word for g in obs.guesses] == ["crane"]


def test_earlier_observations_are_not_mutated() -> None:
    env, _ = start()
    first = say(env, "[crane]")
    snapshot = first.model_dump()
    say(env, "[moldy]")
    say(env, "[abide]")
    assert first.model_dump() == snapshot


@pytest.mark.parametrize("messages", [[], ["[crane]"], ["[crane]", "[xyzzy]", "[abide]"]])
def test_unvalidated_models_match_validated_ones(messages: list[str]) -> None:
    env, obs = start(hard_mode=True)
    for message in messages:
        obs = say(env, message)
    for model in (obs, env.state):
        again = type(model).model_validate(model.model_dump())
        assert again == model
        assert again.model_dump_json() == model.model_dump_json()
        assert model.model_fields_set == set(type(model).model_fields)


def test_episode_ids_are_stable_within_an_episode_and_new_for_the_next() -> None:
    env, _ = start()
    first = env.state.episode_id
    assert first and env.state.episode_id == first
    say(env, "[crane]")
    assert env.state.episode_id == first
    env.reset(WordleResetOptions(word="abide"))
    assert env.state.episode_id not in (None, first)
    env.reset(WordleResetOptions(word="abide", episode_id="mine"))
    assert env.state.episode_id == "mine"
