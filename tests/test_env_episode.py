"""End-to-end episodes of ``WebArenaEnv`` on static pages served from 127.0.0.1, with a real Chromium
and the real evaluator: answers, truncation, the URL guard, and the observation contract."""

from __future__ import annotations

import numpy as np
import pytest
from env_support import bid_of, task_config

pytestmark = pytest.mark.browser

OBS_KEYS = {
    "chat_messages", "goal", "goal_object", "open_pages_urls", "open_pages_titles", "active_page_index", "url",
    "screenshot", "dom_object", "axtree_object", "extra_element_properties", "focused_element_bid",
    "last_action", "last_action_error", "dialogs", "elapsed_time",
}  # fmt: skip


def test_episode_answer_is_scored_once_at_the_end(make_env, static_sites):
    env = make_env()
    obs, info = env.reset(seed=0)
    base = static_sites.site.url
    assert set(obs) == OBS_KEYS
    assert obs["goal"] == "What is the answer on the second page?"
    assert obs["url"] == f"{base}/index.html"
    assert info["task_id"] == 9001 and info["sites"] == ["shopping"] and info["intent_template_id"] == 9001
    assert info["eval_types"] == ["string_match"] and info["site_urls"] == {"shopping": base}
    assert info["start_url"] == f"{base}/index.html"
    assert env.task_config["start_url"] == f"{base}/index.html"  # placeholders replaced
    # the site host was asked to get ready, reset and log in, and the login's cookie is in the context
    assert env.host.calls[-2:] == ["reset_state", "login:shopping"]
    assert any(c["name"] == "session" for c in env.context.cookies())
    # axtree mode: no DOM snapshot, no screenshot
    assert obs["dom_object"] == {} and obs["extra_element_properties"] == {}
    assert obs["screenshot"].shape == (1, 1, 3)

    obs, reward, terminated, truncated, info = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '3')")
    assert (reward, terminated, truncated) == (0.0, False, False) and "evaluation" not in info
    obs, reward, terminated, truncated, info = env.step(f"click('{bid_of(obs, 'button', 'Add')}')")
    assert obs["last_action_error"] == ""
    assert any(n.get("name", {}).get("value") == "added 3" for n in obs["axtree_object"]["nodes"])
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    assert obs["url"] == f"{base}/page2.html" and obs["open_pages_titles"] == ("Second page",)

    obs, reward, terminated, truncated, info = env.step("send_msg_to_user('42')")
    assert (reward, terminated, truncated) == (1.0, True, False)
    evaluation = info["evaluation"]
    assert evaluation["score"] == 1.0 and evaluation["answer"] == "42"
    assert evaluation["details"]["string_match"]["score"] == 1.0
    assert env.step_count == 4
    # after the end, steps neither run actions nor evaluate again
    obs, reward, terminated, truncated, info = env.step("noop(0)")
    assert "evaluation" not in info and reward == 0.0 and "episode has ended" in info["error"]


@pytest.mark.parametrize("evaluator, graded_by", [("webarena", "means the same thing"), ("agentoccam", "key point")])
def test_the_chosen_evaluator_grades_the_answer(make_env, evaluator, graded_by):
    prompts = []

    def judge(messages):
        prompts.append(messages[-1]["content"])
        return "Verdict: correct"

    references = {"fuzzy_match": ["forty-two"]}
    config = task_config(eval={**task_config()["eval"], "reference_answers": references})
    env = make_env(config, evaluator=evaluator, judge_mock=judge)
    _, info = env.reset(seed=0)
    assert info["evaluator"] == evaluator
    _, reward, *_ = env.step("send_msg_to_user('It is 42, on the second page')")
    assert reward == 1.0 and len(prompts) == 1 and graded_by in prompts[0]


def test_wrong_answer_and_infeasible_report(make_env):
    env = make_env()
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("send_msg_to_user('41')")
    assert (reward, terminated) == (0.0, True) and info["evaluation"]["answer"] == "41"

    env.reset(seed=1)
    _, reward, terminated, _, info = env.step("report_infeasible('the page has no answer')")
    assert terminated and reward == 0.0
    assert info["evaluation"]["answer"].startswith("N/A") and "the page has no answer" in info["evaluation"]["answer"]


