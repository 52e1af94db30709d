"""Countdown verification over several server sessions at once.

The single-turn Countdown reward sends every completion to the server (a reset and a step).
One after another, a batch of hundreds of completions pays hundreds of round trips in a row;
spread over a few connections the round trips overlap, and the server's work runs beside the
trainer's instead of after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from trainer.rewards import CountdownVerifier

DEFAULT_CONNECTIONS = 8


class PooledCountdownVerifier(CountdownVerifier):
    """:class:`CountdownVerifier` over ``len(clients)`` sessions in parallel (same verdicts,
    same order)."""

    def __init__(self, clients: Sequence[Any], reset: dict[str, Any] | None = None) -> None:
        super().__init__(clients[0], reset)
        self.clients = list(clients)
        self._pool = ThreadPoolExecutor(len(self.clients), thread_name_prefix="verify")

    def __call__(
        self, completions: Sequence[Any], seed: Sequence[int], split: Sequence[str], **_: Any
    ) -> list[float]:
        n = len(self.clients)
        chunks = [slice(i, len(completions), n) for i in range(n)]
        jobs: list[Callable[[], list[float]]] = [
            self._job(client, completions[part], seed[part], split[part])
            for client, part in zip(self.clients, chunks, strict=True)
        ]
        results = list(self._pool.map(lambda job: job(), jobs))
        rewards = [0.0] * len(completions)
        for part, values in zip(chunks, results, strict=True):
            rewards[part] = values
        return rewards

    def _job(
        self, client: Any, completions: Sequence[Any], seed: Sequence[int], split: Sequence[str]
    ) -> Callable[[], list[float]]:
        single = CountdownVerifier(client, self.reset)
        return lambda: single(list(completions), list(seed), list(split))


def pooled_verifier(
    connect: Callable[[], Any], reset: dict[str, Any] | None, connections: int
) -> tuple[CountdownVerifier, list[Any]]:
    """A verifier over ``connections`` clients made by ``connect`` (the caller closes them)."""
    clients = [connect() for _ in range(max(1, connections))]
    if len(clients) == 1:
        return CountdownVerifier(clients[0], reset), clients
    return PooledCountdownVerifier(clients, reset), clients
