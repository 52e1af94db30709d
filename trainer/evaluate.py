"""Evaluation of one model, or a baseline and a trained model, on held-out episodes.

The trainer holds no copy of a game's rules: every verdict (a Countdown answer right or wrong,
a Wordle guess's marks, a refused guess, a won game) comes from the game server, through the
typed clients and the TRL adapter the model was trained with. Episode ``i`` is seed
``seed + i`` of ``split``, so every model meets the same puzzles and words, and a rerun meets
them again.

Generation is batched (left padding) and greedy by default, so a score is reproducible.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Literal

from clients.base import EnvClient
from clients.errors import InvalidRequestError
from clients.games import CountdownClient
from clients.local_server import local_server
from clients.trl import WordleToolEnv, make_env_factory
from env_servers.countdown.models import MAX_MESSAGE_CHARS
from env_servers.wordle.models import WordleObservation
from trainer.data import WORDLE_INSTRUCTION  # the training prompt: the eval asks the same
from trainer.models import chat_prompt, generate, load_model, resolve_model

Split = Literal["train", "eval", "all"]
URL_VARIABLES = {"countdown": "ARENAGYM_COUNTDOWN_URL", "wordle": "ARENAGYM_WORDLE_URL"}
BUCKETS = ("fixed", "both_solved", "both_failed", "regressed")
"""Baseline vs trained, per puzzle: failed → solved, solved twice, failed twice, solved → failed."""
MAX_GUESSES: int = WordleObservation.model_fields["guesses_left"].default
"""Wordle's guesses per game (the wire model's default): the histogram's columns, then ``lost``."""


def model_labels(count: int) -> list[str]:
    """``base`` and ``trained`` for a comparison, ``model`` for a single one."""
    if count not in (1, 2):
        raise ValueError(f"Give one model, or two (baseline first, then trained), not {count}.")
    return ["base", "trained"] if count == 2 else ["model"]


@contextlib.contextmanager
def game_url(game: str, url: str | None = None) -> Iterator[str]:
    """The server to play against: ``url``, else ``ARENAGYM_<GAME>_URL``, else one started
    on this machine for the duration of the block."""
    url = url or os.environ.get(URL_VARIABLES[game])
    if url:
        yield url.rstrip("/")
        return
    with local_server(game) as server:
        yield server.url


def _progress(enabled: bool) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    return Progress(*columns, TimeElapsedColumn(), disable=not enabled)


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
class ModelRun:
    """One evaluated model: ``baseline``/``trained``/…, the name given, and what was loaded."""

    label: str
    model: str
    source: str
    """What was loaded: the local directory or Hub id ``model`` resolved to."""

    def identity(self) -> dict[str, str]:
        return {"label": self.label, "model": self.model, "source": self.source}


# -- Countdown -----------------------------------------------------------------------------


@dataclass(slots=True)
class PuzzleResult:
    """One model's answer to one puzzle, as the server judged it."""

    seed: int
    numbers: list[int]
    target: int
    completion: str
    expression: str | None
    value: float | None
    correct: bool
    reason: str | None
    samples_correct: int | None = None
    """With ``samples`` > 1: how many of the puzzle's sampled replies were right."""


@dataclass(slots=True)
class CountdownModelResult(ModelRun):
    results: list[PuzzleResult] = field(default_factory=list)
    samples: int = 1

    def pass_at(self) -> dict[str, Any]:
        """``pass_at_1`` (mean over all samples) and ``pass_at_k`` (any sample right)."""
        if self.samples <= 1 or not self.results:
            return {}
        counts = [r.samples_correct or 0 for r in self.results]
        return {
            "samples": self.samples,
            "pass_at_1": sum(counts) / (len(counts) * self.samples),
            "pass_at_k": sum(c > 0 for c in counts) / len(counts),
        }

    @property
    def solved(self) -> int:
        return sum(result.correct for result in self.results)

    @property
    def solve_rate(self) -> float:
        return self.solved / len(self.results) if self.results else 0.0


