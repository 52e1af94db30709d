"""The play pages in a real browser (headless Chromium driven by Playwright) against live
servers on loopback: whole games played by keyboard, colours, verdicts, two tabs, a prefix.

Screenshots are kept in ``outputs/web-screenshots/`` (``ARENAGYM_SCREENSHOTS`` to move them).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from env_servers.core.registry import load_spec
from env_servers.countdown.game import solve
from tests.live import LiveServer, live_server

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("ARENAGYM_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PHONE = {"width": 390, "height": 844}
SHOTS = Path(os.environ.get("ARENAGYM_SCREENSHOTS", "outputs/web-screenshots"))
TIMEOUT_MS = 5_000


def _unavailable(reason: str) -> None:
    """Fail where a browser is required (CI sets ARENAGYM_REQUIRE_BROWSER=1), else skip."""
    if os.environ.get("ARENAGYM_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (ARENAGYM_REQUIRE_BROWSER=1: browser tests must run here)")
    pytest.skip(f"{reason}; .ci/run installs it (apt-get install chromium, pip install playwright)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed")
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        _unavailable(f"Chromium is not installed at {CHROMIUM}")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE, device_scale_factor=1)
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda message: message.type == "error" and errors.append(message.text))
    yield tab
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def screenshot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def tile_states(page: Any, row: int) -> list[str | None]:
    tiles = page.locator(".row").nth(row).locator(".tile")
    return [tiles.nth(i).get_attribute("data-state") for i in range(5)]


def key_state(page: Any, letter: str) -> str | None:
    state: str | None = page.locator(f'.key[data-key="{letter}"]').get_attribute("data-state")
    return state


def guess(page: Any, word: str, accepted: bool = True) -> None:
    """Type ``word`` and Enter; when it is to be accepted, wait until its row is marked."""
    page.keyboard.type(word)
    page.keyboard.press("Enter")
    if accepted:
        _expect()(page.locator('.tile[data-state="typed"]')).to_have_count(0)


def test_wordle_whole_game_by_keyboard(page: Any, wordle_server: LiveServer) -> None:
    page.goto(f"{wordle_server.url}/web/?word=crane")
    expect = _expect()
    expect(page.locator("#left")).to_have_text("6 guesses left")

    guess(page, "zzzzz", accepted=False)  # not a word: the reason, and no guess used
    expect(page.locator("#status")).to_contain_text("not an English word")
    expect(page.locator("#left")).to_have_text("6 guesses left")
    screenshot(page, "wordle-phone-invalid")
    for _ in range(5):
        page.keyboard.press("Backspace")

    guess(page, "slate")
    expect(page.locator("#left")).to_have_text("5 guesses left")
    assert tile_states(page, 0) == ["absent", "absent", "correct", "absent", "correct"]
    assert page.locator(".row").nth(0).inner_text().split() == list("SLATE")  # shown in capitals
    assert (key_state(page, "a"), key_state(page, "s"), key_state(page, "c")) == (
        "correct",
        "absent",
        None,
    )

    guess(page, "acorn")  # a, c, r and n elsewhere; the keyboard keeps a's best state
    assert tile_states(page, 1) == ["present", "present", "absent", "present", "present"]
    assert (key_state(page, "a"), key_state(page, "c"), key_state(page, "o")) == (
        "correct",
        "present",
        "absent",
    )
    screenshot(page, "wordle-phone-playing")

    guess(page, "crane")
    expect(page.locator("#status")).to_contain_text("You won in 3 guesses")
    expect(page.locator("#status")).to_contain_text("CRANE")
    assert tile_states(page, 2) == ["correct"] * 5
    expect(page.locator("#again")).to_be_focused()
    screenshot(page, "wordle-phone-won")

    page.keyboard.press("Enter")  # play again, still by keyboard
    expect(page.locator("#left")).to_have_text("6 guesses left")
    assert tile_states(page, 0) == [None] * 5
    assert key_state(page, "a") is None
    guess(page, "slate")
    expect(page.locator("#left")).to_have_text("5 guesses left")


def test_wordle_shows_the_answer_after_a_lost_game(page: Any, wordle_server: LiveServer) -> None:
    page.goto(f"{wordle_server.url}/web/?word=crane")
    _expect()(page.locator("#left")).to_have_text("6 guesses left")
    for word in ("plumb", "fight", "dowdy", "jazzy", "kiosk", "vexed"):
        guess(page, word)
    _expect()(page.locator("#status")).to_contain_text("The word was CRANE")
    _expect()(page.locator("#left")).to_have_text("0 guesses left")


def test_the_page_loads_nothing_from_elsewhere(page: Any, wordle_server: LiveServer) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{wordle_server.url}/")
    _expect()(page.locator("#left")).to_have_text("6 guesses left")
    hosts = {url.split("/")[2] for url in requested}
    assert hosts == {wordle_server.url.split("/")[2]}, requested


def test_two_tabs_play_two_games(browser: Any, wordle_server: LiveServer) -> None:
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(TIMEOUT_MS)
    first, second = context.new_page(), context.new_page()
    first.goto(f"{wordle_server.url}/web/?word=crane")
    second.goto(f"{wordle_server.url}/web/?word=slate")
    for tab in (first, second):
        _expect()(tab.locator("#left")).to_have_text("6 guesses left")
        guess(tab, "crane", accepted=False)
    _expect()(first.locator("#status")).to_contain_text("You won")
    _expect()(second.locator("#left")).to_have_text("5 guesses left")
    assert tile_states(second, 0) == ["absent", "absent", "correct", "absent", "correct"]
    context.close()


def test_countdown_wrong_invalid_then_right(page: Any, countdown_server: LiveServer) -> None:
    page.goto(f"{countdown_server.url}/web/?seed=11&attempts=2")
    expect = _expect()
    expect(page.locator("#left")).to_have_text("2 attempts left")
    numbers = [int(n) for n in page.locator(".number").all_inner_texts()]
    target = int(page.locator("#target").inner_text())
    assert len(numbers) == 3 and target > 0
    box = page.locator("#expression")
    expect(box).to_be_focused()

    page.keyboard.type(f"{numbers[0]} + {numbers[0]}")  # not exactly the given numbers
    page.keyboard.press("Enter")
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "invalid")
    expect(page.locator("#verdict-title")).to_contain_text("no attempt used")
    assert page.locator("#verdict-reason").inner_text()
    expect(page.locator("#left")).to_have_text("2 attempts left")

    wrong = " + ".join(map(str, numbers))
    if sum(numbers) == target:  # the puzzle is fixed by its seed; keep the test honest anyway
        wrong = " * ".join(map(str, numbers))
    box.fill(wrong)
    page.keyboard.press("Enter")
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "wrong")
    expect(page.locator("#verdict-reason")).to_contain_text(f"target {target}")
    expect(page.locator("#left")).to_have_text("1 attempt left")

    solution = solve(numbers, target)
    assert solution is not None
    box.fill(solution)
    page.keyboard.press("Enter")
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "correct")
    expect(page.locator("#status")).to_have_text("Solved!")
    expect(page.locator("#again")).to_be_focused()
    screenshot(page, "countdown-phone-solved")

    page.keyboard.press("Enter")  # another puzzle
    expect(page.locator("#verdict")).to_be_hidden()
    expect(box).to_be_enabled()


def test_generic_view_plays_a_game_without_its_own(page: Any) -> None:
    with live_server("countdown") as server:
        app: Any = server.config.app  # the page reads the declaration from app.state.spec
        app.state.spec = replace(load_spec("countdown"), web=None)
        page.goto(f"{server.url}/web/?numbers=3,9,2&target=24&attempts=2")
        expect = _expect()
        expect(page.locator("#title")).to_have_text("countdown")
        expect(page.locator("#tools")).to_contain_text("submit(expression: str)")
        expect(page.locator(".entry").first).to_contain_text("24")  # the prompt
        expression = page.locator("#field-expression")
        expect(expression).to_be_focused()  # a tool's parameter comes first

        page.keyboard.type("3 + 3")
        page.keyboard.press("Enter")
        expect(page.locator(".entry.invalid")).to_contain_text("no turn used")
        page.keyboard.type("(3 + 9) * 2")
        page.keyboard.press("Enter")
        expect(page.locator("#status")).to_contain_text("Game over: solved")
        expect(page.locator(".entry").last).to_contain_text("reward 1 ")
        screenshot(page, "generic-phone-countdown")


def test_generic_view_plays_a_textarena_style_game(page: Any) -> None:
    """Wordle without its own view: TextArena's transcript, played by its ``message`` field."""
    with live_server("wordle") as server:
        app: Any = server.config.app
        app.state.spec = replace(load_spec("wordle"), web=None)
        page.goto(f"{server.url}/web/?word=crane")
        expect = _expect()
        expect(page.locator("#tools")).to_contain_text("guess(word: str)")
        expect(page.locator(".entry").first).to_contain_text("Wordle")
        page.locator("#field-message").fill("[slate]")
        page.keyboard.press("Enter")
        expect(page.locator(".entry").nth(1)).to_contain_text("X X G X G")
        expect(page.locator(".entry").nth(1)).to_contain_text("You have 5 guesses left")
        page.locator("#field-guess").fill("crane")
        page.keyboard.press("Enter")
        expect(page.locator("#status")).to_contain_text("Game over: won")
        screenshot(page, "generic-phone-wordle")


