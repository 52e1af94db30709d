"""Evaluation of one model, or a baseline and a trained model, on held-out episodes of any game.

The trainer holds no copy of a game's rules: every verdict comes from the game server,
through the game's agent class (``clients.agent.GameAgent``), the one the model was trained
with. Episode ``i`` is seed ``seed + i`` of ``split``, so every model meets the same episodes,
and a rerun meets them again.

Generation is batched (left padding) and greedy by default, so a score is reproducible. With
``samples=K`` (temperature above 0) every episode is played K times: ``pass_at_1`` is the mean
success over all samples, ``pass_at_k`` the share of episodes solved at least once. The
solve rate, the game's summary and the base-vs-trained buckets read the first sample of each
episode, which is the greedy one when K is 1; sampling is seeded, so a rerun draws the same.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from clients.agent import GameAgent
from clients.local_server import local_server
from clients.trl import make_env_factory
from env_servers.core.registry import load_spec
from env_servers.core.spec import GameSpec, Mode
from trainer.models import check_device, load_model, resolve_model
from trainer.rollouts import Ending, ReplyParser, Rollout, play_answers, play_tools
from trainer.views import EvaluationView, load_view

Split = Literal["train", "eval", "all"]
BUCKETS = ("fixed", "both_solved", "both_failed", "regressed")
"""Baseline vs trained, per episode: failed → solved, solved twice, failed twice, solved → failed."""
DEFAULT_MAX_NEW_TOKENS: dict[Mode, int] = {"answer": 320, "tools": 256}
"""Longest reply: a whole answer, or one turn of a tools episode."""


def model_labels(count: int) -> list[str]:
    """``base`` and ``trained`` for a comparison, ``model`` for a single one."""
    if count not in (1, 2):
        raise ValueError(f"Give one model, or two (baseline first, then trained), not {count}.")
    return ["base", "trained"] if count == 2 else ["model"]


@contextlib.contextmanager
def game_url(spec: GameSpec, url: str | None = None) -> Iterator[str]:
    """The server to play against: ``url``, else ``ARENAGYM_<GAME>_URL``, else one started
    on this machine for the duration of the block."""
    url = url or os.environ.get(spec.url_variable)
    if url:
        yield url.rstrip("/")
        return
    with local_server(spec.name) as server:
        yield server.url


def _seed_sampling(seed: int) -> None:
    """With temperature > 0, a rerun samples the same replies (greedy needs no seed)."""
    from transformers import set_seed

    set_seed(seed)


def _free_memory() -> None:
    """Free a dropped model's memory before the next is loaded, so the peak is one model's."""
    gc.collect()
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


@dataclass(slots=True)
class EpisodeRecord:
    """One played episode (one sample of it), as the server judged it."""

    seed: int
    sample: int
    solved: bool
    server_reward: float
    """The sum of the rewards the server gave in the episode."""
    turns: int
    tool_calls: int
    broken_calls: int
    """Calls that never reached the game: unparseable, unknown tool, bad arguments."""
    ended: Ending
    transcript: list[dict[str, Any]] | None = None
    """Tools mode: the whole conversation."""
    completion: str | None = None
    """Answer mode: the reply sent to the server."""
    details: dict[str, Any] = field(default_factory=dict)
    """What the game's evaluation view keeps of the episode."""


