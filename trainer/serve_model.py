"""``arenagym serve-model``: serve a model, or a training run's checkpoint, over HTTP.

OpenAI-compatible chat completions for any agent framework, and ``/play/{game}`` to watch the
model play one episode of a game against its server (see :mod:`trainer.serving.app`). Every
option is also read from an environment variable; a game's server comes from ``--game-url
GAME=URL`` or ``ARENAGYM_<GAME>_URL``. A known failure is one line on stderr, exit status 1.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Annotated

import click
import typer

from env_servers.core.registry import UnknownGame, game_names, load_spec

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8100

HELP = {"help_option_names": ["-h", "--help"]}
serve_model_app = typer.Typer(add_completion=False, context_settings=HELP)


def game_urls(pairs: Sequence[str], environ: dict[str, str] | None = None) -> dict[str, str]:
    """Each game's server: ``ARENAGYM_<GAME>_URL`` for every registered game, overridden by
    ``GAME=URL`` pairs. Raises ``ValueError`` for a malformed pair or an unknown game."""
    environ = dict(os.environ) if environ is None else environ
    urls = {}
    for name in game_names():
        if url := environ.get(load_spec(name).url_variable):
            urls[name] = url.rstrip("/")
    for pair in pairs:
        name, _, url = pair.partition("=")
        if not (name and url.startswith(("http://", "https://"))):
            raise ValueError(f"--game-url takes GAME=http://HOST:PORT, not {pair!r}")
        try:
            urls[load_spec(name).name] = url.rstrip("/")
        except UnknownGame as error:
            raise ValueError(str(error)) from None
    return urls


@serve_model_app.command()
def serve_model(
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            envvar="ARENAGYM_MODEL",
            help="'tiny', a model or LoRA adapter directory, a training output directory or a "
            "Hub id.",
        ),
    ],
    checkpoint: Annotated[
        str,
        typer.Option(
            envvar="ARENAGYM_CHECKPOINT",
            help="Of a training output directory: 'latest' (its final model, else its newest "
            "checkpoint) or N for checkpoint-N.",
        ),
    ] = "latest",
    game_url: Annotated[
        list[str] | None,
        typer.Option(
            "--game-url",
            metavar="GAME=URL",
            help="A game server for /play (repeatable); ARENAGYM_<GAME>_URL also works.",
        ),
    ] = None,
    host: Annotated[
        str, typer.Option(envvar="ARENAGYM_MODEL_HOST", help="Interface to bind.")
    ] = DEFAULT_HOST,
    port: Annotated[
        int, typer.Option(envvar="ARENAGYM_MODEL_PORT", help="Port to listen on.")
    ] = DEFAULT_PORT,
    backend: Annotated[
        str,
        typer.Option(
            envvar="ARENAGYM_BACKEND",
            help="auto (vLLM when installed and a GPU is there, else transformers), "
            "transformers or vllm.",
        ),
    ] = "auto",
    device: Annotated[
        str | None,
        typer.Option(envvar="ARENAGYM_DEVICE", help="transformers: cpu, cuda or cuda:N."),
    ] = None,
) -> None:
    """Serve a model: OpenAI chat completions, /play/{game} and /health."""
    from clients.local_server import port_in_use
    from trainer.models import ModelLoadError
    from trainer.serving.engine import BACKENDS

    if backend not in BACKENDS:
        raise click.BadParameter(f"one of {', '.join(BACKENDS)}", param_hint="--backend")
    try:
        urls = game_urls(game_url or [])
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--game-url") from None
    if (taken := port_in_use(host, port)) is not None:
        raise click.UsageError(
            f"Port {port} on {host} is in use ({taken}): pick another with --port (or "
            "ARENAGYM_MODEL_PORT)."
        )
    import uvicorn

    from trainer.serving.app import create_app
    from trainer.serving.engine import load_engine

    try:
        engine = load_engine(model, checkpoint=checkpoint, backend=backend, device=device)
    except (ModelLoadError, FileNotFoundError, ValueError) as error:
        click.echo(f"Error: {error}", err=True)
        raise click.exceptions.Exit(1) from None
    click.echo(f"Serving {engine.source} ({engine.backend}); games: {', '.join(urls) or 'none'}")
    uvicorn.run(create_app(engine, urls), host=host, port=port, log_level="info")
