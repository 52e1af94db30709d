"""The model behind ``arenagym serve-model``: one generation at a time, by vLLM or transformers.

Both engines answer the same call, ``generate(prompts, max_new_tokens, temperature)`` → each
reply's new token ids, which is the generator that :mod:`trainer.rollouts` plays episodes
with, so a served model plays exactly as evaluation plays it. vLLM is used when it is installed
and a CUDA GPU is there (``backend="auto"``); transformers otherwise.

A model is not safe to run from two threads at once, and a GPU runs one batch at a time
anyway: every generation takes the engine's lock, so concurrent requests queue (in arrival
order, roughly) instead of failing. Requests call the engine from worker threads.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trainer.checkpoints import checkpoints, is_model_dir
from trainer.models import default_device, load_model, resolve_model, stop_token_ids

Backend = Literal["auto", "transformers", "vllm"]
BACKENDS: tuple[Backend, ...] = ("auto", "transformers", "vllm")


def pick_checkpoint(model: str, checkpoint: str) -> str:
    """``model`` as ``--checkpoint`` narrows it: ``latest`` (the run's final model, else its
    newest complete checkpoint, as :func:`trainer.models.resolve_model` picks), or ``N`` /
    ``checkpoint-N`` of a training output directory. Raises ``FileNotFoundError`` naming the
    checkpoints there are."""
    if checkpoint == "latest":
        return model
    directory = Path(model).expanduser()
    name = checkpoint if checkpoint.startswith("checkpoint-") else f"checkpoint-{checkpoint}"
    chosen = directory / name
    if not is_model_dir(chosen):
        found = [path.name for path in checkpoints(directory)] if directory.is_dir() else []
        raise FileNotFoundError(
            f"No model in {chosen}: --checkpoint takes 'latest' or one of "
            f"{', '.join(found) or 'the checkpoint-N folders of a training output directory'}."
        )
    return str(chosen)


def vllm_usable() -> bool:
    """vLLM is installed and a CUDA GPU is there."""
    if importlib.util.find_spec("vllm") is None:
        return False
    import torch

    return torch.cuda.is_available()


@dataclass
class Engine:
    """A loaded model: its tokenizer, its name in replies, and the lock its generations take."""

    name: str
    source: str
    tokenizer: Any
    backend: str
    lock: threading.Lock = field(default_factory=threading.Lock)

    def generate(
        self, prompts: list[str], max_new_tokens: int, temperature: float
    ) -> list[list[int]]:
        """Each prompt's reply as new token ids, cut at the first stop token; waits its turn."""
        with self.lock:
            return self._generate(prompts, max_new_tokens, temperature)

    def _generate(
        self, prompts: list[str], max_new_tokens: int, temperature: float
    ) -> list[list[int]]:
        raise NotImplementedError


@dataclass
class TransformersEngine(Engine):
    """A model loaded by :func:`trainer.models.load_model` (LoRA adapters merged)."""

    model: Any = None

    def _generate(
        self, prompts: list[str], max_new_tokens: int, temperature: float
    ) -> list[list[int]]:
        from trainer.models import generate

        return generate(
            self.model,
            self.tokenizer,
            prompts,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
        )


@dataclass
class VllmEngine(Engine):
    """A model in vLLM's offline ``LLM``; a LoRA adapter is applied to its base per request."""

    llm: Any = None
    lora: Any = None
    stops: list[int] = field(default_factory=list)

    def _generate(
        self, prompts: list[str], max_new_tokens: int, temperature: float
    ) -> list[list[int]]:
        from vllm import SamplingParams

        params = SamplingParams(
            max_tokens=max_new_tokens, temperature=temperature, stop_token_ids=self.stops
        )
        outputs = self.llm.generate(prompts, params, lora_request=self.lora, use_tqdm=False)
        replies = []
        for output in outputs:
            ids = list(output.outputs[0].token_ids)
            replies.append(ids[: next((i for i, t in enumerate(ids) if t in self.stops), len(ids))])
        return replies


def load_engine(
    model: str,
    *,
    checkpoint: str = "latest",
    backend: Backend = "auto",
    device: str | None = None,
) -> Engine:
    """Load ``model`` (any name :func:`trainer.models.resolve_model` takes) for serving.
    Raises ``ValueError`` for a backend this machine cannot run, and what ``load_model``
    raises for the model."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}.")
    source = resolve_model(pick_checkpoint(model, checkpoint))
    if backend == "vllm" and not vllm_usable():
        raise ValueError(
            "backend vllm needs the vllm package and a CUDA GPU: install 'arenagym[vllm]' on a "
            "GPU machine, or use --backend transformers"
        )
    if backend == "vllm" or (backend == "auto" and device in (None, "cuda") and vllm_usable()):
        return _load_vllm(model, source)
    loaded, tokenizer = load_model(source, device=device)
    return TransformersEngine(
        model, source, tokenizer, f"transformers ({device or default_device()})", model=loaded
    )


def _load_vllm(name: str, source: str) -> VllmEngine:
    """vLLM on the GPU: a LoRA adapter directory is served on its base with vLLM's LoRA
    support (no merged copy written)."""
    from vllm import LLM
    from vllm.lora.request import LoRARequest

    directory = Path(source)
    lora = None
    if (directory / "adapter_config.json").is_file():
        from peft import PeftConfig

        config = PeftConfig.from_pretrained(source)
        llm = LLM(model=config.base_model_name_or_path, enable_lora=True, max_lora_rank=64)
        lora = LoRARequest("adapter", 1, source)
    else:
        llm = LLM(model=source)
    tokenizer = llm.get_tokenizer()
    stops = stop_token_ids(None, tokenizer)
    return VllmEngine(name, source, tokenizer, "vllm", llm=llm, lora=lora, stops=stops)
