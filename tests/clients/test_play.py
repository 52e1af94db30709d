"""``arenagym play``: the renderers as pure functions, and the command driven as a person would,
through a pseudo-terminal (pexpect), against a local server it starts and one we start."""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import psutil
import pytest
from click.testing import CliRunner
from rich.console import Console, RenderableType

from clients.local_server import free_port
from clients.play import Quit, ask, play_app
from env_servers.countdown.expression import verify
from env_servers.countdown.game import solve
from env_servers.countdown.models import CountdownObservation
from env_servers.countdown.terminal import format_value, render_countdown
from env_servers.wordle.models import GuessFeedback, WordleObservation
from env_servers.wordle.terminal import letter_marks, render_wordle
from tests.live import live_server

ANSI = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>])")
TIMEOUT = 20
WORDS = ("crane", "sloth", "pudgy", "fable", "mucky", "whomp")
"""Six valid guesses; whatever the secret, the game ends within them."""


# -- renderers ----------------------------------------------------------------------------------


def render(renderable: RenderableType) -> tuple[str, Console]:
    console = Console(record=True, width=100, color_system="standard", force_terminal=True)
    console.file = io.StringIO()
    console.print(renderable)
    return console.export_text(clear=False), console


def backgrounds(console: Console, text: str) -> list[str]:
    """Background colour names of the recorded segments whose text is ``text``."""
    return [
        segment.style.bgcolor.name
        for segment in console._record_buffer
        if segment.text == text and segment.style and segment.style.bgcolor
    ]


def wordle_observation(**fields: object) -> WordleObservation:
    guesses = [
        GuessFeedback(word="crane", feedback="XYXXG"),
        GuessFeedback(word="stove", feedback="XXXGG"),
    ]
    return WordleObservation.model_validate({"guesses": guesses, "guesses_left": 4, **fields})


def test_wordle_tiles_and_keyboard_are_coloured_by_the_best_known_mark() -> None:
    text, console = render(render_wordle(wordle_observation()))
    assert "C   R   A   N   E" in text and "S   T   O   V   E" in text
    assert text.count(" ·   ·   ·   ·   · ") == 4  # the rows still to play
    assert "Q   W   E   R   T   Y   U   I   O   P" in text
    assert "Guesses left: 4" in text
    # E is green in both guesses; R yellow; C grey; V green; Q unused (board and keyboard).
    assert backgrounds(console, " E ") == ["green", "green", "green"]
    assert backgrounds(console, " R ") == ["yellow", "yellow"]
    assert backgrounds(console, " C ") == ["bright_black", "bright_black"]
    assert backgrounds(console, " Q ") == ["white"]
    assert "background-color" in console.export_html(inline_styles=True)


def test_letter_marks_keep_green_over_yellow_over_grey() -> None:
    guesses = [
        GuessFeedback(word="eerie", feedback="XYXXX"),  # e: grey, then yellow
        GuessFeedback(word="there", feedback="XXGXG"),  # e: green
    ]
    marks = letter_marks(guesses)
    assert marks["E"] == "G" and marks["R"] == "X" and marks["I"] == "X" and marks["T"] == "X"
    assert "Q" not in marks


def test_wordle_invalid_move_shows_the_reason_and_costs_nothing() -> None:
    observation = wordle_observation(
        invalid_move=True,
        reason="'zzzzz' is not an English word in the Wordle word list.",
        reward_signals={"invalid_count": 1},
    )
    text, _ = render(render_wordle(observation))
    assert "Not accepted: 'zzzzz' is not an English word" in text
    assert "no guess used" in text and "Guesses left: 4" in text and "1 invalid" in text


def test_wordle_end_shows_the_answer_and_marks_without_colour() -> None:
    lost = wordle_observation(done=True, guesses_left=0, answer="mover")
    text, _ = render(render_wordle(lost, True))
    assert "Game over. The word was MOVER." in text and "X Y X X G" in text
    # The keyboard reads without colour too: [green], (yellow), · for a letter not in the word.
    assert " Q   W  [E] (R)  ·   Y   U   I   ·   P" in text
    won = wordle_observation(done=True, answer="stove", reward_signals={"correct": True})
    text, _ = render(render_wordle(won))
    assert "You got it in 2 guesses! The word was STOVE." in text
    assert "Guesses left" not in text


