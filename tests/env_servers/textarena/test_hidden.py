"""Hidden information (the code, the mines, the number) is in no reply or state before the
end: the state is bookkeeping, the replies are what TextArena shows the player; the last
reply shows it in ``secret``."""

from __future__ import annotations

from env_servers.textarena.models import TextArenaState
from tests.env_servers.textarena.support import manager


def test_the_mastermind_code_stays_hidden_until_the_end() -> None:
    sessions = manager("textarena:Mastermind-v0")
    session = sessions.open()
    replies = [sessions.reset(session, {"seed": 3}).model_dump_json()]
    code = session.env._env.state.game_state["secret_code"]
    written = " ".join(map(str, code))
    guesses = ["[1 2 3 4]", "[2 3 4 5]", "[3 4 5 6]", "[6 5 4 3]"]
    for guess in [g for g in guesses if g != f"[{written}]"][:3]:
        replies.append(sessions.step(session, {"move": guess}).model_dump_json())
        replies.append(sessions.state(session).model_dump_json())
    for reply in replies:
        assert written not in reply and str(code) not in reply and "secret_code" not in reply
        assert '"secret":null' in reply or '"secret"' not in reply
    last = sessions.step(session, {"move": f"[{written}]"})
    assert last.done and last.solved and last.secret == written


def test_the_state_holds_bookkeeping_only() -> None:
    for game, secret in (
        ("textarena:Minesweeper-v0", "mines"),
        ("textarena:GuessTheNumber-v0", "game_number"),
        ("textarena:Bandit-v0", "ground_truth"),
    ):
        sessions = manager(game)
        session = sessions.open()
        sessions.reset(session, {"seed": 2})
        state = sessions.state(session).model_dump()
        assert set(state) == set(TextArenaState.model_fields)
        assert secret not in sessions.state(session).model_dump_json()
