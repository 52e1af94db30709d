"""``arenagym new``: the package it writes installs, registers its game, and then every command
serves, plays, trains and evaluates that game with no edits.

The package is installed with pip into a folder of its own that only the subprocesses see (on
their ``PYTHONPATH``), so its entry point never reaches this process's registry or the other
tests: everything the game does here runs through ``arenagym`` commands and subprocesses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from clients.local_server import free_port, wait_healthy
from clients.local_server import stop as stop_server
from env_servers.scaffold.generate import GameNames, ScaffoldError, render, write_game
from tests.commands import run

ARENAGYM = [sys.executable, "-m", "env_servers"]
GAME = "scaffolded-game"


# -- names and folders (fast) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Hi-Lo", "cannot name a game"),
        ("2048", "cannot name a game"),
        ("hi--lo", "cannot name a game"),
        ("a" * 41, "cannot name a game"),
        ("class", "Python keyword"),
        ("wordle", "already registered"),
        ("json", "already importable"),
    ],
)
def test_bad_names_are_refused_saying_why(name: str, message: str) -> None:
    with pytest.raises(ScaffoldError, match=message):
        GameNames.of(name)


def test_names_are_spelled_for_each_use() -> None:
    names = GameNames.of("number-guess")
    assert (names.package, names.class_prefix, names.constant) == (
        "number_guess",
        "NumberGuess",
        "NUMBER_GUESS",
    )
    assert names.distribution == "arenagym-number-guess" and names.title == "Number Guess"


def test_every_template_renders_to_valid_python_and_toml() -> None:
    import tomllib

    files = render(GameNames.of("number-guess"))
    assert {"pyproject.toml", "README.md", "number_guess/spec.py", "number_guess/py.typed"} <= {
        str(path) for path in files
    }
    for path, text in files.items():
        assert "${" not in text and "__package__" not in str(path), path
        if path.suffix == ".py":
            compile(text, str(path), "exec")
    entry_points = tomllib.loads(files[Path("pyproject.toml")])["project"]["entry-points"]  # type: ignore[index]
    assert entry_points == {"arenagym.envs": {"number-guess": "number_guess.spec:NUMBER_GUESS"}}


def test_the_command_refuses_a_folder_in_use_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "arenagym-number-guess").mkdir()
    (tmp_path / "arenagym-number-guess" / "notes.txt").write_text("mine")
    result = subprocess.run(
        [*ARENAGYM, "new", "number-guess", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2 and "is not an empty folder" in result.stderr
    assert [p.name for p in (tmp_path / "arenagym-number-guess").iterdir()] == ["notes.txt"]
    with pytest.raises(ScaffoldError, match="cannot name a game"):
        write_game("Bad Name", tmp_path / "elsewhere")
    assert not (tmp_path / "elsewhere").exists()


# -- the package, installed (slow) --------------------------------------------------------------


@dataclass(frozen=True)
class Installed:
    folder: Path
    """The package's source folder, as ``arenagym new`` wrote it."""
    env: dict[str, str]
    """The environment of a process that sees the installed game."""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """``arenagym new`` then ``pip install`` into a folder of its own (no index needed: the
    package depends only on arenagym, which is installed)."""
    root = tmp_path_factory.mktemp("scaffold")
    written = run([*ARENAGYM, "new", GAME, "--dir", str(root)], timeout=60)
    folder = root / f"arenagym-{GAME}"
    assert f"pip install -e {folder}" in written.stdout
    site = root / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    run([*pip, "--target", str(site), str(folder)], timeout=300)
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1"}
    listed = run([*ARENAGYM, "serve", "--list"], env=env, timeout=60).stdout
    assert f"{GAME}\tscaffolded_game.spec:SCAFFOLDED_GAME" in listed
    yield Installed(folder, env)


@pytest.mark.slow
def test_the_package_is_lint_clean_and_its_own_tests_pass(installed: Installed) -> None:
    ruff = [sys.executable, "-m", "ruff"]
    run([*ruff, "check", "--no-cache", "."], cwd=installed.folder, timeout=60)
    run([*ruff, "format", "--check", "--no-cache", "."], cwd=installed.folder, timeout=60)
    pytest_command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    result = run(pytest_command, env=installed.env, cwd=installed.folder, timeout=300)
    assert "4 passed" in result.stdout


