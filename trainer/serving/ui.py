"""``arenagym ui``: a Gradio page to try a served model (``arenagym serve-model``) on the games.

Three tabs, every one of them generic over the registered games:
- **Solve**: a single-answer game's puzzle as its reset fields, one reply, the server's verdict;
- **Watch**: any game and seed, played turn by turn (the ``/play`` event stream), the board
  drawn by the game's own terminal view (``clients.play.game_ui``) exported as HTML;
- **Compare**: the same episode played by two model servers (two checkpoints), side by side.

The page talks to model servers over HTTP only: it needs Gradio, not torch. Each function
behind a button is also Gradio's API (``/solve``, ``/watch``, ``/compare``).
"""

from __future__ import annotations

import html
import io
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console

from clients.play import game_ui
from env_servers.core.registry import game_names, load_spec
from env_servers.core.spec import GameSpec

DEFAULT_MODEL_URL = "http://127.0.0.1:8100"
TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""An episode may wait behind others for the model: reads wait long, connects do not."""
DEFAULT_MODE = "the game's default"


class ModelServerError(RuntimeError):
    """The model server refused a request or could not be reached; the message says which."""


def _post_error(url: str, error: httpx.HTTPError | httpx.Response) -> ModelServerError:
    if isinstance(error, httpx.Response):
        try:
            message = error.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = error.text[:300]
        return ModelServerError(f"{url} answered {error.status_code}: {message}")
    return ModelServerError(
        f"The model server at {url} cannot be reached ({type(error).__name__}): start it with "
        "'arenagym serve-model', or give its address with --model-url / ARENAGYM_MODEL_URL."
    )


def play_events(
    url: str, game: str, fields: dict[str, Any], params: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """``/play/{game}``'s event stream, one parsed event at a time."""
    target = f"{url.rstrip('/')}/play/{game}"
    headers = {"Accept": "text/event-stream"}
    try:
        with httpx.stream(
            "POST", target, json=fields, params=params, headers=headers, timeout=TIMEOUT
        ) as response:
            if response.status_code >= 400:
                response.read()
                raise _post_error(url, response)
            data: list[str] = []
            for line in response.iter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                elif not line and data:
                    event = json.loads("\n".join(data))
                    data = []
                    if event.get("event") == "error":
                        raise ModelServerError(f"The episode failed: {event['message']}")
                    yield event
    except httpx.HTTPError as error:
        raise _post_error(url, error) from None


def board_html(spec: GameSpec, observation: dict[str, Any]) -> str:
    """The game's terminal view of an observation, as HTML with inline colours."""
    if not observation:
        return ""
    screen = game_ui(spec).render(spec.observation_type.model_validate(observation), False)
    console = Console(record=True, width=64, file=io.StringIO(), color_system="truecolor")
    console.print(screen)
    return console.export_html(
        inline_styles=True,
        code_format='<pre class="board" style="font-family: monospace; line-height: 1.3">'
        "{code}</pre>",
    )


def transcript_markdown(messages: list[dict[str, Any]]) -> str:
    """A conversation as Markdown: who said what, tool calls as code."""
    parts = []
    for message in messages:
        role = message["role"]
        content = html.escape(str(message.get("content") or "")).strip()
        if role == "tool":
            parts.append(f"**game** ({message.get('name')}): {content}")
            continue
        parts.append(f"**{role}**: {content}" if content else f"**{role}**:")
        for call in message.get("tool_calls") or []:
            function = call["function"]
            arguments = json.dumps(function["arguments"])
            parts.append(f"`{function['name']}({arguments})`")
    return "\n\n".join(parts)


def verdict_markdown(result: dict[str, Any]) -> str:
    """How the episode ended, in the server's words."""
    word = load_spec(result["game"]).solved_word
    head = f"**{word.capitalize() if result['solved'] else 'Not ' + word}** ({result['ended']})"
    lines = [head, f"reward {result['reward']:g} in {result['turns']} turn(s)"]
    observation = result.get("observation") or {}
    for name in ("expression", "value", "correct", "reason", "feedback", "answer"):
        if observation.get(name) is not None:
            lines.append(f"{name}: `{observation[name]}`")
    return "\n\n".join(lines)


