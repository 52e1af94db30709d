"""The ``arenagym`` command, assembled lazily from each package's own subcommands.

``env_servers`` is the package every install has (a server-only install has no torch), so the
root lives here and imports a subcommand's module only when that subcommand runs: ``arenagym
serve`` never imports the trainer, and a missing extra is reported with the install line.
"""

from __future__ import annotations

import importlib
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import click
import typer

from clients.local_server import port_in_use
from env_servers.core import config as defaults
from env_servers.core.protocol import AUTH_TOKEN_ENV

SUBCOMMANDS: dict[str, tuple[str, str, str | None]] = {
    # name: (module:attribute of a Typer app or click command, one-line help, extra it needs)
    "serve": ("env_servers.cli:serve_app", "Serve a game over HTTP and WebSocket.", None),
    "play": ("clients.play:play_app", "Play a game in the terminal.", None),
    "push": ("env_servers.push:push_app", "Push a game server to a Hugging Face Space.", None),
    "check": (
        "env_servers.check.cli:check_command",
        "Check that a game behaves as it declares (in-process or a running server).",
        "check",
    ),
    "train": ("trainer.cli:train_app", "Train a model with GRPO against game servers.", "train"),
    "eval": ("trainer.eval_cli:eval_app", "Evaluate models on held-out episodes.", "train"),
    "tiny-model": ("trainer.cli:tiny_model_app", "Write a tiny offline model.", "train"),
    "serve-model": (
        "trainer.serve_model:serve_model_app",
        "Serve a model: OpenAI chat completions, and episodes of any game.",
        "train",
    ),
    "ui": ("trainer.serving.ui:ui_app", "A web page to try a served model on the games.", "ui"),
    "warmup": (
        "trainer.warmup_cli:warmup_app",
        "Supervised warm-up before GRPO (answer format, first skills).",
        "train",
    ),
    "new": ("env_servers.scaffold.cli:new_app", "Write a new game's package to start from.", None),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in SUBCOMMANDS if _available(name)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in SUBCOMMANDS:
            return None
        target, help_text, extra = SUBCOMMANDS[name]
        module_name, attribute = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            hint = f" Install it with: pip install 'arenagym[{extra}]'." if extra else ""
            raise click.ClickException(
                f"'arenagym {name}' is unavailable ({error}).{hint}"
            ) from None
        command: Any = getattr(module, attribute)
        if isinstance(command, typer.Typer):
            return TyperCommand(name, command, help_text)
        command.help = command.help or help_text
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SUBCOMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


class TyperCommand(click.Command):
    """Runs a Typer app as a subcommand. Typer carries its own copy of click, so its app is
    handed the remaining arguments and exits by itself (help, usage errors) rather than being
    nested as a command of this group."""

    def __init__(self, name: str, app: typer.Typer, help_text: str) -> None:
        super().__init__(
            name,
            help=help_text,
            add_help_option=False,
            context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        )
        self.app = app

    def invoke(self, ctx: click.Context) -> Any:
        return self.app(args=ctx.args, prog_name=ctx.command_path)


def _available(name: str) -> bool:
    module_name = SUBCOMMANDS[name][0].split(":")[0]
    return importlib.util.find_spec(module_name.split(".")[0]) is not None


HELP = {"help_option_names": ["-h", "--help"]}


class LogLevelChoice(StrEnum):
    critical = "critical"
    error = "error"
    warning = "warning"
    info = "info"
    debug = "debug"
    trace = "trace"


class WsChoice(StrEnum):
    inline = "inline"
    asgi = "asgi"


serve_app = typer.Typer(add_completion=False, no_args_is_help=False, context_settings=HELP)


@serve_app.command(help="Serve a game over HTTP and WebSocket (OpenEnv-compatible).")
def serve(
    game: Annotated[str | None, typer.Argument(help="A registered game's id (see --list).")] = None,
    host: Annotated[str, typer.Option(envvar="ARENAGYM_HOST", help="Interface to bind.")] = (
        defaults.DEFAULT_HOST
    ),
    port: Annotated[int, typer.Option(envvar="ARENAGYM_PORT", help="Port to listen on.")] = (
        defaults.DEFAULT_PORT
    ),
    max_sessions: Annotated[
        int, typer.Option(envvar="ARENAGYM_MAX_SESSIONS", help="Open sessions at most.")
    ] = defaults.DEFAULT_MAX_SESSIONS,
    session_ttl: Annotated[
        float,
        typer.Option(
            envvar="ARENAGYM_SESSION_TTL",
            help="Seconds a session without a socket survives without requests.",
        ),
    ] = defaults.DEFAULT_SESSION_TTL,
    log_level: Annotated[
        LogLevelChoice,
        typer.Option(
            envvar="ARENAGYM_LOG_LEVEL",
            case_sensitive=False,
            metavar="LEVEL",
            help="How much the server logs: critical, error, warning, info, debug or trace.",
        ),
    ] = LogLevelChoice.info,
    allow_explicit_secrets: Annotated[
        bool,
        typer.Option(
            "--allow-explicit-secrets",
            envvar="ARENAGYM_ALLOW_EXPLICIT_SECRETS",
            help="Accept reset fields that fix hidden information (e.g. Wordle's word).",
        ),
    ] = False,
    max_message_bytes: Annotated[
        int,
        typer.Option(envvar="ARENAGYM_MAX_MESSAGE_BYTES", help="Largest frame or body answered."),
    ] = defaults.DEFAULT_MAX_MESSAGE_BYTES,
    max_header_bytes: Annotated[
        int,
        typer.Option(
            envvar="ARENAGYM_MAX_HEADER_BYTES",
            help="Largest HTTP request line and headers read (larger: HTTP 431).",
        ),
    ] = defaults.DEFAULT_MAX_HEADER_BYTES,
    header_timeout: Annotated[
        float,
        typer.Option(
            envvar="ARENAGYM_HEADER_TIMEOUT",
            help="Seconds a connection may take to send its request headers (then HTTP 408).",
        ),
    ] = defaults.DEFAULT_HEADER_TIMEOUT,
    max_message_rate: Annotated[
        float,
        typer.Option(
            envvar="ARENAGYM_MAX_MESSAGE_RATE",
            help="WebSocket messages per second per connection (faster: closed, 4429); 0: no "
            "limit.",
        ),
    ] = defaults.DEFAULT_MAX_MESSAGE_RATE,
    first_frame_timeout: Annotated[
        float,
        typer.Option(
            envvar="ARENAGYM_FIRST_FRAME_TIMEOUT",
            help="Seconds a new WebSocket may stay silent before its first message (then "
            "closed, 4400).",
        ),
    ] = defaults.DEFAULT_FIRST_FRAME_TIMEOUT,
    fragment_timeout: Annotated[
        float,
        typer.Option(
            envvar="ARENAGYM_FRAGMENT_TIMEOUT",
            help="Seconds a fragmented WebSocket message may take to finish (then closed, 1008).",
        ),
    ] = defaults.DEFAULT_FRAGMENT_TIMEOUT,
    idle_timeout: Annotated[
        float | None,
        typer.Option(
            envvar="ARENAGYM_IDLE_TIMEOUT",
            show_default="--session-ttl",
            help="Seconds a WebSocket may stay silent (then closed, 4408; its session waits "
            "--session-ttl for resume). Keep it no shorter than --session-ttl.",
        ),
    ] = None,
    ws: Annotated[
        WsChoice,
        typer.Option(
            envvar="ARENAGYM_WS",
            case_sensitive=False,
            metavar="MODE",
            help="How /ws is served: inline (fastest; falls back to asgi, with a warning, on "
            "a uvicorn it is not tested on) or asgi (the app's endpoint).",
        ),
    ] = WsChoice.inline,
    auth_token: Annotated[
        list[str] | None,
        typer.Option(
            envvar=AUTH_TOKEN_ENV,
            help="Require this bearer token on every route but /health (repeat for several "
            "tokens; a session answers only the token that opened it). Prefer the environment "
            "variable or --auth-token-file: a flag shows in the process list.",
        ),
    ] = None,
    auth_token_file: Annotated[
        Path | None,
        typer.Option(
            envvar="ARENAGYM_AUTH_TOKEN_FILE",
            help="Read tokens from this file, one per line (blank lines and # comments skipped).",
        ),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(
            envvar="ARENAGYM_ALLOWED_ORIGINS",
            help="A web page origin (https://host[:port]) allowed to call this server besides "
            "its own pages; repeat for several.",
        ),
    ] = None,
    list_games: Annotated[
        bool, typer.Option("--list", help="List the registered games and exit.")
    ] = False,
) -> None:
    from env_servers.core.registry import UnknownGame, entry_point, game_names, load_environment

    if list_games:
        for name in game_names():
            typer.echo(f"{name}\t{getattr(entry_point(name), 'value', '')}")
        return
    if game is None:
        raise typer.BadParameter("name a game (see --list)", param_hint="GAME")
    try:
        env_type = load_environment(game)
        settings = defaults.ServerSettings(
            host=host,
            port=port,
            max_sessions=max_sessions,
            session_ttl=session_ttl,
            log_level=log_level.value,
            allow_explicit_secrets=allow_explicit_secrets,
            max_message_bytes=max_message_bytes,
            max_header_bytes=max_header_bytes,
            header_timeout=header_timeout,
            max_message_rate=max_message_rate,
            first_frame_timeout=first_frame_timeout,
            fragment_timeout=fragment_timeout,
            idle_timeout=session_ttl if idle_timeout is None else idle_timeout,
            ws=ws.value,
            auth_tokens=(*(auth_token or ()), *read_tokens(auth_token_file)),
            allowed_origins=tuple(allowed_origin or ()),
        )
    except (UnknownGame, ValueError, OSError) as error:
        raise click.UsageError(str(error)) from None
    if (taken := port_in_use(host, port)) is not None:
        raise click.UsageError(
            f"Port {port} on {host} is in use ({taken}): pick another with --port (or "
            "ARENAGYM_PORT), or stop what listens there."
        )
    from env_servers.core.server import serve as run_server

    run_server(env_type, settings)


def read_tokens(path: Path | None) -> tuple[str, ...]:
    """The tokens in ``path``, one a line; an unreadable or empty file is an error."""
    if path is None:
        return ()
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise ValueError(f"cannot read --auth-token-file {path}: {error.strerror}") from None
    tokens = tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))
    if not tokens:
        raise ValueError(f"--auth-token-file {path} holds no token: write one per line")
    return tokens


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="arenagym")
def main() -> None:
    """arenagym: game environments for RL of language models, and a GRPO trainer."""
