"""Wordle wire models: validation, secrecy gating, descriptions, and a cheap import."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import BaseModel, ValidationError

from env_servers.wordle import models


def test_action_takes_exactly_one_of_message_and_guess() -> None:
    assert models.WordleAction(message="[crane]").message == "[crane]"
    assert models.WordleAction(guess="crane", metadata={}).guess == "crane"
    for fields in ({}, {"message": "[crane]", "guess": "crane"}):
        with pytest.raises(ValidationError, match="exactly one of 'message'"):
            models.WordleAction.model_validate(fields)
    with pytest.raises(ValidationError):
        models.WordleAction.model_validate({"word": "crane"})


def test_reset_options() -> None:
    options = models.WordleResetOptions()
    assert (options.split, options.hard_mode, options.word) == ("train", False, None)
    assert models.WordleResetOptions(word=" ABIDE ").word == "abide"
    assert models.WordleResetOptions(word="aalii").word == "aalii"  # allowed, not an answer
    for bad in ("xyzzy", "abides", "abid"):
        with pytest.raises(ValidationError, match="not a 5-letter word"):
            models.WordleResetOptions(word=bad)
    with pytest.raises(ValidationError):
        models.WordleResetOptions.model_validate({"split": "test"})
    assert frozenset({"word"}) == models.WordleResetOptions.SECRET_FIELDS


@pytest.mark.parametrize(
    "model",
    [
        models.WordleResetOptions,
        models.WordleAction,
        models.WordleObservation,
        models.WordleState,
        models.TextArenaMessage,
        models.GuessFeedback,
        models.WordleRewardSignals,
    ],
)
def test_every_field_is_described(model: type[BaseModel]) -> None:
    missing = [name for name, field in model.model_fields.items() if not field.description]
    assert not missing
    model.model_json_schema()


def test_importing_models_is_cheap() -> None:
    code = (
        "import sys, env_servers.wordle.models;"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('fastapi', 'starlette', 'uvicorn', 'env_servers.wordle.environment')];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
