"""OpenAI's chat-completions format, answered by an :class:`~trainer.serving.engine.Engine`.

The request is validated by pydantic (unknown OpenAI options are accepted and ignored, as
most OpenAI-compatible servers do; options that would change the answer and are not
supported, such as ``n > 1``, are refused). The conversation is rendered by the model's chat
template with the request's ``tools``, and tool calls are read from the reply by the very
parser training and evaluation use (:class:`trainer.rollouts.ReplyParser`), so a served model
calls tools as it learned to.

Streaming (``stream: true``) sends OpenAI's ``chat.completion.chunk`` events: the role, the
content a few tokens at a time, the tool calls, the finish reason and ``[DONE]``. The reply is
generated before its chunks are sent (tool calls can only be parsed from a whole reply).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trainer.models import chat_prompt
from trainer.rollouts import ReplyParser
from trainer.serving.engine import Engine

DEFAULT_MAX_TOKENS = 256
MAX_TOKENS_LIMIT = 8192
STREAM_TOKENS = 4
"""Tokens per streamed content chunk."""


class ChatRequestError(ValueError):
    """A request the model cannot answer as asked; the message says what to change."""


class ToolFunction(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class Tool(BaseModel):
    type: Literal["function"] = "function"
    function: ToolFunction


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class ChatRequest(BaseModel):
    """The part of OpenAI's request this server honours; other fields are ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str = ""
    messages: list[Message] = Field(min_length=1)
    tools: list[Tool] | None = None
    tool_choice: Literal["auto", "none", "required"] | dict[str, Any] | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS_LIMIT)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS_LIMIT)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    n: int = Field(default=1, ge=1, le=1, description="One choice per request.")
    stream: bool = False

    @field_validator("tool_choice")
    @classmethod
    def _tool_choice(cls, value: Any) -> Any:
        if isinstance(value, dict):
            raise ValueError("naming one tool in tool_choice is not supported: use 'auto'")
        return value

    @property
    def max_new_tokens(self) -> int:
        return self.max_completion_tokens or self.max_tokens or DEFAULT_MAX_TOKENS


def _text(content: str | list[dict[str, Any]] | None) -> str:
    """OpenAI's content: a string, or a list of parts of which only text parts are read."""
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for part in content:
        if part.get("type") != "text":
            raise ChatRequestError(
                f"only text content parts are supported, not {part.get('type')!r}"
            )
        texts.append(str(part.get("text", "")))
    return "".join(texts)


def template_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """OpenAI messages as chat templates take them: text content, tool-call arguments as
    objects (OpenAI sends them as JSON strings), ``developer`` as ``system``."""
    rendered = []
    for message in messages:
        entry: dict[str, Any] = {
            "role": "system" if message.role == "developer" else message.role,
            "content": _text(message.content),
        }
        if message.tool_calls:
            calls = []
            for call in message.tool_calls:
                function = dict(call.get("function") or {})
                arguments = function.get("arguments", {})
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments or "{}")
                    except json.JSONDecodeError:
                        raise ChatRequestError(
                            f"tool call arguments must be a JSON object, got {arguments[:80]!r}"
                        ) from None
                calls.append({"type": "function", "function": {**function, "arguments": arguments}})
            entry["tool_calls"] = calls
        if message.name:
            entry["name"] = message.name
        rendered.append(entry)
    return rendered


class ChatModel:
    """Chat completions of one engine: prompt, generate, parse."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.parser = ReplyParser(engine.tokenizer)

    def complete(self, request: ChatRequest) -> dict[str, Any]:
        """The ``chat.completion`` object; blocks while the engine is busy."""
        use_tools = bool(request.tools) and request.tool_choice != "none"
        tools = [tool.model_dump() for tool in request.tools or []] if use_tools else None
        messages = template_messages(request.messages)
        try:
            prompt = chat_prompt(self.engine.tokenizer, messages, tools)
        except Exception as error:  # jinja raises for conversations the template refuses
            raise ChatRequestError(f"the chat template refused the conversation: {error}") from None
        ids = self.engine.generate([prompt], request.max_new_tokens, request.temperature)[0]
        content, calls = self._parse(ids, prompt, tools)
        finish = "length" if len(ids) >= request.max_new_tokens else "stop"
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{uuid.uuid4().hex[:24]}",
                    "type": "function",
                    "function": {
                        "name": call["function"]["name"],
                        "arguments": json.dumps(call["function"]["arguments"]),
                    },
                }
                for call in calls
            ]
            finish = "tool_calls"
        elif message["content"] is None:
            message["content"] = ""
        prompt_tokens = len(self.engine.tokenizer(prompt, add_special_tokens=False)["input_ids"])
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model or self.engine.name,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(ids),
                "total_tokens": prompt_tokens + len(ids),
            },
        }

    def _parse(
        self, ids: list[int], prompt: str, tools: list[Any] | None
    ) -> tuple[str, list[dict[str, Any]] | None]:
        """Content and tool calls; a malformed call is returned as text, as TRL reads it."""
        text = self.engine.tokenizer.decode(ids, skip_special_tokens=True).strip()
        if not tools:
            return text, None
        try:
            content, calls = self.parser(ids, prompt, tools)
        except ValueError:
            return text, None
        return (content or "").strip(), calls


def stream_chunks(completion: dict[str, Any], tokenizer: Any) -> Iterator[dict[str, Any]]:
    """A finished completion as OpenAI's stream of ``chat.completion.chunk`` objects."""
    base = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
    }
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    ids = tokenizer(message["content"] or "", add_special_tokens=False)["input_ids"]
    for start in range(0, len(ids), STREAM_TOKENS):
        piece = tokenizer.decode(ids[: start + STREAM_TOKENS]).removeprefix(
            tokenizer.decode(ids[:start])
        )
        yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield chunk({}, choice["finish_reason"]) | {"usage": None}
