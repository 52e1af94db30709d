"""``python -m benchmarks.learning countdown --seed S --out DIR [--stage …] [--profile …]``."""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.learning.settings import PROFILES
from benchmarks.learning.stages import STAGE_FUNCTIONS, STAGES, Run


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.learning", description=__doc__)
    parser.add_argument("game", choices=["countdown"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="Run directory.")
    parser.add_argument(
        "--stage",
        default="all",
        help=f"all, or a comma-separated list of: {', '.join(STAGES)}. Done stages are skipped.",
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), default="gpu")
    parser.add_argument("--force", action="store_true", help="Run the stages even if done.")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="Override a setting (e.g. learning_rate=5e-5); repeatable.",
    )
    return parser.parse_args(argv)


def settings_for(args: argparse.Namespace):
    from trainer.config import load_yaml

    settings = PROFILES[args.profile]
    changes = {}
    for pair in args.set:
        key, _, value = pair.partition("=")
        changes[key] = load_yaml(value)
    return replace(settings, **changes)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    stages = list(STAGES) if args.stage == "all" else args.stage.split(",")
    unknown = set(stages) - set(STAGES)
    if unknown:
        raise SystemExit(f"unknown stage(s): {', '.join(sorted(unknown))}")
    out = args.out or Path(f"outputs/learning-{args.game}-seed{args.seed}")
    out.mkdir(parents=True, exist_ok=True)
    from clients.local_server import local_server

    with local_server("countdown") as server:
        run = Run(args.seed, out.resolve(), settings_for(args), server.url)
        for stage in STAGES:
            if stage not in stages:
                continue
            function, marker = STAGE_FUNCTIONS[stage]
            if run.path(marker).exists() and not args.force:
                print(f"[{stage}] done already ({marker})", flush=True)
                continue
            started = time.perf_counter()
            print(f"[{stage}] …", flush=True)
            function(run)
            print(f"[{stage}] {time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
