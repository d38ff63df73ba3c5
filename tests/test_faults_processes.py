"""Processes dying under an episode or a study: the Playwright driver, Chromium, the site server, the
study itself (Ctrl-C). Each test kills processes it started itself, found by their process ids.

What must hold: every browser call returns (a killed driver or a stopped Chromium becomes the same
"browser died" error as a crashed Chromium, and the next reset recovers); a site server that died
before the evaluation makes the episode an error, not a 0; studies count such episodes as errors and
leave no temporary files behind, however they end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from env_support import alive, bid_of, browser_processes, env_on, send_html, task_config
from study_support import gated_server, model_options, stop_after_first_episode

from webarena_gym.benchmarks.support.procs import children_map, process_table
from webarena_gym.envs.browser import BROWSERS
from webarena_gym.envs.env import WebArenaEnv
from webarena_gym.envs.sites import FixedSiteHost
from webarena_gym.experiments import tasksets
from webarena_gym.experiments.compare import EpisodeJob, PolicySpec, run_job
from webarena_gym.policies.base import Decision, Policy, TaskSpec

pytestmark = pytest.mark.browser

BROWSER_DIED = "the browser died"


def descendants(predicate) -> set[int]:
    """Live processes started (directly or not) by this test process whose command line matches."""
    table = process_table()
    children = children_map(table)
    found, stack = set(), [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            stack.append(child)
            if table[child][1] != "Z" and predicate(table[child][2]):
                found.add(child)
    return found


def driver_pids() -> set[int]:
    return descendants(lambda cmdline: "run-driver" in cmdline)


def site_server_pids() -> set[int]:
    return descendants(lambda cmdline: "envs.local.server" in cmdline)


def wait_gone(pids: set[int], timeout: float = 15) -> set[int]:
    deadline = time.monotonic() + timeout
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive(pids)


@pytest.fixture
def static_env(static_sites):
    # A browser an earlier test parked would be counted in the tests' "before": the processes they stop
    # or kill would then be the page's renderer only (a hung page), not Chromium.
    BROWSERS.shutdown()
    made: list[WebArenaEnv] = []

    def make() -> WebArenaEnv:
        host = FixedSiteHost({"shopping": static_sites.site.url})
        config = task_config(require_login=False)
        made.append(WebArenaEnv(task_kwargs={"config": config, "host": lambda: host}, obs_mode="axtree"))
        return made[-1]

    yield make
    for env in made:
        env.close()


def test_a_killed_playwright_driver_is_a_dead_browser_and_the_next_reset_recovers(static_env):
    env = static_env()
    before = browser_processes()
    obs, _ = env.reset(seed=0)
    drivers = driver_pids()
    assert len(drivers) == 1
    browsers = browser_processes() - before - drivers
    os.kill(next(iter(drivers)), signal.SIGKILL)
    assert not wait_gone(drivers)

    obs, reward, terminated, truncated, info = env.step("noop(0)")  # Playwright alone would spin forever
    assert (reward, terminated, truncated) == (0.0, False, True) and info["browser_dead"] is True
    assert BROWSER_DIED in obs["last_action_error"] and info["error_kind"] == "browser"
    assert not wait_gone(browsers)  # Chromium went with its driver
    obs, *_, info = env.step("noop(0)")  # still an answer, not an exception
    assert "error" in info

    obs, _ = env.reset(seed=0)  # a new driver, a new Chromium
    assert driver_pids() and not driver_pids() & drivers
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '7')")
    assert obs["last_action_error"] == ""


def test_a_chromium_that_stops_answering_is_a_dead_browser_within_the_call_bound(static_env, monkeypatch):
    monkeypatch.setenv("WEBARENA_GYM_BROWSER_CALL_TIMEOUT", "3")
    env = static_env()
    before = browser_processes()
    env.reset(seed=0)
    chromium = browser_processes() - before - driver_pids()
    assert chromium
    for pid in chromium:
        os.kill(pid, signal.SIGSTOP)
    try:
        obs, reward, terminated, truncated, info = env.step("noop(0)")
        assert truncated and info["browser_dead"] is True and BROWSER_DIED in obs["last_action_error"]
        obs, _ = env.reset(seed=0)  # a fresh Chromium
        obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '7')")
        assert obs["last_action_error"] == ""
    finally:
        for pid in alive(chromium):
            os.kill(pid, signal.SIGKILL)


def test_a_killed_chromium_gives_the_same_error_as_a_killed_driver(static_env):
    env = static_env()
    before = browser_processes()
    env.reset(seed=0)
    for pid in browser_processes() - before - driver_pids():
        os.kill(pid, signal.SIGKILL)
    obs, *_, info = env.step("noop(0)")
    assert BROWSER_DIED in obs["last_action_error"] and info["error_kind"] == "browser"


def _busy_page(handler) -> None:
    send_html(handler, b"<!doctype html><title>Busy</title><button onclick='for (;;) {}'>Busy</button>")


def test_a_renderer_killed_under_a_call_in_flight_is_a_browser_error_not_a_hung_page(monkeypatch):
    """An out-of-memory kill of the page's renderer while the agent's call waits is infrastructure: the
    pending call fails at once as a crash (a browser error), never as the agent's hung page."""
    monkeypatch.setenv("WEBARENA_GYM_BROWSER_CALL_TIMEOUT", "60")
    with env_on(_busy_page) as (env, served):
        obs, _ = env.reset(seed=0)
        renderers = descendants(lambda cmdline: "--type=renderer" in cmdline)
        assert renderers
        killer = threading.Timer(2.0, lambda: [os.kill(pid, signal.SIGKILL) for pid in alive(renderers)])
        killer.start()
        obs, reward, terminated, truncated, info = env.step(f"click({bid_of(obs, 'button', 'Busy')!r})")
        killer.join()
        assert truncated and not terminated and info["error_kind"] == "browser" and "page_hung" not in info
        obs, _ = env.reset(seed=0)  # the next episode runs
        assert obs["url"].startswith(served.url) and not obs["last_action_error"]


