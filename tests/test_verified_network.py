"""Network traces on a real local-suite episode: recorded on request, written beside the trajectory as
HAR 1.2 that WebArena-Verified's package reads, with credentials and session cookies scrubbed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from webarena_verified.types.tracing import NetworkTrace

from webarena_gym.envs.local.sites import load_site
from webarena_gym.envs.network import SCRUBBED
from webarena_gym.experiments.rollout import run_episode
from webarena_gym.experiments.trajectory import NETWORK_FILE
from webarena_gym.policies.base import Decision, Policy, TaskSpec

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class Visitor(Policy):
    """Opens one forum page through the handle, then answers."""

    name = "visitor"
    uses_llm = False

    def reset(self, task: TaskSpec) -> None:
        self.task, self.n = task, 0

    def act(self, obs, handle) -> Decision:
        self.n += 1
        if self.n == 1:
            handle.goto(self.task.site_urls["reddit"] + "/f/books")
            return Decision(action=None)
        return Decision(action="stop [done]")


def test_a_recorded_episode_writes_a_scrubbed_har_the_package_reads(tmp_path):
    traj = run_episode("webarena/local.200", Visitor(), out_dir=tmp_path, env_kwargs={"record_network": True})
    assert traj.err_msg is None, traj.err_msg
    assert traj.reset_info["record_network"] is True
    text = (tmp_path / NETWORK_FILE).read_text(encoding="utf-8")
    har = json.loads(text)
    assert har["log"]["version"] == "1.2"
    entries = har["log"]["entries"]
    urls = [e["request"]["url"] for e in entries]
    assert any(u.endswith("/f/books") for u in urls), urls
    books = next(e for e in entries if e["request"]["url"].endswith("/f/books"))
    assert books["request"]["method"] == "GET" and books["response"]["status"] == 200
    # Session cookies travel with every request of the logged-in context; none of their values is written.
    cookies = [h["value"] for e in entries for h in e["request"]["headers"] if h["name"].lower() == "cookie"]
    assert cookies and all(v.split("=", 1)[1] == SCRUBBED for c in cookies for v in c.split("; ")), cookies
    assert load_site("reddit").ACCOUNT["password"] not in text
    # The package's own reader takes the file, and sees the forum page as a navigation.
    trace = NetworkTrace.from_content(Path(tmp_path / NETWORK_FILE))
    assert any(e.is_navigation_event and e.url.endswith("/f/books") for e in trace.evaluation_events)


def test_no_trace_unless_asked(tmp_path):
    traj = run_episode("webarena/local.200", Visitor(), out_dir=tmp_path)
    assert traj.err_msg is None and traj.reset_info["record_network"] is False
    assert not (tmp_path / NETWORK_FILE).exists()
