"""A TextArena game on the generic page, in headless Chromium: TextArena's prompt and
messages as a transcript, a refused move marked, the form built from the ``move`` tool."""

from __future__ import annotations

from typing import Any

import pytest

from tests.env_servers.test_web_browser import _expect, browser, page, screenshot
from tests.live import live_server

pytestmark = pytest.mark.browser
__all__ = ["browser", "page"]  # the fixtures, shared with the other page tests


def test_the_generic_view_plays_mastermind(page: Any) -> None:
    with live_server("textarena:Mastermind-v0") as server:
        page.goto(f"{server.url}/web/?seed=3")
        expect = _expect()
        expect(page.locator("#title")).to_have_text("textarena:Mastermind-v0")
        expect(page.locator("#tools")).to_contain_text("move(move: str)")
        expect(page.locator(".entry").first).to_contain_text("You are playing Mastermind")
        field = page.locator("#field-move")
        expect(field).to_be_focused()
        page.keyboard.type("[1 2]")
        page.keyboard.press("Enter")
        expect(page.locator(".entry.invalid")).to_contain_text("exactly 4 numbers")
        field.fill("1 2 3 4")
        page.keyboard.press("Enter")
        expect(page.locator(".entry").last).to_contain_text("black peg")
        screenshot(page, "generic-phone-textarena-mastermind")