class PrefixProxy:
    """What a reverse proxy does when it mounts a server at ``prefix``: passes on only paths
    under it, strips it, and says so in ``X-Forwarded-Prefix``."""

    def __init__(self, app: Any, prefix: str) -> None:
        self.app, self.prefix = app, prefix

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            path: str = scope["path"]
            if not path.startswith(self.prefix + "/"):
                if scope["type"] == "http":
                    await send({"type": "http.response.start", "status": 404, "headers": []})
                    await send({"type": "http.response.body", "body": b""})
                else:
                    await send({"type": "websocket.close", "code": 1008})
                return
            header = (b"x-forwarded-prefix", self.prefix.encode())
            scope = dict(
                scope,
                path=path[len(self.prefix) :],
                raw_path=path[len(self.prefix) :].encode(),
                headers=[*scope["headers"], header],
            )
        await self.app(scope, receive, send)


def test_the_page_works_under_a_path_prefix(page: Any) -> None:
    prefix = "/some/prefix"
    server = LiveServer("wordle", _test_settings())
    server.config.app = PrefixProxy(server.config.app, prefix)
    with server:
        page.goto(f"{server.url}{prefix}/?word=crane")
        assert page.url.startswith(f"{server.url}{prefix}/web/")
        _expect()(page.locator("#left")).to_have_text("6 guesses left")
        guess(page, "slate")
        _expect()(page.locator("#left")).to_have_text("5 guesses left")
        assert tile_states(page, 0)[2] == "correct"


