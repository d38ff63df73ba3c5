"""The rollout loop's bookkeeping and error handling, on a small in-process text environment.

The browser-backed end-to-end runs are in test_rollout_browser.py; here a fixture env (pages with
links, a form-free "shop") makes every branch of the loop fast and deterministic.
"""

from __future__ import annotations

import json
import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import experiments.rollout as rollout
from experiments.trajectory import Trajectory, validate
from llm import Script
from policies.base import Decision, EnvHandleError, Policy, TaskSpec
from policies.react import WEBARENA_ACTIONS, ReActPolicy

PAGES = {"http://t/": "[1] link 'Hats'\n[2] link 'Shoes'", "http://t/hats": "[5] StaticText 'Red hat $12'"}
LINKS = {"1": "http://t/hats", "2": "http://t/shoes"}


class TextSiteEnv(gym.Env):
    """Two pages; ``click [1]`` opens the hats page; ``stop [answer]`` scores the answer "$12"."""

    def __init__(self, max_episode_steps: int = 30, fail_on: str | None = None):
        self.max_episode_steps = max_episode_steps
        self.fail_on = fail_on
        self.url, self.n, self.closed = "http://t/", 0, False

    def _obs(self, error: str = "") -> dict[str, Any]:
        return {
            "text": PAGES.get(self.url, "(empty)"),
            "url": self.url,
            "last_action_error": error,
            "screenshot": np.full((4, 6, 3), 200, dtype=np.uint8),
        }

    def reset(self, *, seed=None, options=None):
        self.url, self.n = "http://t/", 0
        return self._obs(), {
            "task_id": 7,
            "intent": "What does the red hat cost?",
            "sites": ["shopping"],
            "start_url": "http://t/",
            "site_urls": {"shopping": "http://t"},
        }

    def step(self, action: str):
        if self.fail_on and self.fail_on in action:
            raise RuntimeError("Target page, context or browser has been closed")
        self.n += 1
        error = ""
        if m := re.fullmatch(r"click \[(\w+)\]", action):
            self.url = LINKS.get(m.group(1), self.url)
        elif m := re.fullmatch(r"stop \[(.*)\]", action, re.S):
            score = float(m.group(1).strip() == "$12")
            return self._obs(), score, True, False, {"evaluation": {"string_match": score}}
        else:
            error = f"unknown action {action!r}"
        truncated = self.n >= self.max_episode_steps
        return self._obs(error), 0.0, False, truncated, {"evaluation": {"answer": ""}} if truncated else {}

    # the base-env extras RolloutHandle uses
    def snapshot(self):
        return (self.url, self.n)

    def restore(self, snap):
        self.url, self.n = snap
        return self._obs(), {"restore_method": "exact"}

    def goto(self, url: str):
        self.url = url
        return self._obs(), {}

    def close(self):
        self.closed = True


class Upper(gym.ObservationWrapper):
    """Stands in for a preset's observation wrapper: handle observations must pass through it too."""

    def observation(self, obs):
        return {**obs, "text": obs["text"].upper()}


@pytest.fixture
def envs(monkeypatch):
    made: list[TextSiteEnv] = []

    def make(env_id: str, preset: str, kwargs: dict[str, Any]) -> gym.Env:
        base = TextSiteEnv(max_episode_steps=kwargs["max_episode_steps"])
        made.append(base)
        return Upper(base)

    monkeypatch.setattr(rollout, "_make_env", make)
    return made


def react(answers: list[Any], **kw: Any) -> ReActPolicy:
    return ReActPolicy(script=Script({"actor": answers}), actions=list(WEBARENA_ACTIONS), **kw)


def say(action: str) -> str:
    return f"Thinking about the page. In summary, the next action I will perform is ```{action}```"


def test_success_is_recorded_step_by_step(envs, tmp_path):
    traj = rollout.run_episode(
        "test/shop", react([say("click [1]"), say("stop [$12]")]), out_dir=tmp_path, screenshots=True
    )
    assert traj.err_msg is None and traj.terminated and traj.reward == 1.0
    assert [s.action for s in traj.steps] == ["click [1]", "stop [$12]"]
    assert traj.steps[1].url == "http://t/hats" and "RED HAT" in traj.steps[1].observation
    assert traj.steps[0].thought == "Thinking about the page."
    assert traj.steps[0].llm_calls[0]["responses"] == [say("click [1]")]
    assert traj.steps[0].llm_calls[0]["prompt_tokens"] > 100
    assert traj.evaluation == {"string_match": 1.0}
    assert traj.task["goal"] == "What does the red hat cost?" and envs[0].closed
    assert traj.final_policy_state["actions"] == ["click [1]", "stop [$12]"]
    data = json.loads((tmp_path / "trajectory.json").read_text())
    validate(data)
    assert data["summary"]["n_steps"] == 2 and data["summary"]["cum_reward"] == 1.0
    assert (tmp_path / traj.steps[0].screenshot).read_bytes()[:4] == b"\x89PNG"
    assert Trajectory.load(tmp_path).steps[1].action == "stop [$12]"


