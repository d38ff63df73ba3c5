"""The rollout handle on a real local-suite episode (snapshot/restore/goto through the wrappers), and a
browser that dies mid-episode ending the episode with a recorded error instead of an exception."""

from __future__ import annotations

import re

import pytest

from webarena_gym.experiments.rollout import run_episode
from webarena_gym.policies.base import Decision, Policy, TaskSpec

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def bid(text: str, role: str, name: str) -> str:
    match = re.search(rf"\[(\w+)\] {role} '{re.escape(name)}'", text)
    assert match, f"no {role} {name!r} in:\n{text[:2000]}"
    return match.group(1)


class Backtracker(Policy):
    """Step 0: explore with the handle and act on the page it navigated to (Devil's Advocate's
    backtracking pattern). Step 1: restore the start. Step 2: the browser dies under the policy."""

    name = "backtracker"
    uses_llm = False

    def reset(self, task: TaskSpec) -> None:
        self.task, self.n, self.seen = task, 0, {}

    def act(self, obs, handle) -> Decision:
        self.n += 1
        if self.n == 1:
            self.token = handle.snapshot()
            books, info = handle.goto(self.task.site_urls["reddit"] + "/f/books")
            self.seen["goto_url"] = books["url"]
            return Decision(action=f"click [{bid(books['text'], 'link', 'Top')}]")
        if self.n == 2:
            self.seen["before_restore"] = obs["url"]
            start, info = handle.restore(self.token)
            self.seen["restored_url"], self.seen["method"] = start["url"], info["restore_method"]
            return Decision(action=None)
        handle._env.unwrapped.browser.close()  # simulate a crash under the episode
        return Decision(action="go_back")

    def state(self):
        return dict(self.seen)


def test_handle_operations_and_a_dying_browser_on_a_real_episode(tmp_path):
    traj = run_episode("webarena/local.200", Backtracker(), out_dir=tmp_path)
    first, second, third = traj.steps
    assert [c["op"] for c in first.handle_calls] == ["snapshot", "goto"]
    assert first.handle_calls[1]["url"].endswith("/f/books") and first.action_error is None  # wrapper resynced
    assert second.url.endswith("/f/books/top") or "top" in second.url  # the click ran on the goto'ed page
    assert [c["op"] for c in second.handle_calls] == ["restore"]
    assert second.handle_calls[0]["info"]["restore_method"] == "exact"
    assert traj.final_policy_state["restored_url"] == first.url
    # the dead browser ends the episode with an env error, and run_episode returned normally
    assert traj.error_source == "env" and "browser" in traj.err_msg and not traj.terminated
    assert third.action == "go_back" and traj.reward == 0.0
    assert (tmp_path / "trajectory.json").exists()
