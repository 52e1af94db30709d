"""``create_app()``: the HTTP and WebSocket routes, thin shells over ``sessions.py``.

WebSocket ``/ws`` (``ws.py``) speaks OpenEnv's frames (one connection, one session) plus the
extensions in ``protocol.EXTENSIONS``; ``arenagym serve`` answers its frames inline in uvicorn's
protocol (``ws_protocol.py``), any other ASGI server through this app. HTTP is stateful:
``POST /reset`` opens a session whose id the other routes take, so a person can play with
curl. ``POST /mcp`` and the ``/mcp`` WebSocket speak MCP's JSON-RPC (``mcp.py``) over the
same sessions. Every request passes ``access.Gate`` first (token, origin, JSON bodies), and
``GET /metrics`` serves Prometheus metrics (``metrics.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.requests import ClientDisconnect

from env_servers.core import wire
from env_servers.core.access import OWNER, Gate, Refusal, asgi_header
from env_servers.core.config import ServerSettings
from env_servers.core.environment import Environment
from env_servers.core.errors import EnvServerError, InvalidRequest
from env_servers.core.mcp import (
    INVALID_REQUEST,
    MCP_PROTOCOL_VERSION,
    MCPHandler,
    MCPWebSocketEndpoint,
    RpcError,
    error_reply,
)
from env_servers.core.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from env_servers.core.protocol import (
    EXTENSIONS,
    PROTOCOL_NAME,
    PROTOCOL_VERSION,
    PROTOCOL_VERSIONS,
    SESSION_HEADER,
    STANDARD_PROFILE,
)
from env_servers.core.registry import UnknownGame, entry_point, load_spec
from env_servers.core.sessions import SessionManager
from env_servers.core.spec import GameSpec
from env_servers.core.web import mount_web
from env_servers.core.ws import WebSocketEndpoint

JSON = "application/json"


def _json(body: bytes, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type=JSON)


def _error_response(error: EnvServerError) -> Response:
    return _json(wire.error_body(error), error.status)


async def _read_json(request: Request, limit: int) -> Any:
    """The request's JSON body (``{}`` when empty), refusing more than ``limit`` bytes."""
    body = await _read_body(request, limit)
    return wire.loads(body) if body.strip() else {}


async def _read_body(request: Request, limit: int) -> bytes:
    too_large = InvalidRequest(
        f"Request body larger than {limit} bytes. Send only the action or reset fields.", status=413
    )
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise too_large
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
    except ClientDisconnect:  # nobody reads the answer; it ends the request without a trace
        message = "The connection closed before the whole body arrived."
        raise InvalidRequest(message, status=400) from None
    return b"".join(chunks)


def _session_id(request: Request, body: Any) -> str | None:
    if isinstance(body, dict) and isinstance(body.get("session_id"), str):
        return body["session_id"]
    return request.headers.get(SESSION_HEADER) or request.query_params.get("session_id")


def _body_doc(schema: dict[str, Any], example: dict[str, Any]) -> dict[str, Any]:
    content = {JSON: {"schema": schema, "example": example}}
    return {"requestBody": {"required": False, "content": content}}


_ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": ["string", "integer"]}, "message": {"type": "string"}},
        }
    },
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"description": description, "content": {JSON: {"schema": _ERROR_SCHEMA}}}
    for status, description in (
        (400, "Bad JSON or an unknown message type"),
        (404, "Unknown session"),
        (409, "Step before reset or after the episode ended"),
        (413, "Body larger than --max-message-bytes"),
        (422, "Invalid action or reset fields"),
        (503, "No free session (--max-sessions)"),
    )
}
"""Every route's documented errors (``{"error": {"code", "message"}}``; ``/mcp`` answers
JSON-RPC errors in the same envelope), so clients and schema fuzzers know every status."""


def _owner(request: Request) -> str | None:
    owner: str | None = request.scope.get(OWNER)
    return owner