@dataclass(slots=True)
class CountdownEval:
    game: ClassVar[str] = "countdown"
    split: str
    seed: int
    episodes: int
    max_new_tokens: int
    temperature: float
    models: list[CountdownModelResult]
    reset: dict[str, Any] = field(default_factory=dict)

    def buckets(self) -> dict[str, list[int]]:
        """Seeds per bucket (baseline vs trained); empty for a single model."""
        if len(self.models) != 2:
            return {}
        buckets: dict[str, list[int]] = {name: [] for name in BUCKETS}
        base, trained = self.models
        for before, after in zip(base.results, trained.results, strict=True):
            name = {
                (False, True): "fixed",
                (True, True): "both_solved",
                (False, False): "both_failed",
                (True, False): "regressed",
            }[before.correct, after.correct]
            buckets[name].append(before.seed)
        return buckets

    def to_dict(self) -> dict[str, Any]:
        """Everything, per puzzle, for ``results.json``."""
        buckets = self.buckets()
        return {
            "game": self.game,
            "split": self.split,
            "seed": self.seed,
            "episodes": self.episodes,
            "settings": {
                "max_new_tokens": self.max_new_tokens,
                "temperature": self.temperature,
                "reset": self.reset,
            },
            "models": [
                {
                    **m.identity(),
                    "solved": m.solved,
                    "solve_rate": m.solve_rate,
                    **m.pass_at(),
                    "results": [asdict(r) for r in m.results],
                }
                for m in self.models
            ],
            "bucket_counts": {name: len(seeds) for name, seeds in buckets.items()},
            "buckets": buckets,
        }


@dataclass(frozen=True, slots=True)
class _Puzzle:
    seed: int
    numbers: list[int]
    target: int
    prompt: str


def evaluate_countdown(
    models: Sequence[str],
    *,
    url: str | None = None,
    split: Split = "eval",
    episodes: int = 60,
    seed: int = 0,
    max_new_tokens: int = 320,
    temperature: float = 0.0,
    batch_size: int = 8,
    reset: Mapping[str, Any] | None = None,
    device: str | None = None,
    progress: bool = True,
    samples: int = 1,
) -> CountdownEval:
    """Solve rate of each model on puzzles ``seed .. seed + episodes - 1`` of ``split``; with
    two models (baseline first) the result also sorts every puzzle into ``BUCKETS``.

    The prompt is the server's own, as the one user message of the chat template; each reply is
    sent whole to the server (``{"message": …}``), which extracts and checks the answer.
    ``reset``: the game's other reset fields (``n_numbers``, ``max_num``…), as in training.
    ``samples`` > 1 (with ``temperature`` > 0) samples that many replies per puzzle: the first
    is the puzzle's result, and all of them give ``pass_at_1`` and ``pass_at_k``.
    Raises ``ModelLoadError`` / ``FileNotFoundError`` for a model and ``ClientError`` for the
    server, both before any generation when they can be known then.
    """
    if samples > 1 and temperature <= 0:
        raise ValueError("samples > 1 needs a temperature above 0")
    labels = model_labels(len(models))
    sources = [resolve_model(name) for name in models]
    options = {**(reset or {}), "split": split}
    with game_url("countdown", url) as server, CountdownClient.from_url(server) as client:
        puzzles = []
        for i in range(episodes):
            observation = client.reset(seed=seed + i, **options).observation
            puzzles.append(
                _Puzzle(seed + i, observation.numbers, observation.target, observation.prompt)
            )
        outcome = CountdownEval(
            split, seed, episodes, max_new_tokens, temperature, [], dict(reset or {})
        )
        with _progress(progress) as bars:
            for label, name, source in zip(labels, models, sources, strict=True):
                task = bars.add_task(f"countdown {label}: {name}", total=episodes)
                model, tokenizer = load_model(source, device=device)
                _seed_sampling(seed)  # each model draws the same random stream
                result = CountdownModelResult(label, name, source, samples=samples)
                for start in range(0, episodes, batch_size):
                    batch = puzzles[start : start + batch_size]
                    prompts = [
                        chat_prompt(tokenizer, [{"role": "user", "content": p.prompt}])
                        for p in batch
                    ]
                    replies = generate(
                        model,
                        tokenizer,
                        [p for p in prompts for _ in range(samples)],
                        max_new_tokens=max_new_tokens,
                        temperature=temperature,
                    )
                    for i, puzzle in enumerate(batch):
                        texts = [
                            tokenizer.decode(ids, skip_special_tokens=True)
                            for ids in replies[i * samples : (i + 1) * samples]
                        ]
                        judged = [_judge(client, options, puzzle, text) for text in texts]
                        if samples > 1:
                            judged[0].samples_correct = sum(j.correct for j in judged)
                        result.results.append(judged[0])
                        bars.advance(task)
                outcome.models.append(result)
                del model, tokenizer
                _free_memory()
    return outcome


