"""The numeric env's RL options (``fast=True``: the env's ``fast_reset`` and ``force_actions``): an in-page
reset gives the problem a fresh page gets for the same seed (also after an episode that clicked and
typed, and on a task that keeps state its episode start does not regenerate, which is loaded again), a
tab that left the task's page gets a fresh page, and the LLM-facing defaults still open a fresh context per
episode."""

from __future__ import annotations

import pytest

from webarena_gym import envs
from webarena_gym.envs.miniwob import keeps_state
from webarena_gym.wrappers.numeric import TYPEABLE, interactive_elements, make_numeric_env

pytestmark = pytest.mark.browser

# The page's problem with no trace of the env's element marks: the goal as the page states it, and the
# task's DOM (tags, ids, classes, own text, values, inline styles).
_PROBLEM = """() => {
  const walk = e => [e.tagName, e.id, e.getAttribute('class'), e.getAttribute('style'), e.value ?? null,
    e.checked ?? null, [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent.trim()).join('|'),
    [...e.children].map(walk)];
  return {utterance: core.getUtterance(), dom: walk(document.getElementById('wrap'))};
}"""


def problem(env, obs: dict, info: dict) -> dict:
    """The goal, the page's problem, and the elements the numeric env offers as slots (role, name)."""
    slots = [(role, name) for _, role, name in interactive_elements(obs, 64)]
    return {"intent": info["intent"], "slots": slots, **env.unwrapped.page.evaluate(_PROBLEM)}


def play(env, obs: dict) -> None:
    """Leave traces on the page (typed text, checked boxes, an open tab, the mouse over an element): act
    on the first three elements, typing into text fields and clicking the rest, until the episode ends."""
    for bid, role, _ in interactive_elements(obs, 3):
        action = f"fill('{bid}', 'leftover')" if role in TYPEABLE else f"click('{bid}')"
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return


@pytest.mark.parametrize("task", ["click-button", "enter-text", "click-checkboxes", "click-tab-2"])
def test_an_in_page_reset_gives_the_problem_of_a_fresh_page(task):
    fast = envs.make(f"miniwob/{task}", obs_mode="axtree", fast_reset=True)
    fresh = envs.make(f"miniwob/{task}", obs_mode="axtree")
    try:
        obs, _ = fast.reset(seed=1)
        context, page = fast.unwrapped.context, fast.unwrapped.page
        for seed in (7, 8):
            play(fast, obs)
            obs, info = fast.reset(seed=seed)
            # the same tab: restarted in the page (or, for a task that keeps state, loaded again in it)
            assert fast.unwrapped.context is context and fast.unwrapped.page is page
            assert problem(fast, obs, info) == problem(fresh, *fresh.reset(seed=seed))
        assert keeps_state(task) == (task == "click-tab-2")
    finally:
        fast.close()
        fresh.close()


def test_the_llm_defaults_open_a_fresh_context_per_episode():
    env = make_numeric_env("miniwob/click-button")
    try:
        assert not env.unwrapped.fast_reset and make_numeric_env.__kwdefaults__["fast"] is False
        assert "do(force=True)" not in env.unwrapped.action_mapping.__self__.python_includes
        env.reset(seed=0)
        context = env.unwrapped.context
        env.reset(seed=1)
        assert env.unwrapped.context is not context
    finally:
        env.close()


def test_a_fast_reset_off_the_task_page_opens_a_fresh_one():
    env = envs.make("miniwob/click-button", obs_mode="axtree", fast_reset=True)
    try:
        _, info = env.reset(seed=0)
        context = env.unwrapped.context
        obs, *_ = env.step(f"goto('{info['site_urls']['miniwob']}/miniwob/click-test.html')")
        assert obs["url"].endswith("click-test.html")
        obs, info = env.reset(seed=3)
        assert env.unwrapped.context is not context and obs["url"].endswith("click-button.html") and info["intent"]
    finally:
        env.close()
