"""Reports: self-consistent numbers, plots, training curves, and the ``arenagym eval`` command."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from env_servers.cli import main
from env_servers.core.registry import load_spec
from tests.live import LiveServer
from trainer.evaluate import BUCKETS, EpisodeRecord, Evaluation, ModelResult
from trainer.report import (
    find_metrics,
    has_training_curve,
    plot_training,
    print_summary,
    read_metrics,
    write_eval_report,
)
from trainer.views import EvaluationView, load_view

PNG = b"\x89PNG\r\n\x1a\n"


def puzzle(seed: int, solved: bool, expression: str | None = "3 * 9 - 7") -> EpisodeRecord:
    value = None if expression is None else (20.0 if solved else 19.0)
    reason = None if solved else ("= 19, target 20" if expression else "no expression found")
    details = {"numbers": [3, 9, 7], "target": 20, "expression": expression, "value": value}
    return EpisodeRecord(
        seed, 0, solved, float(solved), 1, 0, 0, "solved" if solved else "failed",
        completion="...", details=details | {"reason": reason},
    )  # fmt: skip


def countdown_eval(view: EvaluationView | None = None) -> Evaluation:
    """Seven puzzles: 3 fixed, 1 both solved, 2 both failed, 1 regressed."""
    spec = load_spec("countdown")
    base = [False, False, False, True, False, False, True]
    trained = [True, True, True, True, False, False, False]
    models = [
        ModelResult(label, f"/runs/{label}", f"/runs/{label}") for label in ("base", "trained")
    ]
    for seed, (before, after) in enumerate(zip(base, trained, strict=True)):
        models[0].records.append(puzzle(seed, before, None if seed == 5 else "3 * 9 - 7"))
        models[1].records.append(puzzle(seed, after))
    settings = {"max_new_tokens": 320, "temperature": 0.0, "reset": {}}
    return Evaluation(spec, "answer", "eval", 0, 7, 1, settings, models, view or load_view(spec))


def test_buckets_cover_every_episode_once() -> None:
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

    assert text.startswith("# Countdown evaluation")
    assert sum(data["bucket_counts"].values()) == data["episodes"] == 7
    for model in data["models"]:
        assert model["solved"] == sum(r["solved"] for r in model["episodes"])
        assert model["solve_rate"] == model["solved"] / 7 == model["pass_at_1"]
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
    assert "How episodes ended" not in text and "Sample transcripts" not in text


def test_a_game_without_a_view_gets_the_generic_report(tmp_path: Path) -> None:
    spec = dataclasses.replace(load_spec("countdown"), evaluation=None)
    assert type(load_view(spec)) is EvaluationView
    result = countdown_eval(load_view(spec))
    result.spec = spec
    report = write_eval_report(result, tmp_path)
    text = report.read_text()
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["models"][0]["episodes"][0]["details"]["numbers"] == [3, 9, 7]  # kept as given
    assert "| base | `/runs/base` | 2 / 7 | 28.6% |" in text
    assert "| trained | `/runs/trained` | 4 / 7 | 57.1% |" in text
    assert "| **Total** | **7** |" in text and "![Buckets](buckets.png)" in text
    rows = re.findall(r"^\| (\d+) \| ([✓✗] \w+) \| ([✓✗] \w+) \| ([a-z ]+) \|$", text, re.M)
    assert len(rows) == 7
    assert ("0", "✗ failed", "✓ solved", "fixed") in rows
    assert ("6", "✓ solved", "✗ failed", "regressed") in rows
    assert "## Sample transcripts" in text and "assistant: ..." in text
    assert "3, 9, 7" not in text  # no game columns without the view


def wordle_record(
    seed: int,
    words: list[str],
    won: bool,
    invalid: int,
    ended: str,
    transcript_calls: bool = True,
) -> EpisodeRecord:
    guesses = [
        {"word": w, "feedback": "GGGGG" if won and w == words[-1] else "XYXGX"} for w in words
    ]
    transcript: list[dict[str, Any]] = [{"role": "user", "content": "You are playing."}]
    if transcript_calls:
        call = {"type": "function", "function": {"name": "guess", "arguments": {"word": "crane"}}}
        transcript += [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "name": "guess", "content": "C R A N E\nX Y X G X"},
        ]
    else:
        transcript.append({"role": "assistant", "content": "I cannot play."})
    calls = len(words) + invalid
    answer = "crane" if ended in ("solved", "failed") else None
    details = {"answer": answer, "guesses": guesses, "invalid": invalid}
    return EpisodeRecord(
        seed, 0, won, float(won), calls + 1, calls + 1, 1, ended,  # type: ignore[arg-type]
        transcript=transcript, details=details,
    )  # fmt: skip


def wordle_eval() -> Evaluation:
    spec = load_spec("wordle")
    base = ModelResult("base", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-1.7B")
    base.records = [
        wordle_record(0, ["slate"] * 6, False, 2, "failed"),
        wordle_record(1, [], False, 0, "no_tool_call", transcript_calls=False),
        wordle_record(2, ["slate"], False, 0, "stopped"),
    ]
    trained = ModelResult("trained", "runs/wordle", "runs/wordle/checkpoint-8")
    trained.records = [
        wordle_record(0, ["slate", "crane"], True, 1, "solved"),
        wordle_record(1, ["a"] * 4, True, 0, "solved"),
        wordle_record(2, ["slate"], False, 0, "max_turns"),
    ]
    settings = {"max_new_tokens": 256, "temperature": 0.0, "reset": {}, "max_turns": 12}
    settings["instruction"] = spec.instruction
    return Evaluation(spec, "tools", "eval", 0, 3, 1, settings, [base, trained], load_view(spec))


def test_wordle_report_agrees_with_results_json(tmp_path: Path) -> None:
    report = write_eval_report(wordle_eval(), tmp_path)
    for name in ("report.md", "results.json", "guesses.png", "win_rates.png", "buckets.png"):
        assert (tmp_path / name).is_file(), name
    data = json.loads((tmp_path / "results.json").read_text())
    text = report.read_text()
    base, trained = data["models"]
    lost = {"1": 0, "2": 0, "3": 0, "4": 0, "5": 0, "6": 0}
    assert base["distribution"] == lost | {"lost": 1, "unfinished": 2}
    assert trained["distribution"]["2"] == trained["distribution"]["4"] == 1
    assert trained["distribution"]["unfinished"] == 1
    assert trained["mean_guesses_on_wins"] == 3.0 and base["mean_guesses_on_wins"] is None
    assert base["invalid_rate"] == 2 / 9 and base["invalid"] == 2 and base["judged_guesses"] == 9
    assert "| Model | Loaded from | Won | Win rate | Mean guesses (wins) | Invalid moves |" in text
    assert (
        "| trained | `runs/wordle/checkpoint-8` | 2 / 3 | 66.7% | 3.00 | 12.5% (1 / 8) | 3 / 11 |"
        in text
    )
    assert "| base | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 2 |" in text
    assert "### trained, seed 0: won in 2 (answer: crane)" in text
    assert "### base, seed 0: lost (answer: crane)" in text
    assert '→ guess({"word": "crane"})' in text
    assert "played through the `guess` tool of `WordleToolEnv`, at most 12 replies" in text


def test_wordle_report_does_not_contradict_itself(tmp_path: Path) -> None:
    """A game the server ended unsolved is lost in both tables; "no tool call" is said only of
    an episode that made none (a reply without a call after calls is "stopped")."""
    text = write_eval_report(wordle_eval(), tmp_path).read_text()
    ended = text[text.index("## How games ended") :].split("\n\n")[1].splitlines()
    header = [c.strip() for c in ended[0].strip("|").split("|")]
    assert header == ["Model", "won", "lost", "stopped", "no tool call", "broken call", "max turns"]
    rows = {line.split("|")[1].strip(): line for line in ended[2:]}
    assert rows["base"] == "| base | 0 | 1 | 1 | 1 | 0 | 0 |"
    assert rows["trained"] == "| trained | 2 | 0 | 0 | 0 | 0 | 1 |"
    data = json.loads((tmp_path / "results.json").read_text())
    for model in data["models"]:
        endings = [e["ended"] for e in model["episodes"]]
        assert model["distribution"]["lost"] == endings.count("failed")
        for episode in model["episodes"]:
            if episode["ended"] == "no_tool_call":
                assert not any(m.get("tool_calls") for m in episode["transcript"])


def test_sampled_results_show_pass_at_k(tmp_path: Path) -> None:
    result = countdown_eval()
    result.samples = 2
    result.settings["temperature"] = 0.7
    for model in result.models:
        model.samples = 2
        model.records = [
            r for first in model.records for r in (first, dataclasses.replace(first, sample=1))
        ]
    model = result.models[0]
    model.records[1] = dataclasses.replace(model.records[1], solved=True)  # seed 0, 2nd sample
    data = result.to_dict()
    base = data["models"][0]
    assert (base["solved"], base["pass_at_1"], base["pass_at_k"]) == (2, 5 / 14, 3 / 7)
    assert data["bucket_counts"]["fixed"] == 3  # buckets read the first samples
    text = write_eval_report(result, tmp_path).read_text()
    assert "each played 2 times, sampling at temperature 0.7" in text
    assert (
        "| Pass@1 | Pass@2 |" in text
        and "| base | `/runs/base` | 2 / 7 | 28.6% | 35.7% | 42.9% |" in text
    )
    assert "Buckets compare each episode's first sample." in text


def test_print_summary(capsys: pytest.CaptureFixture[str]) -> None:
    from rich.console import Console

    console = Console(width=120, force_terminal=False)
    print_summary(countdown_eval(), console)
    print_summary(wordle_eval(), console)
    out = capsys.readouterr().out
    assert "2/7" in out and "4/7" in out and "fixed 3" in out and "regressed 1" in out
    assert "2/3" in out and "3.00" in out and "won" in out


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


def _rate_axis(figure_png: Path, rows: list[dict[str, Any]], monkeypatch: Any) -> Any:
    """The solve-rate axes ``plot_training`` draws for these metrics rows."""
    from matplotlib.figure import Figure

    drawn: list[Any] = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: drawn.append(self))
    metrics = figure_png.with_suffix(".jsonl")
    metrics.write_text("\n".join(json.dumps(row) for row in rows))
    plot_training(metrics, figure_png)
    (figure,) = drawn
    return figure.axes[1]


def test_plot_training_names_the_rate_as_the_games_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wordle = _rate_axis(
        tmp_path / "a.png",
        [{"step": 1, "reward": 0.1, "solve_rate": 0.5, "rewards/wordle_correct/mean": 0.5}],
        monkeypatch,
    )
    assert wordle.get_ylabel() == "win rate (%)" and len(wordle.lines) == 1
    countdown = _rate_axis(
        tmp_path / "b.png",
        [{"step": 1, "reward": 0.1, "solve_rate": 0.5, "rewards/countdown_correct/mean": 0.5}],
        monkeypatch,
    )
    assert countdown.get_ylabel() == "solve rate (%)"
    row = {"step": 1, "reward": 0.1, "solve_rate": 0.5}
    row |= {"solve_rate/wordle": 0.25, "solve_rate/countdown": 0.75}
    mixed = _rate_axis(tmp_path / "c.png", [row, row | {"step": 2}], monkeypatch)
    assert mixed.get_ylabel() == "solve rate (%)"
    assert sorted(line.get_label() for line in mixed.lines) == ["countdown", "wordle"]


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
    assert data["mode"] == "answer" and data["samples"] == 1
    assert all(len(r["details"]["numbers"]) == 4 for m in data["models"] for r in m["episodes"])
    report = (out / "report.md").read_text()
    assert "reset with `n_numbers=4`, `max_num=20`" in report
    assert "tiny offline model checks the pipeline" in report
    assert (out / "report.md").is_file() and (out / "buckets.png").is_file()


def test_eval_command_lists_every_registered_game() -> None:
    from env_servers.core.registry import game_names

    result = CliRunner().invoke(main, ["eval", "--help"])
    assert result.exit_code == 0
    for game in game_names():
        assert game in result.output
    result = CliRunner().invoke(main, ["eval", "nosuchgame", "-m", "tiny"])
    assert result.exit_code != 0 and "Unknown game 'nosuchgame'" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "./no/such/model", "--url", "{url}"], "Error: No such model directory"),
        (["-m", "{tiny}", "--url", "http://127.0.0.1:9"], "Error: Cannot reach http://127.0.0.1:9"),
        (["-m", "{tiny}", "-m", "{tiny}", "-m", "{tiny}", "--url", "{url}"], "twice"),
        (["-m", "{tiny}", "--url", "{url}", "--reset", "oops"], "expected FIELD=VALUE"),
        (["-m", "{tiny}", "--url", "{url}", "--reset", "colour=1"], "Error: "),
        (["-m", "{tiny}", "--url", "{url}", "--samples", "2"], "--temperature above 0"),
        (["-m", "{tiny}", "--url", "{url}", "--mode", "chat"], "'chat' is not one of"),
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
