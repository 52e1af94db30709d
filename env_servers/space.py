"""Stage a game server as a Hugging Face Space: a folder that is a whole Docker build context.

The folder needs nothing from a package index arenagym is not on: it carries the project's
wheel (and a third-party game's), a root ``Dockerfile`` that installs them and serves the game
as a non-root user on the Space's ``app_port``, a ``README.md`` with the Space's front matter
and a card of the game, and the files OpenEnv's own tooling asks of an environment package
(``openenv.yaml``, ``pyproject.toml``, ``__init__.py``, ``client.py``), so ``openenv validate
DIR`` and ``openenv push DIR`` accept it too. No token or secret is ever written here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from importlib.metadata import Distribution
from pathlib import Path
from urllib.parse import unquote, urlparse

from env_servers.core.spec import GameSpec

APP_PORT = 8000
PROJECT = "arenagym"


class StagingError(RuntimeError):
    """The Space could not be staged; the message says what to do."""


def package_name(game: str) -> str:
    """A Python package name for the staged folder (``textarena:2048-v0`` → ``textarena_2048_v0``)."""
    return re.sub(r"\W+", "_", game).strip("_").lower() or "game"


def source_of(distribution: Distribution) -> Path | None:
    """The local source tree an installed distribution came from (PEP 610's
    ``direct_url.json``, or the tree whose ``*.egg-info`` it is), if any."""
    candidates = []
    text = distribution.read_text("direct_url.json")
    if text:
        info = json.loads(text)
        url = urlparse(info.get("url", ""))
        if url.scheme == "file" and "dir_info" in info:
            candidates.append(Path(unquote(url.path)))
    candidates.append(Path(str(distribution.locate_file(""))))
    for path in candidates:
        if (path / "pyproject.toml").exists() or (path / "setup.py").exists():
            return path
    return None


def build_wheel(source: Path, into: Path) -> Path:
    """``pip wheel`` of one source tree, without its dependencies (they come from PyPI): with
    the build backend installed here, else in pip's isolated build environment."""
    output = ""
    for isolation in (["--no-build-isolation"], []):
        with tempfile.TemporaryDirectory() as scratch:
            command = [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation]
            command += ["--disable-pip-version-check", "-q", "-w", scratch, str(source)]
            result = subprocess.run(command, capture_output=True, text=True)
            built = list(Path(scratch).glob("*.whl"))
            if result.returncode == 0 and len(built) == 1:
                target = into / built[0].name
                target.write_bytes(built[0].read_bytes())
                return target
            output = result.stdout + result.stderr
    raise StagingError(
        f"Building a wheel of {source} failed:\n{output[-2000:]}\n"
        "Build it yourself and pass it with --wheel."
    )


def game_distributions(game: str) -> list[Distribution]:
    """arenagym's distribution, and the game's own when a third-party package declares it."""
    from importlib.metadata import distribution

    from env_servers.core.registry import entry_point

    found = [distribution(PROJECT)]
    owner = getattr(entry_point(game), "dist", None)
    if owner is not None and owner.metadata["Name"].lower() != PROJECT:
        found.append(owner)
    return found


def collect_wheels(game: str, into: Path, given: list[Path]) -> list[Path]:
    """The wheels the image installs: ``given`` ones, or ones built from local sources."""
    into.mkdir(parents=True, exist_ok=True)
    if given:
        missing = [str(path) for path in given if not path.is_file() or path.suffix != ".whl"]
        if missing:
            raise StagingError(f"Not a wheel file: {', '.join(missing)}.")
        for path in given:
            (into / path.name).write_bytes(path.read_bytes())
        return [into / path.name for path in given]
    wheels = []
    for dist in game_distributions(game):
        source = source_of(dist)
        if source is None:
            name = dist.metadata["Name"]
            raise StagingError(
                f"{name} was not installed from a local source tree, so its wheel cannot be "
                f"built here: pass its wheel with --wheel (e.g. `pip wheel --no-deps {name}`)."
            )
        wheels.append(build_wheel(source, into))
    return wheels


def project_extras(game: str) -> list[str]:
    """arenagym's extras a game needs: its family's, when arenagym has an extra of that name
    (``textarena:2048-v0`` needs ``arenagym[textarena]``)."""
    from importlib.metadata import distribution

    from env_servers.core.family import split_name

    named = split_name(game)
    provided = distribution(PROJECT).metadata.get_all("Provides-Extra") or []
    return [named[0]] if named is not None and named[0] in provided else []