def countdown_observation(**fields: object) -> CountdownObservation:
    base = {"prompt": "…", "numbers": [3, 7, 9], "target": 20, "attempts_left": 3}
    return CountdownObservation.model_validate({**base, **fields})


def test_countdown_shows_numbers_target_value_feedback_and_solution() -> None:
    text, console = render(render_countdown(countdown_observation()))
    assert re.search(r"Numbers\s+3\s+7\s+9", text) and re.search(r"Target\s+20", text)
    assert re.search(r"Attempts left\s+3", text) and "Your answer" not in text
    assert backgrounds(console, " 20 ") == ["yellow"] and backgrounds(console, " 7 ") == ["blue"]

    wrong = countdown_observation(
        attempts_left=2, expression="3 + 7 + 9", value=19.0, reason="= 19, target 20"
    )
    text, _ = render(render_countdown(wrong))
    assert re.search(r"Your answer\s+3 \+ 7 \+ 9  = 19", text)
    assert re.search(r"Feedback\s+= 19, target 20", text) and re.search(r"Attempts left\s+2", text)

    over = countdown_observation(
        attempts_left=0, expression="3 +", reason="incomplete", done=True, solution="3 * 9 - 7"
    )
    text, _ = render(render_countdown(over))
    assert "Out of attempts." in text and "3 * 9 - 7 = 20" in text and "Attempts left" not in text

    solved = countdown_observation(
        attempts_left=2, expression="3*9-7", value=20.0, correct=True, done=True
    )
    text, _ = render(render_countdown(solved))
    assert "Correct!" in text and "Solved!" in text


def test_countdown_values_that_are_not_whole_read_as_fractions() -> None:
    assert (
        format_value(19 / 3) == "19/3" and format_value(24.0) == "24" and format_value(None) == "?"
    )


