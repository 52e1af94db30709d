"""The uniform average of a training run's last checkpoints, as one more model to select.

Greedy decoding of a small model flips on near-ties, so each checkpoint fixes and regresses
held-out puzzles by the noise of its last optimiser steps as much as by what it learnt.
Averaging the weights of checkpoints along the same run keeps what they share and averages
that noise away (weight averaging along a trajectory, as SWA and LAWA do).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path


def average_models(sources: Sequence[Path], out: Path) -> Path:
    """Save the uniform average of full models' weights (one architecture) to ``out``, with
    the last source's config and tokenizer; returns ``out``. Written beside ``out`` first and
    renamed, so an interrupted average never looks like a model."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not sources:
        raise ValueError("average_models needs at least one model")
    adapters = [s for s in sources if (Path(s) / "adapter_config.json").is_file()]
    if adapters:
        raise ValueError(f"{adapters[0]} is a LoRA adapter: only full models are averaged")
    total: dict[str, torch.Tensor] = {}
    model = None
    for source in sources:
        model = AutoModelForCausalLM.from_pretrained(str(source), dtype=torch.float32)
        for name, tensor in model.state_dict().items():
            if name in total:
                total[name] += tensor
            else:
                total[name] = tensor.clone()
    assert model is not None
    model.load_state_dict({name: tensor / len(sources) for name, tensor in total.items()})
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    AutoTokenizer.from_pretrained(str(sources[-1])).save_pretrained(partial)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(partial, out)
    return out
