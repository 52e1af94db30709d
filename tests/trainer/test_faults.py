"""A game server SIGKILLed and restarted on its port in the middle of a GRPO run: the
rollouts it takes down score 0 and are counted and logged, later rollouts reconnect, and the
run finishes with every checkpoint."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import pytest

from benchmarks.procs import ServerProcess, running_server
from clients.agent import GameAgent
from tests.trainer.test_train import TINY, steps_in
from trainer.checkpoints import last_complete_checkpoint
from trainer.config import load_config

STEPS = 4


def _wait_for(condition: object, what: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.05)


class Fault(threading.Thread):
    """Kills the server once the first step is logged, and restarts it once a rollout was
    lost, so the outage surely spans requests of the run."""

    def __init__(self, server: ServerProcess, metrics: Path) -> None:
        super().__init__(daemon=True)
        self.server, self.metrics = server, metrics
        self.lost_before = GameAgent.lost_episodes
        self.error: BaseException | None = None
        self.killed_after = self.restarted_at_loss = 0

    def run(self) -> None:
        try:
            _wait_for(lambda: self.metrics.exists() and steps_in(self.metrics), "step 1")
            self.killed_after = max(steps_in(self.metrics))
            self.server.kill()
            _wait_for(lambda: GameAgent.lost_episodes > self.lost_before, "a lost rollout")
            self.restarted_at_loss = GameAgent.lost_episodes - self.lost_before
            self.server.restart()
        except BaseException as error:
            self.error = error


@pytest.mark.slow
@pytest.mark.parametrize("game", ["countdown", "wordle"])  # answer mode; tools through TRL
def test_training_goes_on_when_its_server_is_killed_and_restarted(
    game: str, tiny_model: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from trainer.train import train

    output = tmp_path / game
    with running_server("ours", max_sessions=64, game=game) as server:
        config = load_config(
            TINY,
            game=game,
            output_dir=str(output),
            max_steps=STEPS,
            save_steps=1,
            episodes=8,
            max_completion_length=32,
            **{f"{game}_url": server.http_url},
        )
        fault = Fault(server, output / "metrics.jsonl")
        fault.start()
        with caplog.at_level("WARNING", logger="arenagym.agent"):
            train(config)
        fault.join(timeout=60)
        assert fault.error is None, fault.error
        assert server.process.poll() is None, "the restarted server is still up"

    lost = GameAgent.lost_episodes - fault.lost_before
    assert lost >= fault.restarted_at_loss > 0
    assert f"{game} episode lost, scored 0" in caplog.text
    assert steps_in(output / "metrics.jsonl") == list(range(1, STEPS + 1))
    records = [json.loads(line) for line in (output / "metrics.jsonl").read_text().splitlines()]
    lost_share = [r[f"rewards/{game}_lost/mean"] for r in records]
    assert lost_share[0] == 0.0 and any(share > 0 for share in lost_share), lost_share
    assert lost_share[-1] == 0.0, f"the last step still lost rollouts: {lost_share}"
    for checkpoint in output.glob("checkpoint-*"):  # those the run kept, each complete
        assert json.loads((checkpoint / "trainer_state.json").read_text())["global_step"] > 0
    assert last_complete_checkpoint(output) == output / f"checkpoint-{STEPS}"
    assert (output / "model.safetensors").exists()


@pytest.mark.slow
def test_training_carries_on_over_sockets_closed_for_idleness(
    tiny_model: Path, tmp_path: Path
) -> None:
    """TRL keeps its environments' sockets open and silent between steps: a server closing
    them for idleness (here after 0.1 s) loses no session and no episode; the clients resume."""
    from trainer.train import train

    lost_before = GameAgent.lost_episodes
    options = ["--idle-timeout", "0.1", "--session-ttl", "600"]
    with running_server("ours", max_sessions=64, game="wordle", options=options) as server:
        config = load_config(
            TINY,
            game="wordle",
            output_dir=str(tmp_path / "run"),
            max_steps=2,
            episodes=8,
            max_completion_length=32,
            wordle_url=server.http_url,
        )
        train(config)
        health = httpx.get(f"{server.http_url}/health", trust_env=False).json()
    assert health["sockets_idle_closed"] > 0, health
    assert health["errors"] == 0 and GameAgent.lost_episodes == lost_before, health
    assert steps_in(tmp_path / "run" / "metrics.jsonl") == [1, 2]
