"""Base wire models every game extends.

Game ``models.py`` modules subclass these and are imported by both the server and the
typed clients, so this module (like every game's ``models.py``) must never import FastAPI.

The shapes follow OpenEnv's: an ``Action`` and an ``Observation`` forbid unknown fields and
carry a free ``metadata`` dict; an ``Observation`` carries ``reward`` and ``done``, which the
wire format lifts out of the nested observation (see :mod:`env_servers.core.wire`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Action(BaseModel):
    """One move. Unknown fields are rejected so a typo is an error, not a no-op."""

    model_config = ConfigDict(extra="forbid")

    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Free-form data the client attaches; ignored by games."
    )


class Observation(BaseModel):
    """What the player sees after a reset or a step."""

    model_config = ConfigDict(extra="forbid")

    done: bool = Field(default=False, description="Whether the episode has ended.")
    reward: float | None = Field(default=None, description="Reward for the last action.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form extras.")


class State(BaseModel):
    """Episode bookkeeping a client may inspect. Never holds hidden information while the
    episode runs: ``state`` is served to anyone holding the session id."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str | None = Field(default=None, description="Identifier of the current episode.")
    step_count: int = Field(default=0, ge=0, description="Steps taken in the current episode.")


class ResetOptions(BaseModel):
    """Keyword arguments of ``reset``. Games subclass this to add their own fields.

    ``SECRET_FIELDS`` names fields that reveal or fix hidden information (Wordle's secret
    word): the server accepts them only when started with ``--allow-explicit-secrets``.
    """

    model_config = ConfigDict(extra="forbid")

    SECRET_FIELDS: ClassVar[frozenset[str]] = frozenset()

    seed: int | None = Field(
        default=None, ge=0, description="Fixes the episode: same seed, same game."
    )

    @field_validator("seed", mode="before")
    @classmethod
    def _seed_is_not_a_bool(cls, seed: Any) -> Any:
        if isinstance(seed, bool):  # pydantic would take true as 1
            raise ValueError("seed must be an integer, not true/false")
        return seed

    episode_id: str | None = Field(
        default=None, max_length=255, description="Identifier to record for this episode."
    )
