"""Finding hidden values in JSON: a secret word in a transcript, a solution in a state.

A value leaks when an observation or a state sent before the episode ended holds it: as a
whole JSON value, or (text of four characters or more) as a whole word inside a text. Text
that every episode sends (a game's rules may contain a word that is some episode's secret)
is told apart by the caller, who compares with episodes whose secret differs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

MIN_TEXT_SECRET = 4
"""Shorter texts are sought as whole values only: as words they match by chance."""


def values(tree: Any) -> Iterator[Any]:
    """Every value in a JSON tree, the tree itself first."""
    yield tree
    if isinstance(tree, dict):
        for item in tree.values():
            yield from values(item)
    elif isinstance(tree, list):
        for item in tree:
            yield from values(item)


def searchable(secret: Any) -> bool:
    """Whether a value can be looked for: not empty, not a bare flag."""
    return secret not in (None, "", [], {}) and not isinstance(secret, bool)


def contains(tree: Any, secret: Any) -> bool:
    """Whether ``secret`` appears in ``tree`` (see the module docstring)."""
    if not searchable(secret):
        return False
    if not isinstance(secret, str):
        return any(value == secret and not isinstance(value, bool) for value in values(tree))
    wanted = secret.strip().lower()
    word = re.compile(rf"(?<!\w){re.escape(wanted)}(?!\w)", re.IGNORECASE)
    for value in values(tree):
        if isinstance(value, str):
            if value.strip().lower() == wanted:
                return True
            if len(wanted) >= MIN_TEXT_SECRET and word.search(value):
                return True
    return False


def hidden_values(fields: frozenset[str], *trees: Any) -> dict[str, Any]:
    """The searchable values of hidden fields in the top level of JSON objects (an
    observation's reply nests it under ``observation``)."""
    found: dict[str, Any] = {}
    for tree in trees:
        objects = [tree, tree.get("observation")] if isinstance(tree, dict) else []
        for obj in objects:
            if isinstance(obj, dict):
                for name in fields & obj.keys():
                    if searchable(obj[name]):
                        found[name] = obj[name]
    return found
