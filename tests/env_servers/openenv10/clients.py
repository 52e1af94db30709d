"""OpenEnv 0.10's own clients and validator against running servers, in one process (importing
OpenEnv 0.10 costs seconds: it imports Gradio). ``clients.py JOBS`` where JOBS is a JSON list of
``{"kind": "mcp" | "generic" | "validate", "url": …, "plan": …}``; prints one JSON list of what
each job saw.

- ``mcp``: ``MCPToolClient`` plays a game, async and through ``.sync()``; ``plan`` is
  ``{"reset": {…}, "tool": name, "calls": [{…arguments}, …]}``.
- ``generic``: ``GenericEnvClient`` plays Wordle as the published recipe reads it (the new
  text sliced off the end of ``messages[0].content``).
- ``validate``: what ``openenv validate --url`` reports (its very function).
"""

import asyncio
import json
import sys

from openenv.cli._validation import validate_running_environment
from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient


async def mcp(url: str, plan: dict) -> dict:
    async with MCPToolClient(base_url=url) as env:
        reset = await env.reset(**plan["reset"])
        tools = await env.list_tools()
        results = [await env.call_tool(plan["tool"], **arguments) for arguments in plan["calls"]]
        state = await env.state()
        session_id = env._production_session_id
    return {
        "reset_done": reset.done,
        "tools": [{"name": t.name, "input_schema": t.input_schema} for t in tools],
        "results": results,
        "step_count": state.step_count,
        "session_id": session_id,
    }


def mcp_sync(url: str, plan: dict) -> list:
    with MCPToolClient(base_url=url).sync() as env:
        env.reset(**plan["reset"])
        return [env.call_tool(plan["tool"], **arguments) for arguments in plan["calls"]]


async def generic(url: str) -> dict:
    seen, last, errors = [], 0, []
    async with GenericEnvClient(base_url=url) as client:
        try:
            await client.step({"message": "[crane]"})
        except RuntimeError as error:
            errors.append(str(error))
        await client.reset(word="crane")
        for move in ("[slate]", "[qqqqq]", "[crane]"):
            result = await client.step({"message": move})
            content = result.observation["messages"][0]["content"]
            seen.append({"new": content[last:], "done": result.done, "reward": result.reward})
            last = len(content)
        state = await client.state()
    return {"moves": seen, "step_count": state["step_count"], "errors": errors}


def generic_sync(url: str) -> dict:
    with GenericEnvClient(base_url=url).sync() as client:
        first = client.reset(seed=123).observation
        again = client.reset(seed=123).observation
        guesses = len(client.step({"message": "[crane]"}).observation["guesses"])
    return {"same_seed_same_game": first == again, "guesses": guesses}


def run(job: dict) -> dict:
    if job["kind"] == "mcp":
        return {
            **asyncio.run(mcp(job["url"], job["plan"])),
            "sync": mcp_sync(job["url"], job["plan"]),
        }
    if job["kind"] == "generic":
        return {**asyncio.run(generic(job["url"])), "sync": generic_sync(job["url"])}
    return validate_running_environment(job["url"], timeout_s=10.0)


if __name__ == "__main__":
    print(json.dumps([run(job) for job in json.loads(sys.argv[1])]))