def test_truncation_evaluates_once_with_an_empty_answer(make_env):
    env = make_env(max_episode_steps=2)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step("noop(0)")
    assert (terminated, truncated) == (False, False) and "evaluation" not in info
    _, reward, terminated, truncated, info = env.step("noop(0)")
    assert (terminated, truncated) == (False, True)
    assert info["evaluation"]["answer"] == "" and reward == 0.0
    # a reset starts a fresh count
    env.reset(seed=0)
    assert env.step("noop(0)")[3] is False


def test_bad_actions_become_errors_not_exceptions(make_env):
    env = make_env()
    obs, _ = env.reset(seed=0)
    for action in ("bogus(1)", "click('99999')", "import os", "", "click('1') click('2')"):
        obs, reward, terminated, truncated, _ = env.step(action)
        assert obs["last_action_error"], action
        assert (reward, terminated) == (0.0, False)


def test_url_guard_blocks_other_origins(make_env, static_sites):
    env = make_env()
    obs, _ = env.reset(seed=0)
    base, outside = static_sites.site.url, static_sites.outside.url

    obs, *_ = env.step(f"goto('{outside}/secret.html')")
    assert "Blocked navigation" in obs["last_action_error"] and outside in obs["last_action_error"]
    assert obs["url"] == f"{base}/index.html"

    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Outside link')}')")
    assert "Blocked navigation" in obs["last_action_error"]
    assert obs["open_pages_urls"] == (f"{base}/index.html",)

    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Outside tab')}')")
    assert "Blocked navigation" in obs["last_action_error"]
    obs, *_ = env.step("noop(0)")  # a blocked new tab may be reported late; it is closed by then
    assert obs["open_pages_urls"] == (f"{base}/index.html",)

    # the task's own site stays reachable
    obs, *_ = env.step(f"goto('{base}/page2.html')")
    assert obs["last_action_error"] == "" and obs["url"] == f"{base}/page2.html"


def test_goto_is_controlled_navigation_without_a_step(make_env, static_sites):
    env = make_env()
    env.reset(seed=0)
    obs, info = env.goto(f"{static_sites.site.url}/page2.html")
    assert obs["url"].endswith("/page2.html") and info["step"] == 0 and env.step_count == 0
    obs, _ = env.goto(f"{static_sites.outside.url}/secret.html")
    assert "Blocked navigation" in obs["last_action_error"] and obs["url"].endswith("/page2.html")


@pytest.mark.slow
def test_full_mode_has_dom_and_screenshot(make_env):
    env = make_env(obs_mode="full")
    obs, _ = env.reset(seed=0)
    assert obs["dom_object"]["documents"] and obs["extra_element_properties"]
    assert obs["screenshot"].shape == (720, 1280, 3) and obs["screenshot"].dtype == np.uint8
    bid = bid_of(obs, "button", "Add")
    assert obs["extra_element_properties"][bid]["clickable"] is True
    assert obs["extra_element_properties"][bid]["visibility"] == 1.0
    obs, *_ = env.step(f"click('{bid}')")
    assert obs["last_action_error"] == "" and obs["focused_element_bid"] == bid
    # the screenshot is of the page as laid out for every observation: the task's viewport, not the
    # headless window (BrowserGym's capture dropped the viewport emulation after the first screenshot)
    assert env.page.evaluate("[innerWidth, innerHeight]") == [1280, 720]
    assert obs["screenshot"].shape == (720, 1280, 3) and obs["screenshot"].std() > 0


def test_dom_mode_has_the_dom_snapshot_but_no_screenshot(make_env):
    env = make_env(obs_mode="dom")
    obs, _ = env.reset(seed=0)
    bid = bid_of(obs, "button", "Add")
    assert obs["dom_object"]["documents"] and obs["extra_element_properties"][bid]["visibility"] == 1.0
    assert obs["screenshot"].shape == (1, 1, 3) and not obs["screenshot"].any()
    with pytest.raises(ValueError, match="obs_mode"):
        make_env(obs_mode="pixels")


def test_multi_tab_start_urls(make_env, static_sites):
    env = make_env(config=task_config(start_url="__SHOPPING__/index.html |AND| __SHOPPING__/page2.html"))
    obs, _ = env.reset(seed=0)
    base = static_sites.site.url
    assert obs["open_pages_urls"] == (f"{base}/index.html", f"{base}/page2.html")
    assert obs["active_page_index"].tolist() == [0] and obs["url"] == f"{base}/index.html"
