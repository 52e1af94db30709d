"""Wordle for language-model agents: one tool, ``guess``, and the bookkeeping the rewards read."""

from __future__ import annotations

from clients.agent import GameAgent
from env_servers.wordle.models import WordleObservation


def _spaced(text: str) -> str:
    return " ".join(text.upper())


class WordleToolEnv(GameAgent):
    """Wordle played through the ``guess`` tool, a word per call."""

    _game = "wordle"

    def _clear(self) -> None:
        self.solved = False
        self.best_greens = 0
        self.best_yellows = 0
        self.repetition_score = 0.0
        """Distinct words / all attempted guesses (0.0 before any guess): repeats cost."""
        self.invalid_count = 0
        self.guesses_used = 0
        self.attempted = 0

    def _opening(self, observation: WordleObservation) -> str:
        return (
            f"\n\nA secret five-letter word has been chosen. You have {observation.guesses_left} "
            "guesses: call the `guess` tool with one word at a time. Feedback gives one letter "
            "per position: G = right letter, right place; Y = in the word, wrong place; X = not "
            "in the word."
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
