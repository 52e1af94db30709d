"""How hard the fuzz suite tries: bounded for CI by default, many times more under
``ARENAGYM_FUZZ=long`` (the ``long`` marker's runs)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Budget:
    openapi: int
    """Examples per OpenAPI operation."""
    frames: int
    """WebSocket frames per kind of frame."""
    expressions: int
    """Countdown expressions per property."""
    derandomize: bool
    """CI runs the same examples each time; long runs explore."""


CI = Budget(openapi=15, frames=150, expressions=400, derandomize=True)
LONG = Budget(openapi=500, frames=3000, expressions=50_000, derandomize=False)

EXAMPLES = LONG if os.environ.get("ARENAGYM_FUZZ") == "long" else CI
