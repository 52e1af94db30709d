"""``arenagym play``: play a game by hand in the terminal, against a server or a local one.

The loop here is game-agnostic; each game supplies a :class:`GameUI` (``play_wordle``,
``play_countdown``) whose renderers are pure functions of an observation, so they are tested
without a terminal. Without ``--url`` a server is started as a subprocess on a free loopback
port and stopped on every way out (game over, ``:q``, Ctrl-D, Ctrl-C, SIGTERM, an error).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Console, RenderableType

from clients.base import EnvClient
from clients.errors import ClientError, ConnectError
from clients.local_server import ServerStartError
from clients.local_server import local_server as serve_locally

QUIT_WORDS = frozenset({":q", ":quit", ":exit"})


class Split(StrEnum):
    train = "train"
    eval = "eval"
    all = "all"


class TransportChoice(StrEnum):
    websocket = "websocket"
    http = "http"


class Quit(Exception):
    """The player asked to leave (``:q``, Ctrl-D, Ctrl-C at a prompt)."""


@dataclass(frozen=True, slots=True)
class GameUI:
    """What the loop needs to know about one game."""

    game: str
    client_type: type[EnvClient[Any, Any, Any]]
    render: Callable[[Any, bool], RenderableType]
    """Observation, marks (spell out colour-coded information) → the screen."""
    action: Callable[[str], dict[str, Any]]
    """The player's line → the action's fields."""
    ask: str
    """The prompt for one move."""
    hint: str
    """One line under the board on how to play and quit."""


# -- the local server ---------------------------------------------------------------------------


@contextlib.contextmanager
def local_server(game: str, console: Console) -> Iterator[str]:
    """A local server for the game while the block runs, with a status line while it starts."""
    with contextlib.ExitStack() as stack:
        with console.status(f"Starting a local {game} server…"):
            server = stack.enter_context(serve_locally(game))
        console.print(
            f"[dim]Local {game} server on {server.url} (pid {server.pid}); it stops when you quit."
        )
        yield server.url


# -- the loop -----------------------------------------------------------------------------------


def ask(console: Console, prompt: str) -> str:
    """One line from the player; raises :class:`Quit` on ``:q``, Ctrl-D or Ctrl-C."""
    try:
        text = console.input(prompt)
    except (EOFError, KeyboardInterrupt):
        console.print()
        raise Quit from None
    if text.strip().lower() in QUIT_WORDS:
        raise Quit
    return text.strip()


def ask_again(console: Console) -> bool:
    while True:
        answer = ask(console, "Play again? [bold]\\[y/n][/] ").lower()
        if answer in ("y", "yes"):
            return True
        if answer in ("n", "no", ""):
            return False


def play_episodes(
    client: EnvClient[Any, Any, Any],
    ui: GameUI,
    console: Console,
    reset: dict[str, Any],
    seed: int | None,
) -> None:
    """Episodes until the player declines another; ``seed`` fixes the first, ``seed + 1``
    the next, and so on (a replay of the whole session, not the same game again)."""
    marks = console.no_color or console.color_system is None
    episode = 0
    while True:
        episode_seed = None if seed is None else seed + episode
        result = client.reset(**reset, **({} if episode_seed is None else {"seed": episode_seed}))
        while True:
            _show(console, ui.render(result.observation, marks))
            if result.done:
                break
            console.print(f"[dim]{ui.hint}")
            line = ask(console, ui.ask)
            if line:
                result = client.step(ui.action(line))
        if not ask_again(console):
            return
        episode += 1


def _show(console: Console, screen: RenderableType) -> None:
    if console.is_terminal:
        console.clear()
    console.print(screen)


def run(
    ui: GameUI,
    *,
    url: str | None,
    transport: TransportChoice,
    reset: dict[str, Any],
    seed: int | None,
) -> None:
    """The command's body: exits 0 when the player quits, 1 on a server or connection
    problem (one line on stderr saying what to do), 130 when interrupted outside a prompt."""
    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    base_url = url or "the local server"
    previous = _exit_on_signals()
    try:
        with contextlib.ExitStack() as stack:
            base_url = url or stack.enter_context(local_server(ui.game, console))
            client = _connect(ui, base_url, transport)
            stack.callback(_close_quietly, client)
            play_episodes(client, ui, console, reset, seed)
    except Quit:
        pass
    except KeyboardInterrupt:  # not at a prompt: while starting, or waiting for a reply
        console.print()
        raise SystemExit(130) from None
    except ServerStartError as error:
        errors.print(f"[red]{error}[/] Try `arenagym serve {ui.game}` to see its output.")
        raise SystemExit(1) from None
    except ConnectError:
        advice = (
            f"is the server running? Start one with `arenagym serve {ui.game}`, or leave out "
            "--url to play on a local one."
            if url
            else f"the local server stopped; run `arenagym serve {ui.game}` to see why."
        )
        errors.print(f"[red]Cannot reach {base_url}[/]: {advice}")
        raise SystemExit(1) from None
    except ClientError as error:
        errors.print(f"[red]The {ui.game} server failed:[/] {error}")
        raise SystemExit(1) from None
    finally:
        _restore_signals(previous)


def _connect(ui: GameUI, url: str, transport: TransportChoice) -> EnvClient[Any, Any, Any]:
    return ui.client_type.from_url(url.rstrip("/"), transport=transport.value)


def _close_quietly(client: EnvClient[Any, Any, Any]) -> None:
    with contextlib.suppress(ClientError, OSError):
        client.close()


def _exit_on_signals() -> dict[int, Any]:
    """SIGTERM / SIGHUP (terminal closed) unwind like Ctrl-C, so ``finally`` stops the server."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {}
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            previous[signum] = signal.signal(signum, interrupt)
    return previous


def _restore_signals(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


# -- the command --------------------------------------------------------------------------------

play_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help=(
        "Play a game in the terminal. Without --url a local server is started for the game "
        "and stopped on exit. Quit any time with :q, Ctrl-D or Ctrl-C."
    ),
)

UrlOption = Annotated[
    str | None,
    typer.Option(help="A running server, e.g. http://127.0.0.1:8000 (default: start one here)."),
]
SeedOption = Annotated[
    int | None,
    typer.Option(min=0, help="Fix the first game (later games use seed+1, seed+2, …)."),
]
SplitOption = Annotated[
    Split, typer.Option(help="Pool to draw from: train, held-out eval, or all.")
]
TransportOption = Annotated[
    TransportChoice, typer.Option(help="WebSocket (default) or stateful HTTP sessions.")
]


@play_app.command(help="Find the secret 5-letter word in 6 guesses.")
def wordle(
    url: UrlOption = None,
    seed: SeedOption = None,
    split: SplitOption = Split.train,
    hard: Annotated[
        bool, typer.Option("--hard", help="Hard mode: every revealed hint must be used.")
    ] = False,
    transport: TransportOption = TransportChoice.websocket,
) -> None:
    from clients.play_wordle import WORDLE

    reset = {"split": split.value, "hard_mode": hard}
    run(WORDLE, url=url, transport=transport, reset=reset, seed=seed)


@play_app.command(help="Make the target from the numbers with + - * / and parentheses.")
def countdown(
    url: UrlOption = None,
    seed: SeedOption = None,
    split: SplitOption = Split.train,
    attempts: Annotated[int, typer.Option(min=1, max=10, help="Answers allowed per puzzle.")] = 3,
    transport: TransportOption = TransportChoice.websocket,
) -> None:
    from clients.play_countdown import COUNTDOWN

    reset = {"split": split.value, "attempts": attempts}
    run(COUNTDOWN, url=url, transport=transport, reset=reset, seed=seed)
