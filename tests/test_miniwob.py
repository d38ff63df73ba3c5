"""MiniWoB++ through the project's env: ids, the local page server, BrowserGym's reward and clock, seeds,
the URL guard, a scripted policy solving tasks, every task resetting and stepping, and task sets."""

from __future__ import annotations

import re
import time
import urllib.request

import gymnasium as gym
import pytest

from webarena_gym import envs
from webarena_gym.envs.miniwob import EPISODE_MAX_TIME_MS, MAX_STEPS, task_names
from webarena_gym.envs.miniwob.host import MiniWoBSiteHost
from webarena_gym.experiments import tasksets


def test_every_browsergym_task_is_registered():
    from browsergym.miniwob import ALL_MINIWOB_TASKS

    names = sorted(cls.subdomain for cls in ALL_MINIWOB_TASKS)
    assert task_names() == names and len(names) == 125
    ids = envs.list_env_ids("miniwob")
    assert ids == [f"miniwob/{name}" for name in names] and all(env_id in gym.registry for env_id in ids)
    assert (
        gym.registry["miniwob/click-pie"].nondeterministic and not gym.registry["miniwob/click-test"].nondeterministic
    )


def test_budget_and_clock_follow_browsergym():
    env = envs.make("miniwob/click-test")
    try:
        assert env.unwrapped.max_episode_steps == MAX_STEPS == 10
        assert env.unwrapped.task_kwargs["episode_max_time_ms"] == EPISODE_MAX_TIME_MS == 1_000_000
        assert envs.registration.default_max_steps("miniwob/click-test") == 10
        assert envs.registration.default_max_steps("webarena/local.0") == 30
    finally:
        env.close()


def test_page_server_is_local_and_stops():
    host = MiniWoBSiteHost()
    base = host.urls()["miniwob"]
    assert base.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(f"{base}/miniwob/click-test.html", timeout=10) as response:
        assert b"core/core.js" in response.read()
    host.close()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{base}/miniwob/click-test.html", timeout=2)


def test_task_sets():
    assert len(tasksets.resolve("miniwob")) == 125
    picked = tasksets.resolve("miniwob:click-test,click-button")
    assert [t.env_id for t in picked] == ["miniwob/click-test", "miniwob/click-button"]
    assert all(t.sites == ("miniwob",) and t.site_group == "miniwob" and t.max_steps == 10 for t in picked)
    assert [t.env_id for t in tasksets.resolve("miniwob/click-test,webarena/local.0")][0] == "miniwob/click-test"
    with pytest.raises(ValueError, match="unknown MiniWoB"):
        tasksets.resolve("miniwob:click-nothing")


# -- in the browser ---------------------------------------------------------------------------------


def _line_id(obs: dict, role: str, name: str | None = None) -> str:
    """The id of the first element of ``role`` (and ``name``) in the flattened tree."""
    from browsergym.utils.obs import flatten_axtree_to_str

    text = flatten_axtree_to_str(obs["axtree_object"])
    named = re.escape(name) if name is not None else "[^']*"
    pattern = rf"\[(\w+)\] {role} '{named}'"
    match = re.search(pattern, text)
    assert match, f"no {role} {name!r} in:\n{text}"
    return match.group(1)


def _span_id(obs: dict, text: str) -> str:
    """The id of the text span (a generic node) whose only text is ``text``."""
    nodes = obs["axtree_object"]["nodes"]
    by_id = {n["nodeId"]: n for n in nodes}
    for node in nodes:
        kids = [by_id[c] for c in node.get("childIds", []) if c in by_id]
        if node.get("browsergym_id") and len(kids) == 1 and kids[0].get("name", {}).get("value") == text:
            return node["browsergym_id"]
    raise AssertionError(f"no span {text!r}")


def _quoted(goal: str) -> str:
    return re.search(r'"([^"]+)"', goal).group(1)


SOLVERS = {
    "click-test": lambda obs, goal: [f"click('{_line_id(obs, 'button')}')"],
    "click-button": lambda obs, goal: [f"click('{_line_id(obs, 'button', _quoted(goal))}')"],
    "click-link": lambda obs, goal: [f"click('{_span_id(obs, _quoted(goal))}')"],
    "focus-text": lambda obs, goal: [f"click('{_line_id(obs, 'textbox')}')"],
    "click-dialog": lambda obs, goal: [f"click('{_line_id(obs, 'button', 'Close')}')"],
    "enter-text": lambda obs, goal: [
        f"fill('{_line_id(obs, 'textbox')}', {_quoted(goal)!r})",
        f"click('{_line_id(obs, 'button', 'Submit')}')",
    ],
}


