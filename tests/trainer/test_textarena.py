"""A TextArena game through the trainer and the evaluator, named as any game is:
``textarena:<ENV_ID>`` in a config, a ``--<game>-url`` override and ``arenagym eval``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live import LiveServer, live_server
from trainer.config import load_config, parse_override

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "configs" / "tiny-offline.yaml"
GAME = "textarena:GuessTheNumber-v0"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live_server(GAME) as running:
        yield running


def test_a_config_names_a_textarena_game_and_its_server() -> None:
    url = "http://127.0.0.1:9"
    # `--textarena:GuessTheNumber-v0-url` reaches the config with its dashes as underscores
    name = "textarena:GuessTheNumber_v0_url"
    config = load_config(TINY, game=GAME, **{name: parse_override(name, url)})
    assert config.url == url and config.server_url(GAME) == url
    assert config.reward_weights(GAME) == {"solved": 1.0, "progress": 0.5}
    os.environ.pop("ARENAGYM_TEXTARENA_GUESSTHENUMBER_V0_URL", None)
    unlisted = load_config(TINY, game="textarena:Mastermind-v0-hard")  # TextArena has it
    assert unlisted.game_list == ["textarena:Mastermind-v0-hard"]
    with pytest.raises(ValueError, match="game must be one of"):
        load_config(TINY, game="textarena:NoSuchGame-v0")


@pytest.mark.slow
def test_trains_two_steps_then_evaluates(
    tiny_model: Path, server: LiveServer, tmp_path: Path
) -> None:
    from trainer.train import train

    before = server.sessions.counters.resets
    output = tmp_path / "train"
    config = load_config(
        TINY,
        game=GAME,
        output_dir=str(output),
        max_steps=2,
        save_steps=2,
        episodes=8,
        max_completion_length=48,
        url=server.url,
    )
    train(config)
    rows = [json.loads(line) for line in (output / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 2]
    assert "rewards/textarena:GuessTheNumber-v0_solved/mean" in rows[-1]
    assert server.sessions.counters.resets - before >= 8  # episodes were played on the server

    report = tmp_path / "eval"
    command = [sys.executable, "-m", "env_servers", "eval", GAME, "--model", str(output)]
    options = ["--url", server.url, "--episodes", "2", "--max-turns", "2", "-o", str(report)]
    result = subprocess.run(
        [*command, *options, "--max-new-tokens", "24"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads((report / "results.json").read_text())
    assert data["game"] == GAME and data["episodes"] == 2
