"""``arenagym push GAME --space USER/NAME``: stage a game server as a Space and upload it.

Staging is ``space.stage``; uploading is three ``huggingface_hub.HfApi`` calls: create the
Space repo (Docker SDK) if it is missing, upload the folder, set the secrets. A secret given
with ``--secret`` becomes a Space secret and is never written to the folder nor printed; so
does ``--auth-token``, as ``ARENAGYM_AUTH_TOKEN``, which the server in the Space then
requires of every client.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import click
import typer

from env_servers.core.protocol import AUTH_TOKEN_ENV
from env_servers.space import StagingError, stage


@dataclass(frozen=True)
class Upload:
    """Where and how a staged folder goes."""

    space_id: str
    token: str | None = None
    private: bool = False
    hardware: str | None = None
    secrets: dict[str, str] = field(default_factory=dict, repr=False)
    endpoint: str | None = None
    """The Hub's URL (default: ``HF_ENDPOINT``, else huggingface.co); tests point it elsewhere."""


def space_url(space_id: str) -> str:
    from clients.base import space_url as url

    return url(space_id)


def upload(folder: Path, target: Upload, api: Any = None) -> str:
    """Create the Space if missing, upload ``folder``, set the secrets; returns the page URL."""
    if api is None:
        try:
            from huggingface_hub import HfApi
        except ImportError:
            raise click.ClickException(
                "Pushing needs huggingface_hub: pip install 'arenagym[push]' (or use --dry-run)."
            ) from None
        api = HfApi(endpoint=target.endpoint, token=target.token)
    repo = api.create_repo(
        target.space_id,
        repo_type="space",
        space_sdk="docker",
        private=target.private,
        exist_ok=True,
        space_hardware=target.hardware,
    )
    api.upload_folder(
        folder_path=str(folder),
        repo_id=target.space_id,
        repo_type="space",
        commit_message="Deploy with arenagym push",
    )
    for key, value in target.secrets.items():
        api.add_space_secret(target.space_id, key, value)
    return str(getattr(repo, "url", "") or f"https://huggingface.co/spaces/{target.space_id}")


def parse_secrets(pairs: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` pairs; the value never appears in an error."""
    secrets = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(
                "expected KEY=VALUE (the value is hidden here)", param_hint="--secret"
            )
        secrets[key.strip()] = value
    return secrets


push_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@push_app.command(help="Push a game server to a Hugging Face Space (Docker SDK).")
def push(
    game: Annotated[str, typer.Argument(help="Game id, e.g. wordle or countdown.")],
    space: Annotated[str, typer.Option("--space", help="The Space, as user/name.")],
    private: Annotated[bool, typer.Option("--private", help="Create the Space private.")] = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", envvar="HF_TOKEN", help="Hub token (default: HF_TOKEN, else your login)."
        ),
    ] = None,
    hardware: Annotated[
        str | None, typer.Option("--hardware", help="Space hardware, e.g. cpu-basic, cpu-upgrade.")
    ] = None,
    secret: Annotated[
        list[str] | None,
        typer.Option("--secret", help="A Space secret KEY=VALUE (repeatable); never written."),
    ] = None,
    auth_token: Annotated[
        str | None,
        typer.Option(
            "--auth-token",
            envvar=AUTH_TOKEN_ENV,
            help=f"The token the Space's server will require, set as its secret {AUTH_TOKEN_ENV} "
            f"(default: {AUTH_TOKEN_ENV}); never written to the upload.",
        ),
    ] = None,
    wheel: Annotated[
        list[Path] | None,
        typer.Option("--wheel", help="Wheels to install instead of building them from source."),
    ] = None,
    dry_run: Annotated[
        Path | None,
        typer.Option("--dry-run", help="Only stage the Space into this directory; upload nothing."),
    ] = None,
) -> None:
    from env_servers.core.registry import UnknownGame, load_spec

    try:
        spec = load_spec(game)
        url = space_url(space)
    except (UnknownGame, ValueError) as error:
        raise click.ClickException(str(error)) from None
    secrets = parse_secrets(secret or [])
    if auth_token:
        secrets[AUTH_TOKEN_ENV] = auth_token
    client = spec.client.__name__
    try:
        if dry_run is not None:
            files = stage(spec, dry_run, space_id=space, url=url, wheels=wheel or [])
            typer.echo(f"Staged {len(files)} files in {dry_run} (nothing uploaded):")
            for path in files:
                typer.echo(f"  {path.relative_to(dry_run)}")
            typer.echo(f"Build it: docker build -t {spec.file_name.lower()}-space {dry_run}")
            return
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch) / "space"
            stage(spec, folder, space_id=space, url=url, wheels=wheel or [])
            target = Upload(space, token, private, hardware, secrets, os.environ.get("HF_ENDPOINT"))
            page = upload(folder, target)
    except StagingError as error:
        raise click.ClickException(str(error)) from None
    typer.echo(f"Pushed {game} to {page} (secrets set: {', '.join(secrets) or 'none'}).")
    typer.echo(f"Server: {url} (building; it serves once the Space is running).")
    with_token = f", auth_token=os.environ['{AUTH_TOKEN_ENV}']" if auth_token else ""
    typer.echo(
        f'Use it: {client}.from_space("{space}"{with_token})  # from clients import {client}'
    )
