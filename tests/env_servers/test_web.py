"""The play page's routes, without a browser: what is served where, and what is refused."""

from __future__ import annotations

from dataclasses import replace
from importlib import resources
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_servers.core.app import create_app
from env_servers.core.registry import game_names, load_environment, load_spec
from env_servers.core.web import view_folder


def client(game: str, **spec_changes: Any) -> TestClient:
    spec = replace(load_spec(game), **spec_changes) if spec_changes else None
    return TestClient(create_app(load_environment(game), spec=spec))


@pytest.mark.parametrize("game", game_names())
def test_every_game_has_a_page(game: str) -> None:
    http = client(game)
    page = http.get("/web/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert 'src="http' not in page.text and 'href="http' not in page.text  # nothing from outside
    assert http.get("/web/arena.js").status_code == 200
    info = http.get("/web/game.json").json()
    assert info["name"] == game
    assert [tool["name"] for tool in info["tools"]] == load_spec(game).tool_names()


@pytest.mark.parametrize("game", game_names())
def test_a_declared_view_is_package_data(game: str) -> None:
    spec = load_spec(game)
    if spec.web is not None:
        assert view_folder(spec.web).joinpath("index.html").is_file()


def test_root_leads_to_the_page_under_any_prefix() -> None:
    http = client("wordle")
    assert http.get("/", follow_redirects=False).headers["location"] == "/web/"
    assert http.get("/web", follow_redirects=False).headers["location"] == "web/"
    behind_proxy = http.get("/", headers={"X-Forwarded-Prefix": "/games/wordle/"})
    assert behind_proxy.history[0].headers["location"] == "/games/wordle/web/"
    mounted = TestClient(http.app, root_path="/mounted")
    assert mounted.get("/", follow_redirects=False).headers["location"] == "/mounted/web/"


def test_the_redirect_never_leaves_the_server() -> None:
    http = client("wordle")
    for prefix in ("//evil.example", "https://evil.example", "/a/../b"):
        reply = http.get("/", headers={"X-Forwarded-Prefix": prefix}, follow_redirects=False)
        location = reply.headers["location"]
        assert location.startswith("/") and not location.startswith("//"), prefix
        assert ":" not in location and ".." not in location, prefix


def test_a_game_view_falls_back_to_shared_files() -> None:
    wordle = client("wordle")
    assert "wordle.js" in wordle.get("/web/").text
    assert wordle.get("/web/style.css").status_code == 200  # from the generic view
    generic = client("wordle", web=None)
    assert "generic.js" in generic.get("/web/").text
    assert generic.get("/web/wordle.js").status_code == 404


@pytest.mark.parametrize("name", [".hidden", "%2e%2e%2fapp.py", "..%2Fapp.py", "nope.js"])
def test_only_page_files_are_served(name: str) -> None:
    assert client("countdown").get(f"/web/{name}").status_code == 404


def test_generic_view_files_are_package_data() -> None:
    folder = resources.files("env_servers.core").joinpath("web")
    assert {"index.html", "generic.js", "arena.js", "style.css", "favicon.svg"} <= {
        entry.name for entry in folder.iterdir()
    }


def test_a_view_is_named_package_colon_folder() -> None:
    with pytest.raises(ValueError, match="package:folder"):
        replace(load_spec("wordle"), web="env_servers/wordle/web")