def _fields(text: str) -> dict[str, Any]:
    try:
        fields = json.loads(text or "{}")
    except json.JSONDecodeError as error:
        raise ValueError(f"The fields are not JSON: {error}") from None
    if not isinstance(fields, dict):
        raise ValueError('The fields must be a JSON object, e.g. {"seed": 7}.')
    return fields


def _params(mode: str, max_turns: float, max_new_tokens: float) -> dict[str, Any]:
    params: dict[str, Any] = {"max_turns": int(max_turns)}
    if max_new_tokens:
        params["max_new_tokens"] = int(max_new_tokens)
    if mode and mode != DEFAULT_MODE:
        params["mode"] = mode
    return params


def example_fields(spec: GameSpec) -> dict[str, Any]:
    """The reset model's first documented example, else a seed."""
    examples = spec.reset_type.model_json_schema().get("examples") or [{"seed": 0}]
    return dict(examples[0])


def first_multi_turn(games: list[str]) -> str:
    """The game the Watch tab opens on: the first played through tools (turns to watch)."""
    return next((g for g in games if load_spec(g).default_mode == "tools"), games[0])


def answer_games() -> list[str]:
    return [name for name in game_names() if "answer" in load_spec(name).modes]


class Page:
    """What the buttons do, against a model server (and a second one to compare)."""

    def __init__(self, model_url: str, compare_url: str | None = None) -> None:
        self.model_url = model_url
        self.compare_url = compare_url or model_url

    def solve(self, game: str, fields: str, max_new_tokens: float) -> tuple[str, str]:
        """One answer-mode episode: ``(verdict, the model's reply)``."""
        import gradio as gr

        try:
            puzzle = _fields(fields)
        except ValueError as error:
            raise gr.Error(str(error)) from None
        params = _params("answer", 1, max_new_tokens)
        result = self._play(self.model_url, game, puzzle, params)
        return verdict_markdown(result), str(result.get("answer") or "")

    def watch(
        self, game: str, seed: float, mode: str, max_turns: float, max_new_tokens: float
    ) -> Iterator[tuple[str, str, str]]:
        """One episode turn by turn: ``(board, transcript, status)`` after each event."""
        spec = load_spec(game)
        messages: list[dict[str, Any]] = []
        params = _params(mode, max_turns, max_new_tokens)
        for event in self._events(self.model_url, game, {"seed": int(seed)}, params):
            board = board_html(spec, event.get("observation") or {})
            if event["event"] == "start":
                messages = [{"role": "user", "content": event["prompt"]}]
                yield board, transcript_markdown(messages), "Playing…"
            elif event["event"] == "turn":
                messages += event["messages"]
                yield board, transcript_markdown(messages), f"Turn {event['turn']}…"
            else:
                yield board, transcript_markdown(event["transcript"]), verdict_markdown(event)

    def compare(
        self,
        game: str,
        seed: float,
        mode: str,
        max_turns: float,
        max_new_tokens: float,
        first_url: str,
        second_url: str,
    ) -> tuple[str, str, str, str, str, str]:
        """The same episode by two model servers: board, transcript, verdict for each."""
        spec = load_spec(game)
        params = _params(mode, max_turns, max_new_tokens)
        urls = [first_url or self.model_url, second_url or self.compare_url]
        with ThreadPoolExecutor(2) as pool:
            results = list(
                pool.map(lambda url: self._play(url, game, {"seed": int(seed)}, params), urls)
            )
        shown: list[str] = []
        for result in results:
            shown += [
                board_html(spec, result["observation"]),
                transcript_markdown(result["transcript"]),
                verdict_markdown(result),
            ]
        return shown[0], shown[1], shown[2], shown[3], shown[4], shown[5]

    def _events(
        self, url: str, game: str, fields: dict[str, Any], params: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        import gradio as gr

        try:
            yield from play_events(url, game, fields, params)
        except (ModelServerError, ValueError) as error:
            raise gr.Error(str(error)) from None

    def _play(
        self, url: str, game: str, fields: dict[str, Any], params: dict[str, Any]
    ) -> dict[str, Any]:
        for event in self._events(url, game, fields, params):
            if event["event"] == "result":
                return event
        raise ModelServerError(f"{url} ended the episode without a result")


def build_page(model_url: str, compare_url: str | None = None) -> Any:
    """The Gradio ``Blocks`` of the page (not launched)."""
    import gradio as gr

    page = Page(model_url, compare_url)
    games = game_names()
    answers = answer_games()
    modes = [DEFAULT_MODE, "tools", "answer"]
    with gr.Blocks(title="arenagym: watch a model play") as blocks:
        gr.Markdown(f"# arenagym\nA served model plays the games. Model server: `{model_url}`")
        with gr.Tab("Solve"):
            first = answers[0] if answers else None
            with gr.Row():
                solve_game = gr.Dropdown(answers, value=first, label="Game")
                solve_tokens = gr.Number(value=0, label="Max new tokens (0: default)", precision=0)
            puzzle = gr.Code(
                json.dumps(example_fields(load_spec(first))) if first else "{}",
                language="json",
                label="Puzzle (the game's reset fields)",
                elem_id="puzzle",
            )
            solve_button = gr.Button("Solve", variant="primary", elem_id="solve")
            verdict = gr.Markdown(elem_id="verdict")
            reply = gr.Textbox(label="The model's reply", lines=4, elem_id="reply")
            solve_game.change(
                lambda game: json.dumps(example_fields(load_spec(game))), solve_game, puzzle
            )
            solve_button.click(
                page.solve, [solve_game, puzzle, solve_tokens], [verdict, reply], api_name="solve"
            )
        settings: list[Any] = []
        with gr.Tab("Watch"):
            with gr.Row():
                game = gr.Dropdown(games, value=first_multi_turn(games), label="Game")
                seed = gr.Number(value=7, label="Seed", precision=0)
                mode = gr.Dropdown(modes, value=DEFAULT_MODE, label="Mode")
                turns = gr.Slider(1, 30, value=8, step=1, label="Max turns")
                tokens = gr.Number(
                    value=0, label="Max new tokens per turn (0: default)", precision=0
                )
            settings = [game, seed, mode, turns, tokens]
            watch_button = gr.Button("Play", variant="primary", elem_id="watch")
            with gr.Row():
                board = gr.HTML(elem_id="board")
                with gr.Column():
                    status = gr.Markdown(elem_id="status")
                    transcript = gr.Markdown(elem_id="transcript")
            watch_button.click(page.watch, settings, [board, transcript, status], api_name="watch")
        with gr.Tab("Compare"):
            gr.Markdown("The same game and seed (Watch tab's settings) by two model servers.")
            with gr.Row():
                first_url = gr.Textbox(model_url, label="First model server")
                second_url = gr.Textbox(page.compare_url, label="Second model server")
            compare_button = gr.Button("Play both", variant="primary", elem_id="compare")
            outputs = []
            with gr.Row():
                for side in ("first", "second"):
                    with gr.Column():
                        outputs += [
                            gr.HTML(elem_id=f"{side}-board"),
                            gr.Markdown(elem_id=f"{side}-transcript"),
                            gr.Markdown(elem_id=f"{side}-verdict"),
                        ]
            compare_button.click(
                page.compare, [*settings, first_url, second_url], outputs, api_name="compare"
            )
    return blocks


HELP = {"help_option_names": ["-h", "--help"]}
ui_app = typer.Typer(add_completion=False, context_settings=HELP)


@ui_app.command()
def ui(
    model_url: Annotated[
        str, typer.Option(envvar="ARENAGYM_MODEL_URL", help="The model server (serve-model).")
    ] = DEFAULT_MODEL_URL,
    compare_url: Annotated[
        str | None,
        typer.Option(
            envvar="ARENAGYM_COMPARE_MODEL_URL",
            help="A second model server for the Compare tab (another checkpoint).",
        ),
    ] = None,
    host: Annotated[str, typer.Option(envvar="ARENAGYM_UI_HOST", help="Interface to bind.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(envvar="ARENAGYM_UI_PORT", help="Port to listen on.")] = 7860,
) -> None:
    """A web page to try a served model: solve a puzzle, watch a game, compare two models."""
    build_page(model_url, compare_url).launch(server_name=host, server_port=port)
