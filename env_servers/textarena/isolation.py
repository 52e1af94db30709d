"""Each session's own ``random``: TextArena seeds and draws from the process-global one.

Sessions of one server share the process, so a TextArena game drawing from ``random`` while
another session's game drew in between would see other numbers: an episode would depend on
how sessions interleave. A ``SessionRandom`` keeps one session's generator state and swaps it
into the global ``random`` for exactly the duration of a call into TextArena (calls run on the
event loop, one at a time, so nothing interleaves inside one), then puts the previous state
back. What TextArena prints (progress chatter) is logged, not written to the server's stdout.
"""

from __future__ import annotations

import contextlib
import io
import logging
import random
from collections.abc import Iterator
from typing import Any

logger = logging.getLogger(__name__)


class SessionRandom:
    """One session's state of the global ``random``, swapped in only while in use."""

    def __init__(self) -> None:
        self._state: tuple[Any, ...] = random.Random().getstate()

    def seed(self, seed: int) -> None:
        generator = random.Random(seed)
        self._state = generator.getstate()

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Within the block the global ``random`` is this session's; outside it, untouched."""
        outside = random.getstate()
        random.setstate(self._state)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                yield
        finally:
            self._state = random.getstate()
            random.setstate(outside)
            if printed.getvalue():
                logger.debug("TextArena printed: %s", printed.getvalue().rstrip())
