"""Playing episodes of any game with a language model, as training plays them.

Two ways, as the game's declaration allows (``GameSpec.modes``):
- ``answer``: one generation per episode; the whole reply goes to the server as the game's
  answer action (``GameAgent._answer``), which verifies it;
- ``tools``: a multi-turn loop in TRL's manner. Each turn is one reply; its tool calls are
  parsed (:class:`ReplyParser`), run by name on the agent, and answered with ``tool``
  messages worded as TRL words them. The episode stops when the server says it is over, a
  reply has no tool call or a malformed one (TRL's rule), or after ``max_turns`` replies.

Rollouts are played a batch at a time, one batched generation per turn. Nothing here judges
a move: every verdict is the server's, read from the agent's bookkeeping.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from clients.agent import GameAgent
from clients.errors import InvalidRequestError
from trainer.models import chat_prompt, generate

Ending = Literal["solved", "failed", "stopped", "no_tool_call", "broken_call", "max_turns"]
ENDINGS: tuple[Ending, ...] = (
    "solved",
    "failed",
    "stopped",
    "no_tool_call",
    "broken_call",
    "max_turns",
)
"""How an episode ended. ``solved`` and ``failed``: the server ended it (solved or not);
``stopped``: a reply without a tool call after earlier calls; ``no_tool_call``: no tool call
at all; ``broken_call``: a malformed tool call; ``max_turns``: out of replies. In answer
mode an episode is ``solved`` or ``failed``."""

Generator = Callable[[list[str], int, float], list[list[int]]]
"""``(prompts, max_new_tokens, temperature)`` → each reply's new token ids: a model other than
a local transformers one (vLLM) plays through one of these."""

_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


def parse_tool_calls(text: str) -> list[dict[str, Any]] | None:
    """The ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks of a reply, in the
    chat template's form; ``None`` when there are none. Raises ``ValueError`` for a block that
    is not such an object (TRL then ends the episode, and so do we)."""
    blocks = _TOOL_CALL.findall(text)
    if not blocks:
        return None
    calls = []
    for block in blocks:
        try:
            call = json.loads(block.strip())
            arguments = call.get("arguments", {})
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
        except (json.JSONDecodeError, AttributeError) as error:
            raise ValueError(f"malformed tool call: {block.strip()[:80]!r}") from error
        if not isinstance(call.get("name"), str) or not isinstance(arguments, dict):
            raise ValueError(f"malformed tool call: {block.strip()[:80]!r}")
        calls.append(
            {"type": "function", "function": {"name": call["name"], "arguments": arguments}}
        )
    return calls


class ReplyParser:
    """Tool calls read as in training: with TRL's ``parse_response`` (transformers' response
    parsing) where TRL knows the chat template, else with :func:`parse_tool_calls`."""

    def __init__(self, tokenizer: Any) -> None:
        from trl.chat_template_utils import add_response_schema

        self.tokenizer = tokenizer
        try:
            add_response_schema(tokenizer)
            self.native = True
        except ValueError:  # a template TRL does not know
            self.native = False

    def __call__(
        self, ids: list[int], prompt: str, tools: list[Any]
    ) -> tuple[str, list[dict[str, Any]] | None]:
        """``(content, tool_calls)``, ``tool_calls`` None for a reply without one; raises
        ``ValueError`` for a ``<tool_call>`` that does not parse."""
        raw = self.tokenizer.decode(ids, skip_special_tokens=False)
        if not self.native:
            calls = parse_tool_calls(raw)
            return (_TOOL_CALL.sub("", raw) if calls else raw).strip(), calls
        from trl.chat_template_utils import parse_response

        prefix = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        parsed = parse_response(self.tokenizer, ids, prefix=prefix, tools=tools)
        if parsed.get("tool_calls"):
            return parsed["content"], parsed["tool_calls"]
        if "<tool_call>" in raw:  # TRL fell back to plain text: training would stop here
            raise ValueError(f"malformed tool call: {raw[:80]!r}")
        return parsed["content"], None


@dataclass(slots=True)
class Rollout:
    """One episode being played: its agent (an open session), the conversation so far, and
    what the model sent."""

    agent: GameAgent
    seed: int
    sample: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: int = 0
    broken_calls: int = 0
    """Calls that never reached the game: unparseable, unknown tool, bad arguments."""
    turns: int = 0
    stop: Literal["over", "no_tool_call", "broken_call"] | None = None
    """Why the loop stopped early; None while playing (or after ``max_turns``)."""

    @property
    def solved(self) -> bool:
        spec = self.agent._game_spec
        return spec.rewards[spec.solved].function(self.agent) >= 1.0

    @property
    def ended(self) -> Ending:
        """How the episode ended. The server's word comes first: a game it ended is solved or
        failed however the loop stopped."""
        if self.solved:
            return "solved"
        if self.agent.done or self.agent.answered:
            return "failed"
        if self.stop == "no_tool_call":
            return "stopped" if self.tool_calls else "no_tool_call"
        if self.stop == "broken_call":
            return "broken_call"
        return "max_turns"

    @property
    def completion(self) -> str | None:
        """The last reply's text (answer mode: the whole answer)."""
        replies = [m for m in self.messages if m["role"] == "assistant"]
        return replies[-1]["content"] if replies else None


