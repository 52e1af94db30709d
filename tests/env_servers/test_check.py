"""``arenagym check``: it fails games that break their declaration, checks a running server by
URL over both transports, and prints a report a person reads.

The games here are fixtures, never registered: Codeword (find a NATO-alphabet code word from
"earlier"/"later" hints) plays fair, and each variant breaks one promise of its declaration.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import Field

from clients.agent import GameAgent
from clients.base import EnvClient
from env_servers.check import InProcessTarget, Report, URLTarget, check
from env_servers.check.cli import check_command
from env_servers.core.environment import Environment
from env_servers.core.models import Action, Observation, ResetOptions, State
from env_servers.core.spec import GameSpec, InvalidMoves, Reward
from tests.live import LiveServer, live_server

WORDS = ("alfa", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
         "sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu")  # fmt: skip
GUESSES = 4
INVALID = 3
EPISODES = 6


class CodewordAction(Action):
    guess: str = Field(max_length=20, description="A NATO alphabet word.")


class CodewordObservation(Observation):
    text: str = ""
    guesses: list[str] = Field(default_factory=list)
    guesses_left: int = GUESSES
    invalid_move: bool = False
    secret: str | None = None


class CodewordState(State):
    guesses: list[str] = Field(default_factory=list)
    invalid_count: int = 0
    note: str = ""
    secret: str | None = None


class Codeword(Environment[ResetOptions, CodewordAction, CodewordObservation, CodewordState]):
    """Fair play: seeded secrets, free invalid moves (the third ends the episode), rewards in
    [0, 1], the secret shown only at the end."""

    name = "codeword"
    description = "Find the code word from 'earlier' / 'later' hints."
    action_type = CodewordAction
    observation_type = CodewordObservation
    state_type = CodewordState

    def __init__(self) -> None:
        self.secret, self.guesses, self.invalid, self.steps, self.done = "", [], 0, 0, False

    def pick(self, seed: int | None) -> str:
        return random.Random(seed).choice(WORDS)

    def reset(self, options: ResetOptions) -> CodewordObservation:
        self.secret, self.guesses, self.invalid, self.steps, self.done = (
            self.pick(options.seed), [], 0, 0, False
        )  # fmt: skip
        return self.observe(None, "Guess the code word: a NATO alphabet word.")

    def step(self, action: CodewordAction) -> CodewordObservation:
        self.steps += 1
        word = action.guess.strip().lower()
        if word not in WORDS or word in self.guesses:
            self.invalid += 1
            self.done = self.invalid >= INVALID
            return self.observe(self.invalid_reward(word), f"{word!r}: no new code word", True)
        self.guesses.append(word)
        won = word == self.secret
        self.done = won or len(self.guesses) >= GUESSES
        hint = "Found it." if won else ("Later." if word < self.secret else "Earlier.")
        return self.observe(1.0 if won else 0.0, hint)

    def invalid_reward(self, word: str) -> float:
        return 0.0

    def observe(self, reward: float | None, text: str, invalid: bool = False) -> Any:
        return CodewordObservation(
            text=text,
            guesses=list(self.guesses),
            guesses_left=GUESSES - len(self.guesses),
            invalid_move=invalid,
            secret=self.secret if self.done else None,
            reward=reward,
            done=self.done,
        )

    @property
    def state(self) -> CodewordState:
        return CodewordState(
            step_count=self.steps,
            guesses=list(self.guesses),
            invalid_count=self.invalid,
            note=self.note(),
            secret=self.secret if self.done else None,
        )

    def note(self) -> str:
        return ""


def random_move(observation: CodewordObservation, rng: random.Random) -> dict[str, Any]:
    return {"guess": rng.choice([w for w in WORDS if w not in observation.guesses])}


CODEWORD = GameSpec(
    name="codeword",
    description=Codeword.description,
    environment=f"{__name__}:Codeword",
    reset_type=ResetOptions,
    action_type=CodewordAction,
    observation_type=CodewordObservation,
    state_type=CodewordState,
    client=EnvClient,
    agent=GameAgent,
    instruction="Find the code word.",
    rewards={"won": Reward(lambda agent: 0.0)},
    solved="won",
    max_steps=GUESSES - 1 + INVALID,
    reward_range=(0.0, 1.0),
    random_move=random_move,
    invalid_moves=InvalidMoves({"guess": "nope"}, ends_after=INVALID),
    hidden_fields=frozenset({"secret"}),
    repeat_probe=True,
)


# -- broken variants: each breaks one promise ---------------------------------------------------


class Leaky(Codeword):
    """Says the secret in its state, in words."""

    name = "leaky"

    def note(self) -> str:
        return f"The code word is {self.secret}."


class LeakyField(Codeword):
    """Shows the hidden field itself while the episode runs."""

    name = "leaky-field"

    @property
    def state(self) -> CodewordState:
        return super().state.model_copy(update={"secret": self.secret})


_shared = random.Random(0)


class Unseeded(Codeword):
    """Draws the secret from a generator shared by all episodes, not from the seed."""

    name = "unseeded"

    def pick(self, seed: int | None) -> str:
        return _shared.choice(WORDS)


class Constant(Codeword):
    """Ignores the seed: every episode is the same."""

    name = "constant"

    def pick(self, seed: int | None) -> str:
        return "mike"


class Penalising(Codeword):
    """Rewards a wrong guess with -0.1, outside the declared range."""

    name = "penalising"

    def step(self, action: CodewordAction) -> CodewordObservation:
        observation = super().step(action)
        return observation.model_copy(update={"reward": observation.reward or -0.1})


class InvalidPays(Codeword):
    """An invalid move earns more than random play."""

    name = "invalid-pays"

    def invalid_reward(self, word: str) -> float:
        return 1.0


class RepeatPays(Codeword):
    """Repeating a guess (an invalid move, but not the declared example) pays."""

    name = "repeat-pays"

    def invalid_reward(self, word: str) -> float:
        return 0.5 if word in self.guesses else 0.0


class EmptyPays(Codeword):
    """An empty guess pays."""

    name = "empty-pays"

    def invalid_reward(self, word: str) -> float:
        return 1.0 if word == "" else 0.0


class Endless(Codeword):
    """Invalid moves never end an episode, whatever the declaration says."""

    name = "endless"

    def step(self, action: CodewordAction) -> CodewordObservation:
        observation = super().step(action)
        if observation.invalid_move:
            self.done = False
            return observation.model_copy(update={"done": False, "secret": None})
        return observation


class Crashes(Codeword):
    """Raises on some junk instead of refusing it or playing it as an invalid move."""

    name = "crashes"

    def step(self, action: CodewordAction) -> CodewordObservation:
        if action.guess.startswith("("):
            raise RuntimeError("unbalanced")
        return super().step(action)


class OffSchema(Codeword):
    """Sends an observation its own schema does not allow."""

    name = "off-schema"

    def observe(self, reward: float | None, text: str, invalid: bool = False) -> Any:
        observation = super().observe(reward, text, invalid)
        return CodewordObservation.model_construct(
            **{**dict(observation), "guesses_left": "plenty"}
        )


class Miscounts(Codeword):
    """Does not count invalid moves as steps."""

    name = "miscounts"

    def step(self, action: CodewordAction) -> CodewordObservation:
        observation = super().step(action)
        self.steps -= observation.invalid_move
        return observation


def variant(env_type: type[Codeword]) -> GameSpec:
    return dataclasses.replace(
        CODEWORD, name=env_type.name, environment=f"{__name__}:{env_type.__name__}"
    )


LEAKY = variant(Leaky)
GHOST = dataclasses.replace(CODEWORD, name="ghost", environment=f"{__name__}:Ghost")
"""A declaration whose environment does not exist."""
BROKEN = {
    "hidden_stays_hidden": [LEAKY, variant(LeakyField)],
    "same_seed_same_episode": [variant(Unseeded)],
    "seeds_vary": [variant(Constant)],
    "rewards_in_range": [variant(Penalising)],
    "probe_invalid_moves": [variant(InvalidPays)],
    "probe_repeat_move": [variant(RepeatPays)],
    "probe_empty_output": [variant(EmptyPays)],
    "episodes_end_within_limit": [variant(Endless)],
    "invalid_moves_cost": [variant(Endless), variant(InvalidPays)],
    "bad_actions_rejected": [variant(Crashes)],
    "replies_match_schema": [variant(OffSchema)],
    "step_count": [variant(Miscounts)],
}


def in_process(spec: GameSpec) -> Report:
    return check(InProcessTarget(spec.load_environment()), spec, episodes=EPISODES)


def statuses(report: Report) -> dict[str, str]:
    return {result.name: result.status for result in report.results}


def test_a_fair_game_passes_every_check() -> None:
    report = in_process(CODEWORD)
    assert report.passed, report.failures
    assert [r.name for r in report.results if r.status == "skipped"] == ["metadata"]


@pytest.mark.parametrize(
    ("failing", "spec"),
    [(name, spec) for name, specs in BROKEN.items() for spec in specs],
    ids=lambda value: value.name if isinstance(value, GameSpec) else value,
)
def test_a_broken_game_fails_its_check(failing: str, spec: GameSpec) -> None:
    report = in_process(spec)
    result = report.result(failing)
    assert result.status == "failed", result
    assert result.detail, "a failure says what is wrong"


def test_a_leak_is_reported_with_where_it_was_seen() -> None:
    detail = in_process(LEAKY).result("hidden_stays_hidden").detail
    assert "state after reset" in detail and "hidden secret" in detail


def test_missing_declarations_skip_their_checks_saying_why() -> None:
    bare = dataclasses.replace(
        CODEWORD,
        max_steps=None,
        reward_range=None,
        random_move=None,
        invalid_moves=None,
        repeat_probe=False,
    )
    report = in_process(bare)
    assert report.passed, report.failures
    skipped = {r.name: r.detail for r in report.results if r.status == "skipped"}
    assert "max_steps" in skipped["episodes_end_within_limit"]
    assert "reward_range" in skipped["rewards_in_range"]
    assert "random_move" in skipped["probe_invalid_moves"]
    # the checker makes no legal move, yet resets replay the same, seeds vary (the secrets
    # that empty output reveals differ), and the secrets stay hidden
    for name in ("same_seed_same_episode", "seeds_vary", "hidden_stays_hidden"):
        assert statuses(report)[name] == "passed", name


def test_a_declaration_that_contradicts_itself_is_refused() -> None:
    with pytest.raises(ValueError, match="repeat_probe"):
        dataclasses.replace(CODEWORD, random_move=None)
    with pytest.raises(ValueError, match="ends_after"):
        InvalidMoves({"guess": "nope"}, ends_after=0)
    with pytest.raises(ValueError, match="reward_range"):
        dataclasses.replace(CODEWORD, reward_range=(1.0, 0.0))


# -- a running server, by URL ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live_server("countdown") as running:
        yield running


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_a_live_server_passes_by_url(server: LiveServer, transport: str) -> None:
    arguments = ["--url", server.url, "--transport", transport, "--episodes", "2", "--json"]
    result = CliRunner().invoke(check_command, arguments)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["passed"] is True and report["game"] == "countdown"
    found = {r["name"]: r["status"] for r in report["results"]}
    assert set(found.values()) == {"passed"}, found  # metadata included: a server answers
    assert transport in report["target"]


def test_the_wrong_game_at_a_url_fails(server: LiveServer) -> None:
    arguments = ["wordle", "--url", server.url, "--episodes", "2", "--json"]
    result = CliRunner().invoke(check_command, arguments)
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["passed"] is False
    metadata = next(r for r in report["results"] if r["name"] == "metadata")
    assert metadata["detail"] == "the server plays 'countdown', not 'wordle'"


def test_a_server_not_registered_here_gets_what_its_schema_allows(server: LiveServer) -> None:
    report = check(URLTarget(server.url), None, episodes=2, game="somewhere")
    found = statuses(report)
    assert report.passed, report.failures
    for name in ("metadata", "schema", "replies_match_schema", "bad_actions_rejected"):
        assert found[name] == "passed", name
    assert found["same_seed_same_episode"] == "passed"
    assert found["probe_invalid_moves"] == "skipped"
    assert "no declaration" in report.result("hidden_stays_hidden").detail


# -- the command ----------------------------------------------------------------------------------


def test_the_report_is_a_table_with_a_verdict() -> None:
    result = CliRunner().invoke(check_command, [f"{__name__}:LEAKY", "--episodes", "2"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("arenagym check leaky · in-process · 2 episodes from seed 0")
    assert any("hidden_stays_hidden" in line and "FAILED" in line for line in lines)
    assert lines[-1].startswith("FAILED: ") and "1 skipped" in lines[-1]


def test_usage_errors_exit_2() -> None:
    runner = CliRunner()
    for arguments in ([], ["no-such-game"], ["wordle", "--episodes", "1"], ["os:sep"]):
        result = runner.invoke(check_command, arguments)
        assert result.exit_code == 2, (arguments, result.output)


def test_an_environment_that_cannot_load_says_so() -> None:
    result = CliRunner().invoke(check_command, [f"{__name__}:GHOST"])
    assert result.exit_code == 1
    assert "declares environment" in result.output and "could not be loaded" in result.output


def test_an_unreachable_server_says_so() -> None:
    result = CliRunner().invoke(check_command, ["--url", "http://127.0.0.1:9", "--timeout", "2"])
    assert result.exit_code == 1
    assert "Cannot reach" in result.output and "Is the server running" in result.output


def test_hidden_values_are_sought_as_whole_values_or_words() -> None:
    from env_servers.check.leaks import contains

    assert contains({"note": "The code word is Mike."}, "mike")
    assert contains({"guesses": ["alfa", "mike"]}, "mike")
    assert not contains({"note": "mikes and spikes"}, "mike")
    assert contains({"code": [1, 2, 3]}, [1, 2, 3]) and contains({"n": [7]}, 7)
    assert not contains({"flag": True}, 1)  # a flag is not the number 1
    assert not contains({"text": "a b c"}, "b")  # short text only as a whole value
    assert contains({"text": "b"}, "b")