async def _refuse(scope: Any, receive: Any, send: Any, refusal: Refusal) -> None:
    """Answer a refused request with its status, over HTTP or in place of a WebSocket
    handshake (ASGI's ``websocket.http.response``; a bare 403 where the server lacks it)."""
    status, body, headers = refusal.status, refusal.body(), refusal.headers()
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    if (await receive())["type"] != "websocket.connect":
        return
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})


class GameApp(FastAPI):
    """FastAPI, except that ``/ws`` frames skip the middleware stack: every send and receive
    of a game step would otherwise pass through its wrappers. Every request passes the
    ``gate`` first, which leaves its owner in the scope."""

    websocket_endpoint: WebSocketEndpoint
    mcp_websocket_endpoint: MCPWebSocketEndpoint
    gate: Gate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind == "http" or kind == "websocket":
            owner, denied = self.gate.check(
                scope.get("method", "GET"),
                scope["path"],
                asgi_header(scope["headers"]),
                websocket=kind == "websocket",
            )
            if denied is not None:
                await _refuse(scope, receive, send, denied)
                return
            scope[OWNER] = owner
        if scope["type"] == "websocket" and scope["path"] == "/ws":
            await self.websocket_endpoint(scope, receive, send)
        elif scope["type"] == "websocket" and scope["path"] == "/mcp":
            await self.mcp_websocket_endpoint(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


def _registered_spec(name: str) -> GameSpec | None:
    """The declaration registered under ``name``; None for an environment not registered."""
    if entry_point(name) is None:
        return None
    try:
        return load_spec(name)
    except UnknownGame:
        return None


def create_app(
    env_type: type[Environment[Any, Any, Any, Any]],
    settings: ServerSettings | None = None,
    spec: GameSpec | None = None,
) -> FastAPI:
    """The ASGI app serving ``env_type``. ``app.state.sessions`` is its ``SessionManager``;
    ``app.state.spec`` the game's declaration (``spec``, else the one registered under the
    environment's name), which the page at ``/web/`` and the MCP tools are built from."""
    settings = settings or ServerSettings()
    manager = SessionManager(env_type, settings)
    gate = Gate(settings)
    spec = spec or _registered_spec(env_type.name)
    mcp = MCPHandler(manager, spec)
    schemas = wire.schemas(env_type)
    metadata = {
        "name": env_type.name,
        "description": env_type.description,
        "version": env_type.version,
        "protocol": {
            "name": PROTOCOL_NAME,
            "version": PROTOCOL_VERSION,
            "versions": list(PROTOCOL_VERSIONS),
            "standard_profile": STANDARD_PROFILE,
            "extensions": list(EXTENSIONS),
        },
        "mcp": {
            "path": "/mcp",
            "protocol_version": MCP_PROTOCOL_VERSION,
            "tools": list(mcp.tools),
        },
        "max_sessions": settings.max_sessions,
        "session_ttl": settings.session_ttl,
        "max_message_bytes": settings.max_message_bytes,
        "auth": "bearer" if gate.auth_required else None,
    }

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        reaper = asyncio.create_task(manager.reap_forever(), name="session-reaper")
        try:
            yield
        finally:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper

    app = GameApp(
        title=f"arenagym · {env_type.name}",
        description=env_type.description,
        version=env_type.version,
        lifespan=lifespan,
        responses=ERROR_RESPONSES,
    )
    app.gate = gate
    app.state.gate = gate
    app.state.sessions = manager
    app.state.mcp = mcp
    app.state.settings = settings
    app.state.spec = spec

    @app.exception_handler(EnvServerError)
    async def _on_error(request: Request, error: EnvServerError) -> Response:
        manager.count_error(error.code.value)
        return _error_response(error)

    reset_example = {"seed": 7}
    step_example = {"session_id": "…", "action": {}}
    mcp_example = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}

    @app.post("/reset", openapi_extra=_body_doc(schemas["reset"], reset_example))
    async def reset(request: Request) -> Response:
        """Start an episode. Without a session id this opens a new session; its id comes back
        as ``session_id``. With one, it starts a new episode in that session."""
        body = await _read_json(request, settings.max_message_bytes)
        session_id = _session_id(request, body)
        if isinstance(body, dict):
            body = {k: v for k, v in body.items() if k != "session_id"}
        owner = _owner(request)
        session = manager.get(session_id, owner) if session_id else manager.open(owner)
        try:
            observation = manager.reset(session, body)
        except EnvServerError:
            if session_id is None:
                manager.close(session)  # don't leave a session nobody knows the id of
            raise
        return _json(wire.result_body(observation, session.id))

    @app.post("/step", openapi_extra=_body_doc({"type": "object"}, step_example))
    async def step(request: Request) -> Response:
        """Apply ``action`` (the game's action fields) in the session ``session_id``."""
        body = await _read_json(request, settings.max_message_bytes)
        session = manager.get(_session_id(request, body), _owner(request))
        if not isinstance(body, dict) or "action" not in body:
            raise InvalidRequest('The body must be {"session_id": …, "action": {…}}.')
        observation = manager.step(session, body["action"])
        return _json(wire.result_body(observation, session.id))

    @app.get("/state")
    async def state(request: Request, session_id: str | None = None) -> Response:
        """Bookkeeping of the session's episode; hidden information stays hidden."""
        session = manager.get(session_id or request.headers.get(SESSION_HEADER), _owner(request))
        return _json(wire.model_json(manager.state(session)))

    @app.delete("/sessions/{session_id}")
    async def delete_session(request: Request, session_id: str) -> Response:
        """Close a session, and its socket if one holds it, and free its slot."""
        manager.close(manager.get(session_id, _owner(request)))
        return _json(b'{"closed":true}')

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Liveness, the number of open sessions and request counters."""
        counters = manager.counters
        return {
            "status": "draining" if manager.draining else "healthy",
            "game": env_type.name,
            "active_sessions": manager.active,
            "max_sessions": settings.max_sessions,
            "resets": counters.resets,
            "steps": counters.steps,
            "errors": counters.errors,
            "sessions_opened": counters.sessions_opened,
            "sessions_expired": counters.sessions_expired,
            "sockets_idle_closed": counters.sockets_idle_closed,
        }

    @app.get(
        "/metrics",
        response_class=Response,
        responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
    )
    async def metrics() -> Response:
        """Prometheus metrics: sessions, steps, errors by code, step latency, solve and
        invalid-move counts. Needs the token when the server has one."""
        return Response(manager.metrics.exposition(), media_type=METRICS_CONTENT_TYPE)

    @app.get("/metadata")
    async def get_metadata() -> dict[str, Any]:
        """The game, the protocol and the extensions this server offers."""
        return metadata

    @app.get("/schema")
    async def get_schema() -> dict[str, Any]:
        """JSON schemas of the action, observation, state and reset parameters."""
        return schemas

    @app.post(
        "/mcp",
        openapi_extra=_body_doc({"type": "object"}, mcp_example),
        responses={202: {"description": "A notification: nothing to answer"}},
    )
    async def mcp_http(request: Request) -> Response:
        """MCP over JSON-RPC 2.0: ``tools/list``, ``tools/call`` (with ``params.session_id``),
        ``openenv/session/create|close`` and ``arenagym/reset``. Errors are JSON-RPC errors."""
        try:
            body = await _read_body(request, settings.max_message_bytes)
        except EnvServerError as error:
            refusal = error_reply(None, RpcError(INVALID_REQUEST, error.message))
            return _json(orjson.dumps(refusal), error.status)
        answer = mcp.answer_raw(body, None, _owner(request))
        if answer is None:  # a notification
            return Response(status_code=202)
        return _json(orjson.dumps(answer))

    mount_web(app, env_type.name, env_type.description, gate)

    app.websocket_endpoint = WebSocketEndpoint(manager)
    app.mcp_websocket_endpoint = MCPWebSocketEndpoint(mcp)
    # an ASGI app as the endpoint: Starlette serves it as is (its hint names functions only)
    app.router.add_websocket_route("/ws", app.websocket_endpoint)  # type: ignore[arg-type]

    return app
