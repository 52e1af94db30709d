"""The ``episodes`` extension: whole episodes in one request, played on one session.

A trainer judging a batch of replies plays hundreds of one-step episodes per training step;
one frame each way per episode costs the trainer's process more than the game costs the
server. Here a client sends the episodes (reset fields and actions) together, and they are
played one after another on its own session, exactly as the same ``reset`` and ``step``
frames would play them (same validation, same counters, each reset's reply with the session
id, the session left as the last episode left it). An episode that hits an error (a refused
action, a step after its end) stops there with that error, and the next episode goes on. A
reply may hold fewer episodes than were sent (``FRAME_SECONDS``): the first ones; the client
sends the rest again.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from env_servers.core import wire
from env_servers.core.errors import CapacityReached, EnvServerError, InvalidRequest
from env_servers.core.protocol import MAX_EPISODES_PER_FRAME
from env_servers.core.sessions import Session, SessionManager

EPISODE = '{"reset": {…}, "actions": [{…}, …]}'
FRAME_SECONDS = 0.05
"""How long one frame's episodes may hold the event loop before the rest is left unplayed (a
game whose reset takes seconds must not stall every other session for a whole batch)."""


def parse(data: Any) -> list[tuple[Any, list[Any]]]:
    """The episodes' reset fields and actions; ``VALIDATION_ERROR`` for a malformed batch
    (nothing of it is played)."""
    if not isinstance(data, list) or not data:
        raise InvalidRequest(
            f"The data of an episodes frame must be a list of episodes, each {EPISODE}."
        )
    if len(data) > MAX_EPISODES_PER_FRAME:
        raise InvalidRequest(
            f"{len(data)} episodes in one frame; send at most {MAX_EPISODES_PER_FRAME} per frame."
        )
    episodes = []
    for index, episode in enumerate(data):
        actions = episode.get("actions", []) if isinstance(episode, dict) else None
        if not isinstance(actions, list) or set(episode) - {"reset", "actions"}:
            raise InvalidRequest(f"Episode {index} must be {EPISODE}.")
        episodes.append((episode.get("reset"), actions))
    return episodes


def play(manager: SessionManager, session: Session, data: Any, *, metered: bool = True) -> bytes:
    """Play the episodes of ``data`` on ``session``, at least the first and then as many as
    ``FRAME_SECONDS`` allow; the reply's JSON data, one entry per episode played (the first
    ones). ``metered``: the batch counts as its reset and step messages against the socket's
    message rate."""
    episodes = parse(data)
    messages = sum(1 + len(actions) for _, actions in episodes)
    if metered and not manager.admit(session, messages - 1):  # the frame itself was counted
        raise CapacityReached(
            f"{messages} messages in one frame exceed this socket's allowance of "
            f"{manager.settings.max_message_rate:g} per second; send smaller batches or wait."
        )
    deadline = time.perf_counter() + FRAME_SECONDS
    played = [_play_one(manager, session, *episodes[0])]
    for episode in episodes[1:]:
        if time.perf_counter() > deadline:
            break  # the rest is the client's to send again: the server answers others first
        played.append(_play_one(manager, session, *episode))
    if metered and len(played) < len(episodes):  # counted again when it comes again
        manager.refund(session, sum(1 + len(actions) for _, actions in episodes[len(played) :]))
    return b"[" + b",".join(played) + b"]"


def _play_one(manager: SessionManager, session: Session, reset: Any, actions: list[Any]) -> bytes:
    """``{"results": [...]}``, with ``"error"`` if one stopped the episode."""
    results: list[bytes] = []
    try:
        results.append(wire.result_body(manager.reset(session, reset), session.id))
        for action in actions:
            results.append(wire.result_body(manager.step(session, action), None))
    except EnvServerError as error:
        manager.count_error(error.code.value)
        return (
            b'{"results":['
            + b",".join(results)
            + b'],"error":'
            + orjson.dumps(wire.error_data(error))
            + b"}"
        )
    return b'{"results":[' + b",".join(results) + b"]}"
