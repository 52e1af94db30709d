"""Finding checkpoints in a training output directory.

A checkpoint ``checkpoint-N`` is complete once it holds a model file and a parseable
``trainer_state.json``, which the trainer writes last: a save cut short by a killed run is
never resumed from nor loaded.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

logger = logging.getLogger("arenagym.train")

MODEL_FILES = ("config.json", "adapter_config.json")
"""A directory holding either file is a model (full weights, or a LoRA adapter)."""
TRAINER_STATE = "trainer_state.json"
_CHECKPOINT = re.compile(r"checkpoint-(\d+)")


def is_model_dir(path: Path) -> bool:
    return any((path / name).is_file() for name in MODEL_FILES)


def is_complete(checkpoint: Path) -> bool:
    if not is_model_dir(checkpoint):
        return False
    try:
        json.loads((checkpoint / TRAINER_STATE).read_text())
    except (OSError, ValueError):
        return False
    return True


def checkpoints(directory: Path) -> list[Path]:
    """``checkpoint-N`` subdirectories, oldest first (N compared as numbers)."""
    found = [
        (int(match.group(1)), child)
        for child in directory.iterdir()
        if (match := _CHECKPOINT.fullmatch(child.name)) and child.is_dir()
    ]
    return [child for _, child in sorted(found)]


def last_complete_checkpoint(output_dir: str | Path) -> Path | None:
    """Where a run resumes: the newest complete checkpoint. Incomplete ones are renamed
    ``*.incomplete`` so that nothing, TRL's own rotation included, picks them up."""
    root = Path(output_dir)
    if not root.is_dir():
        return None
    found = checkpoints(root)
    complete = [path for path in found if is_complete(path)]
    for partial in found:
        if partial not in complete:
            target = partial.with_name(partial.name + ".incomplete")
            shutil.rmtree(target, ignore_errors=True)
            partial.rename(target)
            logger.warning("set aside the incomplete checkpoint %s", partial)
    return complete[-1] if complete else None


def latest_checkpoint(directory: str | Path) -> Path:
    """The model to use from a training output directory.

    The final model saved at the directory's root wins: the trainer writes it after the last
    checkpoint. Otherwise the newest complete ``checkpoint-N``. A directory that is itself a
    model is returned as is. Raises ``FileNotFoundError`` naming the directory and what was
    looked for.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory} is not a directory.")
    if is_model_dir(directory):
        return directory
    found = checkpoints(directory)
    for child in reversed(found):
        if is_complete(child):
            return child
    detail = f" ({len(found)} checkpoint-N folder(s), none complete)" if found else ""
    raise FileNotFoundError(
        f"No model in {directory}{detail}: looked for {' or '.join(MODEL_FILES)} at its root, and "
        f"in checkpoint-N subdirectories with {TRAINER_STATE} (a finished save)."
    )
