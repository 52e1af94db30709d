"""``arenagym check GAME [--url URL]``: the checker's report, for a person or as JSON.

GAME is a registered game, or a declaration by reference (``package.module:ATTRIBUTE``) to
check a game before registering it. Without ``--url`` the game runs in-process behind the
server's session layer; with it, the server at URL is checked, as GAME or, without GAME, as
whatever its ``/metadata`` names (a server not registered here gets the checks its
``/schema`` and ``/metadata`` allow). Exit status: 0 all passed, 1 a check failed, 2 usage.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import cast

import click
from rich.console import Console
from rich.table import Table

from clients.errors import ClientError
from env_servers.check import DEFAULT_EPISODES, InProcessTarget, Report, URLTarget, check
from env_servers.check.targets import DEFAULT_TIMEOUT, Target, TransportName
from env_servers.core.family import split_name
from env_servers.core.registry import (
    UnknownGame,
    environment_of,
    load_spec,
    registered,
    registered_families,
)
from env_servers.core.spec import GameSpec, load_attribute

STYLES = {"passed": ("✓ passed", "green"), "failed": ("✗ FAILED", "bold red"),
          "skipped": ("– skipped", "dim")}  # fmt: skip


def render(report: Report, console: Console) -> None:
    """A table a person reads: one row per check, what it saw or why it failed or skipped."""
    table = Table(
        title=f"arenagym check {report.game} · {report.target} · {report.episodes} episodes "
        f"from seed {report.seed}",
        title_justify="left",
        expand=True,
    )
    table.add_column("check", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("detail", ratio=1)
    for result in report.results:
        label, style = STYLES[result.status]
        table.add_row(result.name, f"[{style}]{label}[/]", result.detail)
    console.print(table)
    counts = {status: sum(r.status == status for r in report.results) for status in STYLES}
    verdict = "[bold red]FAILED[/]" if counts["failed"] else "[bold green]passed[/]"
    console.print(
        f"{verdict}: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['skipped']} skipped"
    )


def as_json(report: Report) -> str:
    body = {
        "game": report.game,
        "target": report.target,
        "episodes": report.episodes,
        "seed": report.seed,
        "passed": report.passed,
        "results": [asdict(result) for result in report.results],
    }
    return json.dumps(body, indent=2, ensure_ascii=False)


def find_spec(game: str) -> GameSpec:
    """A registered game (a family's member included), or a ``module:attribute`` naming a
    ``GameSpec``."""
    named = split_name(game)
    if named is None or named[0] in registered_families() or game in registered():
        try:
            return load_spec(game)
        except UnknownGame as error:
            raise click.BadParameter(str(error), param_hint="GAME") from None
    try:
        spec = load_attribute(game)
    except (ImportError, AttributeError, ValueError) as error:
        raise click.BadParameter(f"cannot load {game!r}: {error}", param_hint="GAME") from None
    if not isinstance(spec, GameSpec):
        raise click.BadParameter(f"{game!r} is {spec!r}, not a GameSpec", param_hint="GAME")
    return spec


def served_spec(target: URLTarget) -> tuple[GameSpec | None, str]:
    """The declaration of the game a server says it plays, if that game is registered here."""
    metadata = target.metadata() or {}
    name = str(metadata.get("name") or "unnamed server")
    try:
        return load_spec(name), name
    except UnknownGame:
        return None, name


HELP = """Check that GAME behaves as its declaration says: same seed, same episode; bad
actions refused cleanly; step limit, reward range and hidden information kept; invalid moves,
empty output and one repeated move never out-score random legal play.

GAME is a registered game, or a declaration by reference (package.module:ATTRIBUTE), to
check a game before registering it. Without --url it runs in-process behind the server's
session layer. With --url the running server is checked, as GAME or, without GAME, as the
game its /metadata names; a server not registered here (any OpenEnv server) gets the checks
that its /schema and /metadata allow. Exit status: 0 passed, 1 a check failed, 2 usage."""


@click.command("check", context_settings={"help_option_names": ["-h", "--help"]}, help=HELP)
@click.argument("game", required=False)
@click.option("--url", help="Check the server running at URL (http://host:port) instead.")
@click.option(
    "--transport",
    type=click.Choice(["websocket", "http"]),
    default="websocket",
    show_default=True,
    help="How to reach --url.",
)
@click.option(
    "--episodes",
    type=click.IntRange(min=2),
    default=DEFAULT_EPISODES,
    show_default=True,
    help="Episodes per policy (seeds SEED, SEED+1, …).",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="The first seed."
)
@click.option(
    "--timeout",
    type=float,
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds to wait for the server, per request.",
)
@click.option("--json", "as_json_flag", is_flag=True, help="Print the report as JSON.")
def check_command(
    game: str | None,
    url: str | None,
    transport: str,
    episodes: int,
    seed: int,
    timeout: float,
    as_json_flag: bool,
) -> None:
    if game is None and url is None:
        raise click.UsageError("name a GAME (registered, or module:ATTRIBUTE), or give --url")
    spec = find_spec(game) if game is not None else None
    name = spec.name if spec is not None else None
    try:
        target: Target
        if url is None:
            assert spec is not None
            target = InProcessTarget(environment_of(spec))
        else:
            target = URLTarget(url, cast(TransportName, transport), timeout)
            if spec is None:
                spec, name = served_spec(target)
        report = check(target, spec, episodes=episodes, seed=seed, game=name)
    except UnknownGame as error:
        raise click.ClickException(str(error)) from None
    except ClientError as error:
        raise click.ClickException(f"{error} Is the server running at that URL?") from None
    if as_json_flag:
        click.echo(as_json(report))
    else:
        render(report, Console(highlight=False))
    if not report.passed:
        raise click.exceptions.Exit(1)
