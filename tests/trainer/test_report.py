"""Reports: self-consistent numbers, plots, training curves, and the ``arenagym eval`` command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("trl")

from click.testing import CliRunner

from env_servers.cli import main
from tests.live import LiveServer
from trainer.evaluate import (
    BUCKETS,
    CountdownEval,
    CountdownModelResult,
    PuzzleResult,
    WordleEpisode,
    WordleEval,
    WordleModelResult,
)
from trainer.report import (
    find_metrics,
    has_training_curve,
    plot_training,
    print_summary,
    read_metrics,
    write_eval_report,
)

PNG = b"\x89PNG\r\n\x1a\n"


def puzzle(seed: int, correct: bool, expression: str | None = "3 * 9 - 7") -> PuzzleResult:
    value = None if expression is None else (20.0 if correct else 19.0)
    reason = None if correct else ("= 19, target 20" if expression else "no expression found")
    return PuzzleResult(seed, [3, 9, 7], 20, "...", expression, value, correct, reason)


def countdown_eval() -> CountdownEval:
    """Seven puzzles: 3 fixed, 1 both solved, 2 both failed, 1 regressed."""
    base = [False, False, False, True, False, False, True]
    trained = [True, True, True, True, False, False, False]
    models = [
        CountdownModelResult(label, f"/runs/{label}", f"/runs/{label}")
        for label in ("base", "trained")
    ]
    for seed, (before, after) in enumerate(zip(base, trained, strict=True)):
        models[0].results.append(puzzle(seed, before, None if seed == 5 else "3 * 9 - 7"))
        models[1].results.append(puzzle(seed, after))
    return CountdownEval("eval", 0, 7, 320, 0.0, models)


def test_countdown_buckets_cover_every_puzzle_once() -> None:
    buckets = countdown_eval().buckets()
    assert {name: len(seeds) for name, seeds in buckets.items()} == {
        "fixed": 3,
        "both_solved": 1,
        "both_failed": 2,
        "regressed": 1,
    }
    assert buckets["regressed"] == [6] and buckets["fixed"] == [0, 1, 2]


def test_countdown_report_agrees_with_results_json(tmp_path: Path) -> None:
    report = write_eval_report(countdown_eval(), tmp_path)
    for name in ("report.md", "results.json", "buckets.png", "solve_rates.png"):
        assert (tmp_path / name).is_file(), name
    assert (tmp_path / "buckets.png").read_bytes().startswith(PNG)
    data = json.loads((tmp_path / "results.json").read_text())
    text = report.read_text()

    assert sum(data["bucket_counts"].values()) == data["episodes"] == 7
    for model in data["models"]:
        assert model["solved"] == sum(r["correct"] for r in model["results"])
        assert model["solve_rate"] == model["solved"] / 7
        share = f"{100 * model['solved'] / 7:.1f}%"
        assert (
            f"| {model['label']} | `{model['source']}` | {model['solved']} / 7 | {share} |" in text
        )
    for bucket in BUCKETS:
        assert re.search(rf"\| [^|]*\| {data['bucket_counts'][bucket]} \|", text)
    assert "| **Total** | **7** |" in text
    rows = re.findall(r"^\| (\d+) \| 3, 9, 7 \| 20 \|", text, re.MULTILINE)
    assert sorted(map(int, rows)) == list(range(7))  # every puzzle side by side, once
    assert text.index("| 0 | 3, 9, 7") < text.index("| 6 | 3, 9, 7") < text.index("| 3 | 3, 9, 7")
    assert "`3 * 9 - 7` → 20 ✓" in text and "✗ no expression found" in text


def wordle_eval() -> WordleEval:
    def episode(seed: int, words: list[str], won: bool, invalid: int, ended: str) -> WordleEpisode:
        guesses = [
            {"word": w, "feedback": "GGGGG" if won and w == words[-1] else "XYXGX"} for w in words
        ]
        transcript = [
            {"role": "user", "content": "You are playing Wordle."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "guess", "arguments": {"word": "crane"}},
                    }
                ],
            },
            {"role": "tool", "name": "guess", "content": "C R A N E\nX Y X G X"},
        ]
        calls = len(words) + invalid
        return WordleEpisode(
            seed, "crane" if ended != "no_tool_call" else None, won, guesses, invalid, calls + 1, 1,
            calls + 1, ended, transcript,  # type: ignore[arg-type]
        )  # fmt: skip

    base = WordleModelResult("base", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-1.7B")
    base.episodes = [
        episode(0, ["slate"] * 6, False, 2, "lost"),
        episode(1, [], False, 0, "no_tool_call"),
    ]
    trained = WordleModelResult("trained", "runs/wordle", "runs/wordle/checkpoint-8")
    trained.episodes = [
        episode(0, ["slate", "crane"], True, 1, "won"),
        episode(1, ["a"] * 4, True, 0, "won"),
    ]
    return WordleEval("eval", 0, 2, 12, 256, 0.0, [base, trained])


def test_wordle_report_agrees_with_results_json(tmp_path: Path) -> None:
    report = write_eval_report(wordle_eval(), tmp_path)
    for name in ("report.md", "results.json", "guesses.png", "win_rates.png"):
        assert (tmp_path / name).is_file(), name
    data = json.loads((tmp_path / "results.json").read_text())
    text = report.read_text()
    base, trained = data["models"]
    assert base["distribution"] == {"1": 0, "2": 0, "3": 0, "4": 0, "5": 0, "6": 0, "lost": 2}
    assert trained["distribution"]["2"] == trained["distribution"]["4"] == 1
    assert trained["mean_guesses_on_wins"] == 3.0 and base["mean_guesses_on_wins"] is None
    assert base["invalid_rate"] == 2 / 8 and base["invalid"] == 2 and base["judged_guesses"] == 8
    assert (
        "| trained | `runs/wordle/checkpoint-8` | 2 / 2 | 100.0% | 3.00 | 14.3% (1 / 7) |" in text
    )
    assert "| base | 0 | 0 | 0 | 0 | 0 | 0 | 2 |" in text
    assert "### trained, seed 0: won in 2 (answer: crane)" in text
    assert '→ guess({"word": "crane"})' in text


def test_print_summary(capsys: pytest.CaptureFixture[str]) -> None:
    from rich.console import Console

    console = Console(width=100, force_terminal=False)
    print_summary(countdown_eval(), console)
    print_summary(wordle_eval(), console)
    out = capsys.readouterr().out
    assert "2/7" in out and "4/7" in out and "fixed 3" in out and "regressed 1" in out
    assert "2/2" in out and "3.00" in out


def test_plot_training_tolerates_missing_keys_and_a_cut_last_line(tmp_path: Path) -> None:
    metrics = tmp_path / "metrics.jsonl"
    lines = [
        {"step": 1, "reward": 0.1, "reward_std": 0.05, "rewards/wordle_correct/mean": 0.0},
        {"step": 2, "loss": 0.3},  # no reward: left out of the curve
        {"step": 2, "reward": 0.4, "solve_rate": 0.25},
        {"step": 3, "reward": 0.5, "solve_rate": 0.5, "rewards/wordle_correct/mean": 0.5},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + '\n{"step": 4, "rew'
    metrics.write_text(text)
    assert len(read_metrics(metrics)) == 4
    assert has_training_curve(metrics)
    out = plot_training(metrics, tmp_path / "training.png")
    assert out.read_bytes().startswith(PNG)

    (tmp_path / "empty.jsonl").write_text('{"step": 1, "loss": 2.0}\n')
    assert not has_training_curve(tmp_path / "empty.jsonl")
    with pytest.raises(ValueError, match="no line with both 'step' and 'reward'"):
        plot_training(tmp_path / "empty.jsonl", tmp_path / "x.png")

    run = tmp_path / "run"
    (run / "checkpoint-3").mkdir(parents=True)
    (run / "metrics.jsonl").write_text(text)
    assert find_metrics(["Qwen/Qwen3-1.7B", str(run / "checkpoint-3")]) == run / "metrics.jsonl"
    assert find_metrics([str(run)]) == run / "metrics.jsonl"
    assert find_metrics(["Qwen/Qwen3-1.7B", "tiny"]) is None
    (tmp_path / "tiny").write_text("")  # a file named like the model in the working directory
    assert find_metrics([str(tmp_path / "tiny")]) is None

    report = write_eval_report(countdown_eval(), tmp_path / "report", metrics=metrics)
    assert "![Training](training.png)" in report.read_text()
    assert (tmp_path / "report" / "training.png").is_file()


# -- the command ---------------------------------------------------------------------------


def test_eval_command_end_to_end(
    tiny_model: Path, countdown_server: LiveServer, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = ["eval", "countdown", "-m", str(tiny_model), "-m", str(tiny_model), "--url"]
    args += [countdown_server.url, "--episodes", "3", "--max-new-tokens", "12", "-o", str(out)]
    result = CliRunner().invoke(main, [*args, "--reset", "n_numbers=4", "--reset", "max_num=20"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "results.json").read_text())
    counts = data["bucket_counts"]
    assert sum(counts.values()) == 3 and counts["fixed"] == counts["regressed"] == 0  # same model
    assert "Report:" in result.output and f"both failed {counts['both_failed']}" in result.output
    assert data["settings"]["reset"] == {"n_numbers": 4, "max_num": 20}
    assert all(len(r["numbers"]) == 4 for m in data["models"] for r in m["results"])
    assert "reset with `n_numbers=4`, `max_num=20`" in (out / "report.md").read_text()
    assert (out / "report.md").is_file() and (out / "buckets.png").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "./no/such/model", "--url", "{url}"], "Error: No such model directory"),
        (["-m", "{tiny}", "--url", "http://127.0.0.1:9"], "Error: Cannot reach http://127.0.0.1:9"),
        (["-m", "{tiny}", "-m", "{tiny}", "-m", "{tiny}", "--url", "{url}"], "twice"),
        (["-m", "{tiny}", "--url", "{url}", "--reset", "oops"], "expected FIELD=VALUE"),
        (["-m", "{tiny}", "--url", "{url}", "--reset", "colour=1"], "Error: "),
    ],
)
def test_eval_command_errors_are_one_line(
    tiny_model: Path, countdown_server: LiveServer, args: list[str], message: str
) -> None:
    args = [a.format(url=countdown_server.url, tiny=tiny_model) for a in args]
    result = CliRunner().invoke(main, ["eval", "countdown", *args, "--episodes", "1"])
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