def install_arguments(game: str, wheels: list[Path]) -> str:
    """What the image's ``pip install`` is given: each wheel, arenagym's with the extras the
    game needs (they come from PyPI, like every dependency)."""
    extras = project_extras(game)
    arguments = []
    for wheel in wheels:
        argument = f"/tmp/wheels/{wheel.name}"
        if extras and wheel.name.lower().startswith(f"{PROJECT}-"):
            argument = f'"{argument}[{",".join(extras)}]"'
        arguments.append(argument)
    return " ".join(arguments)


def dockerfile(game: str, wheels: list[Path]) -> str:
    return f"""\
# The arenagym "{game}" game server, as a Hugging Face Space (Docker SDK).
#   docker build -t {package_name(game)}-space . && docker run --rm -p {APP_PORT}:{APP_PORT} {package_name(game)}-space
ARG BASE_IMAGE=python:3.11-slim
FROM ${{BASE_IMAGE}}
LABEL org.opencontainers.image.title=arenagym-space
ENV PYTHONUNBUFFERED=1 \\
    PIP_DISABLE_PIP_VERSION_CHECK=1 \\
    PIP_ROOT_USER_ACTION=ignore
COPY wheels /tmp/wheels
RUN python -m pip install --no-cache-dir {install_arguments(game, wheels)} \\
 && rm -rf /tmp/wheels \\
 && useradd --create-home --uid 1000 user
# Spaces run the container as uid 1000
USER user
WORKDIR /home/user
ENV ARENAGYM_GAME={game} \\
    ARENAGYM_HOST=0.0.0.0 \\
    ARENAGYM_PORT={APP_PORT}
EXPOSE {APP_PORT}
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \\
    CMD python -c "import os, urllib.request as r; r.build_opener(r.ProxyHandler({{}})).open('http://127.0.0.1:%s/health' % os.environ['ARENAGYM_PORT'], timeout=4)" || exit 1
CMD ["sh", "-c", "exec arenagym serve \\"$ARENAGYM_GAME\\""]
"""


def openenv_yaml(spec: GameSpec) -> str:
    tools = ", ".join(spec.tool_names())
    return f"""\
spec_version: 1
name: {package_name(spec.name)}
version: "{spec.load_environment().version}"
description: {json.dumps(spec.description)}
type: space
runtime: fastapi
app: env_servers.core.app:create_app
port: {APP_PORT}
validation:
  reward:
    range: [0.0, 1.0]
    oracle_tolerance: 0.0
    floor_margin: 0.5
  resources:
    cpu: 1.0
    memory_mb: 512
    disk_mb: 1024
    episode_timeout_s: 600.0
  capabilities:
    verifier:
      kind: reward_channel
    declared_tools: [{tools}]
  types:
    tags: [arenagym, game]
  network:
    mode: no-network
"""


def pyproject(spec: GameSpec, package: str) -> str:
    return f"""\
# The OpenEnv client package of this Space (the server is the wheel the Dockerfile installs).
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "{package.replace("_", "-")}-space"
version = "{spec.load_environment().version}"
description = {json.dumps(spec.description)}
requires-python = ">=3.11"
dependencies = ["openenv>=0.10"]

[tool.setuptools]
packages = ["{package}"]
package-dir = {{ "{package}" = "." }}
"""


def client_py(space_id: str, url: str) -> str:
    return f'''\
"""OpenEnv's own clients for this Space: its game speaks OpenEnv 0.10, MCP included."""

from __future__ import annotations

from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient

SPACE_ID = "{space_id}"
BASE_URL = "{url}"


def _headers(token: str | None) -> dict[str, str] | None:
    return {{"Authorization": f"Bearer {{token}}"}} if token else None


def env(token: str | None = None) -> GenericEnvClient:
    """reset / step / state over the Space's WebSocket (``async with``, or ``.sync()``)."""
    return GenericEnvClient(base_url=BASE_URL, headers=_headers(token))


def tools(token: str | None = None) -> MCPToolClient:
    """The game's tools over MCP: ``reset``, then ``list_tools`` and ``call_tool``."""
    return MCPToolClient(base_url=BASE_URL, headers=_headers(token))
'''


