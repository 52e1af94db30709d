"""A game's tools as MCP tools: names, JSON schemas and argument checks, from its agent class.

The tools are the public methods of the game's agent class (``GameSpec.agent``), each a typed
method with a Google-style docstring, exactly as TRL reads them. The schema is derived here
from ``inspect`` and pydantic, not from ``transformers``: a server-only install has no
transformers. One pydantic model per tool both writes its ``inputSchema`` and validates the
arguments of ``tools/call``, so the schema a client reads is the one the server enforces.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from env_servers.core.spec import GameSpec

RESERVED_TOOL_NAMES = frozenset({"reset", "step", "state", "close"})
"""OpenEnv's reserved names: a tool may not shadow the simulation API."""

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "result": {"type": "string", "description": "What the game says about the move."},
        "done": {"type": "boolean", "description": "Whether the episode is over."},
    },
    "required": ["result", "done"],
}
"""``structuredContent`` of every game tool's result."""

_SECTION = re.compile(r"^\s*(Args|Arguments|Returns|Raises|Yields|Examples?|Notes?):\s*$")
_ARGUMENT = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class GameTool:
    """One tool: its MCP description and the model that checks its arguments."""

    name: str
    description: str
    arguments: type[BaseModel]

    def listing(self) -> dict[str, Any]:
        """The entry of this tool in a ``tools/list`` result."""
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        for field in schema.get("properties", {}).values():
            field.pop("title", None)
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": schema,
            "outputSchema": OUTPUT_SCHEMA,
        }


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """A Google-style docstring → (its description, {argument: description})."""
    summary: list[str] = []
    arguments: dict[str, str] = {}
    section, current, indent = None, None, None
    for line in inspect.cleandoc(doc or "").splitlines():
        if heading := _SECTION.match(line):
            section, current, indent = heading.group(1), None, None
        elif section is None:
            summary.append(line)
        elif section in ("Args", "Arguments") and line.strip():
            depth = len(line) - len(line.lstrip())
            match = _ARGUMENT.match(line)
            if match and (indent is None or depth <= indent):
                indent, current = depth, match.group(1).lstrip("*")
                arguments[current] = match.group(2).strip()
            elif current is not None:  # a continuation line
                arguments[current] = f"{arguments[current]} {line.strip()}"
    return " ".join(" ".join(summary).split()), arguments


def game_tool(name: str, method: Callable[..., Any]) -> GameTool:
    """The MCP tool for one method of an agent class."""
    signature = inspect.signature(method)
    hints = typing.get_type_hints(method)
    description, documented = parse_docstring(method.__doc__)
    fields: dict[str, Any] = {}
    for parameter in list(signature.parameters.values())[1:]:  # skip self
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(
                f"Tool {name!r} takes *{parameter.name}: MCP tools need named, typed "
                "parameters. Declare each argument."
            )
        if parameter.name not in hints:
            raise TypeError(f"Tool {name!r}: annotate parameter {parameter.name!r} with a type.")
        default = ... if parameter.default is parameter.empty else parameter.default
        field = Field(default, description=documented.get(parameter.name) or None)
        fields[parameter.name] = (hints[parameter.name], field)
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return GameTool(name, description or name, model)


def game_tools(spec: GameSpec) -> dict[str, GameTool]:
    """The game's tools by name, in definition order; a reserved name is a declaration error."""
    tools = {}
    for name in spec.tool_names():
        if name in RESERVED_TOOL_NAMES:
            raise ValueError(
                f"{spec.agent.__name__}.{name} is a tool named {name!r}, which OpenEnv reserves "
                f"({', '.join(sorted(RESERVED_TOOL_NAMES))}). Rename the method, or make it "
                "private (_name) if it is not a tool."
            )
        tools[name] = game_tool(name, getattr(spec.agent, name))
    return tools