def test_quit_words_and_end_of_input_quit(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(file=io.StringIO())
    for typed in (":q", " :QUIT "):
        monkeypatch.setattr("builtins.input", lambda prompt="", typed=typed: typed)
        with pytest.raises(Quit):
            ask(console, "> ")

    def end_of_input(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", end_of_input)
    with pytest.raises(Quit):
        ask(console, "> ")


def test_help_names_the_games_and_options() -> None:
    runner = CliRunner()
    result = runner.invoke(play_app, ["--help"])
    assert result.exit_code == 0 and "wordle" in result.output and "countdown" in result.output
    result = runner.invoke(play_app, ["wordle", "--help"], env={"COLUMNS": "120"})
    for option in ("--url", "--seed", "--split", "--hard", "--transport"):
        assert option in result.output
    result = runner.invoke(play_app, ["countdown", "--help"], env={"COLUMNS": "120"})
    assert "--attempts" in result.output


# -- the command in a terminal ------------------------------------------------------------------


class Player:
    """A person at a 100-column terminal: types lines, reads what appeared since the last read."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "TERM": "xterm", "COLUMNS": "100", "LINES": "50"}
        env.pop("NO_COLOR", None)
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "env_servers", "play", *args],
            env=env,
            encoding="utf-8",
            timeout=TIMEOUT,
            dimensions=(50, 100),
        )
        self.transcript = ""

    def read_until(self, *patterns: str) -> tuple[int, str]:
        """Index of the pattern that appeared, and the screen text before it, ANSI removed."""
        index = self.child.expect(list(patterns))
        screen = ANSI.sub("", self.child.before).replace("\r", "")
        self.transcript += screen
        return index, screen

    def wait_reading_input(self) -> None:
        """Block until the child's main thread sits in ``read`` on its terminal: the prompt is
        printed before ``input`` starts reading, so a key sent on seeing it can arrive early."""
        syscall = Path(f"/proc/{self.child.pid}/syscall")
        deadline = time.monotonic() + TIMEOUT
        while not syscall.read_text().startswith("0 0x0 "):  # read(0, …)
            assert self.child.isalive() and time.monotonic() < deadline, self.transcript
            time.sleep(0.01)

    def type(self, line: str) -> None:
        self.child.sendline(line)

    def wait_exit(self) -> int:
        self.child.expect(pexpect.EOF)
        self.transcript += ANSI.sub("", self.child.before)
        self.child.close()
        assert "Traceback" not in self.transcript, self.transcript
        return self.child.exitstatus

    def stop(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def players() -> Iterator[list[Player]]:
    started: list[Player] = []
    yield started
    for player in started:
        player.stop()


def local_server_of(screen: str) -> tuple[int, int]:
    found = re.search(r"server on http://127\.0\.0\.1:(\d+) \(pid (\d+)\)", screen)
    assert found, screen
    return int(found.group(1)), int(found.group(2))


def assert_gone(port: int, pid: int) -> None:
    deadline = time.monotonic() + 5
    while psutil.pid_exists(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not psutil.pid_exists(pid), "the local server outlived the game"
    with socket.socket() as sock, pytest.raises(OSError):
        sock.connect(("127.0.0.1", port))


GUESS, AGAIN = "Your guess: ", r"Play again\?"
EXPRESSION = "Your expression: "


def test_wordle_on_a_local_server_to_the_end(players: list[Player]) -> None:
    player = Player("wordle", "--seed", "1")
    players.append(player)
    _, screen = player.read_until(GUESS)
    port, pid = local_server_of(screen)
    assert psutil.pid_exists(pid) and "Guesses left: 6" in screen and "Q   W   E   R" in screen

    player.type("zzzzz")
    _, screen = player.read_until(GUESS)
    assert "Not accepted:" in screen and "zzzzz" in screen and "no guess used" in screen
    assert "Guesses left: 6" in screen

    for played, word in enumerate(WORDS, start=1):
        player.type(word)
        index, screen = player.read_until(GUESS, AGAIN)
        assert "   ".join(word.upper()) in screen
        if index == 1:
            break
        assert f"Guesses left: {6 - played}" in screen
    assert re.search(r"The word was [A-Z]{5}\.", screen), screen
    assert "Game over." in screen or "You got it" in screen

    player.type("n")
    assert player.wait_exit() == 0
    assert_gone(port, pid)


def test_ctrl_c_quits_cleanly_and_stops_the_local_server(players: list[Player]) -> None:
    player = Player("countdown")
    players.append(player)
    _, screen = player.read_until(EXPRESSION)
    port, pid = local_server_of(screen)
    player.wait_reading_input()
    player.child.sendintr()
    assert player.wait_exit() == 0
    assert_gone(port, pid)


def test_countdown_against_a_running_server_over_http(players: list[Player]) -> None:
    with live_server("countdown") as server:
        player = Player(
            "countdown", "--url", server.url, "--seed", "3", "--attempts", "2",
            "--transport", "http",
        )  # fmt: skip
        players.append(player)
        _, screen = player.read_until(EXPRESSION)
        assert "server on" not in screen  # no local server with --url
        numbers, target = puzzle_of(screen)
        assert re.search(r"Attempts left\s+2", screen)

        wrong = next(
            e for e in wrong_answers(numbers) if verify(e, numbers, target).reason is not None
        )
        player.type(wrong)
        _, screen = player.read_until(EXPRESSION)
        reason = verify(wrong, numbers, target).reason
        assert re.search(rf"Feedback\s+{re.escape(reason)}", screen), screen
        assert re.search(r"Attempts left\s+1", screen)

        player.type("3 +* (")  # not an expression: refused, no attempt used
        _, screen = player.read_until(EXPRESSION)
        assert f"Not accepted: {verify('3 +* (', numbers, target).reason}" in screen
        assert "(no attempt used)" in screen and re.search(r"Attempts left\s+1", screen)

        wrong = next(
            e
            for e in wrong_answers(numbers)
            if (verdict := verify(e, numbers, target)).reason and not verdict.invalid
        )
        player.type(wrong)
        _, screen = player.read_until(AGAIN)
        assert "Out of attempts." in screen and re.search(rf"Solution\s+.+ = {target}", screen)

        player.type("y")
        _, screen = player.read_until(EXPRESSION)
        numbers, target = puzzle_of(screen)
        answer = solve(numbers, target)
        assert answer is not None
        player.type(answer)
        _, screen = player.read_until(AGAIN)
        assert "Correct!" in screen and "Solved!" in screen

        player.type("n")
        assert player.wait_exit() == 0
        deadline = time.monotonic() + 5
        while server.sessions.active and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.sessions.active == 0, "play left its session open"


def test_wordle_against_a_running_server_quits_on_colon_q(players: list[Player]) -> None:
    with live_server("wordle") as server:
        player = Player("wordle", "--url", server.url, "--hard", "--split", "eval")
        players.append(player)
        _, screen = player.read_until(GUESS)
        assert "Wordle (hard mode)" in screen and "Guesses left: 6" in screen
        player.type("crane")
        _, screen = player.read_until(GUESS)
        assert "Guesses left: 5" in screen
        player.type(":q")
        assert player.wait_exit() == 0


def test_unreachable_server_is_one_line_and_exit_code_1() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = subprocess.run(
        [sys.executable, "-m", "env_servers", "play", "wordle", "--url", url],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert result.returncode == 1
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert f"Cannot reach {url}" in message and "arenagym serve wordle" in message


def puzzle_of(screen: str) -> tuple[list[int], int]:
    numbers = re.search(r"Numbers\s+((?:\d+\s+)+)", screen)
    target = re.search(r"Target\s+(\d+)", screen)
    assert numbers and target, screen
    return [int(n) for n in numbers.group(1).split()], int(target.group(1))


def wrong_answers(numbers: list[int]) -> Iterator[str]:
    """Expressions that use every number once; at most one of them can hit the target."""
    for op in ("+", "*", "-"):
        yield f" {op} ".join(map(str, numbers))


def test_a_game_without_a_terminal_view_gets_the_generic_one() -> None:
    import dataclasses

    from clients.play import game_command, game_ui
    from env_servers.core.registry import load_spec

    spec = dataclasses.replace(load_spec("countdown"), terminal=None)
    ui = game_ui(spec)
    assert ui.action("3 * 9 - 7") == {"expression": "3 * 9 - 7"}  # its first text field
    assert ui.action('{"message": "<answer>3 + 4</answer>"}') == {
        "message": "<answer>3 + 4</answer>"
    }
    observation = CountdownObservation(
        prompt="Make 20 from 3, 9, 7.", numbers=[3, 9, 7], target=20, attempts_left=1
    )
    text, _ = render(ui.render(observation, False))
    assert "Make 20 from 3, 9, 7." in text and "target: 20" in text
    result = CliRunner().invoke(game_command(spec), ["--help"], terminal_width=120)
    assert "--n-numbers" in result.output and "--reset FIELD=VALUE" in result.output


def test_the_generic_view_reads_a_typed_line_as_the_only_field_of_the_action() -> None:
    import dataclasses

    from clients.play import game_ui
    from env_servers.core.models import Action
    from env_servers.core.registry import load_spec

    class NumberAction(Action):
        guess: int

    spec = dataclasses.replace(load_spec("countdown"), terminal=None, action_type=NumberAction)
    ui = game_ui(spec)
    assert ui.action("50") == {"guess": 50} and "Type a guess" in ui.hint
    with pytest.raises(ValueError, match="not a valid guess: Input should be a valid integer"):
        ui.action("fifty")


def test_a_server_of_another_game_is_named() -> None:
    with live_server("wordle") as server:
        result = subprocess.run(
            [sys.executable, "-m", "env_servers", "play", "countdown", "--url", server.url],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2, result.stderr
    assert (
        "serves wordle, not countdown" in result.stderr and "arenagym play wordle" in result.stderr
    )
    assert "Traceback" not in result.stderr
