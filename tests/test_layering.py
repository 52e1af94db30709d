"""The layering of the packages: a game folder is the only place that names its game, and the
horizontal machinery (``clients``, ``trainer``) reads games through their declarations only."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from env_servers.core.registry import game_names

ROOT = Path(__file__).resolve().parents[1]
AGNOSTIC = ("clients", "trainer")
SERVER_PARTS_ALLOWED = {
    "env_servers.core.models",
    "env_servers.core.protocol",
    "env_servers.core.errors",
    "env_servers.core.spec",
    "env_servers.core.family",
    "env_servers.core.registry",
}
"""What of the server package the clients and the trainer may import: wire models, protocol
constants, error codes and the errors' messages, and the game declarations with their
registry (all FastAPI-free)."""
GAME_PARTS_ALLOWED = {"models", "spec"}
"""What of a game's own folder they may import: its wire models and its declaration."""
IN_PROCESS = "InProcessTransport"
"""The one place that runs a game's server machinery inside a client: the in-process transport."""


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", AGNOSTIC)
def test_no_game_is_named_outside_its_folder(package: str) -> None:
    names = re.compile("|".join(re.escape(name) for name in game_names()), re.IGNORECASE)
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources(package)
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if names.search(line)
    ]
    assert not found, "a game is named outside its folder:\n" + "\n".join(found)


def imports_of(path: Path) -> list[tuple[str, str | None]]:
    """``(module, enclosing class)`` for every import in a file."""
    found: list[tuple[str, str | None]] = []

    def visit(node: ast.AST, owner: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, owner) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                found.append((child.module, owner))
            visit(child, owner)

    visit(ast.parse(path.read_text()), None)
    return found


def allowed(module: str) -> bool:
    if not module.startswith("env_servers"):
        return True
    if module in SERVER_PARTS_ALLOWED:
        return True
    parts = module.split(".")
    return len(parts) == 3 and parts[1] in game_names() and parts[2] in GAME_PARTS_ALLOWED


@pytest.mark.parametrize("package", AGNOSTIC)
def test_only_fastapi_free_server_parts_are_imported(package: str) -> None:
    wrong = [
        f"{path.relative_to(ROOT)}: {module}"
        for path in sources(package)
        for module, owner in imports_of(path)
        if not allowed(module) and owner != IN_PROCESS
    ]
    assert not wrong, "server machinery imported outside the in-process transport:\n" + "\n".join(
        wrong
    )


def test_reading_every_declaration_never_imports_fastapi() -> None:
    code = (
        "import sys\n"
        "from env_servers.core.registry import game_names, load_spec\n"
        "import clients, clients.trl, clients.play\n"
        "for game in game_names():\n"
        "    spec = load_spec(game)\n"
        "    clients.trl.make_env_factory(spec)\n"
        "leaked = {'fastapi', 'starlette', 'uvicorn'} & set(sys.modules)\n"
        "assert not leaked, leaked\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