# -- episodes of a study ------------------------------------------------------------------------------

TASK = tasksets.resolve("webarena/local.500")[0]  # "In which year was Ilse Prescott born?" (exact match)


class KillsThenAnswers(Policy):
    """Answers right after killing, in its first decision, the processes ``victims()`` names."""

    preset = "webarena"
    uses_llm = False

    def __init__(self, victims) -> None:
        self.victims = victims

    def reset(self, task: TaskSpec) -> None:
        pass

    def act(self, obs, handle) -> Decision:
        pids = self.victims()
        assert pids, "nothing to kill"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        assert not wait_gone(pids)
        return Decision(action="stop [1989]")


def job(tmp_path: Path, name: str, policy: str = "killer") -> EpisodeJob:
    return EpisodeJob(PolicySpec(policy), TASK, 0, 1, str(tmp_path / name), str(tmp_path), None, {})


def test_a_site_server_that_died_before_the_evaluation_makes_the_episode_an_error(tmp_path):
    result = run_job(job(tmp_path, "a"), build_policy=lambda _: KillsThenAnswers(site_server_pids))
    assert result.status == "error" and result.error_kind == "sites"
    assert "sites stopped answering before the evaluation" in result.err_msg
    traj = json.loads((tmp_path / "a" / "trajectory.json").read_text())
    assert traj["error_source"] == "env" and traj["evaluation"]["error_kind"] == "sites"
    after = run_job(job(tmp_path, "b", "reference"))  # the process's next episode gets a working server
    assert (after.status, after.reward) == ("done", 1.0)


def test_a_browser_that_died_under_an_episode_makes_it_an_error_and_the_next_one_runs(tmp_path):
    result = run_job(job(tmp_path, "a"), build_policy=lambda _: KillsThenAnswers(driver_pids))
    assert result.status == "error" and result.error_kind == "browser" and BROWSER_DIED in result.err_msg, result
    after = run_job(job(tmp_path, "b", "reference"))
    assert (after.status, after.reward) == ("done", 1.0)


# -- whole studies -------------------------------------------------------------------------------------

STUDY_TASKS = "webarena/local.500,webarena/local.501,webarena/local.502"


def study(tmp_path: Path, tasks: str, tmp_name: str = "tmp") -> tuple[list[str], dict[str, str]]:
    tmp = tmp_path / tmp_name
    tmp.mkdir(exist_ok=True)
    args = [sys.executable, "-m", "webarena_gym.experiments.cli", "compare", "--policy", "reference", "--tasks", tasks]
    args += ["--out", str(tmp_path / "study"), "--workers", "1", "--no-progress"]
    return args, {**os.environ, "TMPDIR": str(tmp)}


@pytest.mark.slow
@pytest.mark.parametrize("tmp_name", ["tmp", "t" * 100], ids=["tmp", "too-deep-for-a-unix-socket"])
def test_a_finished_study_leaves_no_temporary_files(tmp_path, tmp_name):
    """Also under a TMPDIR too deep for the fork server's socket (the workers are then spawned)."""
    args, env = study(tmp_path, "webarena/local.500", tmp_name)
    out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert sorted(os.listdir(env["TMPDIR"])) == []


@pytest.mark.slow
def test_a_study_stopped_with_ctrl_c_leaves_no_temporary_files(tmp_path):
    server, _ = gated_server()  # the second episode's model call is held: Ctrl-C finds the study running
    try:
        args, env = study(tmp_path, STUDY_TASKS)
        args = [a for a in args if a not in ("--policy", "reference")] + model_options(server)
        code, err = stop_after_first_episode(args, env, tmp_path / "study" / "results.jsonl")
    finally:
        server.close()
    assert code == 130 and "--resume" in err, err[-3000:]
    assert sorted(os.listdir(env["TMPDIR"])) == []