def _judge(
    client: CountdownClient, options: dict[str, Any], puzzle: _Puzzle, text: str
) -> PuzzleResult:
    """The server's verdict on one reply, in a fresh episode of the same puzzle."""
    start = client.reset(seed=puzzle.seed, **options).observation
    if (start.numbers, start.target) != (puzzle.numbers, puzzle.target):
        raise RuntimeError(
            f"The server gave seed {puzzle.seed} a different puzzle on replay "
            f"({start.numbers} → {start.target}, first {puzzle.numbers} → {puzzle.target})."
        )
    # the answer is the last tag or expression, so an overlong reply keeps its end
    observation = client.step({"message": text[-MAX_MESSAGE_CHARS:]}).observation
    return PuzzleResult(
        puzzle.seed,
        puzzle.numbers,
        puzzle.target,
        text,
        observation.expression,
        observation.value,
        observation.correct,
        observation.reason,
    )


# -- Wordle --------------------------------------------------------------------------------


@dataclass(slots=True)
class WordleEpisode:
    """One game; ``guesses`` (accepted, with marks), ``invalid``, ``won`` and ``answer`` are the
    server's, the call counts are what the model sent."""

    seed: int
    answer: str | None
    """The secret, once the game is over (a game the model abandoned keeps it hidden)."""
    won: bool
    guesses: list[dict[str, str]]
    invalid: int
    """Guesses the server refused (not a word, wrong length, repeated…): they cost no guess."""
    tool_calls: int
    broken_calls: int
    """Calls that never reached the game: unparseable, unknown tool, bad arguments."""
    turns: int
    ended: Literal["won", "lost", "no_tool_call", "broken_call", "max_turns"]
    transcript: list[dict[str, Any]]

    @property
    def judged(self) -> int:
        """Guesses the server ruled on: accepted plus refused."""
        return len(self.guesses) + self.invalid


@dataclass(slots=True)
class WordleModelResult(ModelRun):
    episodes: list[WordleEpisode] = field(default_factory=list)

    @property
    def wins(self) -> int:
        return sum(e.won for e in self.episodes)

    @property
    def win_rate(self) -> float:
        return self.wins / len(self.episodes) if self.episodes else 0.0

    @property
    def mean_guesses_on_wins(self) -> float | None:
        won = [len(e.guesses) for e in self.episodes if e.won]
        return sum(won) / len(won) if won else None

    @property
    def distribution(self) -> dict[str, int]:
        """Games won in 1..6 guesses, and ``lost`` (every game not won, however it ended)."""
        counts = {str(n): 0 for n in range(1, MAX_GUESSES + 1)} | {"lost": 0}
        for e in self.episodes:
            counts[str(len(e.guesses)) if e.won else "lost"] += 1
        return counts

    @property
    def invalid_rate(self) -> float:
        """Refused guesses over guesses the server ruled on."""
        judged = sum(e.judged for e in self.episodes)
        return sum(e.invalid for e in self.episodes) / judged if judged else 0.0

    @property
    def broken_call_rate(self) -> float:
        calls = sum(e.tool_calls for e in self.episodes)
        return sum(e.broken_calls for e in self.episodes) / calls if calls else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            **self.identity(),
            "wins": self.wins,
            "win_rate": self.win_rate,
            "mean_guesses_on_wins": self.mean_guesses_on_wins,
            "distribution": self.distribution,
            "invalid_rate": self.invalid_rate,
            "invalid": sum(e.invalid for e in self.episodes),
            "judged_guesses": sum(e.judged for e in self.episodes),
            "tool_calls": sum(e.tool_calls for e in self.episodes),
            "broken_calls": sum(e.broken_calls for e in self.episodes),
            "broken_call_rate": self.broken_call_rate,
        }


