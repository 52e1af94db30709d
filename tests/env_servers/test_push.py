"""``arenagym push``: the staged Space, OpenEnv's checks of it, and the exact Hub calls.

The Hub is not reachable from the test machines: the upload goes to a local HTTP endpoint
standing in for it (``HF_ENDPOINT``), which records what ``huggingface_hub`` sends.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import yaml
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.openenv10 import run_script

SPACE = "alice/wordle-arena"
TOKEN = "hf_test_token_not_real"
SECRET = "s3cret-value-never-in-files"


def arenagym(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "env_servers", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("space") / "wordle"
    result = arenagym("push", "wordle", "--space", SPACE, "--dry-run", str(folder))
    assert result.returncode == 0, result.stderr
    assert "nothing uploaded" in result.stdout
    return folder


def front_matter(readme: str) -> dict[str, Any]:
    _, head, _ = readme.split("---", 2)
    data: dict[str, Any] = yaml.safe_load(head)
    return data


def test_dry_run_stages_a_docker_build_context(staged: Path) -> None:
    names = {path.relative_to(staged).as_posix() for path in staged.rglob("*") if path.is_file()}
    assert {"Dockerfile", "README.md", "openenv.yaml", "pyproject.toml", "__init__.py"} <= names
    assert "client.py" in names
    wheels = [name for name in names if name.startswith("wheels/")]
    assert len(wheels) == 1 and wheels[0].startswith("wheels/arenagym-")
    dockerfile = (staged / "Dockerfile").read_text()
    assert "USER user" in dockerfile and "COPY wheels" in dockerfile
    assert "ARENAGYM_PORT=8000" in dockerfile and "ARENAGYM_GAME=wordle" in dockerfile
    meta = front_matter((staged / "README.md").read_text())
    assert meta["sdk"] == "docker" and meta["app_port"] == 8000
    assert {"openenv", "arenagym", "wordle"} <= set(meta["tags"])
    card = (staged / "README.md").read_text()
    assert (
        "`guess(word: string)`" in card and 'WordleClient.from_space("alice/wordle-arena")' in card
    )
    manifest = yaml.safe_load((staged / "openenv.yaml").read_text())
    assert manifest["name"] == "wordle" and manifest["port"] == 8000
    assert manifest["validation"]["capabilities"]["declared_tools"] == ["guess"]
    assert "https://alice-wordle-arena.hf.space" in (staged / "client.py").read_text()


def test_a_family_game_installs_the_extra_its_games_need(tmp_path: Path) -> None:
    """A TextArena game's image installs ``arenagym[textarena]``; a built-in game's does not."""
    folder = tmp_path / "mastermind"
    space = ["--space", "alice/mastermind", "--dry-run", str(folder)]
    result = arenagym("push", "textarena:Mastermind-v0", *space)
    assert result.returncode == 0, result.stderr
    dockerfile = (folder / "Dockerfile").read_text()
    (wheel,) = (folder / "wheels").glob("arenagym-*.whl")
    assert f'"/tmp/wheels/{wheel.name}[textarena]"' in dockerfile
    assert "ARENAGYM_GAME=textarena:Mastermind-v0" in dockerfile
    assert "`move(move: string)`" in (folder / "README.md").read_text()


def test_a_builtin_game_installs_no_extra(staged: Path) -> None:
    (wheel,) = (staged / "wheels").glob("arenagym-*.whl")
    assert (
        f"install --no-cache-dir /tmp/wheels/{wheel.name} \\" in (staged / "Dockerfile").read_text()
    )


def test_dry_run_refuses_a_folder_in_use(staged: Path) -> None:
    result = arenagym("push", "wordle", "--space", SPACE, "--dry-run", str(staged))
    assert result.returncode != 0 and "not empty" in result.stderr


def test_unknown_game_and_bad_secret_say_what_to_do(tmp_path: Path) -> None:
    unknown = arenagym("push", "nope", "--space", SPACE, "--dry-run", str(tmp_path / "x"))
    assert unknown.returncode != 0 and "Registered games" in unknown.stderr
    bad = arenagym("push", "wordle", "--space", SPACE, "--secret", "novalue")
    assert bad.returncode != 0 and "KEY=VALUE" in bad.stderr and "novalue" not in bad.stderr


@pytest.mark.openenv
def test_openenv_accepts_the_staged_folder(staged: Path) -> None:
    """``openenv validate DIR --level static`` and the structure check of ``openenv push``."""
    seen = run_script("package_checks", str(staged))
    assert seen["validate_exit"] == 0, seen["validate_output"]
    assert "PASS  static.manifest" in seen["validate_output"]
    assert seen["push_structure"] == "ok", seen["push_structure"]


# -- the upload, against a stand-in for the Hub -----------------------------------------------


class FakeHub:
    """Answers the Hub API calls an upload makes, and records them."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.app = FastAPI()
        self.app.add_api_route("/{path:path}", self.answer, methods=["GET", "POST", "PUT"])

    async def answer(self, request: Request, path: str) -> JSONResponse:
        body = await request.body()
        call = {
            "method": request.method,
            "path": "/" + path,
            "authorization": request.headers.get("authorization"),
            "body": body.decode(errors="replace"),
        }
        self.calls.append(call)
        if path == "api/repos/create":
            data = json.loads(body)
            url = f"{request.base_url}spaces/{data['organization']}/{data['name']}"
            return JSONResponse({"url": url, "name": f"{data['organization']}/{data['name']}"})
        if path == "api/validate-yaml":
            return JSONResponse({"errors": [], "warnings": []})
        if path.endswith("/preupload/main"):
            files = json.loads(body)["files"]
            modes = [
                {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files
            ]
            return JSONResponse({"files": modes, "commitOid": "0" * 40})
        if path.endswith("/commit/main"):
            oid, repo = "1" * 40, path.removeprefix("api/").removesuffix("/commit/main")
            return JSONResponse(
                {"commitUrl": f"{request.base_url}{repo}/commit/{oid}", "commitOid": oid}
            )
        if path.endswith("/secrets"):
            return JSONResponse({})
        return JSONResponse({"error": f"unexpected call {path}"}, status_code=404)


@pytest.fixture
def fake_hub() -> Iterator[tuple[FakeHub, str]]:
    hub = FakeHub()
    server = uvicorn.Server(uvicorn.Config(hub.app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield hub, f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    server.should_exit = True
    thread.join(timeout=10)


def test_push_makes_the_exact_hub_calls(fake_hub: tuple[FakeHub, str], staged: Path) -> None:
    hub, endpoint = fake_hub
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(HF_ENDPOINT=endpoint, HF_HUB_DISABLE_TELEMETRY="1", NO_PROXY="127.0.0.1")
    env.pop("HF_HUB_OFFLINE", None)
    args = ["push", "wordle", "--space", SPACE, "--private", "--token", TOKEN]
    args += ["--hardware", "cpu-upgrade", "--auth-token", SECRET, "--secret", "OTHER=x"]
    result = arenagym(*args, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert SECRET not in result.stdout + result.stderr and TOKEN not in result.stdout
    assert (
        "WordleClient.from_space(\"alice/wordle-arena\", auth_token=os.environ['ARENAGYM_AUTH_TOKEN'])"
        in result.stdout
    )

    unexpected = [call["path"] for call in hub.calls if "unexpected" in json.dumps(call)]
    assert not unexpected
    assert all(call["authorization"] == f"Bearer {TOKEN}" for call in hub.calls)
    create = next(call for call in hub.calls if call["path"] == "/api/repos/create")
    created = json.loads(create["body"])
    # huggingface_hub 2.x says "visibility": "private" where 0.x/1.x said "private": true
    privacy = {
        "visibility": created.pop("visibility", None),
        "private": created.pop("private", None),
    }
    assert privacy in (
        {"visibility": "private", "private": None},
        {"visibility": None, "private": True},
    )
    assert created == {
        "name": "wordle-arena",
        "organization": "alice",
        "type": "space",
        "sdk": "docker",
        "hardware": "cpu-upgrade",
    }
    commit = next(call for call in hub.calls if call["path"].endswith("/commit/main"))
    assert commit["path"] == "/api/spaces/alice/wordle-arena/commit/main"
    lines = [json.loads(line) for line in commit["body"].splitlines() if line.strip()]
    files = {line["value"]["path"]: line["value"] for line in lines if line["key"] == "file"}
    expected = {p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file()}
    assert set(files) == expected
    uploaded = b"".join(base64.b64decode(f["content"]) for f in files.values())
    assert SECRET.encode() not in uploaded and TOKEN.encode() not in uploaded
    secrets = [call for call in hub.calls if call["path"].endswith("/secrets")]
    assert [json.loads(call["body"]) for call in secrets] == [
        {"key": "OTHER", "value": "x"},
        {"key": "ARENAGYM_AUTH_TOKEN", "value": SECRET},
    ]
    assert [call["path"] for call in hub.calls].index(create["path"]) == 0
