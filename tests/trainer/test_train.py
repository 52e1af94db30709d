"""``arenagym train``: config validation, overrides, both games on live servers, kill and
resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.live import LiveServer
from trainer.checkpoints import last_complete_checkpoint
from trainer.config import TrainConfig, load_config

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "configs" / "tiny-offline.yaml"
ARENAGYM = [sys.executable, "-m", "env_servers"]


def steps_in(metrics: Path) -> list[int]:
    return [json.loads(line)["step"] for line in metrics.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"game": "chess"}, "game must be one of countdown, wordle"),
        ({"num_generations": 3, "per_device_train_batch_size": 8}, "multiple of num_generations"),
        ({"num_generations": 1}, "at least 2"),
        ({"backend": "vllm-colocate", "model": "tiny"}, "needs a GPU"),
        ({"push_to_hub": True}, "hub_model_id"),
        ({"game": "countdown", "rewards": {"greens": 1.0}}, "unknown reward"),
        ({"learning_rate": 0}, "learning_rate must be positive"),
    ],
)
def test_invalid_configs_fail_early_and_say_what_to_change(
    overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        TrainConfig(**{"game": "countdown", **overrides})  # type: ignore[arg-type]


def test_shipped_configs_load() -> None:
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        config = load_config(path)
        assert all(config.reward_weights(game) for game in config.game_list)
    wordle = load_config(ROOT / "configs" / "wordle-qwen3-1.7b.yaml")
    assert wordle.reward_weights("wordle") == {
        "correct": 3.0,
        "greens": 1.0,
        "yellows": 0.5,
        "repetition": 1.5,
    }
    assert (wordle.num_generations, wordle.learning_rate, wordle.gradient_accumulation_steps) == (
        2,
        1e-6,
        48,
    )
    countdown = load_config(ROOT / "configs" / "countdown-qwen2.5-0.5b.yaml", max_steps=3)
    assert countdown.max_steps == 3 and countdown.lora and countdown.beta == 0.005
    with pytest.raises(ValueError, match="Unknown config field"):
        load_config(TINY, no_such_field=1)


def test_exponent_floats_read_as_numbers(tmp_path: Path) -> None:
    """``2e-6`` is a learning rate in a config file and on the command line alike (YAML 1.1,
    PyYAML's default, reads it as text)."""
    from trainer.config import parse_override

    config = tmp_path / "run.yaml"
    config.write_text("game: countdown\nlearning_rate: 2e-6\nbeta: 4E-2\n")
    loaded = load_config(config)
    assert (loaded.learning_rate, loaded.beta) == (2e-6, 0.04)
    assert parse_override("learning_rate", "1e-5") == 1e-5
    assert parse_override("max_steps", "3") == 3
    assert parse_override("output_dir", "1e-5x") == "1e-5x"


def test_cli_rejects_bad_overrides_without_a_traceback() -> None:
    result = subprocess.run(
        [*ARENAGYM, "train", "--config", str(TINY), "--num-generations", "3"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "multiple of num_generations" in result.stderr
    assert "Traceback" not in result.stderr
    result = subprocess.run(
        [*ARENAGYM, "train", "--config", str(TINY), "--bogus-field", "1"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "Unknown config field 'bogus_field'" in result.stderr
    for args, message in (
        (["--max-step", "3"], "Did you mean --max-steps?"),
        (["--learning-rate", "fast"], "learning_rate must be a number, not 'fast'"),
        (["--game", "wordel"], "did you mean 'wordle'?"),
    ):
        result = subprocess.run(
            [*ARENAGYM, "train", "--config", str(TINY), *args], capture_output=True, text=True
        )
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    result = subprocess.run([*ARENAGYM, "train"], capture_output=True, text=True)
    assert result.returncode == 2 and "give a config with --config" in result.stderr


def test_model_card_names_the_base_and_the_games(tmp_path: Path) -> None:
    from trainer.model_card import model_card

    local = load_config(TINY, output_dir=str(tmp_path / "run"))
    card = model_card(local, {"step": 4, "reward": 0.5, "solve_rate": 0.25})
    assert "None" not in card and "huggingface.co" not in card and "`tiny`" in card
    assert "**countdown** (answer mode)" in card and "solve rate 25.0%" in card
    assert "not expected to learn" in card
    hub = load_config(ROOT / "configs" / "wordle-qwen3-1.7b.yaml")
    card = model_card(hub)
    assert "base_model: Qwen/Qwen3-1.7B" in card
    assert "[Qwen/Qwen3-1.7B](https://huggingface.co/Qwen/Qwen3-1.7B)" in card


@pytest.mark.slow
def test_train_countdown_and_wordle_on_live_servers(
    tiny_model: Path, countdown_server: LiveServer, wordle_server: LiveServer, tmp_path: Path
) -> None:
    from trainer.train import train

    for game, server in (("countdown", countdown_server), ("wordle", wordle_server)):
        before = server.sessions.counters.resets
        output = tmp_path / game
        config = load_config(
            TINY,
            game=game,
            output_dir=str(output),
            max_steps=2,
            save_steps=1,
            episodes=8,
            max_completion_length=64,
            **{f"{game}_url": server.url},
        )
        train(config)
        assert steps_in(output / "metrics.jsonl") == [1, 2]
        record = json.loads((output / "metrics.jsonl").read_text().splitlines()[-1])
        assert "reward" in record and "solve_rate" in record
        assert last_complete_checkpoint(output) == output / "checkpoint-2"
        assert (output / "model.safetensors").exists()
        assert server.sessions.counters.resets > before  # episodes were played on the server


def test_mixed_runs_key_their_settings_by_game() -> None:
    config = load_config(ROOT / "configs" / "mixed-tiny-offline.yaml", wordle_url="http://w")
    assert config.game_list == ["wordle", "countdown"] and config.mixed
    assert config.urls == {"wordle": "http://w"} and config.url is None
    assert config.mode_for("wordle") == "tools" and config.mode_for("countdown") == "answer"
    assert config.reset_for("countdown") == {"n_numbers": 3, "max_num": 9}
    assert config.reward_weights("countdown") == {"correct": 1.0}
    for overrides, message in (
        ({"reset": {"n_numbers": 3}}, "reset is keyed by game"),
        ({"mode": "tools"}, "mode is keyed by game"),
        ({"mode": {"wordle": "answer"}}, "wordle is played in mode tools"),
        ({"games": ["wordle", "wordle"]}, "listed twice"),
    ):
        with pytest.raises(ValueError, match=message):
            TrainConfig(**{"games": ["wordle", "countdown"], **overrides})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name a game"):
        TrainConfig()


@pytest.mark.slow
def test_one_run_mixes_games_and_trains_on_the_servers_reward(
    tiny_model: Path, countdown_server: LiveServer, wordle_server: LiveServer, tmp_path: Path
) -> None:
    from trainer.train import train

    servers = {"wordle": wordle_server, "countdown": countdown_server}
    before = {game: server.sessions.counters.resets for game, server in servers.items()}
    output = tmp_path / "mixed"
    config = load_config(
        ROOT / "configs" / "mixed-tiny-offline.yaml",
        output_dir=str(output), max_steps=2, save_steps=2, episodes=8, num_generations=2,
        wordle_url=wordle_server.url, countdown_url=countdown_server.url,
    )  # fmt: skip
    train(config)
    records = [json.loads(line) for line in (output / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2]
    # 2 steps of 4 prompts are one pass over the 8 rows: both games played, each rewarded and
    # solve-rated on its own rows
    assert all("solve_rate" in record for record in records)
    logged = {key for record in records for key, value in record.items() if value is not None}
    assert {"solve_rate/wordle", "solve_rate/countdown"} <= logged
    assert {"rewards/wordle_greens/mean", "rewards/countdown_correct/mean"} <= logged
    assert all(server.sessions.counters.resets > before[game] for game, server in servers.items())

    output = tmp_path / "server-reward"
    config = load_config(
        TINY, output_dir=str(output), max_steps=1, episodes=4, server_reward=True,
        countdown_url=countdown_server.url,
    )  # fmt: skip
    train(config)
    (record,) = [json.loads(line) for line in (output / "metrics.jsonl").read_text().splitlines()]
    assert "rewards/countdown_server/mean" in record and "solve_rate" in record
    assert record["reward"] == pytest.approx(record["rewards/countdown_server/mean"])


@pytest.mark.slow
def test_sigterm_stops_training_and_its_local_server(tiny_model: Path, tmp_path: Path) -> None:
    import psutil

    command = [*ARENAGYM, "train", "--config", str(TINY), "--output-dir", str(tmp_path / "run")]
    command += ["--model", str(tiny_model), "--max-steps", "200"]
    env = {k: v for k, v in os.environ.items() if k != "ARENAGYM_COUNTDOWN_URL"}
    trainer = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 120
    servers: list[psutil.Process] = []
    while not servers:  # the local game server it starts
        assert trainer.poll() is None, trainer.stderr.read().decode()  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "no local server appeared"
        children = psutil.Process(trainer.pid).children(recursive=True)
        servers = [c for c in children if "serve" in c.cmdline()]
        time.sleep(0.1)
    trainer.send_signal(signal.SIGTERM)
    assert trainer.wait(timeout=60) == 128 + signal.SIGTERM
    _, alive = psutil.wait_procs(servers, timeout=15)
    assert not alive, "the local server outlived the trainer"


@pytest.mark.slow
def test_killed_training_resumes_from_the_last_complete_checkpoint(
    tiny_model: Path, countdown_server: LiveServer, tmp_path: Path
) -> None:
    output = tmp_path / "run"
    command = [
        *ARENAGYM, "train", "--config", str(TINY), "--output-dir", str(output),
        "--countdown-url", countdown_server.url, "--max-steps", "40", "--save-steps", "3",
    ]  # fmt: skip
    env = (
        {**os.environ, "ARENAGYM_CACHE": str(tiny_model.parent)}
        if "ARENAGYM_CACHE" in os.environ
        else None
    )
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 240
    while not (output / "checkpoint-6" / "trainer_state.json").exists():
        assert first.poll() is None, first.stderr.read().decode()  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.2)
    first.send_signal(signal.SIGKILL)
    first.wait()
    # a checkpoint being written when the process died is set aside, never resumed from
    (output / "checkpoint-99").mkdir()
    resume_point = last_complete_checkpoint(output)
    assert resume_point is not None and resume_point.name.startswith("checkpoint-")
    assert (output / "checkpoint-99.incomplete").exists()
    resumed_at = int(resume_point.name.split("-")[1])

    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"resuming from {resume_point}" in second.stderr
    steps = steps_in(output / "metrics.jsonl")
    assert steps[-1] == 40
    assert resumed_at + 1 in steps[steps.index(resumed_at) + 1 :]  # the count went on from there
    assert (output / "model.safetensors").exists()


def test_vllm_settings_reach_trl() -> None:
    from trainer.train import grpo_args
    from trainer.vllm import serve_command

    colocate = grpo_args(
        TrainConfig(game="wordle", model="Qwen/Qwen3-1.7B", backend="vllm-colocate")
    )
    assert colocate.use_vllm and colocate.vllm_mode == "colocate"
    assert colocate.vllm_gpu_memory_utilization == 0.3
    config = TrainConfig(
        game="wordle", model="Qwen/Qwen3-1.7B", backend="vllm-server", vllm_server_host="10.0.0.5",
        vllm_server_port=8100, vllm_launch=True,
    )  # fmt: skip
    server = grpo_args(config)
    assert server.use_vllm and server.vllm_mode == "server"
    assert (server.vllm_server_host, server.vllm_server_port) == ("10.0.0.5", 8100)
    command = serve_command(config, "Qwen/Qwen3-1.7B")
    assert command[:4] == ["trl", "vllm-serve", "--model", "Qwen/Qwen3-1.7B"]
    assert command[command.index("--port") + 1] == "8100"
    assert not grpo_args(TrainConfig(game="wordle")).use_vllm
    with pytest.raises(ValueError, match="vllm_launch only applies"):
        TrainConfig(game="wordle", model="m", vllm_launch=True)


def test_the_progress_bar_shows_the_step_just_logged(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from trainer.progress import MetricsFile, RichProgress

    metrics = MetricsFile(
        tmp_path / "metrics.jsonl", {"countdown": "rewards/countdown_correct/mean"}
    )
    bar = RichProgress({"countdown": "solved"}, metrics)
    state = SimpleNamespace(is_world_process_zero=True, max_steps=2, global_step=0)
    bar.on_train_begin(None, state, None)
    for step, reward in ((1, 0.25), (2, 1.5)):
        state.global_step = step
        bar.on_step_end(None, state, None)  # the Trainer logs after a step's end
        logs = {"reward": reward, "rewards/countdown_correct/mean": reward / 2}
        for callback in (metrics, bar):
            callback.on_log(None, state, None, logs=logs)
        assert bar.progress is not None
        shown = bar.progress.tasks[0].fields["stats"]
        assert f"reward {reward:.3f}" in shown and f"solved {reward / 2:.0%}" in shown
    bar.on_train_end(None, state, None)