@dataclass(slots=True)
class WordleEval:
    game: ClassVar[str] = "wordle"
    split: str
    seed: int
    episodes: int
    max_turns: int
    max_new_tokens: int
    temperature: float
    models: list[WordleModelResult]
    instruction: str = ""
    reset: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        settings = {
            "max_turns": self.max_turns,
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "instruction": self.instruction,
            "reset": self.reset,
        }
        return {
            "game": self.game,
            "split": self.split,
            "seed": self.seed,
            "episodes": self.episodes,
            "settings": settings,
            "models": [
                {**m.summary(), "episodes": [asdict(e) for e in m.episodes]} for m in self.models
            ],
        }


_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


def parse_tool_calls(text: str) -> list[dict[str, Any]] | None:
    """The ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks of a reply, in the
    chat template's form; ``None`` when there are none. Raises ``ValueError`` for a block that
    is not such an object (TRL then ends the episode, and so do we)."""
    blocks = _TOOL_CALL.findall(text)
    if not blocks:
        return None
    calls = []
    for block in blocks:
        try:
            call = json.loads(block.strip())
            arguments = call.get("arguments", {})
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
        except (json.JSONDecodeError, AttributeError) as error:
            raise ValueError(f"malformed tool call: {block.strip()[:80]!r}") from error
        if not isinstance(call.get("name"), str) or not isinstance(arguments, dict):
            raise ValueError(f"malformed tool call: {block.strip()[:80]!r}")
        calls.append(
            {"type": "function", "function": {"name": call["name"], "arguments": arguments}}
        )
    return calls


class _ReplyParser:
    """Tool calls read as in training: with TRL's ``parse_response`` (transformers' response
    parsing) where TRL knows the chat template, else with :func:`parse_tool_calls`."""

    def __init__(self, tokenizer: Any) -> None:
        from trl.chat_template_utils import add_response_schema

        self.tokenizer = tokenizer
        try:
            add_response_schema(tokenizer)
            self.native = True
        except ValueError:  # a template TRL does not know
            self.native = False

    def __call__(
        self, ids: list[int], prompt: str, tools: list[Any]
    ) -> tuple[str, list[dict[str, Any]] | None]:
        """``(content, tool_calls)``, ``tool_calls`` None for a reply without one; raises
        ``ValueError`` for a ``<tool_call>`` that does not parse."""
        raw = self.tokenizer.decode(ids, skip_special_tokens=False)
        if not self.native:
            calls = parse_tool_calls(raw)
            return (_TOOL_CALL.sub("", raw) if calls else raw).strip(), calls
        from trl.chat_template_utils import parse_response

        prefix = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        parsed = parse_response(self.tokenizer, ids, prefix=prefix, tools=tools)
        if parsed.get("tool_calls"):
            return parsed["content"], parsed["tool_calls"]
        if "<tool_call>" in raw:  # TRL fell back to plain text: training would stop here
            raise ValueError(f"malformed tool call: {raw[:80]!r}")
        return parsed["content"], None


@dataclass(slots=True)
class _Game:
    env: WordleToolEnv
    seed: int
    messages: list[dict[str, Any]]
    tool_calls: int = 0
    broken_calls: int = 0
    turns: int = 0
    ended: str | None = None


def _server_state(env: WordleToolEnv) -> Any:
    """The adapter's session's state on the server: the source of every Wordle verdict."""
    client: EnvClient[Any, Any, Any] | None = env._client
    assert client is not None, "reset opens the session"
    return client.state()


