"""The Countdown ``Environment``: a thin shell over :mod:`env_servers.countdown.game`."""

from __future__ import annotations

import uuid

from env_servers.core.environment import Environment
from env_servers.countdown.game import CountdownGame, explicit_puzzle, generate_puzzle
from env_servers.countdown.models import (
    CountdownAction,
    CountdownObservation,
    CountdownResetOptions,
    CountdownState,
)


class CountdownEnvironment(
    Environment[CountdownResetOptions, CountdownAction, CountdownObservation, CountdownState]
):
    """Make the target from the numbers; reward 1.0 for a correct answer, else 0.0.

    A step answers with ``expression`` (checked as written) or ``message`` (free model text,
    answer extracted leniently). Each answer uses an attempt, including one with no
    expression in it; the episode ends when solved or out of attempts, and only then are a
    solution and ``state.solution`` revealed.
    """

    name = "countdown"
    description = "Make the target number from the given numbers with + - * / and parentheses."
    reset_type = CountdownResetOptions
    action_type = CountdownAction
    observation_type = CountdownObservation
    state_type = CountdownState

    def __init__(self) -> None:
        self._game: CountdownGame | None = None
        self._state = CountdownState()

    def reset(self, options: CountdownResetOptions) -> CountdownObservation:
        if options.numbers is not None and options.target is not None:
            puzzle = explicit_puzzle(options.numbers, options.target)
        else:
            puzzle = generate_puzzle(
                split=options.split,
                seed=options.seed,
                n_numbers=options.n_numbers,
                max_num=options.max_num,
                big_numbers=options.big_numbers,
            )
        self._game = game = CountdownGame(puzzle, options.attempts)
        self._state = CountdownState(
            episode_id=options.episode_id or uuid.uuid4().hex,
            step_count=0,
            split=puzzle.pool,
            seed=puzzle.seed,
            numbers=list(puzzle.numbers),
            target=puzzle.target,
            attempts=game.attempts,
            attempts_left=game.attempts_left,
        )
        return self._observation(reward=None)

    def step(self, action: CountdownAction) -> CountdownObservation:
        game = self._game
        if game is None:
            raise ValueError("No episode: call reset before step.")
        if game.done:
            raise ValueError("The episode is over: call reset to play again.")
        verdict = game.submit(expression=action.expression, message=action.message)
        state = self._state
        state.step_count += 1
        state.attempts_left = game.attempts_left
        state.invalid_count = game.invalid_count
        state.done = game.done
        state.solved = game.solved
        state.solution = game.solution
        return self._observation(reward=1.0 if verdict.correct else 0.0)

    @property
    def state(self) -> CountdownState:
        return self._state.model_copy(deep=True)

    def _observation(self, *, reward: float | None) -> CountdownObservation:
        game = self._game
        assert game is not None
        verdict = game.last
        value = verdict.value if verdict is not None else None
        return CountdownObservation(
            prompt=game.prompt,
            numbers=list(game.puzzle.numbers),
            target=game.puzzle.target,
            attempts_left=game.attempts_left,
            expression=verdict.expression if verdict is not None else None,
            value=float(value) if value is not None else None,
            correct=verdict.correct if verdict is not None else False,
            invalid_move=verdict.invalid if verdict is not None else False,
            invalid_count=game.invalid_count,
            reason=verdict.reason if verdict is not None else None,
            feedback=game.feedback,
            solution=game.solution,
            done=game.done,
            reward=reward,
        )
