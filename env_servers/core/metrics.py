"""Prometheus metrics of one game server, served at ``GET /metrics``.

Each app has a registry of its own (several servers may share a process in tests). What is
counted comes from the session layer, so both transports and MCP count alike; the game's
outcome is read from the observation fields every game sets: ``done`` and ``reward`` (1.0
when an episode is solved, as every game's binary reward), and ``invalid_move``, the flag by
which games report a refused move as data. Solve rate is
``arenagym_episodes_solved_total / arenagym_episodes_finished_total``; invalid-move rate is
``arenagym_invalid_moves_total / arenagym_steps_total``.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from env_servers.core.models import Observation

STEP_SECONDS_BUCKETS = (
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1.0,
)  # fmt: skip
"""A step takes microseconds; the slow tail is what the buckets must show."""
CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    """The counters of one server (``game`` labels every series)."""

    def __init__(self, game: str, open_sessions: Callable[[], int]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        labels, values = ["game"], [game]

        def counter(name: str, doc: str, extra: tuple[str, ...] = ()) -> Counter:
            return Counter(name, doc, [*labels, *extra], registry=self.registry)

        gauge = Gauge(
            "arenagym_sessions_open", "Sessions open now.", labels, registry=self.registry
        )
        gauge.labels(*values).set_function(open_sessions)
        self.opened = counter("arenagym_sessions_opened", "Sessions opened.").labels(*values)
        self._refused = counter(
            "arenagym_sessions_refused",
            "Sessions or attachments refused, by reason (capacity, taken, draining).",
            ("reason",),
        )
        self.reaped = counter(
            "arenagym_sessions_reaped", "Sessions closed by the TTL reaper."
        ).labels(*values)
        self.resets = counter("arenagym_resets", "Episodes started.").labels(*values)
        self.steps = counter("arenagym_steps", "Steps played.").labels(*values)
        self._errors = counter("arenagym_errors", "Errors answered, by code.", ("code",))
        self.finished = counter("arenagym_episodes_finished", "Episodes that ended.").labels(
            *values
        )
        self.solved = counter(
            "arenagym_episodes_solved", "Episodes that ended solved (reward 1.0)."
        ).labels(*values)
        self.invalid = counter(
            "arenagym_invalid_moves", "Steps the game refused as invalid moves."
        ).labels(*values)
        self.step_seconds = Histogram(
            "arenagym_step_seconds",
            "Time the game took to answer a step.",
            labels,
            buckets=STEP_SECONDS_BUCKETS,
            registry=self.registry,
        ).labels(*values)
        self._game = game

    def refused(self, reason: str) -> None:
        self._refused.labels(self._game, reason).inc()

    def error(self, code: str) -> None:
        self._errors.labels(self._game, code).inc()

    def stepped(self, observation: Observation, seconds: float) -> None:
        """One step played: its latency, and what the observation says of the episode."""
        self.steps.inc()
        self.step_seconds.observe(seconds)
        if getattr(observation, "invalid_move", False):
            self.invalid.inc()
        if observation.done:
            self.ended(observation)

    def ended(self, observation: Observation) -> None:
        self.finished.inc()
        if observation.reward is not None and observation.reward >= 1.0:
            self.solved.inc()

    def exposition(self) -> bytes:
        """The text format Prometheus scrapes."""
        return generate_latest(self.registry)
