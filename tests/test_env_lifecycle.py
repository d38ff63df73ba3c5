"""Browser lifecycle of ``WebArenaEnv``: one Chromium reused across resets, no process left after
``close()``, a crashed browser ends the episode cleanly and the next reset relaunches it, and
Gymnasium's environment checker."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import gymnasium as gym
import pytest
from env_support import StaticSiteHost, alive, bid_of, browser_processes, task_config
from gymnasium.utils.env_checker import check_env

from webarena_gym.envs.browser import BROWSERS, REUSE_BROWSER_ENV_VAR

pytestmark = pytest.mark.browser


def _main_browser_pids(pids: set[int]) -> set[int]:
    """The browser processes among ``pids`` (Chromium's helpers carry a ``--type=`` switch)."""
    found = set()
    for pid in pids:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        name = Path(cmdline.split("\0")[0].split(" ")[0]).name
        if "chrom" in name and "crashpad" not in name and "--type=" not in cmdline:
            found.add(pid)
    return found


def _main_browser_pid(pids: set[int]) -> int:
    found = _main_browser_pids(pids)
    assert len(found) == 1, f"expected one browser among {pids}, found {found}"
    return found.pop()


def _wait_gone(pids: set[int]) -> set[int]:
    deadline = time.monotonic() + 10
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


def test_browser_reused_across_resets_and_nothing_left_after_close(make_env, monkeypatch):
    monkeypatch.setenv(REUSE_BROWSER_ENV_VAR, "0")
    BROWSERS.shutdown()
    before = browser_processes()
    env = make_env()
    env.reset(seed=0)
    browser = env.browser
    started = browser_processes() - before
    assert started, "reset launched no browser"
    env.step("noop(0)")
    env.reset(seed=1)
    assert env.browser is browser and browser.is_connected()  # same Chromium, fresh context
    assert env.step_count == 0
    # headless: the chat is in memory, not a second browser
    assert type(env.chat).__name__ == "HeadlessChat"
    env.close()
    assert not _wait_gone(started), f"left running after close(): {alive(started)}"
    env.close()  # closing twice is harmless


def test_a_closed_envs_browser_serves_the_next_env_of_the_process(make_env):
    BROWSERS.shutdown()
    before = browser_processes()
    first = make_env()
    first.reset(seed=0)
    first.page.evaluate("localStorage.setItem('left', 'behind')")
    first.context.add_cookies([{"name": "left", "value": "behind", "url": first.page.url}])
    first.close()
    started = browser_processes() - before
    assert started and alive(started) == started and BROWSERS.idle() == 1  # parked, still running

    second = make_env()
    obs, _ = second.reset(seed=0)
    assert BROWSERS.idle() == 0
    assert _main_browser_pids(browser_processes() - before) == {_main_browser_pid(started)}  # no new Chromium
    # nothing of the first episode reaches the second: contexts are per episode
    assert all(c["name"] != "left" for c in second.context.cookies())
    assert second.page.evaluate("localStorage.getItem('left')") is None
    obs, *_ = second.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '7')")
    assert obs["last_action_error"] == ""
    second.close()
    BROWSERS.shutdown()
    assert not _wait_gone(started), f"left running after the pool shut down: {alive(started)}"


def test_crashed_browser_ends_episode_and_next_reset_relaunches(make_env):
    env = make_env()
    before = browser_processes()
    obs, _ = env.reset(seed=0)
    pid = _main_browser_pid(browser_processes() - before)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive({pid}) and time.monotonic() < deadline:
        time.sleep(0.05)
    obs, reward, terminated, truncated, info = env.step("noop(0)")
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["browser_dead"] is True
    assert "crashed" in obs["last_action_error"] and "reset()" in obs["last_action_error"]
    obs, *_, info = env.step("noop(0)")  # still no exception
    assert "error" in info
    # the next reset relaunches Chromium and the episode works again
    obs, _ = env.reset(seed=0)
    assert env.browser.is_connected()
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '7')")
    assert obs["last_action_error"] == ""


def test_missing_variables_fail_reset_at_once_without_a_browser(monkeypatch):
    from webarena_gym import envs  # noqa: F401 - registers the ids

    for name in ("WA_GITLAB", "WA_HOMEPAGE"):
        monkeypatch.delenv(name, raising=False)
    before = browser_processes()
    env = gym.make("webarena/310")  # a gitlab task; constructing needs no server
    started = time.monotonic()
    with pytest.raises(Exception, match="WA_GITLAB is not set") as err:
        env.reset(seed=0)
    assert type(err.value).__name__ == "SitesUnavailableError"
    assert "export WA_GITLAB=" in str(err.value)
    assert time.monotonic() - started < 5
    assert browser_processes() - before == set(), "a failed reset must leave nothing running"
    assert env.unwrapped.browser is None
    env.close()


@pytest.fixture
def registered_test_env(static_sites):
    """A registered id for the static shop, as ``gym.make`` builds it (nondeterministic, like ours)."""
    from webarena_gym.envs.env import WebArenaEnv

    env_id = "webarena_test/static-shop"

    def entry_point(**kwargs):
        host = StaticSiteHost(static_sites)
        return WebArenaEnv(task_kwargs={"config": task_config(), "host": lambda: host}, **kwargs)

    gym.register(env_id, entry_point=entry_point, nondeterministic=True, kwargs={"obs_mode": "axtree"})
    yield env_id
    del gym.registry[env_id]


@pytest.mark.slow
def test_gymnasium_env_checker_passes(registered_test_env):
    env = gym.make(registered_test_env)
    try:
        check_env(env.unwrapped)
    finally:
        env.close()