@dataclass(slots=True)
class ModelResult:
    """One evaluated model: ``base``/``trained``/``model``, the name given, what was loaded,
    and its records, ordered by seed, then sample."""

    label: str
    model: str
    source: str
    """What was loaded: the local directory or Hub id ``model`` resolved to."""
    samples: int = 1
    records: list[EpisodeRecord] = field(default_factory=list)

    @property
    def first(self) -> list[EpisodeRecord]:
        """Each episode's first sample (the greedy one when there is one sample)."""
        return [r for r in self.records if r.sample == 0]

    @property
    def solved(self) -> int:
        return sum(r.solved for r in self.first)

    @property
    def solve_rate(self) -> float:
        first = self.first
        return self.solved / len(first) if first else 0.0

    @property
    def pass_at_1(self) -> float:
        """Mean success over every sample of every episode."""
        return sum(r.solved for r in self.records) / len(self.records) if self.records else 0.0

    @property
    def pass_at_k(self) -> float:
        """Share of episodes solved in at least one of their samples."""
        seeds = {r.seed for r in self.records}
        solved = {r.seed for r in self.records if r.solved}
        return len(solved) / len(seeds) if seeds else 0.0

    def summary(self) -> dict[str, Any]:
        calls = sum(r.tool_calls for r in self.first)
        broken = sum(r.broken_calls for r in self.first)
        return {
            "label": self.label,
            "model": self.model,
            "source": self.source,
            "solved": self.solved,
            "solve_rate": self.solve_rate,
            "samples": self.samples,
            "pass_at_1": self.pass_at_1,
            "pass_at_k": self.pass_at_k,
            "tool_calls": calls,
            "broken_calls": broken,
            "broken_call_rate": broken / calls if calls else 0.0,
        }


@dataclass(slots=True)
class Evaluation:
    """Every model's records on the same episodes, and the settings they were played with."""

    spec: GameSpec
    mode: Mode
    split: str
    seed: int
    episodes: int
    samples: int
    settings: dict[str, Any]
    models: list[ModelResult] = field(default_factory=list)
    view: EvaluationView = field(default_factory=EvaluationView)

    def buckets(self) -> dict[str, list[int]]:
        """Seeds per bucket (baseline vs trained, first samples); empty for a single model."""
        if len(self.models) != 2:
            return {}
        buckets: dict[str, list[int]] = {name: [] for name in BUCKETS}
        base, trained = self.models
        for before, after in zip(base.first, trained.first, strict=True):
            name = {
                (False, True): "fixed",
                (True, True): "both_solved",
                (False, False): "both_failed",
                (True, False): "regressed",
            }[before.solved, after.solved]
            buckets[name].append(before.seed)
        return buckets

    def to_dict(self) -> dict[str, Any]:
        """Everything, per episode, for ``results.json``."""
        buckets = self.buckets()
        models = []
        for m in self.models:
            first = [asdict(r) for r in m.first]
            entry = m.summary() | self.view.summary(first)
            models.append(entry | {"episodes": [asdict(r) for r in m.records]})
        return {
            "game": self.spec.name,
            "mode": self.mode,
            "split": self.split,
            "seed": self.seed,
            "episodes": self.episodes,
            "samples": self.samples,
            "settings": self.settings,
            "models": models,
            "bucket_counts": {name: len(seeds) for name, seeds in buckets.items()},
            "buckets": buckets,
        }


