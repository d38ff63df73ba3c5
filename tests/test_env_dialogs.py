"""JavaScript dialogs are answered as configured and shown in the observation and in every text preset."""

from __future__ import annotations

import pytest
from env_support import bid_of, task_config

from webarena_gym.wrappers.observations.agentoccam import AgentOccamObservation
from webarena_gym.wrappers.observations.set_of_marks import SetOfMarksObservation
from webarena_gym.wrappers.observations.webarena_text import WebArenaTextObservation

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("response, outcome", [("dismiss", "kept"), ("accept", "deleted")])
def test_a_confirm_is_answered_as_configured_and_reported(make_env, response, outcome):
    env = make_env(config=task_config(start_url="__SHOPPING__/dialogs.html"), dialog_response=response)
    obs, _ = env.reset(seed=0)
    assert obs["dialogs"] == ()
    obs, *_ = env.step(f"click('{bid_of(obs, 'button', 'Delete')}')")
    word = "accepted" if response == "accept" else "dismissed"
    assert obs["dialogs"] == (f"confirm 'Delete this item?' ({word})",)
    assert any(n.get("name", {}).get("value") == outcome for n in obs["axtree_object"]["nodes"])
    obs, *_ = env.step("noop(0)")
    assert obs["dialogs"] == ()  # dialogs belong to the action that raised them
    assert env.observation_space["dialogs"].contains(obs["dialogs"])


def test_text_observations_start_with_the_dialogs(make_env):
    raw = make_env(config=task_config(start_url="__SHOPPING__/dialogs.html"), obs_mode="full")
    for wrapper in (AgentOccamObservation(raw), WebArenaTextObservation(raw), SetOfMarksObservation(raw)):
        obs, _ = wrapper.reset(seed=0)
        obs, *_ = wrapper.step(f"click('{bid_of(obs, 'button', 'Save')}')")
        assert obs["text"].startswith("[dialog] alert 'Saved!' (dismissed)\n"), type(wrapper).__name__