def test_env_max_steps_follow_the_policy_budget(envs):
    traj = rollout.run_episode("test/shop", react([say("click [2]")] * 2 + [say("click [1]")]), max_steps=3)
    assert envs[0].max_episode_steps == 3
    assert traj.truncated and not traj.terminated and len(traj.steps) == 3 and traj.evaluation == {"answer": ""}


def test_policy_exception_ends_the_episode_with_the_error(envs):
    class Broken(Policy):
        name = "broken"
        uses_llm = False

        def reset(self, task: TaskSpec) -> None:
            self.n = 0

        def act(self, obs, handle) -> Decision:
            self.n += 1
            if self.n == 2:
                raise ZeroDivisionError("policy bug")
            return Decision(action="click [1]")

    traj = rollout.run_episode("test/shop", Broken())
    assert traj.error_source == "policy" and "ZeroDivisionError: policy bug" in traj.err_msg
    assert "ZeroDivisionError" in traj.stack_trace and len(traj.steps) == 2 and envs[0].closed
    validate(traj.to_dict())


def test_llm_failure_is_recorded_with_the_failed_call(envs):
    import litellm

    auth = litellm.AuthenticationError("invalid key", llm_provider="openai", model="gpt-4-turbo")
    traj = rollout.run_episode("test/shop", react([say("click [1]"), auth]))
    assert traj.error_source == "llm" and "AuthenticationError" in traj.err_msg
    failed = traj.steps[-1].llm_calls
    assert len(failed) == 1 and "AuthenticationError" in failed[0]["error"]
    assert traj.summary_info()["stats.cum_llm_errors"] == 1.0


def test_browser_failure_during_a_step_ends_the_episode(envs, monkeypatch):
    monkeypatch.setattr(rollout, "_make_env", lambda e, p, kw: TextSiteEnv(kw["max_episode_steps"], fail_on="stop"))
    traj = rollout.run_episode("test/shop", react([say("click [1]"), say("stop [$12]")]))
    assert traj.error_source == "env" and "browser has been closed" in traj.err_msg
    assert traj.reward == 0.0 and len(traj.steps) == 2


def test_env_that_cannot_start_is_an_env_error(monkeypatch):
    def boom(*a):
        raise ConnectionError("sites unavailable")

    monkeypatch.setattr(rollout, "_make_env", boom)
    traj = rollout.run_episode("test/shop", react([]))
    assert traj.error_source == "env" and not traj.steps and "sites unavailable" in traj.err_msg


class Explorer(Policy):
    """Uses every handle operation once, then answers from what it found."""

    name = "explorer"
    uses_llm = False

    def reset(self, task: TaskSpec) -> None:
        self.seen: list[str] = []

    def act(self, obs, handle) -> Decision:
        token = handle.snapshot()
        obs2, _, _, _, _ = handle.step("click [1]")
        self.seen.append(obs2["text"])
        handle.goto("http://t/shoes")
        obs3, info = handle.restore(token)
        assert info["restore_method"] == "exact" and obs3["url"] == "http://t/"
        with pytest.raises(EnvHandleError, match="unknown snapshot"):
            handle.restore("nope")
        return Decision(action="stop [$12]" if "$12" in self.seen[0] else "stop [?]")

    def state(self) -> dict[str, Any]:
        return {"seen": self.seen}


def test_handle_calls_are_recorded_and_wrapped(envs):
    traj = rollout.run_episode("test/shop", Explorer())
    assert traj.reward == 1.0
    ops = [(c["op"], c["arg"], c["url"], c["error"] is None) for c in traj.steps[0].handle_calls]
    assert ops == [
        ("snapshot", None, None, True),
        ("step", "click [1]", "http://t/hats", True),
        ("goto", "http://t/shoes", "http://t/shoes", True),
        ("restore", "snap0", "http://t/", True),
        ("restore", "nope", None, False),
    ]
    assert traj.steps[0].policy_state == {"seen": ["[5] STATICTEXT 'RED HAT $12'"]}  # through the wrapper