def evaluate(
    game: str | GameSpec,
    models: Sequence[str],
    *,
    url: str | None = None,
    split: Split = "eval",
    episodes: int = 60,
    seed: int = 0,
    mode: Mode | None = None,
    max_new_tokens: int | None = None,
    max_turns: int = 12,
    temperature: float = 0.0,
    samples: int = 1,
    batch_size: int = 8,
    instruction: str | None = None,
    reset: Mapping[str, Any] | None = None,
    device: str | None = None,
    progress: bool = True,
) -> Evaluation:
    """Each model plays episodes ``seed .. seed + episodes - 1`` of ``split``, ``samples``
    times each, in ``mode`` (default: the game's first), as in training.

    Answer mode: the prompt is the game's own for the episode, the one user message; the whole
    reply is the answer the server checks. Tools mode: the prompt is ``instruction`` (default:
    the game's) followed by the agent's opening text, and the episode runs as
    :mod:`trainer.rollouts` describes, at most ``max_turns`` replies. ``max_new_tokens``
    bounds one reply (default per mode: ``DEFAULT_MAX_NEW_TOKENS``). ``reset``: the game's
    other reset fields, as in training. Raises ``ValueError`` for bad settings,
    ``ModelLoadError`` / ``FileNotFoundError`` for a model and ``ClientError`` for the
    server, each before any generation when it can be known then.
    """
    from trainer.progress import step_bars

    spec = load_spec(game) if isinstance(game, str) else game
    mode = mode or spec.default_mode
    if samples < 1:
        raise ValueError(f"samples must be at least 1, not {samples}.")
    if samples > 1 and temperature <= 0:
        raise ValueError("Several samples per episode need sampling: set a temperature above 0.")
    labels = model_labels(len(models))
    make_env_factory(spec, mode=mode, **(reset or {}))  # bad mode or reset fields: fail now
    if device is not None:
        check_device(device)
    sources = [resolve_model(name) for name in models]
    view = load_view(spec)
    max_new_tokens = max_new_tokens or DEFAULT_MAX_NEW_TOKENS[mode]
    settings: dict[str, Any] = {
        "max_new_tokens": max_new_tokens,
        "temperature": temperature,
        "reset": dict(reset or {}),
    }
    instruction = instruction or spec.instruction
    if mode == "tools":
        settings |= {"max_turns": max_turns, "instruction": instruction}
    outcome = Evaluation(spec, mode, split, seed, episodes, samples, settings, view=view)
    decoding: dict[str, Any] = {"max_new_tokens": max_new_tokens, "temperature": temperature}
    plays = [(seed + i, k) for i in range(episodes) for k in range(samples)]
    with game_url(spec, url) as server, step_bars(progress) as bars:
        factory = make_env_factory(spec, url=server, mode=mode, **(reset or {}))
        pool = [factory() for _ in range(min(batch_size, len(plays)))]
        pool[0]._reset({"seed": seed, "split": split})  # reach the server before any model
        for label, name, source in zip(labels, models, sources, strict=True):
            task = bars.add_task(f"{spec.name} {label}: {name}", total=len(plays))
            model, tokenizer = load_model(source, device=device)
            _seed_sampling(seed)  # each model draws the same random stream
            parser = ReplyParser(tokenizer) if mode == "tools" else None
            result = ModelResult(label, name, source, samples)
            for start in range(0, len(plays), batch_size):
                rollouts = []
                for agent, (episode_seed, sample) in zip(
                    pool, plays[start : start + batch_size], strict=False
                ):
                    text = start_episode(agent, {"seed": episode_seed, "split": split}, instruction)
                    message = {"role": "user", "content": text}
                    rollouts.append(Rollout(agent, episode_seed, sample, [message]))
                if parser is not None:
                    play_tools(model, tokenizer, parser, rollouts, max_turns=max_turns, **decoding)
                else:
                    play_answers(model, tokenizer, rollouts, **decoding)
                for rollout in rollouts:
                    result.records.append(record(rollout, view))
                    bars.advance(task)
            outcome.models.append(result)
            del model, tokenizer, parser
            _free_memory()
        pool.clear()  # the agents' finalizers close their sessions
    return outcome


def start_episode(agent: GameAgent, row: dict[str, Any], instruction: str) -> str:
    """Start the row's episode; returns the first user message, as training words it: the
    instruction and the agent's opening text (tools), or the game's prompt (answer)."""
    if agent._mode == "tools":
        return instruction + (agent.reset(**row) or "")
    spec = agent._game_spec
    assert spec.answer_prompt is not None  # the spec checks it for answer mode
    return spec.answer_prompt(agent._reset(row).observation)


def record(rollout: Rollout, view: EvaluationView) -> EpisodeRecord:
    """A finished rollout as a record: the server's verdicts and the view's details."""
    agent = rollout.agent
    answer = agent._mode == "answer"
    return EpisodeRecord(
        seed=rollout.seed,
        sample=rollout.sample,
        solved=rollout.solved,
        server_reward=agent.server_reward,
        turns=rollout.turns,
        tool_calls=rollout.tool_calls,
        broken_calls=rollout.broken_calls,
        ended=rollout.ended,
        transcript=None if answer else rollout.messages,
        completion=rollout.completion if answer else None,
        details=view.details(agent, agent._state()),
    )
