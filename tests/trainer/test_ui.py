"""``arenagym ui`` against a live model server with the tiny model: through Gradio's client
API (each answer checked against ``/play``'s own), and in headless Chromium.

Browser screenshots are kept in ``outputs/ui-screenshots/`` (``ARENAGYM_SCREENSHOTS`` moves them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from gradio_client import Client

from env_servers.core.registry import load_spec
from tests.trainer.conftest import SERVED_GAMES, ModelServer
from trainer.serving.ui import DEFAULT_MODE, board_html, build_page, verdict_markdown

TOKENS = 48
TURNS = 2
PUZZLE = '{"numbers": [3, 7, 9], "target": 20}'
SHOTS = Path(os.environ.get("ARENAGYM_SCREENSHOTS", "outputs/ui-screenshots"))


@pytest.fixture(scope="module")
def ui_url(model_server: ModelServer) -> Iterator[str]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    blocks = build_page(model_server.url)
    blocks.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    yield blocks.local_url
    blocks.close()


@pytest.fixture(scope="module")
def gradio(ui_url: str) -> Client:
    return Client(ui_url, verbose=False)


def played(server: ModelServer, game: str, fields: dict[str, Any], **params: Any) -> Any:
    url = f"{server.url}/play/{game}"
    return httpx.post(url, json=fields, params=params, timeout=120).json()


def test_solve_shows_the_servers_verdict(gradio: Client, model_server: ModelServer) -> None:
    verdict, reply = gradio.predict("countdown", PUZZLE, TOKENS, api_name="/solve")
    expected = played(
        model_server,
        "countdown",
        {"numbers": [3, 7, 9], "target": 20},
        mode="answer",
        max_turns=1,
        max_new_tokens=TOKENS,
    )
    assert verdict == verdict_markdown(expected)
    assert reply == expected["answer"]
    assert "reason" in verdict or "correct" in verdict


def test_solve_with_bad_fields_says_what_is_wrong(gradio: Client) -> None:
    with pytest.raises(Exception, match="not JSON"):
        gradio.predict("countdown", "{3, 7", TOKENS, api_name="/solve")


@pytest.mark.parametrize("game", SERVED_GAMES)
def test_watch_ends_on_the_episodes_board_and_verdict(
    gradio: Client, model_server: ModelServer, game: str
) -> None:
    board, transcript, status = gradio.predict(
        game, 7, DEFAULT_MODE, TURNS, TOKENS, api_name="/watch"
    )
    expected = played(model_server, game, {"seed": 7}, max_turns=TURNS, max_new_tokens=TOKENS)
    assert status == verdict_markdown(expected)
    assert board == board_html(load_spec(game), expected["observation"])
    assert transcript.startswith("**user**:")


def test_compare_plays_the_same_episode_on_both_sides(
    gradio: Client, model_server: ModelServer
) -> None:
    shown = gradio.predict(
        "wordle",
        7,
        DEFAULT_MODE,
        TURNS,
        TOKENS,
        model_server.url,
        model_server.url,
        api_name="/compare",
    )
    assert shown[:3] == shown[3:]  # one greedy model twice: the same game
    assert shown[2].startswith(("**Won", "**Not won"))


# -- in a browser --------------------------------------------------------------------------------


@pytest.mark.browser
def test_the_page_in_chromium(ui_url: str) -> None:
    from tests.env_servers.test_web_browser import CHROMIUM, CHROMIUM_ARGS, _unavailable

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed")
    if not Path(CHROMIUM).is_file():
        _unavailable(f"Chromium is not installed at {CHROMIUM}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(60_000)
        page.goto(ui_url)
        page.locator("#solve").click()
        verdict = page.locator("#verdict")
        verdict.get_by_text("reward").wait_for()
        assert "solved" in verdict.inner_text().lower()
        page.screenshot(path=str(SHOTS / "solve.png"), full_page=True)
        page.get_by_role("tab", name="Watch").click()
        page.locator("#watch").click()
        status = page.locator("#status")
        status.get_by_text("reward").wait_for()
        assert page.locator("#board pre").count() == 1
        assert page.locator("#transcript").inner_text().startswith("user")
        page.screenshot(path=str(SHOTS / "watch.png"), full_page=True)
        browser.close()