@pytest.mark.slow
def test_the_package_passes_the_checker(installed: Installed) -> None:
    run([*ARENAGYM, "check", GAME], env=installed.env, timeout=300)


PLAY = textwrap.dedent(
    """
    import json, sys
    from scaffolded_game.client import ScaffoldedGameClient

    played = {}
    for transport in ("websocket", "http"):
        with ScaffoldedGameClient.from_url(sys.argv[1], transport=transport) as client:
            result = client.reset(seed=5, split="eval")
            hidden = client.state().answer
            invalid = client.step({"guess": 0}).observation
            low, high = result.observation.lowest, result.observation.highest
            while not result.done:
                middle = (low + high) // 2
                result = client.step({"guess": middle})
                if result.observation.hint == "higher":
                    low = middle + 1
                elif result.observation.hint == "lower":
                    high = middle - 1
            played[transport] = {
                "hidden": hidden,
                "invalid": [invalid.invalid_move, invalid.guesses_left, invalid.reason],
                "won": result.observation.won,
                "reward": result.reward,
                "answer": client.state().answer,
            }
    print(json.dumps(played))
    """
)


@pytest.fixture(scope="module")
def served(installed: Installed) -> Iterator[str]:
    """``arenagym serve GAME`` on a free port, as a user starts it."""
    port = free_port()
    command = [*ARENAGYM, "serve", GAME, "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        command, env=installed.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, 60, lambda: None if process.poll() is None else "exited")
        yield url
    finally:
        stop_server(process)  # type: ignore[arg-type]
        if process.stderr is not None:
            process.stderr.close()


@pytest.mark.slow
def test_served_it_plays_over_websocket_http_mcp_web_and_the_terminal(
    installed: Installed, served: str
) -> None:
    played = json.loads(
        run([sys.executable, "-c", PLAY, served], env=installed.env, timeout=60).stdout
    )
    assert played["websocket"] == played["http"]  # the same seed, the same episode
    episode = played["http"]
    assert episode["hidden"] is None and episode["won"] and episode["reward"] == 1.0
    assert episode["invalid"] == [True, 10, "0 is not between 100 and 999."]
    assert episode["answer"] % 5 == 0  # the held-out pool

    with httpx.Client(base_url=served, trust_env=False, timeout=10) as http:
        assert http.get("/metadata").json()["name"] == GAME
        assert http.get("/web/").status_code == 200
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        (tool,) = http.post("/mcp", json=body).json()["result"]["tools"]
        assert tool["name"] == "guess" and tool["inputSchema"]["required"] == ["number"]

    terminal = run(
        [*ARENAGYM, "play", GAME, "--url", served, "--seed", "1"],
        env=installed.env,
        input="500\nfive hundred\n:q\n",
        timeout=60,
    ).stdout
    assert "500: the number is" in terminal and "not a valid guess" in terminal


@pytest.mark.slow
def test_it_trains_two_steps_and_evaluates(
    installed: Installed, tiny_model: Path, tmp_path: Path
) -> None:
    """The package's own tiny config, on a tiny model built before the game was installed
    (the same model the other tests use: rebuilding one for this game would cost a minute)."""
    output = tmp_path / "run"
    train = [*ARENAGYM, "train", "--config", str(installed.folder / "train-tiny.yaml")]
    train += ["--model", str(tiny_model), "--output-dir", str(output)]
    run(train, env=installed.env, timeout=300)
    steps = [
        json.loads(line)["step"] for line in (output / "metrics.jsonl").read_text().splitlines()
    ]
    assert steps == [1, 2] and (output / "model.safetensors").exists()

    report = tmp_path / "eval"
    evaluate = [*ARENAGYM, "eval", GAME, "--model", str(output), "--episodes", "2"]
    evaluate += ["--max-turns", "2", "--max-new-tokens", "48", "--output-dir", str(report)]
    run(evaluate, env=installed.env, timeout=300)
    results = json.loads((report / "results.json").read_text())
    assert len(results["models"][0]["episodes"]) == 2, results
    assert "2 games (seeds 0–1)" in (report / "report.md").read_text()
