"""vLLM in server mode: the ``trl vllm-serve`` command for a config, and launching it.

Colocate mode needs nothing here (TRL starts vLLM inside the trainer). In server mode the
policy is served by ``trl vllm-serve`` on its own GPU; the trainer connects to it, or, with
``vllm_launch: true``, starts it on ``vllm_launch_gpus`` and stops it when training ends.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator

import httpx

from trainer.config import TrainConfig

LAUNCH_TIMEOUT = 900.0
"""Seconds a freshly launched vLLM server may take to load the model."""


def serve_command(config: TrainConfig, model: str) -> list[str]:
    """``trl vllm-serve`` serving ``model`` where the config expects it."""
    return [
        "trl",
        "vllm-serve",
        "--model",
        model,
        "--host",
        config.vllm_server_host,
        "--port",
        str(config.vllm_server_port),
        "--gpu-memory-utilization",
        str(config.vllm_gpu_memory_utilization),
        "--max-model-len",
        str(config.vllm_max_model_len),
    ]


def health_url(config: TrainConfig) -> str:
    return f"http://{config.vllm_server_host}:{config.vllm_server_port}/health/"


@contextlib.contextmanager
def launched_server(config: TrainConfig, model: str) -> Iterator[None]:
    """Run ``trl vllm-serve`` on ``config.vllm_launch_gpus`` while the block runs."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": config.vllm_launch_gpus}
    process = subprocess.Popen(serve_command(config, model), env=env)
    try:
        deadline = time.monotonic() + LAUNCH_TIMEOUT
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"trl vllm-serve exited with status {process.returncode}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(health_url(config), timeout=2, trust_env=False).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"trl vllm-serve did not answer {health_url(config)} in time")
            time.sleep(2)
        yield
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
