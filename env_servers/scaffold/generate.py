"""Render the game template into a new package folder.

The template is a working game (guess the number, told higher or lower) whose names are
placeholders, so the package written passes arenagym's checker as it stands and its author
changes the rules rather than wiring. A template file's text is a :class:`string.Template`:
``$$`` writes a dollar sign.
"""

from __future__ import annotations

import importlib.util
import keyword
import re
from dataclasses import asdict, dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from string import Template

from env_servers.core.registry import registered

TEMPLATE_PACKAGE = "env_servers.scaffold"
TEMPLATE_FOLDER = "template"
PACKAGE_PLACEHOLDER = "__package__"
SUFFIX = ".tmpl"
MAX_NAME_LENGTH = 40
NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


class ScaffoldError(ValueError):
    """The name or the target folder cannot be used; the message says what to change."""


@dataclass(frozen=True, slots=True)
class GameNames:
    """Every spelling of a game's name that the template needs."""

    name: str
    """The game id: ``arenagym serve NAME``, the entry point's name (``hi-lo``)."""
    package: str
    """The Python package (``hi_lo``)."""
    class_prefix: str
    """The prefix of its class names (``HiLo``: ``HiLoEnvironment``)."""
    constant: str
    """The name of its ``GameSpec`` constant (``HI_LO``)."""
    title: str
    """How prose calls it (``Hi Lo``)."""
    distribution: str
    """The pip-installable distribution, and the folder written (``arenagym-hi-lo``)."""

    @classmethod
    def of(cls, name: str) -> GameNames:
        """Validate ``name`` as a new game's id; raises ``ScaffoldError`` saying why not."""
        if len(name) > MAX_NAME_LENGTH or not NAME_PATTERN.fullmatch(name):
            raise ScaffoldError(
                f"{name!r} cannot name a game: use lowercase letters and digits, starting with "
                f"a letter, words joined by single '-' or '_' (at most {MAX_NAME_LENGTH} "
                "characters), e.g. 'hilo' or 'number-guess'."
            )
        package = name.replace("-", "_")
        words = package.split("_")
        if keyword.iskeyword(package) or keyword.issoftkeyword(package):
            raise ScaffoldError(f"{name!r} is a Python keyword: pick another name.")
        if name in registered():
            raise ScaffoldError(
                f"A game named {name!r} is already registered ({registered()[name].value}): "
                "pick another name (`arenagym serve --list` shows the taken ones)."
            )
        if (found := importlib.util.find_spec(package)) is not None:
            where = found.origin or ", ".join(found.submodule_search_locations or []) or "?"
            raise ScaffoldError(
                f"A module named {package!r} is already importable here ({where}): a game "
                "package of that name would clash with it. Pick another name."
            )
        return cls(
            name=name,
            package=package,
            class_prefix="".join(word.capitalize() for word in words),
            constant=package.upper(),
            title=" ".join(word.capitalize() for word in words),
            distribution=f"arenagym-{name}",
        )

    def placeholders(self) -> dict[str, str]:
        """What each ``${placeholder}`` of the template becomes: the field names, and
        ``Class`` and ``CONSTANT``, which read in the template as what they fill."""
        values = asdict(self)
        return {**values, "Class": self.class_prefix, "CONSTANT": self.constant}


def template_files() -> list[tuple[PurePosixPath, Traversable]]:
    """The template's files: (path relative to the template folder, the file)."""
    found: list[tuple[PurePosixPath, Traversable]] = []

    def walk(folder: Traversable, relative: PurePosixPath) -> None:
        for entry in sorted(folder.iterdir(), key=lambda entry: entry.name):
            if entry.name == "__pycache__":
                continue
            if entry.is_dir():
                walk(entry, relative / entry.name)
            elif entry.name.endswith(SUFFIX):
                found.append((relative / entry.name, entry))

    walk(files(TEMPLATE_PACKAGE) / TEMPLATE_FOLDER, PurePosixPath())
    return found


def render(names: GameNames) -> dict[PurePosixPath, str]:
    """The package's files, path → text, with every placeholder filled."""
    values = names.placeholders()
    rendered = {}
    for relative, source in template_files():
        parts = [part.replace(PACKAGE_PLACEHOLDER, names.package) for part in relative.parts]
        path = PurePosixPath(*parts)
        rendered[path.with_name(path.name.removesuffix(SUFFIX))] = Template(
            source.read_text(encoding="utf-8")
        ).substitute(values)
    return rendered


def target_folder(names: GameNames, parent: Path) -> Path:
    """Where the package goes; raises ``ScaffoldError`` if that folder has anything in it."""
    target = parent / names.distribution
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ScaffoldError(
            f"{target} already exists and is not an empty folder: remove it, or write the new "
            "game elsewhere with --dir."
        )
    return target


def write_game(name: str, parent: Path) -> tuple[GameNames, Path]:
    """Write the package of a new game ``name`` to ``parent/arenagym-NAME``; returns its names
    and the folder. Nothing is written if the name or the folder cannot be used."""
    names = GameNames.of(name)
    target = target_folder(names, parent)
    rendered = render(names)
    for relative, text in rendered.items():
        path = target.joinpath(*relative.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return names, target
