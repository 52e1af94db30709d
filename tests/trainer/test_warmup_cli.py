"""``arenagym warmup``: what it offers, and bad input as one line on stderr (the warm-up itself
runs in the learning benchmark's tests)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from trainer.warmup_cli import games_with_warmup, warmup_app


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(warmup_app, list(args))
    return result.exit_code, result.output


def test_help_lists_only_the_games_that_declare_demonstrations() -> None:
    assert games_with_warmup() == ["countdown"]
    code, output = _invoke("--help")
    assert code == 0
    commands = output.split("Commands:")[1]
    assert "countdown" in commands
    assert "wordle" not in commands


def test_a_game_without_demonstrations_is_one_line_naming_those_with() -> None:
    code, output = _invoke("wordle", "-m", "tiny", "-o", "unused")
    assert code == 1
    assert output.strip().count("\n") == 0
    assert "declares no demonstrations" in output
    assert "Games with one: countdown." in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "nowhere/to/be/found"], "No such model directory: nowhere/to/be/found."),
        (["-m", "tiny", "--device", "tpu"], "device tpu: expected cpu, cuda or cuda:N"),
        (["-m", "tiny", "--reset", "n_numbers=99"], "n_numbers"),
        (
            ["-m", "small", "--reset", "numbers=[1,2,3]", "--reset", "target=6", "--episodes=20"],
            "too few different episodes",
        ),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "warm"
    code, output = _invoke("countdown", *args, "-o", str(out))
    assert code == 1, output
    assert output.startswith("Error: ") and output.strip().count("\n") == 0, output
    assert message in output
    assert not out.exists()
