"""Numeric RL spaces: the observation layout (goal, page, element slots with goal-match features), the
discrete action -> BrowserGym action mapping, action masks, Gymnasium's TimeLimit, seed schedules."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from webarena_gym.envs.action_set import default_action_set
from webarena_gym.wrappers.numeric import (
    ROLES,
    NumericWebArena,
    element_states,
    hashed_words,
    make_numeric_env,
    quoted_texts,
    words,
)
from webarena_gym.wrappers.seeds import EpisodeSeeds


def test_needs_an_env_of_this_project():
    with pytest.raises(TypeError, match="BrowserGym action strings"):
        NumericWebArena(gym.make("CartPole-v1"))


def test_text_features():
    assert words("Click on the 'Submit' button.") == ["click", "on", "the", "submit", "button"]
    assert quoted_texts("Click on the \"Sed  diam\" link, not 'x'.") == {"sed diam", "x"}
    vector = hashed_words("a b a", 8)
    assert vector.shape == (8,) and 0.0 < vector.max() < 1.0 and np.count_nonzero(vector) == 2


@pytest.fixture(scope="module")
def numeric():
    env = make_numeric_env("miniwob/click-button", k=8, max_episode_steps=3, numeric={"answer": "done"})
    yield env
    env.close()


def test_slots_carry_the_states_the_tree_gives():
    def node(bid: str, **properties) -> dict:
        given = [{"name": name, "value": {"type": "x", "value": value}} for name, value in properties.items()]
        return {"nodeId": bid, "browsergym_id": bid, "properties": given}

    tree = {"nodes": [node("1", checked="true", focused=True), node("2", checked="mixed"), node("3", expanded=False)]}
    tree["nodes"].append(node("4", selected=True, expanded=True))
    assert element_states({"axtree_object": tree}, {"1", "2", "3", "4"}) == {
        "1": (1.0, 0.0, 0.0, 1.0),  # checked, selected, expanded, focused
        "2": (0.5, 0.0, 0.0, 0.0),
        "3": (0.0, 0.0, 0.0, 0.0),
        "4": (0.0, 1.0, 1.0, 0.0),
    }
    assert element_states({"axtree_object": tree}, {"2"}) == {"2": (0.5, 0.0, 0.0, 0.0)}  # only the slots' nodes


@pytest.mark.browser
def test_a_ticked_box_shows_in_its_slot():
    """click-checkboxes: ticking a box changes the observation only through the slot's checked flag."""
    env = make_numeric_env("miniwob/click-checkboxes", fast=True)
    try:
        vector, info = env.reset(seed=1)
        inner: NumericWebArena = env.env
        start, k, slot_dim = inner.layout()["slots"]
        checked = start + inner.layout()["slot_fields"].index("checked")
        box = next(i for i, (_, role, _) in enumerate(inner._elements) if role == "checkbox")
        assert vector[checked + box * slot_dim] == 0.0
        ticked, *_ = env.step(box)
        assert ticked[checked + box * slot_dim] == 1.0
    finally:
        env.close()


