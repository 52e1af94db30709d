"""MCP over JSON-RPC 2.0, as OpenEnv 0.10 speaks it: ``POST /mcp`` and the ``/mcp`` WebSocket.

The tools are the game's declared tools (``mcp_tools``), and ``tools/call`` plays the same
session logic as ``step``: the game's agent runs the tool against the session, so the result
is the text a model reads in training (feedback, and whether the game is over). As in
OpenEnv's production mode, no reward travels over MCP: it stays on ``step`` and ``state``.

Sessions are the server's sessions (``sessions.py``). Over HTTP, OpenEnv's ``MCPToolClient``
opens one with ``openenv/session/create``, resets it over ``/ws?session_id=…``, then calls
tools with ``params.session_id`` and ends with ``openenv/session/close``; HTTP calls may drive a
session that a socket holds. A ``/mcp`` WebSocket is one session for its lifetime. Our
extension ``arenagym/reset`` starts an episode without leaving MCP and returns the opening
text a model would see.

Errors: a malformed message or call is a JSON-RPC error (OpenEnv's codes, HTTP 200); a move
the game refuses, or a tool called with no episode running, is a tool result with
``isError: true``, so a model reads why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import ValidationError

from env_servers.core import wire
from env_servers.core.access import OWNER
from env_servers.core.errors import EnvServerError, InvalidRequest
from env_servers.core.mcp_tools import RESERVED_TOOL_NAMES, GameTool, game_tools
from env_servers.core.protocol import WS_CLOSE_RATE, WS_CLOSE_TRY_LATER
from env_servers.core.sessions import Session, SessionManager
from env_servers.core.spec import GameSpec
from env_servers.core.ws import RATE_REASON, Receive, Send, Socket

logger = logging.getLogger("arenagym.mcp")

MCP_PROTOCOL_VERSION = "2025-06-18"
"""The MCP revision answered to ``initialize``."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000
"""JSON-RPC 2.0 error codes, as OpenEnv's ``JsonRpcErrorCode``."""

SESSION_CREATE = "openenv/session/create"
SESSION_CLOSE = "openenv/session/close"
RESET = "arenagym/reset"
METHODS = ("initialize", "ping", "tools/list", "tools/call", SESSION_CREATE, SESSION_CLOSE, RESET)

NO_EPISODE = (
    "No episode is running in this session: reset it first (a reset frame on "
    "/ws?session_id=…, POST /reset with the session_id, or arenagym/reset over /mcp)."
)


class RpcError(Exception):
    """A JSON-RPC error reply."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def reply(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_reply(request_id: Any, error: RpcError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def tool_result(text: str, *, done: bool, is_error: bool = False) -> dict[str, Any]:
    """An MCP ``CallToolResult``. ``data`` (FastMCP's name for the plain return value) is what
    OpenEnv's ``MCPToolClient.call_tool`` hands back."""
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"result": text, "done": done},
        "isError": is_error,
        "data": text,
    }


class SessionStepper:
    """What a game's agent steps through when it runs inside the server: the session layer."""

    def __init__(self, manager: SessionManager, session: Session) -> None:
        self.manager, self.session = manager, session

    def step(self, action: dict[str, Any]) -> Any:
        from clients.base import StepResult

        observation = self.manager.step(self.session, action)
        return StepResult(observation, observation.reward, observation.done)


