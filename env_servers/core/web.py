"""The page for playing a game by hand: ``GET /web/`` (and ``/`` leading to it).

Plain files, no build step: a game's own view (``GameSpec.web`` names a folder of package
data, e.g. ``"env_servers.wordle:web"``) overrides files of the generic view in
``env_servers/core/web/``, which builds its form from the game's declared tools and action
schema (``web/game.json``). The page speaks the server's own ``/ws``, one socket and so one
session per browser tab.

Every URL in the page is relative, so it works at a Space's root and under a reverse proxy
that mounts the server at a prefix; only the redirect from ``/`` needs the prefix, taken from
``X-Forwarded-Prefix`` or the ASGI ``root_path``. Reset fields may come in the page's link
(``/web/?seed=7``). Where a server requires a token, the page asks for it and posts it to
``/web/login``, which sets it as an HttpOnly, SameSite=Strict cookie that the socket's
handshake then carries: a browser cannot put a header on a WebSocket, and a token in a URL
would land in logs and history (``ensureAccess()`` in ``arena.js``).
"""

from __future__ import annotations

import inspect
import mimetypes
import re
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from env_servers.core.access import AUTH_COOKIE, LOGIN_PATH, Gate, presented
from env_servers.core.spec import GameSpec

GENERIC_VIEW = "env_servers.core:web"
"""The folder of the generic view, and of the files every view shares."""
INDEX = "index.html"
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
"""A file name a view may serve: one path segment, no dot-dot, no hidden files."""
SAFE_PREFIX = re.compile(r"(/[A-Za-z0-9_.~-]+)*")
"""A prefix the ``/`` redirect may follow: a path only, never another host."""
HEADERS = {
    "cache-control": "no-cache",
    "content-security-policy": "default-src 'self'; connect-src 'self'",
    "x-content-type-options": "nosniff",
}
"""Revalidate (a page from an older server must not outlive an upgrade), and load nothing
from anywhere but this server."""


def view_folder(reference: str) -> Traversable:
    """``"package:folder"`` → that folder of the package's data."""
    package, _, folder = reference.partition(":")
    if not package or not folder:
        raise ValueError(f"A view is named 'package:folder', got {reference!r}.")
    return resources.files(package).joinpath(*folder.split("/"))


def view_folders(spec: GameSpec | None) -> list[Traversable]:
    """Where the page's files are looked up, first match wins: the game's view, then the
    generic one."""
    folders = [view_folder(GENERIC_VIEW)]
    if spec is not None and spec.web is not None:
        folders.insert(0, view_folder(spec.web))
    return folders


def tool_info(spec: GameSpec) -> list[dict[str, Any]]:
    """Each tool of the game's agent: its name, docstring and parameters with their types."""
    tools = []
    for name in spec.tool_names():
        function = getattr(spec.agent, name)
        signature = inspect.signature(function)
        parameters = [
            {
                "name": parameter.name,
                "type": parameter.annotation
                if isinstance(parameter.annotation, str)
                else getattr(parameter.annotation, "__name__", str(parameter.annotation)),
            }
            for parameter in signature.parameters.values()
            if parameter.name != "self"
        ]
        tools.append(
            {"name": name, "doc": inspect.getdoc(function) or "", "parameters": parameters}
        )
    return tools


def game_info(spec: GameSpec | None, env_name: str, description: str) -> dict[str, Any]:
    """What the page needs to know of the game beyond ``/schema``."""
    if spec is None:
        return {"name": env_name, "description": description, "tools": [], "instruction": ""}
    return {
        "name": spec.name,
        "description": spec.description,
        "instruction": spec.instruction,
        "tools": tool_info(spec),
        "action": spec.action_type.model_json_schema(),
        "reset": spec.reset_type.model_json_schema(),
        "secret_reset_fields": sorted(spec.hidden_reset_fields),
        "solved_word": spec.solved_word,
    }


def prefix_of(request: Request) -> str:
    """The path the server is mounted at, as the proxy or the ASGI server says ('' if none)."""
    prefix = request.headers.get("x-forwarded-prefix") or request.scope.get("root_path") or ""
    prefix = "/" + prefix.strip().strip("/") if prefix.strip().strip("/") else ""
    safe = SAFE_PREFIX.fullmatch(prefix) and not {".", ".."} & set(prefix.split("/"))
    return prefix if safe else ""


def _query(request: Request) -> str:
    """The query string to carry over a redirect (a link's ``?seed=7`` fixes the game)."""
    query = request.url.query
    return f"?{query}" if query else ""


def _file_response(folders: list[Traversable], name: str) -> Response:
    for folder in folders:
        candidate = folder.joinpath(name)
        if candidate.is_file():
            media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
            if media_type.startswith("text/") or media_type.endswith("javascript"):
                media_type += "; charset=utf-8"
            return Response(candidate.read_bytes(), media_type=media_type, headers=HEADERS)
    return JSONResponse(
        {"error": {"code": "NOT_FOUND", "message": f"No file {name!r} in this page."}},
        status_code=404,
    )


def mount_web(app: FastAPI, env_name: str, description: str, gate: Gate) -> None:
    """Add ``/``, ``/web``, ``/web/``, ``/web/{name}`` and ``POST /web/login``. The game's
    declaration is read from ``app.state.spec`` at each request (None: the generic view,
    with no tools)."""

    @app.get("/web/access", include_in_schema=False)
    async def web_access(request: Request) -> dict[str, bool]:
        """Whether the page must ask for a token: one is required and it holds no good one."""
        token = presented(request.headers.get)
        granted = not gate.auth_required or gate.owner(token) is not None
        return {"required": gate.auth_required, "granted": granted}

    @app.post(LOGIN_PATH, include_in_schema=False)
    async def web_login(request: Request) -> Response:
        """The page's token, checked and kept in a cookie only this server reads."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        token = body.get("token") if isinstance(body, dict) else None
        if not gate.auth_required:
            return Response(status_code=204)
        if not isinstance(token, str) or gate.owner(token) is None:
            return JSONResponse(
                {
                    "error": {
                        "code": "ACCESS_DENIED",
                        "message": "Wrong token: ask whoever runs this server for it.",
                    }
                },
                status_code=401,
            )
        response = Response(status_code=204)
        secure = (
            request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
        )
        response.set_cookie(
            AUTH_COOKIE,
            token,
            path=(prefix_of(request) or "") + "/",
            httponly=True,
            samesite="strict",
            secure=secure,
        )
        return response

    def spec_of(request: Request) -> GameSpec | None:
        spec: GameSpec | None = getattr(request.app.state, "spec", None)
        return spec

    @app.get("/", include_in_schema=False)
    async def root(request: Request) -> Response:
        return RedirectResponse(prefix_of(request) + "/web/" + _query(request), status_code=307)

    @app.get("/web", include_in_schema=False)
    async def web_no_slash(request: Request) -> Response:
        # relative, so it resolves under whatever prefix the browser sees
        return RedirectResponse("web/" + _query(request), status_code=307)

    @app.get("/web/", include_in_schema=False)
    async def web_index(request: Request) -> Response:
        """The page for playing this game by hand."""
        return _file_response(view_folders(spec_of(request)), INDEX)

    @app.get("/web/game.json", include_in_schema=False)
    async def web_game(request: Request) -> dict[str, Any]:
        return game_info(spec_of(request), env_name, description)

    @app.get("/web/{name}", include_in_schema=False)
    async def web_file(request: Request, name: str) -> Response:
        if not SAFE_NAME.fullmatch(name):
            return _file_response([], name)
        return _file_response(view_folders(spec_of(request)), name)