def evaluate_wordle(
    models: Sequence[str],
    *,
    url: str | None = None,
    split: Split = "eval",
    episodes: int = 60,
    seed: int = 0,
    max_turns: int = 12,
    max_new_tokens: int = 256,
    temperature: float = 0.0,
    batch_size: int = 8,
    instruction: str = WORDLE_INSTRUCTION,
    reset: Mapping[str, Any] | None = None,
    device: str | None = None,
    progress: bool = True,
) -> WordleEval:
    """Each model plays words ``seed .. seed + episodes - 1`` of ``split`` through the
    ``guess`` tool of ``WordleToolEnv``, as in training: the prompt is ``instruction`` (the
    training default) followed by the adapter's reset text, tool calls are parsed from the reply,
    run, and answered with a ``tool`` message. A turn is one reply; the game stops when the
    server says it is over, the reply has no tool call or a malformed one (TRL's rule), or
    after ``max_turns``. Games are played ``batch_size`` at a time, one batched generation per
    turn. ``reset``: the game's other reset fields (``hard_mode``), as in training."""
    labels = model_labels(len(models))
    sources = [resolve_model(name) for name in models]
    outcome = WordleEval(
        split,
        seed,
        episodes,
        max_turns,
        max_new_tokens,
        temperature,
        [],
        instruction,
        dict(reset or {}),
    )
    make_env_factory("wordle", **(reset or {}))  # unknown reset fields fail before any server
    with game_url("wordle", url) as server, _progress(progress) as bars:
        factory = make_env_factory("wordle", url=server, **(reset or {}))
        pool = [factory() for _ in range(min(batch_size, episodes))]
        pool[0].reset(seed=seed, split=split)  # reach the server before loading any model
        for label, name, source in zip(labels, models, sources, strict=True):
            task = bars.add_task(f"wordle {label}: {name}", total=episodes)
            model, tokenizer = load_model(source, device=device)
            _seed_sampling(seed)  # each model draws the same random stream
            parser = _ReplyParser(tokenizer)
            result = WordleModelResult(label, name, source)
            for start in range(0, episodes, batch_size):
                seeds = range(seed + start, seed + min(start + batch_size, episodes))
                games = []
                for env, game_seed in zip(pool, seeds, strict=False):
                    text = instruction + env.reset(seed=game_seed, split=split)
                    games.append(_Game(env, game_seed, [{"role": "user", "content": text}]))  # type: ignore[arg-type]
                for _ in range(max_turns):
                    playing = [g for g in games if g.ended is None]
                    if not playing:
                        break
                    tools = [playing[0].env.guess]
                    prompts = [chat_prompt(tokenizer, g.messages, tools) for g in playing]
                    replies = generate(
                        model,
                        tokenizer,
                        prompts,
                        max_new_tokens=max_new_tokens,
                        temperature=temperature,
                    )
                    for game, prompt, ids in zip(playing, prompts, replies, strict=True):
                        _play_turn(game, parser, ids, prompt, tools)
                for game in games:
                    result.episodes.append(_finish(game))
                    bars.advance(task)
            outcome.models.append(result)
            del model, tokenizer, parser
            _free_memory()
        pool.clear()  # the adapters' finalizers close their sessions
    return outcome


def _play_turn(game: _Game, reply: Any, ids: list[int], prompt: str, tools: list[Any]) -> None:
    """Run the reply's tool calls; a call that fails is answered with TRL's error text."""
    game.turns += 1
    try:
        content, calls = reply(ids, prompt, tools) if ids else ("", None)
    except ValueError:  # a malformed <tool_call>: TRL takes the reply as plain text and stops
        game.tool_calls += 1
        game.broken_calls += 1
        game.messages.append({"role": "assistant", "content": reply.tokenizer.decode(ids)})
        game.ended = "broken_call"
        return
    if calls is None:
        game.messages.append({"role": "assistant", "content": content})
        game.ended = "no_tool_call"
        return
    game.messages.append({"role": "assistant", "content": content, "tool_calls": calls})
    for call in calls:
        game.tool_calls += 1
        function = call["function"]
        try:
            if function["name"] != "guess":
                raise ValueError(f"Tool {function['name']} not found.")
            output: str = game.env.guess(**function["arguments"])
        except (TypeError, ValueError, AttributeError, InvalidRequestError) as error:
            game.broken_calls += 1
            output = str({"error": str(error)})  # as TRL words a failed tool call
        game.messages.append({"role": "tool", "name": function["name"], "content": output})
    if _server_state(game.env).done:
        game.ended = "game_over"


def _finish(game: _Game) -> WordleEpisode:
    state = _server_state(game.env)
    ended = game.ended or "max_turns"
    if ended == "game_over":
        ended = "won" if state.won else "lost"
    return WordleEpisode(
        seed=game.seed,
        answer=state.answer,
        won=state.won,
        guesses=[g.model_dump() for g in state.guesses],
        invalid=state.invalid_count,
        tool_calls=game.tool_calls,
        broken_calls=game.broken_calls,
        turns=game.turns,
        ended=ended,  # type: ignore[arg-type]
        transcript=game.messages,
    )
