"""Numeric RL spaces: encoding, the discrete action -> command mapping, and SB3 PPO training a few steps
through experiments.rl on a local-suite task."""

from __future__ import annotations

import numpy as np
import pytest
from test_wrappers_action import bid, make_probe_env

from wrappers.numeric import ROLES, NumericWebArena, interactive_elements
from wrappers.presets import PRESETS


@pytest.fixture(scope="module")
def numeric(tmp_path_factory):
    env = NumericWebArena(
        PRESETS["agentoccam"].wrap(make_probe_env(tmp_path_factory.mktemp("numeric"))), k=12, answer="7731"
    )
    yield env
    env.close()


def test_needs_the_command_wrapper():
    import gymnasium as gym

    with pytest.raises(TypeError, match="AgentOccamActions"):
        NumericWebArena(gym.make("CartPole-v1"))


@pytest.mark.browser
def test_encoding_and_action_mapping(numeric):
    vector, _ = numeric.reset(seed=0)
    assert vector.dtype == np.float32 and numeric.observation_space.contains(vector)
    obs = numeric._obs
    elements = interactive_elements(obs, 12)
    # slots follow page order over the ids the model is shown (the folded dropdown itself has none)
    assert [e[0] for e in elements][:3] == [
        bid(obs, "textbox", "Search"),
        bid(obs, "button", "Go"),
        bid(obs, "option", "Red"),
    ]
    assert bid(obs, "combobox", "Color") not in {e[0] for e in elements}
    slot = numeric.text_dim  # first slot: a textbox, present
    assert vector[slot + ROLES.index("textbox")] == 1.0 and vector[slot + numeric.slot_dim - 1] == 1.0
    assert numeric.command(0) == f"click [{elements[0][0]}]"
    assert numeric.command(12) == f"type [{elements[0][0]}] [test] [1]"
    assert numeric.command(24) == "stop [7731]"
    empty = len(elements)
    assert empty == 8 and numeric.command(empty) is None
    before = numeric.unwrapped.page.url
    vector2, reward, terminated, truncated, info = numeric.step(empty)
    assert "empty" in info["action_error"] and np.array_equal(vector, vector2) and numeric.unwrapped.page.url == before
    link = next(i for i, e in enumerate(elements) if e[1] == "link")
    vector3, *_ = numeric.step(link)
    assert numeric.unwrapped.page.url.endswith("page2.html") and not np.array_equal(vector, vector3)
    _, reward, terminated, _, info = numeric.step(24)
    assert terminated and info["command"] == "stop [7731]" and reward == 0.0  # the form was never filled


@pytest.mark.browser
@pytest.mark.slow
def test_ppo_trains_a_few_steps_on_a_local_task(capsys):
    """The documented command line, on a local-suite task: PPO runs and reports its episodes."""
    import json

    from experiments.rl import main

    main(["--env", "webarena/local.0", "--steps", "8", "--n-steps", "4", "--max-steps", "4", "--k", "8"])
    result = json.loads(capsys.readouterr().out)
    assert result["steps"] == 8 and result["episodes"] >= 2  # 4-step cap: at least 2 episodes end
    assert all(0.0 <= r <= 1.0 for r in result["episode_rewards"]) and sum(result["episode_lengths"]) <= 8
    assert result["mean_reward"] == sum(result["episode_rewards"]) / result["episodes"]