@pytest.mark.browser
@pytest.mark.parametrize("task", sorted(SOLVERS))
def test_a_scripted_policy_solves_the_task(task):
    env = envs.make(f"miniwob/{task}", obs_mode="axtree")
    try:
        for seed in (1, 2):
            obs, info = env.reset(seed=seed)
            assert info["intent"] and info["task_id"] == task and info["sites"] == ["miniwob"]
            actions = SOLVERS[task](obs, info["intent"])
            for i, action in enumerate(actions):
                obs, reward, terminated, truncated, step_info = env.step(action)
                assert not obs["last_action_error"], obs["last_action_error"]
                if i < len(actions) - 1:
                    assert (reward, terminated) == (0.0, False)
            assert (reward, terminated, truncated) == (1.0, True, False), step_info
            assert step_info["evaluation"]["details"]["miniwob"]["RAW_REWARD_GLOBAL"] > 0
    finally:
        env.close()


@pytest.mark.browser
def test_wrong_click_fails_and_seeds_reproduce_episodes():
    env = envs.make("miniwob/click-button", obs_mode="axtree")
    try:
        obs, info = env.reset(seed=11)
        goal, page = info["intent"], obs["axtree_object"]
        obs2, info2 = env.reset(seed=11)
        assert info2["intent"] == goal and _names(obs2) == _names({"axtree_object": page})
        goals = {env.reset(seed=s)[1]["intent"] for s in range(12, 18)}
        assert len(goals) > 1  # other seeds, other problems
        # after one seeded reset, unseeded resets follow a reproducible sequence of task seeds
        env.reset(seed=3)
        sequence = [env.reset()[1]["seed"] for _ in range(2)]
        env.reset(seed=3)
        assert [env.reset()[1]["seed"] for _ in range(2)] == sequence
        obs, info = env.reset(seed=11)
        wrong = next(
            name for name in re.findall(r"button '([^']+)'", _flat(obs)) if name.lower() != _quoted(goal).lower()
        )
        obs, reward, terminated, truncated, step_info = env.step(f"click('{_line_id(obs, 'button', wrong)}')")
        assert (reward, terminated, truncated) == (0.0, True, False)  # MiniWoB's raw reward is -1: BrowserGym's 0
        assert step_info["evaluation"]["details"]["miniwob"]["RAW_REWARD_GLOBAL"] < 0
    finally:
        env.close()


@pytest.mark.browser
def test_the_step_budget_truncates_and_the_url_guard_holds():
    env = envs.make("miniwob/click-test", obs_mode="axtree", max_episode_steps=2)
    try:
        obs, info = env.reset(seed=0)
        obs, reward, terminated, truncated, _ = env.step("goto('https://example.com/')")
        assert "Blocked navigation" in obs["last_action_error"] and obs["url"].endswith("click-test.html")
        assert (reward, terminated, truncated) == (0.0, False, False)
        obs, reward, terminated, truncated, step_info = env.step("noop(0)")
        assert (reward, terminated, truncated) == (0.0, False, True) and step_info["evaluation"]["score"] == 0.0
    finally:
        env.close()


@pytest.mark.browser
def test_the_episode_clock_ends_the_episode_as_a_truncation():
    env = envs.make("miniwob/click-test", obs_mode="axtree", episode_max_time_ms=300)
    try:
        obs, info = env.reset(seed=0)
        time.sleep(0.6)
        obs, reward, terminated, truncated, step_info = env.step(f"click('{_line_id(obs, 'button')}')")
        assert (reward, terminated, truncated) == (0.0, False, True)
        assert step_info["evaluation"]["timed_out"] is True
    finally:
        env.close()


@pytest.mark.browser
@pytest.mark.slow
def test_every_task_resets_and_steps():
    """All 125 tasks, one after another; closed envs hand their Chromium to the next (one browser)."""
    failures = {}
    for env_id in envs.list_env_ids("miniwob"):
        env = envs.make(env_id, obs_mode="axtree")
        try:
            obs, info = env.reset(seed=0)
            assert info["intent"] and obs["url"].startswith(info["site_urls"]["miniwob"]), info
            ids = [n["browsergym_id"] for n in obs["axtree_object"]["nodes"] if n.get("browsergym_id")]
            action = f"click('{ids[-1]}')" if ids else "noop(0)"
            obs, reward, terminated, truncated, _ = env.step(action)
            assert reward in (0.0, 1.0) and not (terminated and truncated)
            assert "Blocked" not in obs["last_action_error"]
        except Exception as exc:  # noqa: BLE001 - collect every failing task, then report them all
            failures[env_id] = f"{type(exc).__name__}: {exc}"
        finally:
            env.close()
    assert not failures, failures


def _flat(obs: dict) -> str:
    from browsergym.utils.obs import flatten_axtree_to_str

    return flatten_axtree_to_str(obs["axtree_object"])


def _names(obs: dict) -> list[str]:
    return [str(n.get("name", {}).get("value", "")) for n in obs["axtree_object"]["nodes"]]