class MCPHandler:
    """Answers JSON-RPC messages for the sessions of ``manager``; ``spec`` supplies the tools
    (none when the game has no declaration)."""

    def __init__(self, manager: SessionManager, spec: GameSpec | None) -> None:
        self.manager = manager
        self.spec = spec
        self.tools: dict[str, GameTool] = game_tools(spec) if spec is not None else {}
        self.listing = [tool.listing() for tool in self.tools.values()]
        self._methods: dict[str, Callable[[dict[str, Any], Session | None, str | None], Any]] = {
            "initialize": self._initialize,
            "ping": lambda params, bound, owner: {},
            "tools/list": lambda params, bound, owner: {"tools": self.listing},
            "tools/call": self._call_tool,
            SESSION_CREATE: self._create,
            SESSION_CLOSE: self._close,
            RESET: self._reset,
        }

    # -- dispatch ------------------------------------------------------------------------

    def answer_raw(
        self, raw: bytes | str, bound: Session | None = None, owner: str | None = None
    ) -> dict[str, Any] | None:
        """One message as received; None for a notification (nothing to answer)."""
        try:
            message = wire.loads(raw)
        except EnvServerError as error:
            return error_reply(None, RpcError(PARSE_ERROR, f"Parse error: {error.message}"))
        return self.answer(message, bound, owner)

    def answer(
        self, message: Any, bound: Session | None = None, owner: str | None = None
    ) -> dict[str, Any] | None:
        """One parsed message. ``bound`` is the session of a ``/mcp`` WebSocket, if any;
        ``owner`` the caller's token digest, the only one whose sessions it may touch."""
        request_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
            request_id = None
        try:
            method, params = self._request(message)
            if method.startswith("notifications/") and "id" not in message:
                return None
            handler = self._methods.get(method)
            if handler is None:
                raise RpcError(
                    METHOD_NOT_FOUND,
                    f"Method not found: {method}. This server answers: {', '.join(METHODS)}.",
                )
            result = handler(params, bound, owner)
        except RpcError as error:
            self.manager.count_error(f"jsonrpc:{error.code}")
            return error_reply(request_id, error)
        except Exception as error:  # a bug: report it, keep serving
            logger.exception("MCP method failed")
            self.manager.count_error(f"jsonrpc:{INTERNAL_ERROR}")
            return error_reply(request_id, RpcError(INTERNAL_ERROR, f"Internal error: {error}"))
        return reply(request_id, result)

    @staticmethod
    def _request(message: Any) -> tuple[str, dict[str, Any]]:
        if isinstance(message, list):
            raise RpcError(INVALID_REQUEST, "Batch requests are not supported: send one at a time.")
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise RpcError(
                INVALID_REQUEST,
                'Invalid Request: send {"jsonrpc": "2.0", "method": …, "params": {…}, "id": …}.',
            )
        method, params = message.get("method"), message.get("params", {})
        if not isinstance(method, str):
            raise RpcError(INVALID_REQUEST, "Invalid Request: 'method' must be a string.")
        if "id" in message and (
            not isinstance(message["id"], (str, int, type(None))) or isinstance(message["id"], bool)
        ):
            raise RpcError(INVALID_REQUEST, "Invalid Request: 'id' must be a string or a number.")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "Params must be an object")
        return method, params

    # -- methods -------------------------------------------------------------------------

    def _initialize(
        self, params: dict[str, Any], bound: Session | None, owner: str | None
    ) -> dict[str, Any]:
        env_type = self.manager.env_type
        return {
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": f"arenagym-{env_type.name}", "version": env_type.version},
            "instructions": self.spec.instruction if self.spec is not None else "",
        }

    def _session(
        self, params: dict[str, Any], bound: Session | None, owner: str | None, method: str
    ) -> Session:
        """The session a call is about: the socket's own, or ``params.session_id`` of the
        caller's (a session a ``/ws`` socket holds included: OpenEnv's MCP client resets
        over ``/ws`` and calls tools over HTTP)."""
        session_id = params.get("session_id")
        if bound is not None and session_id in (None, bound.id):
            self.manager.get(bound.id)  # counts as activity
            return bound
        if not isinstance(session_id, str) or not session_id:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params - {method} needs 'session_id': create a session with "
                f"{SESSION_CREATE} (or POST /reset) and pass its id.",
            )
        try:
            return self.manager.get(session_id, owner)
        except EnvServerError:
            raise RpcError(
                INVALID_PARAMS, "Unknown session_id: it was closed or expired."
            ) from None

    def _create(
        self, params: dict[str, Any], bound: Session | None, owner: str | None
    ) -> dict[str, Any]:
        if bound is not None:
            return {"session_id": bound.id}
        try:
            session = self.manager.open(owner)
        except EnvServerError as error:
            raise RpcError(
                SERVER_ERROR,
                error.message,
                {
                    "code": error.code.value,
                    "active_sessions": self.manager.active,
                    "max_sessions": self.manager.settings.max_sessions,
                },
            ) from None
        return {"session_id": session.id}

    def _close(
        self, params: dict[str, Any], bound: Session | None, owner: str | None
    ) -> dict[str, Any]:
        session_id = params.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            raise RpcError(INVALID_PARAMS, "Invalid params - 'session_id' is required")
        if bound is not None and session_id == bound.id:
            raise RpcError(
                INVALID_REQUEST,
                "Cannot close active WebSocket-managed session via MCP method: close the socket.",
            )
        session = self._session(params, None, owner, SESSION_CLOSE)
        self.manager.close(session)  # the socket that held it ends with it
        return {"session_id": session_id, "closed": True}

    def _reset(
        self, params: dict[str, Any], bound: Session | None, owner: str | None
    ) -> dict[str, Any]:
        """Start an episode: in the socket's session, in ``params.session_id``, or, with
        neither, in a new session whose id comes back (as ``POST /reset`` does)."""
        fields = {k: v for k, v in params.items() if k != "session_id"}
        fresh = bound is None and not params.get("session_id")
        session = (
            self.manager.sessions[self._create({}, None, owner)["session_id"]]
            if fresh
            else self._session(params, bound, owner, RESET)
        )
        try:
            observation = self.manager.reset(session, fields)
        except EnvServerError as error:
            if fresh:
                self.manager.close(session)
            raise RpcError(INVALID_PARAMS, error.message, {"code": error.code.value}) from None
        parts = [self.spec.instruction if self.spec is not None else ""]
        if self.spec is not None:
            from clients.base import StepResult

            agent = self._agent(session)
            agent._observe(StepResult(observation, observation.reward, observation.done))
            parts.append(agent._opening(observation) or "")
        return {
            "session_id": session.id,
            "content": [{"type": "text", "text": "\n\n".join(p.strip() for p in parts if p)}],
            "observation": wire.loads(wire.observation_json(observation)),
            "done": observation.done,
        }

    def _agent(self, session: Session) -> Any:
        if session.agent is None:
            assert self.spec is not None
            session.agent = self.spec.agent._playing(SessionStepper(self.manager, session))
        return session.agent

    def _call_tool(
        self, params: dict[str, Any], bound: Session | None, owner: str | None
    ) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not name:
            raise RpcError(INVALID_PARAMS, "Missing 'name' in params")
        if name in RESERVED_TOOL_NAMES:
            raise RpcError(
                INVALID_PARAMS,
                f"'{name}' is reserved for the simulation API and is not a tool: send it on /ws "
                f"or over HTTP (to start an episode over MCP, call {RESET}).",
            )
        tool = self.tools.get(name)
        if tool is None:
            raise RpcError(
                INVALID_PARAMS, f"Tool not found: {name}. Tools: {', '.join(self.tools) or 'none'}."
            )
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params - 'arguments' must be an object")
        try:
            checked = tool.arguments.model_validate(arguments)
        except ValidationError as error:
            message = InvalidRequest.from_validation(f"arguments of {name}", error).message
            raise RpcError(INVALID_PARAMS, message) from None
        session = self._session(params, bound, owner, "tools/call")
        if not session.started:
            return tool_result(NO_EPISODE, done=False, is_error=True)
        if session.done:
            return tool_result(
                "Game over: this episode has ended. Reset to start a new one.",
                done=True,
                is_error=True,
            )
        agent = self._agent(session)
        try:
            text = getattr(agent, name)(**dict(checked))
        except (EnvServerError, ValueError) as error:  # the game refused the move
            message = error.message if isinstance(error, EnvServerError) else str(error)
            return tool_result(message, done=session.done, is_error=True)
        return tool_result(str(text), done=session.done)


