"""Countdown episodes through the ``Environment`` and the session layer; the wire models."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from pydantic import ValidationError

from env_servers.core.config import ServerSettings
from env_servers.core.errors import EnvServerError
from env_servers.core.sessions import SessionManager
from env_servers.countdown.environment import CountdownEnvironment
from env_servers.countdown.expression import verify
from env_servers.countdown.game import MAX_INVALID_MOVES
from env_servers.countdown.models import (
    CountdownAction,
    CountdownObservation,
    CountdownResetOptions,
)


def start(**options: Any) -> tuple[CountdownEnvironment, CountdownObservation]:
    env = CountdownEnvironment()
    return env, env.reset(CountdownResetOptions(**options))


def test_reset_shows_the_puzzle_and_hides_the_solution() -> None:
    env, observation = start(seed=3)
    assert observation.reward is None and not observation.done
    assert observation.attempts_left == 1 and observation.solution is None
    assert observation.expression is None and observation.reason is None and not observation.correct
    assert str(observation.target) in observation.prompt and "<answer>" in observation.prompt
    for number in observation.numbers:
        assert str(number) in observation.prompt
    state = env.state
    assert state.solution is None and not state.done and state.step_count == 0
    assert state.numbers == observation.numbers and state.target == observation.target
    assert state.seed == 3 and state.split == "train" and state.episode_id


def test_single_attempt_right() -> None:
    env, _ = start(numbers=[3, 9, 2], target=24)
    result = env.step(CountdownAction(message="12 * 2 = 24, so <answer>(3 + 9) * 2</answer>"))
    assert result.done and result.reward == 1.0 and result.correct
    assert result.expression == "(3 + 9) * 2" and result.value == 24.0 and result.reason is None
    assert result.feedback == "Correct: (3 + 9) * 2 = 24."
    assert result.solution == "(3 + 9) * 2"  # the player's own answer: no search needed
    state = env.state
    assert state.done and state.solved and state.step_count == 1 and state.attempts_left == 0
    assert state.solution == result.solution


def test_single_attempt_wrong_reveals_a_solution() -> None:
    env, observation = start(seed=0, split="eval")
    a, b, c = observation.numbers
    result = env.step(CountdownAction(expression=f"{a} + {b} + {c}"))
    if result.correct:  # the sum happens to be the target: try another seed's puzzle
        env, observation = start(seed=1, split="eval")
        a, b, c = observation.numbers
        result = env.step(CountdownAction(expression=f"{a} + {b} + {c}"))
    assert result.done and result.reward == 0.0 and not result.correct
    assert not result.invalid_move and result.value == a + b + c
    assert result.solution is not None
    assert verify(result.solution, observation.numbers, observation.target).correct
    assert env.state.solution == result.solution and not env.state.solved
    assert env.state.split == "eval"


def test_an_invalid_answer_costs_no_attempt_and_says_why() -> None:
    env, _ = start(numbers=[3, 9, 2], target=24)
    for answer, reason in (
        (CountdownAction(expression="1 + 1"), "uses 1, which is not one of the numbers"),
        (CountdownAction(message="hello"), "no arithmetic expression found"),
        (CountdownAction(expression="3 ** 9 - 2"), "power"),
    ):
        result = env.step(answer)
        assert result.invalid_move and not result.done and result.attempts_left == 1, result
        assert reason in (result.reason or "") and result.reward == 0.0
    assert result.invalid_count == 3 and env.state.invalid_count == 3
    for count in range(4, MAX_INVALID_MOVES + 1):  # the cap ends the episode, unsolved
        result = env.step(CountdownAction(message="no idea"))
        assert result.invalid_count == count and result.done == (count == MAX_INVALID_MOVES)
    assert result.attempts_left == 1 and not env.state.solved and result.solution is not None


def test_several_attempts_give_feedback_and_keep_the_solution_hidden() -> None:
    env, _ = start(numbers=[3, 9, 2], target=24, attempts=3)
    first = env.step(CountdownAction(expression="3 * 9 - 2"))
    assert not first.done and first.reward == 0.0 and first.attempts_left == 2
    assert first.reason == "= 25, target 24" and first.value == 25.0
    assert first.feedback == "3 * 9 - 2 = 25, target 24."
    assert first.solution is None and env.state.solution is None
    second = env.step(CountdownAction(message="Hmm, I am not sure."))
    assert second.reason == "no arithmetic expression found" and second.expression is None
    assert second.invalid_move and second.attempts_left == 2 and env.state.solution is None
    third = env.step(CountdownAction(expression="9 / (3 - 3) * 2"))  # the wrong numbers
    assert third.invalid_move and third.attempts_left == 2
    fourth = env.step(CountdownAction(expression="9 * 2 / (3 - 3)"))  # uses 3 twice
    assert fourth.invalid_move
    fifth = env.step(CountdownAction(message="<answer>(9 + 3) * 2 = 24</answer>"))
    assert fifth.done and fifth.reward == 1.0 and fifth.solution is not None
    assert env.state.step_count == 5 and env.state.solved


def test_fractional_values_are_reported() -> None:
    env, _ = start(numbers=[3, 9, 2], target=24, attempts=2)
    result = env.step(CountdownAction(expression="9 / 2 + 3"))
    assert result.value == 7.5 and result.reason == "= 15/2, target 24"


def test_state_is_a_copy() -> None:
    env, _ = start(seed=1)
    env.state.numbers.append(99)
    assert 99 not in env.state.numbers


def test_same_seed_same_episode_and_big_numbers() -> None:
    options = {"seed": 9, "split": "eval", "n_numbers": 6, "max_num": 10, "big_numbers": True}
    first = start(**options)[1]
    second = start(**options)[1]
    assert first == second and len(first.numbers) == 6 and 100 <= first.target <= 999


def test_through_the_session_layer() -> None:
    manager = SessionManager(CountdownEnvironment, ServerSettings())
    session = manager.open()
    with pytest.raises(EnvServerError):
        manager.step(session, {"expression": "1 + 2"})
    manager.reset(session, {"numbers": [3, 9, 2], "target": 24, "attempts": 2})
    for bad in ({}, {"expression": "1", "message": "1"}, {"expression": 7}, {"guess": "x"}):
        with pytest.raises(EnvServerError):
            manager.step(session, bad)
    assert manager.state(session).attempts_left == 2  # invalid requests cost nothing
    assert manager.step(session, {"message": ""}).attempts_left == 2  # nor invalid answers
    assert manager.step(session, {"expression": "3 + 9 + 2"}).attempts_left == 1
    last = manager.step(session, {"expression": "(3 + 9) * 2", "metadata": {"id": 1}})
    assert last.done and last.reward == 1.0
    with pytest.raises(EnvServerError):
        manager.step(session, {"expression": "(3 + 9) * 2"})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"numbers": [3, 9, 2]}, "give both 'numbers' and 'target'"),
        ({"target": 24}, "give both 'numbers' and 'target'"),
        ({"numbers": [3, 9, 2], "target": 24, "n_numbers": 4}, "leave n_numbers out"),
        ({"numbers": [3, 0], "target": 24}, "greater than or equal to 1"),
        ({"numbers": [3, 9, 2], "target": -1}, "greater than or equal to 1"),
        ({"numbers": [1] * 7, "target": 24}, "at most 6 items"),
        ({"numbers": [5000, 2], "target": 24}, "less than or equal to 1000"),
        ({"n_numbers": 1}, "greater than or equal to 2"),
        ({"max_num": 101}, "less than or equal to 100"),
        ({"attempts": 0}, "greater than or equal to 1"),
        ({"attempts": 11}, "less than or equal to 10"),
        ({"split": "test"}, "'train', 'eval' or 'all'"),
        ({"level": 3}, "Extra inputs are not permitted"),
    ],
)
def test_reset_options_are_validated(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CountdownResetOptions.model_validate(options)


def test_explicit_puzzle_with_matching_n_numbers_is_fine() -> None:
    options = CountdownResetOptions(numbers=[3, 9, 2], target=24, n_numbers=3)
    assert options.numbers == [3, 9, 2]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({}, "exactly one of 'expression'"),
        ({"expression": "1", "message": "1"}, "exactly one of 'expression'"),
        ({"expression": "1" * 201}, "at most 200 characters"),
        ({"message": "x" * 16_001}, "at most 16000 characters"),
        ({"expression": 7}, "valid string"),
        ({"answer": "1"}, "Extra inputs are not permitted"),
    ],
)
def test_actions_are_validated(action: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CountdownAction.model_validate(action)


def test_models_import_cheaply() -> None:
    code = (
        "import sys, env_servers.countdown.models;"
        "assert not {'fastapi', 'starlette', 'env_servers.countdown.game'} & set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
