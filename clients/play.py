"""``arenagym play GAME``: play any registered game by hand in the terminal.

The loop here is game-agnostic. A game may ship a :class:`GameUI` in its folder (its
declaration's ``terminal``), whose renderers are pure functions of an observation, so they are
tested without a terminal; any other game gets :func:`generic_ui`, the observation's text and
one typed line per action. Without ``--url`` a server is started as a subprocess on a free
loopback port and stopped on every way out (game over, ``:q``, Ctrl-D, Ctrl-C, SIGTERM, an
error). Each game is a subcommand, its options made from its reset model's fields.
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import click
import httpx
from pydantic import ValidationError
from rich.console import Console, RenderableType
from rich.text import Text

from clients.base import EnvClient, with_token
from clients.commands import GameCommands, option, parse_reset, reset_option
from clients.errors import AccessError, ClientError, ConnectError
from clients.local_server import ServerStartError
from clients.local_server import local_server as serve_locally
from env_servers.core.protocol import AUTH_TOKEN_ENV
from env_servers.core.spec import GameSpec, load_attribute

QUIT_WORDS = frozenset({":q", ":quit", ":exit"})
SPLITS = ("train", "eval", "all")


class TransportChoice(StrEnum):
    websocket = "websocket"
    http = "http"


class Quit(Exception):
    """The player asked to leave (``:q``, Ctrl-D, Ctrl-C at a prompt)."""


@dataclass(frozen=True, slots=True)
class GameUI:
    """How one game looks and reads in a terminal."""

    render: Callable[[Any, bool], RenderableType]
    """Observation, marks (spell out colour-coded information) → the screen."""
    action: Callable[[str], dict[str, Any]]
    """The player's line → the action's fields."""
    ask: str
    """The prompt for one move."""
    hint: str
    """One line under the board on how to play and quit."""
    flags: dict[str, str] = field(default_factory=dict)
    """Short command-line names of reset fields: ``{"hard": "hard_mode"}`` → ``--hard``."""
    defaults: dict[str, Any] = field(default_factory=dict)
    """Reset fields a person playing by hand gets unless they say otherwise."""


def generic_ui(spec: GameSpec) -> GameUI:
    """A view of any game: the observation's prompt (or its fields), and a typed line as the
    action's text field (or its only field, read as that field's type: ``50`` for a number),
    or as a JSON object of its fields."""
    fields = {
        name: info for name, info in spec.action_type.model_fields.items() if name != "metadata"
    }
    text_fields = [name for name, info in fields.items() if info.annotation in (str, str | None)]
    typed = text_fields[0] if text_fields else next(iter(fields)) if len(fields) == 1 else None

    def render(observation: Any, marks: bool = False) -> RenderableType:
        shown = observation.model_dump(exclude={"metadata", "messages"}, exclude_none=True)
        prompt = shown.pop("prompt", None)
        lines = [prompt] if isinstance(prompt, str) else []
        lines += [f"{name}: {json.dumps(value)}" for name, value in shown.items()]
        return Text("\n".join(lines))

    def action(line: str) -> dict[str, Any]:
        if line.startswith("{"):
            return dict(json.loads(line))
        if typed is None:
            raise ValueError("type the action as a JSON object of its fields")
        try:
            value = spec.action_type.model_validate({typed: line})
        except ValidationError as error:
            raise ValueError(f"not a valid {typed}: {error.errors()[0]['msg']}") from None
        return value.model_dump(include={typed})

    shown = ", ".join(text_fields) or typed or "JSON"
    return GameUI(render, action, "Your move: ", f"Type a {shown} (or a JSON action); :q quits.")


def game_ui(spec: GameSpec) -> GameUI:
    return load_attribute(spec.terminal) if spec.terminal else generic_ui(spec)


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
                try:
                    action = ui.action(line)
                except ValueError as error:
                    console.print(f"[red]{error}[/]")
                    continue
                result = client.step(action)
        if not ask_again(console):
            return
        episode += 1


def _show(console: Console, screen: RenderableType) -> None:
    if console.is_terminal:
        console.clear()
    console.print(screen)


def run(
    spec: GameSpec,
    *,
    url: str | None,
    transport: TransportChoice,
    reset: dict[str, Any],
    seed: int | None,
    auth_token: str | None = None,
) -> None:
    """The command's body: exits 0 when the player quits, 1 on a server or connection
    problem (one line on stderr saying what to do), 130 when interrupted outside a prompt."""
    ui = game_ui(spec)
    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    base_url = url or "the local server"
    previous = _exit_on_signals()
    try:
        with contextlib.ExitStack() as stack:
            base_url = url or stack.enter_context(local_server(spec.name, console))
            client = _connect(spec, base_url, transport, auth_token)
            stack.callback(_close_quietly, client)
            play_episodes(client, ui, console, reset, seed)
    except Quit:
        pass
    except KeyboardInterrupt:  # not at a prompt: while starting, or waiting for a reply
        console.print()
        raise SystemExit(130) from None
    except ServerStartError as error:
        errors.print(f"[red]{error}[/] Try `arenagym serve {spec.name}` to see its output.")
        raise SystemExit(1) from None
    except ConnectError:
        advice = (
            f"is the server running? Start one with `arenagym serve {spec.name}`, or leave out "
            "--url to play on a local one."
            if url
            else f"the local server stopped; run `arenagym serve {spec.name}` to see why."
        )
        errors.print(f"[red]Cannot reach {base_url}[/]: {advice}")
        raise SystemExit(1) from None
    except WrongGame as error:
        errors.print(f"[red]{error}[/]")
        raise SystemExit(2) from None
    except AccessError:
        errors.print(
            f"[red]{base_url} requires a token[/]: pass --auth-token, or set "
            f"{AUTH_TOKEN_ENV}, to the one the server was started with."
        )
        raise SystemExit(1) from None
    except ClientError as error:
        errors.print(f"[red]The {spec.name} server failed:[/] {error}")
        raise SystemExit(1) from None
    finally:
        _restore_signals(previous)


def _connect(
    spec: GameSpec, url: str, transport: TransportChoice, auth_token: str | None
) -> EnvClient[Any, Any, Any]:
    headers = with_token(None, auth_token)
    _check_game(spec, url.rstrip("/"), headers)
    return spec.client.from_url(url.rstrip("/"), transport=transport.value, headers=headers)


class WrongGame(ClientError):
    """The server plays another registered game than the one asked for."""


def _check_game(spec: GameSpec, url: str, headers: dict[str, str]) -> None:
    """Refuse a server of another registered game, by the name in its ``/metadata`` (a server
    that does not say is given the benefit of the doubt)."""
    from env_servers.core.registry import game_names

    try:
        served = httpx.get(f"{url}/metadata", headers=headers, timeout=10, trust_env=False)
        served = served.json().get("name")
    except (httpx.HTTPError, ValueError, AttributeError):
        return  # unreachable or not ours: the client's own connection says what is wrong
    if served != spec.name and served in game_names():
        raise WrongGame(
            f"{url} serves {served}, not {spec.name}: play it with `arenagym play {served} "
            f"--url {url}`, or give the URL of a {spec.name} server."
        )


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

COMMON_FIELDS = frozenset({"seed", "episode_id", "split"})


def _reset_options(spec: GameSpec, ui: GameUI) -> list[click.Option]:
    """One option per reset field a player may set: typed, ranged and described as the reset
    model declares it; hidden-information fields are left out."""
    short = {name: flag for flag, name in ui.flags.items()}
    options = []
    for name, info in spec.reset_type.model_fields.items():
        if name in COMMON_FIELDS or name in spec.hidden_reset_fields:
            continue
        flag = "--" + short.get(name, name).replace("_", "-")
        if info.annotation is bool:
            options.append(click.Option([flag, name], is_flag=True, help=info.description))
            continue
        scalars: dict[Any, Any] = {int: int, float: float, str: str}
        kind = scalars.get(info.annotation)
        if kind is None:
            continue  # lists and other structured fields: --reset FIELD=JSON
        bounds = {m.__class__.__name__: m for m in info.metadata}
        if kind in (int, float) and ("Ge" in bounds or "Le" in bounds):
            low = getattr(bounds.get("Ge"), "ge", None)
            high = getattr(bounds.get("Le"), "le", None)
            kind = (click.IntRange if kind is int else click.FloatRange)(low, high)
        default = ui.defaults.get(name)
        described = info.description or ""
        if default is not None:
            described += f" [default here: {default}]"
        options.append(click.Option([flag, name], type=kind, default=None, help=described))
    return options


def game_command(spec: GameSpec) -> click.Command:
    """``arenagym play <game>``, with the game's own reset options."""
    ui = game_ui(spec)
    params: list[click.Parameter] = [
        click.Option(
            ["--url"],
            help="A running server, e.g. http://127.0.0.1:8000 (default: start one here).",
        ),
        click.Option(
            ["--seed"],
            type=click.IntRange(0),
            help="Fix the first game (later games use seed+1, seed+2, …).",
        ),
        *(
            [
                option(
                    "--split",
                    click.Choice(SPLITS),
                    "train",
                    "Pool to draw from: train, held-out eval, or all.",
                )
            ]
            if "split" in spec.reset_fields
            else []
        ),
        option(
            "--transport",
            click.Choice([t.value for t in TransportChoice]),
            "websocket",
            "WebSocket or stateful HTTP sessions.",
        ),
        click.Option(
            ["--auth-token"],
            envvar=AUTH_TOKEN_ENV,
            help=f"The token of a server started with one (env {AUTH_TOKEN_ENV}).",
        ),
        *_reset_options(spec, ui),
        reset_option(),
    ]

    def callback(
        url: str | None,
        seed: int | None,
        transport: str,
        reset_pairs: Sequence[str],
        auth_token: str | None,
        split: str | None = None,
        **options: Any,
    ) -> None:
        given = {k: v for k, v in options.items() if v not in (None, False)}
        reset = {**({"split": split} if split else {}), **ui.defaults, **given}
        reset |= parse_reset(reset_pairs)
        run(
            spec,
            url=url,
            transport=TransportChoice(transport),
            reset=reset,
            seed=seed,
            auth_token=auth_token,
        )

    return click.Command(
        spec.name, params=params, callback=callback, help=spec.description, no_args_is_help=False
    )


play_app = GameCommands(
    "play",
    game_command,
    no_args_is_help=True,
    help=(
        "Play a game in the terminal. Without --url a local server is started for the game "
        "and stopped on exit. Quit any time with :q, Ctrl-D or Ctrl-C."
    ),
)
