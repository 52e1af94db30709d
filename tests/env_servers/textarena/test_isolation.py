"""Each session's episode follows its own seed however sessions interleave, and TextArena's
use of the global ``random`` neither sees nor moves anyone else's."""

from __future__ import annotations

import random

from tests.env_servers.textarena.support import manager

GAME = "textarena:Bandit-v0"  # every press draws from ``random``
GUESSES = ["[red]", "[blue]", "[green]", "[yellow]", "[purple]", "[red]"]


def test_interleaved_sessions_each_replay_their_seed() -> None:
    sessions = manager(GAME)
    alone = sessions.open()
    expected = {
        seed: [sessions.reset(alone, {"seed": seed}).model_dump()]
        + [sessions.step(alone, {"move": guess}).model_dump() for guess in GUESSES]
        for seed in (7, 8)
    }
    assert expected[7] != expected[8]

    a, b, c = sessions.open(), sessions.open(), sessions.open()
    seen = {a.id: [], b.id: [], c.id: []}
    seeds = {a.id: 7, b.id: 8, c.id: 7}
    for session in (a, b, c):
        seen[session.id].append(sessions.reset(session, {"seed": seeds[session.id]}).model_dump())
        random.seed(99)  # someone else seeding the global generator in between
    for guess in GUESSES:
        for session in (c, a, b):
            random.random()
            seen[session.id].append(sessions.step(session, {"move": guess}).model_dump())
    assert seen[a.id] == expected[7] and seen[c.id] == expected[7] and seen[b.id] == expected[8]


def test_the_global_random_is_left_as_it_was() -> None:
    sessions = manager(GAME)
    session = sessions.open()
    random.seed(1234)
    expected = [random.random() for _ in range(3)]
    random.seed(1234)
    drawn = []
    for guess in GUESSES[:3]:
        sessions.reset(session, {"seed": 5})  # TextArena seeds ``random`` at reset
        sessions.step(session, {"move": guess})
        drawn.append(random.random())
    assert drawn == expected