INIT_PY = '''"""An arenagym game server on a Hugging Face Space, and OpenEnv clients for it."""

from .client import BASE_URL, SPACE_ID, env, tools

__all__ = ["BASE_URL", "SPACE_ID", "env", "tools"]
'''


def readme(spec: GameSpec, space_id: str, url: str) -> str:
    """The Space's card: front matter, the rules, the tools, the rewards, how to connect."""
    from env_servers.core.mcp_tools import game_tools

    tags = "\n".join(
        f"  - {tag}" for tag in ("openenv", PROJECT, spec.name, "reinforcement-learning")
    )
    tools = []
    for tool in game_tools(spec).values():
        schema = tool.listing()["inputSchema"]["properties"]
        signature = ", ".join(
            f"{name}: {field.get('type', 'any')}" for name, field in schema.items()
        )
        arguments = "".join(
            f"\n  - `{name}`: {field.get('description', '')}" for name, field in schema.items()
        )
        tools.append(f"- `{tool.name}({signature})` — {tool.description}{arguments}")
    rewards = "\n".join(
        f"- `{name}` (weight {reward.weight:g}): {reward.description or reward.function.__doc__ or ''}"
        for name, reward in spec.rewards.items()
    )
    client = spec.client.__name__
    first_tool = spec.tool_names()[0] if spec.tool_names() else "…"
    return f"""---
title: "{PROJECT} · {spec.name}"
emoji: 🎲
colorFrom: green
colorTo: gray
sdk: docker
app_port: {APP_PORT}
pinned: false
tags:
{tags}
---

# {spec.name}: an {PROJECT} game server

{spec.description}

It speaks OpenEnv's protocol (`openenv` 0.10 and `openenv-core` 0.3): WebSocket `/ws`,
stateful HTTP (`/reset`, `/step`, `/state`), MCP at `/mcp`, and `/health`, `/metadata`,
`/schema`, `/docs`, Prometheus `/metrics`, and a page to play it by hand at `/web/`. Where the
Space has the secret `ARENAGYM_AUTH_TOKEN`, every route but `/health` requires it as
`Authorization: Bearer …` (the page asks for it).

## How to play

{spec.instruction}

## Tools

A language model plays through these (MCP `tools/list` and `tools/call`, or TRL's
`environment_factory`):

{chr(10).join(tools) or "(none)"}

## Reward

Each `step` carries the game's own `reward` (1.0 for a solved episode, else 0.0, as `{spec.solved}`
below); MCP results carry the text a model reads and whether the episode is over, no reward.
Training rewards of the game, with their default weights:

{rewards}

## Connect

The server is at `{url}`. With arenagym:

```python
from clients import {client}

with {client}.from_space("{space_id}") as env:   # a private Space: HF_TOKEN or token=…
    result = env.reset(seed=7)                       # a token: ARENAGYM_AUTH_TOKEN or auth_token=…
```

With OpenEnv's own MCP client (`pip install openenv`):

```python
from openenv.core.mcp_client import MCPToolClient

async with MCPToolClient(base_url="{url}") as env:
    await env.reset()
    print(await env.list_tools())       # then: await env.call_tool("{first_tool}", …)
```

Or by hand: `curl -X POST {url}/reset -H 'content-type: application/json' -d '{{"seed": 7}}'`,
then `POST /step` with `{{"session_id": …, "action": {{…}}}}`.
"""


def stage(
    spec: GameSpec, directory: Path, *, space_id: str, url: str, wheels: list[Path]
) -> list[Path]:
    """Write the Space into ``directory`` (new or empty); returns the files written."""
    if directory.exists() and any(directory.iterdir()):
        raise StagingError(f"{directory} is not empty: stage into a new or empty directory.")
    directory.mkdir(parents=True, exist_ok=True)
    package = package_name(spec.name)
    built = collect_wheels(spec.name, directory / "wheels", wheels)
    files = {
        "Dockerfile": dockerfile(spec.name, built),
        "README.md": readme(spec, space_id, url),
        "openenv.yaml": openenv_yaml(spec),
        "pyproject.toml": pyproject(spec, package),
        "__init__.py": INIT_PY,
        "client.py": client_py(space_id, url),
        ".dockerignore": ".git\n__pycache__\n*.pyc\n",
    }
    for name, text in files.items():
        (directory / name).write_text(text)
    return sorted([directory / name for name in files] + built)