def agent_tools(agent: GameAgent) -> list[Any]:
    """The agent's tools as bound methods, for the chat template (its schema) and calls."""
    return [getattr(agent, name) for name in agent._game_spec.tool_names()]


def play_turn(rollout: Rollout, reply: Any, ids: list[int], prompt: str, tools: list[Any]) -> None:
    """Run one reply's tool calls; a call that fails is answered with TRL's error text.
    ``reply`` turns ``(ids, prompt, tools)`` into ``(content, tool_calls)`` (a
    :class:`ReplyParser`), raising ``ValueError`` for a malformed call."""
    rollout.turns += 1
    try:
        content, calls = reply(ids, prompt, tools) if ids else ("", None)
    except ValueError:  # a malformed <tool_call>: TRL takes the reply as plain text and stops
        rollout.tool_calls += 1
        rollout.broken_calls += 1
        rollout.messages.append({"role": "assistant", "content": reply.tokenizer.decode(ids)})
        rollout.stop = "broken_call"
        return
    if calls is None:
        rollout.messages.append({"role": "assistant", "content": content})
        rollout.stop = "no_tool_call"
        return
    rollout.messages.append({"role": "assistant", "content": content, "tool_calls": calls})
    names = rollout.agent._game_spec.tool_names()
    for call in calls:
        rollout.tool_calls += 1
        function = call["function"]
        try:
            if function["name"] not in names:
                raise ValueError(f"Tool {function['name']} not found.")
            output = str(getattr(rollout.agent, function["name"])(**function["arguments"]))
        except (TypeError, ValueError, AttributeError, InvalidRequestError) as error:
            rollout.broken_calls += 1
            output = str({"error": str(error)})  # as TRL words a failed tool call
        rollout.messages.append({"role": "tool", "name": function["name"], "content": output})
    if rollout.agent.done:
        rollout.stop = "over"


def play_tools(
    model: Any,
    tokenizer: Any,
    parser: Any,
    rollouts: Sequence[Rollout],
    *,
    max_turns: int,
    max_new_tokens: int,
    temperature: float,
    generator: Generator | None = None,
) -> None:
    """Play started rollouts (each with its first user message) to their end, one batched
    generation per turn; ``generator`` replaces ``model``'s own generation when given."""
    for _ in range(max_turns):
        playing = [r for r in rollouts if r.stop is None]
        if not playing:
            return
        tools = agent_tools(playing[0].agent)
        prompts = [chat_prompt(tokenizer, r.messages, tools) for r in playing]
        replies = _generate(model, tokenizer, generator, prompts, max_new_tokens, temperature)
        for rollout, prompt, ids in zip(playing, prompts, replies, strict=True):
            play_turn(rollout, parser, ids, prompt, agent_tools(rollout.agent))


def play_answers(
    model: Any,
    tokenizer: Any,
    rollouts: Sequence[Rollout],
    *,
    max_new_tokens: int,
    temperature: float,
    generator: Generator | None = None,
) -> None:
    """One generation per started rollout (its one user message is the game's prompt); each
    reply is sent whole to the server, which extracts and checks the answer."""
    prompts = [chat_prompt(tokenizer, r.messages) for r in rollouts]
    replies = _generate(model, tokenizer, generator, prompts, max_new_tokens, temperature)
    for rollout, ids in zip(rollouts, replies, strict=True):
        text = tokenizer.decode(ids, skip_special_tokens=True)
        rollout.turns += 1
        rollout.messages.append({"role": "assistant", "content": text})
        rollout.agent._answer(text)
        rollout.stop = "over"


def _generate(
    model: Any,
    tokenizer: Any,
    generator: Generator | None,
    prompts: list[str],
    max_new_tokens: int,
    temperature: float,
) -> list[list[int]]:
    if generator is not None:
        return generator(prompts, max_new_tokens, temperature)
    return generate(
        model, tokenizer, prompts, max_new_tokens=max_new_tokens, temperature=temperature
    )
