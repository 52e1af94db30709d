"""Loading a model for inference by any name a user gives it.

Accepted names, tried in this order:
- ``tiny``: the cached offline tiny model (``trainer.tiny``);
- a directory holding a model (``config.json``) or a PEFT LoRA adapter
  (``adapter_config.json``, loaded onto its base and merged, so generation runs at full speed);
- a training output directory: its final model, else its newest ``checkpoint-N``
  (:func:`latest_checkpoint`);
- anything else is a Hub id, loaded with ``from_pretrained`` (which needs the network unless the
  model is in the local cache).

Every failure is a ``ModelLoadError`` (or ``FileNotFoundError`` for a directory with no model)
whose one-line message names what was looked for, so the CLI can print it without a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from trainer.checkpoints import latest_checkpoint
from trainer.tiny import TINY_MODEL, tiny_model_path


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message says what to do instead."""


def _looks_like_path(name: str) -> bool:
    """A Hub id is ``name`` or ``owner/name``; anything else is meant as a local path."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name


def resolve_model(name_or_path: str) -> str:
    """What ``load_model`` will load: a local model directory, or a Hub id as given. Cheap (no
    weights read), so a command can check every model before evaluating the first."""
    if name_or_path == TINY_MODEL:
        return str(tiny_model_path())
    path = Path(name_or_path).expanduser()
    if path.exists():
        return str(latest_checkpoint(path))
    if _looks_like_path(name_or_path) or (path.parent.is_dir() and path.parent != Path(".")):
        # `outputs/run` with an `outputs/` here means a folder, not the Hub repo outputs/run
        folder = str(path.parent).rstrip("/") + "/"
        raise FileNotFoundError(
            f"No such model directory: {name_or_path} ({folder} exists, {path.name} not)."
            if path.parent.is_dir() and path.parent != Path(".")
            else f"No such model directory: {name_or_path}."
        )
    _check_hub(name_or_path)
    return name_or_path


def _check_hub(repo_id: str) -> None:
    """Fail at once, not after a minute of retries, when a Hub model is neither in the local
    cache nor reachable."""
    import os

    from huggingface_hub import constants, try_to_load_from_cache

    if isinstance(try_to_load_from_cache(repo_id, "config.json"), str):
        return
    where = f"{repo_id} is no local directory and not in the Hugging Face cache"
    if constants.HF_HUB_OFFLINE:
        raise ModelLoadError(f"{where}, and HF_HUB_OFFLINE is set: pass a local model directory")
    endpoint = os.environ.get("HF_ENDPOINT", constants.ENDPOINT)
    try:
        httpx.head(endpoint, timeout=10, follow_redirects=True)
    except httpx.HTTPError as error:
        raise ModelLoadError(
            f"{where}, and {endpoint} cannot be reached ({type(error).__name__}): pass a local "
            "model directory, or download the model where the Hub is reachable"
        ) from None


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def check_device(device: str) -> None:
    """Refuse a device this machine does not have, saying which it has."""
    import torch

    kind = device.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise ModelLoadError(
            f"device {device}: this machine has no CUDA GPU (or torch was built without CUDA); "
            "use --device cpu"
        )
    if kind == "cuda" and ":" in device and int(device.split(":")[1]) >= torch.cuda.device_count():
        raise ModelLoadError(
            f"device {device}: only {torch.cuda.device_count()} CUDA device(s) here"
        )
    if kind not in ("cpu", "cuda", "mps", "xpu"):
        raise ModelLoadError(f"device {device}: expected cpu, cuda or cuda:N")


def load_model(
    name_or_path: str, *, device: str | None = None, dtype: Any = None
) -> tuple[Any, Any]:
    """``(model, tokenizer)`` ready for generation: eval mode, on ``device`` (CUDA when there
    is one), bf16 on GPU and fp32 on CPU unless ``dtype`` says otherwise, tokenizer padding on
    the left with a pad token set (batched generation needs both)."""
    import torch

    device = device or default_device()
    check_device(device)
    if dtype is None:
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    source = resolve_model(name_or_path)
    try:
        if (Path(source) / "adapter_config.json").is_file():
            model, tokenizer = _load_adapter(Path(source), dtype)
        else:
            model, tokenizer = _load_full(source, dtype)
    except ModelLoadError:
        raise
    except Exception as error:  # transformers, peft and the Hub raise many kinds; one line out
        detail = " ".join(str(error).split()) or type(error).__name__
        local = (Path(source) / "config.json").is_file()  # an adapter's base may be a Hub id
        hint = (
            ""
            if local
            else f" ({name_or_path} is no local directory, so it was tried as a Hugging Face Hub "
            "id: pass a local model directory, or check the id and the network; "
            "HF_HUB_OFFLINE=1 uses only the local cache, without retries)"
        )
        raise ModelLoadError(f"could not load {name_or_path}: {detail[:300]}{hint}") from None
    model.to(device)
    model.eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def _load_full(source: str, dtype: Any) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype)
    return model, tokenizer


def _load_adapter(directory: Path, dtype: Any) -> tuple[Any, Any]:
    """Base model + LoRA adapter, merged. The tokenizer comes from the adapter directory when
    the trainer saved one there (it may carry a changed chat template), else from the base."""
    from peft import AutoPeftModelForCausalLM, PeftConfig
    from transformers import AutoTokenizer

    base = PeftConfig.from_pretrained(str(directory)).base_model_name_or_path
    if base and _looks_like_path(base) and not Path(base).expanduser().exists():
        raise ModelLoadError(
            f"could not load {directory}: its LoRA adapter's base model {base} does not exist "
            "(base_model_name_or_path in adapter_config.json)"
        )
    model = AutoPeftModelForCausalLM.from_pretrained(str(directory), dtype=dtype)
    model = model.merge_and_unload()
    has_tokenizer = any(
        (directory / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json")
    )
    tokenizer = AutoTokenizer.from_pretrained(str(directory) if has_tokenizer else base)
    return model, tokenizer


def chat_prompt(
    tokenizer: Any, messages: list[dict[str, Any]], tools: list[Any] | None = None
) -> str:
    """The conversation rendered for generation, thinking off: templates that know
    ``enable_thinking`` (Qwen3) honour it, the others ignore the extra variable."""
    return tokenizer.apply_chat_template(
        messages, tools=tools, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )


def stop_token_ids(model: Any, tokenizer: Any) -> list[int]:
    """Every token that ends a reply: the generation config's, the tokenizer's EOS and
    ``<|im_end|>`` (base models' configs often name only ``<|endoftext|>``). ``model`` None:
    the tokenizer's alone (a model outside transformers, such as vLLM's)."""
    configured = None if model is None else model.generation_config.eos_token_id
    ids = set(configured if isinstance(configured, list) else [configured])
    ids.add(tokenizer.eos_token_id)
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    if isinstance(im_end, int) and im_end != tokenizer.unk_token_id:
        ids.add(im_end)
    return sorted(i for i in ids if i is not None)


def generate(
    model: Any,
    tokenizer: Any,
    prompts: list[str],
    *,
    max_new_tokens: int,
    temperature: float = 0.0,
) -> list[list[int]]:
    """The new token ids for each prompt, generated as one left-padded batch, cut at the first
    stop token (what follows is padding). Temperature 0 is greedy (reproducible); above 0 it samples."""
    import torch

    batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    batch = batch.to(model.device)
    sampling: dict[str, Any] = {"do_sample": False}
    if temperature > 0:
        sampling = {"do_sample": True, "temperature": temperature, "top_p": 1.0, "top_k": 0}
    stops = stop_token_ids(model, tokenizer)
    with torch.inference_mode():
        output = model.generate(
            **batch,
            max_new_tokens=max_new_tokens,
            eos_token_id=stops,
            pad_token_id=tokenizer.pad_token_id,
            **sampling,
        )
    new = output[:, batch["input_ids"].shape[1] :].tolist()
    ends = {*stops, tokenizer.pad_token_id}
    return [ids[: next((i for i, t in enumerate(ids) if t in ends), len(ids))] for ids in new]