def _test_settings() -> Any:
    from env_servers.core.config import ServerSettings

    return ServerSettings(log_level="warning", allow_explicit_secrets=True)


def _expect() -> Any:
    from playwright.sync_api import expect

    return expect


def test_a_server_with_a_token_asks_for_it_and_keeps_it_out_of_urls(browser: Any) -> None:
    """The page asks for the token, the server keeps it in an HttpOnly cookie, and no request
    the page makes carries it in its URL (where logs and history would keep it)."""
    token = "t0k3n-for-the-browser-test-0123456789"
    with live_server("wordle", auth_tokens=(token,)) as server:
        context = browser.new_context(viewport=PHONE)
        context.set_default_timeout(TIMEOUT_MS)
        tab = context.new_page()
        requested: list[str] = []
        tab.on("request", lambda request: requested.append(request.url))
        tab.on("websocket", lambda socket: requested.append(socket.url))
        tab.goto(f"{server.url}/web/?word=crane")
        expect = _expect()
        dialog = tab.locator("#token-dialog")
        expect(dialog).to_be_visible()
        screenshot(tab, "token-prompt")
        dialog.locator("input").fill("not-the-token-0123456789")
        dialog.locator("button").click()
        expect(dialog.locator(".status")).to_have_text("Wrong token.")
        dialog.locator("input").fill(token)
        dialog.locator("button").click()
        expect(dialog).to_have_count(0)
        expect(tab.locator("#left")).to_have_text("6 guesses left")
        guess(tab, "crane", accepted=False)
        expect(tab.locator("#status")).to_contain_text("You won")
        cookies = context.cookies()
        assert [(c["name"], c["httpOnly"], c["sameSite"]) for c in cookies] == [
            ("arenagym_token", True, "Strict")
        ]
        assert tab.evaluate("document.cookie") == ""  # out of the page's scripts' reach
        again = context.new_page()  # a new tab of the same browser asks no more
        again.goto(f"{server.url}/web/?word=crane")
        expect(again.locator("#left")).to_have_text("6 guesses left")
        assert again.locator("#token-dialog").count() == 0
        context.close()
    assert any("/ws" in url for url in requested), requested
    assert not [url for url in requested if token in url], requested
