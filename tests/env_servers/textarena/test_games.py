"""Every offline TextArena game through the session layer: it resets with one player, plays,
reports invalid moves with TextArena's reason, follows its seed, and declares rightly whether
seeds change its episodes."""

from __future__ import annotations

import pytest

from env_servers.core.registry import game_names, load_spec
from env_servers.textarena.games import OFFLINE
from tests.env_servers.textarena.support import FIRST_MOVES, GAMES, manager, play


def test_the_offline_games_are_listed_with_the_registered_ones() -> None:
    assert set(GAMES) <= set(game_names())
    assert len(GAMES) == 18 and set(FIRST_MOVES) == set(OFFLINE)


@pytest.mark.parametrize("game", GAMES)
def test_serves_plays_and_follows_its_seed(game: str) -> None:
    sessions = manager(game)
    session = sessions.open()
    moves = FIRST_MOVES[game.partition(":")[2]]
    first = play(sessions, session, 1, moves)  # (RushHour-v0's search is quick for 1 and 0)
    assert first[0]["prompt"] and first[0]["reward"] is None and not first[0]["done"]
    for observation in first[1:]:
        assert observation["turn"] >= 0 and 0.0 <= observation["reward"] <= 1.0
        if observation["invalid_move"]:
            assert observation["reason"], "an invalid move says why"
    assert play(sessions, session, 1, moves) == first  # the same seed, the same episode
    varies = any(play(sessions, session, seed, moves) != first for seed in (0, 2, 4))
    assert varies == load_spec(game).seeds_vary, "seeds_vary declares what seeds do"
    state = sessions.state(session)
    assert state.env_id == game.partition(":")[2] and state.seed in (0, 2, 4)


@pytest.mark.parametrize("game", ["textarena:Mastermind-v0", "textarena:TowerOfHanoi-v0"])
def test_invalid_moves_are_flagged_and_the_second_in_a_row_ends_the_game(game: str) -> None:
    sessions = manager(game)
    session = sessions.open()
    sessions.reset(session, {"seed": 1})
    refused = sessions.step(session, {"move": "not a move"})
    assert refused.invalid_move and refused.reason and not refused.done
    assert refused.invalid_count == 1 and refused.turn == 0
    assert "[GAME]" in refused.feedback  # TextArena's own words come too
    ended = sessions.step(session, {"move": "still not a move"})
    assert ended.invalid_move and ended.done and not ended.solved
    assert ended.invalid_count == 2 and ended.reward is not None and 0.0 <= ended.reward <= 1.0
    assert sessions.state(session).done


def test_a_won_game_is_solved_with_reward_one() -> None:
    sessions = manager("textarena:TowerOfHanoi-v0")  # always the same 3 disks: 7 moves win
    session = sessions.open()
    sessions.reset(session, {"seed": 0})
    moves = ["[A C]", "[A B]", "[C B]", "[A C]", "[B A]", "[B C]", "[A C]"]
    for move in moves:
        observation = sessions.step(session, {"move": move})
        assert not observation.invalid_move, observation.reason
    assert observation.done and observation.solved and observation.reward == 1.0
    assert observation.score == 1.0 and "Congratulations" in (observation.reason or "")
    state = sessions.state(session)
    assert state.solved and state.turn == 7 and state.reason


def test_a_family_name_gives_valid_variable_file_and_class_names() -> None:
    spec = load_spec("textarena:2048-v0")
    assert spec.url_variable == "ARENAGYM_TEXTARENA_2048_V0_URL"
    assert spec.file_name == "textarena-2048-v0"
    assert spec.client.__name__ == "TextArena2048V0Client"
    assert spec.client.async_type.game == spec.name == spec.agent._game
    assert load_spec("textarena:2048-v0") is spec  # made once
