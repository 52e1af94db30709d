"""The HTTP face of ``arenagym serve-model``: routes as thin shells over the engine.

- ``POST /v1/chat/completions``: OpenAI's chat completions, tools and streaming included
  (:mod:`trainer.serving.chat`);
- ``POST /play/{game}``: the body is the game's reset fields; the query may set ``mode``,
  ``max_turns``, ``max_new_tokens`` and ``temperature``. The model plays one episode against
  the game's server (:mod:`trainer.serving.play`); ``Accept: text/event-stream`` streams it;
- ``GET /health`` and ``GET /v1/models``.

Every error is OpenAI's error object, ``{"error": {"message", "type", "param", "code"}}``,
with a 4xx status for a request that can be fixed and 502 when a game server fails. Model work
runs in worker threads behind the engine's lock: concurrent requests wait their turn.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

from clients.errors import ClientError, InvalidRequestError
from env_servers.core.registry import UnknownGame, load_spec
from env_servers.core.spec import GameSpec, Mode
from trainer.serving.chat import ChatModel, ChatRequest, ChatRequestError, stream_chunks
from trainer.serving.engine import Engine
from trainer.serving.play import PlaySettings, play_episode


class ApiError(Exception):
    """An error answered as OpenAI's error object with ``status``."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return JSONResponse(body, status_code=status)


def _validation_message(errors: Any) -> str:
    parts = []
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        parts.append(f"{where}: {error.get('msg')}" if where else str(error.get("msg")))
    return "Invalid request: " + "; ".join(parts)


def create_app(engine: Engine, game_urls: Mapping[str, str]) -> FastAPI:
    """The model server. ``game_urls``: each playable game's server, by game name."""
    app = FastAPI(title="arenagym model server", version="1")
    chat = ChatModel(engine)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError) -> JSONResponse:
        return _error(error.status, error.message, error.kind)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        return _error(400, _validation_message(error.errors()))

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "model": engine.name,
            "source": engine.source,
            "backend": engine.backend,
            "games": sorted(game_urls),
        }

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        entry = {"id": engine.name, "object": "model", "created": 0, "owned_by": "arenagym"}
        return {"object": "list", "data": [entry]}

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(request: ChatRequest) -> Any:
        try:
            completion = await run_in_threadpool(chat.complete, request)
        except ChatRequestError as error:
            raise ApiError(400, str(error)) from None
        if not request.stream:
            return completion
        chunks = stream_chunks(completion, engine.tokenizer)
        return EventSourceResponse(_sse([json.dumps(c) for c in chunks] + ["[DONE]"]))

    @app.post("/play/{game}", response_model=None)
    async def play(
        game: str,
        request: Request,
        mode: Annotated[Mode | None, Query(description="tools or answer; the game's first")] = None,
        max_turns: Annotated[int, Query(ge=1, le=100)] = 12,
        max_new_tokens: Annotated[int | None, Query(ge=1, le=8192)] = None,
        temperature: Annotated[float, Query(ge=0.0, le=2.0)] = 0.0,
    ) -> Any:
        spec = _game(game, game_urls)
        reset = await _reset_fields(spec, request)
        settings = PlaySettings(mode, max_turns, max_new_tokens, temperature)
        if mode is not None and mode not in spec.modes:
            raise ApiError(400, f"{game} is played in {' or '.join(spec.modes)}, not {mode}.")
        events = play_episode(engine, spec, game_urls[spec.name], reset, settings)
        if "text/event-stream" in request.headers.get("accept", ""):
            return EventSourceResponse(_play_events(events))
        try:
            played = await run_in_threadpool(list, events)
        except ClientError as error:
            raise _game_server_error(spec, error) from None
        final = dict(played[-1])
        final.pop("event")
        return final

    return app


def _game(name: str, game_urls: Mapping[str, str]) -> GameSpec:
    try:
        spec = load_spec(name)
    except UnknownGame as error:
        raise ApiError(404, str(error)) from None
    if spec.name not in game_urls:
        raise ApiError(
            409,
            f"No server for {spec.name}: start serve-model with --game-url "
            f"{spec.name}=URL, or set {spec.url_variable}.",
        )
    return spec


async def _reset_fields(spec: GameSpec, request: Request) -> dict[str, Any]:
    """The body: a JSON object of the game's reset fields, checked by its reset model."""
    raw = await request.body()
    try:
        body = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as error:
        raise ApiError(400, f"The body is not JSON ({error}).") from None
    if not isinstance(body, dict):
        raise ApiError(400, f"The body must be a JSON object of {spec.name}'s reset fields.")
    try:
        spec.reset_type.model_validate(body)
    except ValidationError as error:
        fields = ", ".join(sorted(spec.reset_fields))
        raise ApiError(
            422, f"{_validation_message(error.errors())} ({spec.name}'s reset fields: {fields})"
        ) from None
    return body


def _game_server_error(spec: GameSpec, error: ClientError) -> ApiError:
    if isinstance(error, InvalidRequestError):
        return ApiError(422, f"{spec.name}'s server refused the episode: {error}")
    return ApiError(502, f"{spec.name}'s server failed: {error}", "game_server_error")


async def _sse(items: list[str]) -> AsyncIterator[dict[str, str]]:
    for item in items:
        yield {"data": item}


async def _play_events(events: Iterator[dict[str, Any]]) -> AsyncIterator[dict[str, str]]:
    """Each event as it happens (``event:`` its kind); a failure ends the stream with an
    ``error`` event."""
    try:
        async for event in iterate_in_threadpool(events):
            yield {"event": event["event"], "data": json.dumps(event)}
    except (ClientError, ValueError) as error:
        yield {"event": "error", "data": json.dumps({"event": "error", "message": str(error)})}