class MCPWebSocketEndpoint:
    """ASGI app for the ``/mcp`` WebSocket: one connection is one session, as in OpenEnv;
    each text message is one JSON-RPC request, answered in order."""

    def __init__(self, handler: MCPHandler) -> None:
        self.handler = handler

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        socket = Socket(send)
        manager = self.handler.manager
        try:
            session = manager.open(scope.get(OWNER))
        except EnvServerError as error:
            manager.count_error(error.code.value)
            refusal = RpcError(SERVER_ERROR, error.message, {"code": error.code.value})
            await socket.send(orjson.dumps(error_reply(None, refusal)))
            await socket.close(WS_CLOSE_TRY_LATER, error.code)
            return
        session.bind(socket, manager.clock())
        limit = manager.settings.max_message_bytes
        try:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive" or session.socket is not socket:
                    return
                if not manager.admit(session):
                    await socket.close(WS_CLOSE_RATE, RATE_REASON)
                    return
                raw = message.get("text")
                if raw is None:
                    raw = message.get("bytes") or b""
                if len(raw) > limit:
                    answer: dict[str, Any] | None = error_reply(
                        None, RpcError(INVALID_REQUEST, f"Message larger than {limit} bytes.")
                    )
                else:
                    answer = self.handler.answer_raw(raw, session, session.owner)
                if socket.closed:
                    return
                if answer is not None:
                    await socket.send(orjson.dumps(answer))
        except Exception:  # the peer vanished between receive and send
            return
        finally:
            if session.socket is socket:
                session.socket = None  # gone already: nothing to close
                manager.close(session)
