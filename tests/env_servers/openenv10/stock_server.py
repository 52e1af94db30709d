"""Stock OpenEnv 0.10 servers, built from OpenEnv's own classes: a plain environment (our
Wordle rules behind ``create_app``) and an MCP environment (``MCPEnvironment`` with a FastMCP
``guess`` tool). Prints ``{"plain": url, "mcp": url}`` and serves until killed."""

import json
import threading
import time
from typing import Any

import uvicorn
from fastmcp import FastMCP
from openenv.core.env_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from env_servers.wordle.environment import WordleEnvironment
from env_servers.wordle.models import WordleResetOptions


class PlainAction(Action):
    guess: str | None = None


class PlainObservation(Observation):
    payload: dict[str, Any] = Field(default_factory=dict)


def wrap(observation: Any) -> PlainObservation:
    data = observation.model_dump(exclude={"reward", "done", "metadata"})
    return PlainObservation(payload=data, reward=observation.reward, done=observation.done)


class PlainWordle(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self.game = WordleEnvironment()

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
        return wrap(self.game.reset(WordleResetOptions(seed=seed)))

    def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
        return wrap(self.game.step(WordleEnvironment.action_type(guess=action.guess)))

    @property
    def state(self) -> State:
        return State(step_count=self.game.state.step_count)


class ToolWordle(MCPEnvironment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        self.game = WordleEnvironment()
        mcp = FastMCP("wordle")

        @mcp.tool
        def guess(word: str) -> str:
            """Guess the word."""
            observation = self.game.step(WordleEnvironment.action_type(guess=word))
            last = observation.guesses[-1] if observation.guesses else None
            return f"{last.word} {''.join(last.feedback)}" if last else str(observation.reason)

        super().__init__(mcp)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
        self.game.reset(WordleResetOptions(seed=seed))
        return Observation(done=False)

    def _step_impl(self, action: Action, timeout_s: float | None = None, **kw: Any) -> Any:
        return Observation(done=False)

    @property
    def state(self) -> State:
        return State(step_count=self.game.state.step_count)


def start(app: Any) -> str:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"


if __name__ == "__main__":
    plain = create_app(PlainWordle, PlainAction, PlainObservation, max_concurrent_envs=4)
    tools = create_app(ToolWordle, CallToolAction, CallToolObservation, max_concurrent_envs=4)
    print(json.dumps({"plain": start(plain), "mcp": start(tools)}), flush=True)
    while True:
        time.sleep(3600)
