"""What judging a training batch's answers costs the trainer's process.

``python -m benchmarks.judging [--answers 1024] [--connections 8] [--repeats 5]``

A GRPO step generates a batch of Countdown answers, and the trainer has them judged on
judging threads (``AnswerJudge.start``) while its main thread goes on with TRL's scoring. The
judging's work in the trainer's own interpreter slows that main thread. Here a fixed
main-thread workload (small matrix products, as TRL's scoring launches many small kernels)
is timed alone and while a batch is judged three ways, in one process:

- ``inprocess``: the game in the trainer's process (one session);
- ``websocket, frame per request``: a live server, two frames per answer (reset, step);
- ``websocket, episodes frames``: a live server, one frame per 64 answers (``episodes``).

For each it prints the workload's slowdown, the time until every verdict is in, and the
trainer process's CPU seconds (the workload's included), medians over ``--repeats`` batches.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from clients.local_server import local_server
from clients.protocol import ConnectionOptions
from clients.transports import WebSocketTransport
from clients.trl import make_env_factory
from env_servers.core.protocol import EXT_EPISODES
from trainer.rewards import AnswerJudge

ANSWERS = ["<answer>(9 - 3) * 4</answer>", "<answer>1 + 2</answer>", "I give up"]


def main_thread_work(size: int = 64, rounds: int = 3000) -> Callable[[], float]:
    """A fixed, interpreter-bound workload; returns a function timing one run of it."""
    import torch

    torch.set_num_threads(1)
    layer = torch.nn.Linear(size, size)
    start = torch.randn(size, size)

    def run() -> float:
        started = time.perf_counter()
        with torch.no_grad():
            x = start
            for _ in range(rounds):
                x = layer(x).tanh()
        return time.perf_counter() - started

    return run


def without_episodes(agent: Any) -> Any:
    """``agent`` with a client whose server seems not to offer ``episodes``."""
    client = agent._connect()
    offered = client.transport._session.options
    extensions = offered.extensions - {EXT_EPISODES}
    options = ConnectionOptions(extensions, offered.headers)
    client.transport = WebSocketTransport(agent._url, options)
    return agent


def judge_batches(
    judge: AnswerJudge, answers: int, repeats: int, work: Callable[[], float]
) -> dict[str, float]:
    columns = {"seed": list(range(answers)), "split": ["train"] * answers}
    texts = [ANSWERS[i % len(ANSWERS)] for i in range(answers)]
    judge(texts, None, columns)  # connect and warm up
    slowed, verdicts, cpu = [], [], []
    for repeat in range(repeats):
        batch = [f"{text}{' ' * (repeat + 1)}" for text in texts]  # a new batch each time
        cpu_started, started = time.process_time(), time.perf_counter()
        judge.start(batch, columns)
        slowed.append(work())
        judge(batch, None, columns)
        verdicts.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    return {
        "work_s": statistics.median(slowed),
        "verdicts_s": statistics.median(verdicts),
        "cpu_s": statistics.median(cpu),
    }


def measure(answers: int, connections: int, repeats: int) -> dict[str, dict[str, float]]:
    work = main_thread_work()
    alone = statistics.median(work() for _ in range(repeats))
    results: dict[str, dict[str, float]] = {"alone": {"work_s": alone}}
    local = make_env_factory("countdown", transport="inprocess", mode="answer")
    judge = AnswerJudge([local()])
    results["inprocess"] = judge_batches(judge, answers, repeats, work)
    judge.close()
    with local_server("countdown") as server:
        remote = make_env_factory("countdown", url=server.url, mode="answer")
        for name, agents in (
            (
                "websocket, frame per request",
                [without_episodes(remote()) for _ in range(connections)],
            ),
            ("websocket, episodes frames", [remote() for _ in range(connections)]),
        ):
            judge = AnswerJudge(agents)
            results[name] = judge_batches(judge, answers, repeats, work)
            judge.close()
    return results


def show(results: dict[str, dict[str, float]], answers: int, connections: int) -> None:
    alone = results["alone"]["work_s"]
    table = Table(title=f"Judging {answers} Countdown answers ({connections} server sessions)")
    for column in ("judged", "main thread", "slowdown", "verdicts in", "process CPU"):
        table.add_column(column, justify="left" if column == "judged" else "right")
    table.add_row("nothing", f"{alone * 1000:.0f} ms", "—", "—", "—")
    for name, row in results.items():
        if name == "alone":
            continue
        table.add_row(
            name,
            f"{row['work_s'] * 1000:.0f} ms",
            f"{row['work_s'] / alone:.2f}×",
            f"{row['verdicts_s'] * 1000:.0f} ms",
            f"{row['cpu_s'] * 1000:.0f} ms",
        )
    Console().print(table)
    frames = results["websocket, frame per request"]["cpu_s"]
    batched = results["websocket, episodes frames"]["cpu_s"]
    print(f"process CPU, episodes frames / frame per request: {batched / frames:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judging", description=__doc__)
    parser.add_argument("--answers", type=int, default=1024, help="Answers per batch.")
    parser.add_argument("--connections", type=int, default=8, help="Judging sessions.")
    parser.add_argument("--repeats", type=int, default=5, help="Batches timed (medians).")
    args = parser.parse_args(argv)
    show(measure(args.answers, args.connections, args.repeats), args.answers, args.connections)


if __name__ == "__main__":
    main()
