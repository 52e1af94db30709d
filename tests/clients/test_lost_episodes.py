"""An agent whose game server vanishes loses the episode, never the run: reset returns a
void prompt instead of raising, tools raise ``EpisodeLost`` (a ``ValueError``, which TRL hands
to the model), every reward is 0, the loss is counted and logged. (The whole story, with TRL
and a SIGKILLed server process restarted mid-run, is ``tests/trainer/test_faults.py``.)"""

from __future__ import annotations

import pytest

from clients.agent import GameAgent
from clients.errors import EpisodeLost
from clients.trl import make_env_factory
from env_servers.core.registry import load_spec
from tests.live import live_server
from trainer.rewards import reward_functions


def test_a_vanished_server_loses_the_episode_and_scores_zero(
    caplog: pytest.LogCaptureFixture,
) -> None:
    spec = load_spec("countdown")
    functions, _ = reward_functions(spec, {"correct": 1.0, "server": 1.0, "lost": 0.0})
    with live_server("countdown") as server:
        agent = make_env_factory("countdown", url=server.url, mode="tools", server_reward=True)()
        assert "Numbers:" in (agent.reset(numbers=[3, 9, 7], target=20) or "")
        assert agent.submit("3 * 9 - 7").startswith("Correct")
        assert [f([""], environments=[agent])[0] for f in functions] == [1.0, 1.0, 0.0]
        agent.reset(numbers=[3, 9, 7], target=20)
    lost_before = GameAgent.lost_episodes  # the server is gone, with the session

    with caplog.at_level("WARNING", logger="arenagym.agent"):
        with pytest.raises(EpisodeLost, match="game server was lost") as raised:
            agent.submit("3 * 9 - 7")
        assert isinstance(raised.value, ValueError)  # TRL answers the model with its text
        assert agent.lost and agent.done and GameAgent.lost_episodes == lost_before + 1
        assert [f([""], environments=[agent])[0] for f in functions] == [0.0, 0.0, 1.0]
        assert agent.get_reward() == 0.0  # type: ignore[attr-defined]

        prompt = agent.reset(numbers=[3, 9, 7], target=20)  # still gone: void, not raised
        assert prompt is not None and "episode is void" in prompt
        assert GameAgent.lost_episodes == lost_before + 2
        with pytest.raises(EpisodeLost):
            agent.submit("3 * 9 - 7")
    assert caplog.text.count("countdown episode lost, scored 0") == 2

    answer = make_env_factory("countdown", url=server.url, mode="answer")()
    assert answer.reset(seed=1) is None and answer.lost  # answer mode: no prompt text
    assert answer._answer("3 * 9 - 7") is None and answer.answered