@pytest.mark.browser
def test_observation_actions_and_masks(numeric):
    assert isinstance(numeric, gym.wrappers.TimeLimit)
    inner: NumericWebArena = numeric.env
    vector, info = numeric.reset(seed=4)
    assert vector.dtype == np.float32 and numeric.observation_space.contains(vector)
    layout = inner.layout()
    assert np.array_equal(vector[: inner.goal_dim], hashed_words(info["intent"], inner.goal_dim))
    start, k, slot_dim = layout["slots"]
    assert (k, slot_dim) == (8, len(layout["slot_fields"]))
    target = next(q for q in quoted_texts(info["intent"]))
    names = [name.lower() for _, _, name in inner._elements]
    assert target in names  # the button the goal names is in a slot ...
    flags = {f: layout["slot_fields"].index(f) for f in ("present", "typeable", "goal_overlap", "goal_quoted")}
    for slot, (_, role, name) in enumerate(inner._elements):
        values = vector[start + slot * slot_dim : start + (slot + 1) * slot_dim]
        assert values[flags["present"]] == 1.0
        assert values[ROLES.index(role) if role in ROLES else len(ROLES)] == 1.0
        assert values[flags["goal_quoted"]] == float(name.lower() == target)  # ... and only it is flagged
        assert values[flags["typeable"]] == float(role == "textbox")
    empty = len(inner._elements)
    assert vector[start + empty * slot_dim + flags["present"]] == 0.0
    mask = info["action_mask"]
    assert np.array_equal(mask, inner.action_masks()) and mask.shape == (2 * k + 1,)
    assert mask[:empty].all() and not mask[empty:k].any() and mask[2 * k]  # stop allowed by default
    assert mask[k : k + empty].tolist() == [role == "textbox" for _, role, _ in inner._elements]
    bid = inner._elements[0][0]
    assert inner.command(0) == f"click('{bid}')" and inner.command(k) == f"fill('{bid}', 'test')"
    assert inner.command(2 * k) == "send_msg_to_user('done')" and inner.command(empty) is None
    with pytest.raises(ValueError):
        inner.command(2 * k + 1)

    # an empty slot does nothing but still counts for the TimeLimit
    same, reward, terminated, truncated, step_info = numeric.step(empty)
    assert np.array_equal(same, vector) and "empty" in step_info["action_error"]
    assert (reward, terminated, truncated) == (0.0, False, False)
    numeric.step(empty)
    *_, terminated, truncated, step_info = numeric.step(empty)
    assert (terminated, truncated) == (False, True)  # the third numeric step: TimeLimit(3) truncates

    vector, info = numeric.reset(seed=4)
    right = names.index(target)
    _, reward, terminated, truncated, step_info = numeric.step(right)
    assert (reward, terminated, truncated) == (1.0, True, False) and step_info["command"].startswith("click(")


@pytest.mark.browser
def test_stop_can_be_masked_out_and_seed_schedules():
    env = EpisodeSeeds(make_numeric_env("miniwob/click-test", numeric={"allow_stop": False}), start=5, stride=3)
    try:
        _, info = env.reset()
        assert info["seed"] == 5 and not info["action_mask"][-1] and info["action_mask"][0]
        assert env.reset()[1]["seed"] == 8 and env.reset(seed=42)[1]["seed"] == 42 and env.reset()[1]["seed"] == 11
    finally:
        env.close()


def test_a_long_seed_schedule_wraps_round_below_the_validation_and_held_out_seeds():
    import gymnasium as gym

    from webarena_gym.wrappers.seeds import EVAL_SEED_BASE, VALIDATION_SEED_BASE

    class Seeds(gym.Env):
        observation_space = action_space = gym.spaces.Discrete(1)

        def reset(self, *, seed=None, options=None):
            return 0, {"seed": seed}

    env = EpisodeSeeds(Seeds(), start=3, stride=7)
    env.resets = (VALIDATION_SEED_BASE - 3) // 7  # the schedule's last seed below 500,000 comes next
    seeds = [env.reset()[1]["seed"] for _ in range(3)]
    assert seeds == [VALIDATION_SEED_BASE - 1, 6, 13] and VALIDATION_SEED_BASE < EVAL_SEED_BASE


def test_fast_is_an_rl_option_that_forces_element_actions():
    checked, forced = default_action_set().python_includes, default_action_set(force=True).python_includes
    assert "call_fun(do, retry_with_force)" in checked  # the default keeps Playwright's actionability waits
    assert "call_fun(do, retry_with_force)" not in forced and "do(force=True)" in forced
    # a forced click is a mouse click at the element's point, BrowserGym's forced click its fallback
    assert checked.count("def click(") == 1 and "def _element_click(" not in checked
    assert forced.count("def click(") == 1 and "def _element_click(" in forced and "page.mouse.click(" in forced


@pytest.mark.browser
def test_a_fast_env_solves_the_task_with_the_right_click():
    env = make_numeric_env("miniwob/click-button", k=8, fast=True)
    try:
        assert "do(force=True)" in env.unwrapped.action_mapping.__self__.python_includes  # the env's set
        page = None
        for seed in (4, 5, 6):  # the later episodes start on the first one's page (in-page resets)
            _, info = env.reset(seed=seed)
            assert page is None or env.unwrapped.page is page
            page = env.unwrapped.page
            target = next(iter(quoted_texts(info["intent"])))
            right = [name.lower() for _, _, name in env.env._elements].index(target)
            _, reward, terminated, _, step_info = env.step(right)
            assert (reward, terminated) == (1.0, True) and not step_info.get("action_error")
    finally:
        env.close()
