"""Does GRPO through the game servers teach a model Countdown? One command, in stages.

``python -m benchmarks.learning countdown --seed S --out DIR [--stage …]`` builds a small
Qwen3 model offline, warms it up on demonstrations, evaluates it through a live Countdown
server (greedy and sampled), trains it with ``arenagym train`` over WebSocket, evaluates it
again, times GRPO steps with the game in-process and over WebSocket, and writes a report.
Each stage saves its output under ``DIR`` and is skipped when that output exists, so a
stage can run on its own, resuming from the previous one.
"""