def test_handle_step_that_ends_the_episode_ends_the_decision(envs):
    class Finisher(Explorer):
        def act(self, obs, handle) -> Decision:
            handle.step("stop [$12]")
            with pytest.raises(EnvHandleError, match="already over"):
                handle.goto("http://t/")
            return Decision(action="click [1]")

    traj = rollout.run_episode("test/shop", Finisher())
    assert traj.terminated and traj.reward == 1.0 and traj.steps[0].action is None and len(traj.steps) == 1


def test_unparseable_answers_are_fed_back_then_early_stop(envs):
    traj = rollout.run_episode("test/shop", react(["I am not sure.", "Still thinking", say("jump [3]")]))
    assert [s.action for s in traj.steps] == [
        None,
        None,
        None,
        "stop [Early stop: failed to parse actions for 3 times]",
    ]
    assert "no action found" in traj.steps[0].decision_error
    second_prompt = traj.steps[1].llm_calls[0]["messages"][-1]["content"]
    assert "PREVIOUS ACTION: None (your last answer could not be used: no action found" in second_prompt
    assert "'jump [3]' is not an available action" in traj.steps[2].decision_error
    assert traj.terminated and traj.reward == 0.0


def test_decisions_without_action_cannot_exceed_the_budget(monkeypatch):
    class Idle(Explorer):
        def act(self, obs, handle) -> Decision:
            return Decision(action=None, error="waiting")

    def make(env_id, preset, kwargs):
        env = TextSiteEnv(kwargs["max_episode_steps"])
        env.step = lambda a, _s=env.step: _s("stop []") if "send_msg_to_user" in a else _s(a)  # base-env answer
        return env

    monkeypatch.setattr(rollout, "_make_env", make)
    traj = rollout.run_episode("test/shop", Idle(), max_steps=4)
    assert len(traj.steps) == 4 and traj.forced_stop and traj.truncated and traj.reward == 0.0
    assert traj.evaluation == {"string_match": 0.0}


def test_recorded_config_is_scrubbed(envs):
    policy = react([say("stop [$12]")])
    secret = "sk-abcdefghijklmnopqrstuvwxyz0123"
    traj = rollout.run_episode("test/shop", policy, env_kwargs={"api_key": secret, "judge_model": "gpt-4o"})
    blob = json.dumps(traj.to_dict())
    assert traj.reward == 1.0 and secret not in blob
    assert traj.env_kwargs["api_key"] == "<redacted>" and traj.env_kwargs["judge_model"] == "gpt-4o"
    assert traj.policy["config"]["llm"]["model"] == policy.llm.model


def test_policy_that_fails_to_reset_is_recorded(envs):
    class NoSolution(Explorer):
        def reset(self, task: TaskSpec) -> None:
            raise KeyError(f"no reference solution for {task.task_id}")

    traj = rollout.run_episode("test/shop", NoSolution())
    assert traj.error_source == "policy" and "no reference solution for 7" in traj.err_msg
    assert not traj.steps and envs[0].closed and traj.task["task_id"] == 7


def test_credentials_passed_as_provider_options_never_reach_the_trajectory(envs, tmp_path):
    secret = "sk-live-0123456789abcdefghijklmn"
    policy = react([say("stop [$12]")])
    policy.llm.roles["actor"] = policy.llm.roles["actor"].merged(api_key=secret, api_base="http://llm.local/v1")
    traj = rollout.run_episode("test/shop", policy, out_dir=tmp_path)
    assert traj.reward == 1.0
    assert secret not in (tmp_path / "trajectory.json").read_text()
    assert traj.steps[0].llm_calls[0]["settings"]["api_base"] == "http://llm.local/v1"


def test_restoring_the_initial_state_resets_the_episode(envs):
    class Retry(Explorer):
        def act(self, obs, handle) -> Decision:
            if obs["url"] == "http://t/hats" and not self.seen:
                start, info = handle.restore(handle.initial)  # a new trial from the start (Devil's Advocate)
                self.seen.append(f"{info['restore_method']}:{start['url']}:{envs[0].n}")
                return Decision(action="click [1]")
            return Decision(action="stop [$12]" if self.seen else "click [1]")

    traj = rollout.run_episode("test/shop", Retry())
    assert traj.final_policy_state == {"seen": ["reset:http://t/:0"]} and traj.reward == 1.0
    assert [s.action for s in traj.steps] == ["click [1]", "click [1]", "stop [$12]"]
    assert traj.steps[1].handle_calls[0]["arg"] == "initial"
