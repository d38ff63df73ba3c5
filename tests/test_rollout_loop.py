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

from webarena_gym.experiments import rollout as rollout
from webarena_gym.experiments.trajectory import Trajectory, validate
from webarena_gym.llm import Script
from webarena_gym.policies.base import BudgetExhausted, Decision, EnvHandleError, Policy, TaskSpec
from webarena_gym.policies.react import WEBARENA_ACTIONS, ReActPolicy

PAGES = {"http://t/": "[1] link 'Hats'\n[2] link 'Shoes'", "http://t/hats": "[5] StaticText 'Red hat $12'"}
LINKS = {"1": "http://t/hats", "2": "http://t/shoes"}


class TextSiteEnv(gym.Env):
    """Two pages; ``click [1]`` opens the hats page; ``stop [answer]`` scores the answer "$12"."""

    def __init__(self, max_episode_steps: int | None = None, fail_on: str | None = None):
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
        truncated = self.max_episode_steps is not None and self.n >= self.max_episode_steps
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

    def end_episode(self, answer: str = ""):
        score = float(answer == "$12")
        return self._obs(), score, False, True, {"evaluation": {"answer": answer, "string_match": score}}

    def evaluate_now(self, answer: str):
        return {"score": float(answer == "$12"), "details": {}, "method": "exact"}

    def answer_in(self, action: str):
        m = re.fullmatch(r"stop \[(.*)\]", action, re.S)
        return m.group(1) if m else None

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


def test_the_loop_ends_the_episode_at_the_decision_budget_and_still_scores_it(envs):
    traj = rollout.run_episode("test/shop", react([say("click [2]")] * 2 + [say("click [1]")]), max_steps=3)
    assert envs[0].max_episode_steps is None  # the env has no limit of its own under the loop
    assert traj.truncated and not traj.terminated and len(traj.steps) == 3
    assert traj.forced_stop and traj.budget_exhausted == "decisions"
    # end_episode ran the evaluator on the policy's answer for a spent budget (WebArena's early stop)
    assert traj.evaluation == {"answer": "Early stop: reached the maximum of 3 steps", "string_match": 0.0}
    assert traj.counters["decisions"] == 3 and traj.counters["interactions"] == 3
    assert traj.budget == {"decisions": 3, "interactions": None}


class AnswersAtTheBudget(Policy):
    """Clicks until stopped; its forced-stop answer is the right one, or its hook is broken."""

    def __init__(self, broken: bool = False):
        self.broken = broken

    def reset(self, task: TaskSpec) -> None:
        self.task = task

    def act(self, obs, handle) -> Decision:
        return Decision("click [2]")

    def forced_stop_answer(self, budget: str) -> str:
        if self.broken:
            raise RuntimeError("no answer")
        return f"$12 ({budget}: {self.task.budget.decisions})"


def test_the_forced_stop_answer_is_the_policys_and_a_broken_hook_answers_nothing(envs):
    traj = rollout.run_episode("test/shop", AnswersAtTheBudget(), max_steps=2)
    assert traj.forced_stop and traj.evaluation["answer"] == "$12 (decisions: 2)" and traj.err_msg is None
    with pytest.warns(UserWarning, match="forced_stop_answer failed"):
        broken = rollout.run_episode("test/shop", AnswersAtTheBudget(broken=True), max_steps=2)
    assert broken.forced_stop and broken.evaluation["answer"] == "" and broken.truncated


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


def test_an_answer_sent_through_the_handle_is_held_back(envs):
    class Prober(Explorer):
        def act(self, obs, handle) -> Decision:
            handle.step("click [1]")
            probe, _, terminated, truncated, info = handle.step("stop [$12]")
            assert not (terminated or truncated) and info == {"answer": "$12", "intercepted": True}
            assert probe["url"] == "http://t/hats"  # nothing was sent: the page is the one before
            return Decision(action=f"stop [{info['answer']}]")

    traj = rollout.run_episode("test/shop", Prober())
    assert traj.terminated and traj.reward == 1.0 and len(traj.steps) == 1
    assert traj.counters["intercepted_answers"] == 1 and envs[0].n == 2  # click + the final answer
    assert traj.counters["interactions"] == 2 and traj.counters["decisions"] == 1
    assert traj.steps[0].handle_calls[1]["info"] == {"answer": "$12"}


def test_a_browser_that_dies_under_a_handle_step_ends_the_decision(monkeypatch):
    class Dying(TextSiteEnv):
        def step(self, action):
            if action == "click [2]":
                return self._obs("browser died"), 0.0, False, True, {"error": "the browser crashed"}
            return super().step(action)

    monkeypatch.setattr(rollout, "_make_env", lambda e, p, kw: Dying())

    class Walker(Explorer):
        def act(self, obs, handle) -> Decision:
            handle.step("click [2]")
            with pytest.raises(EnvHandleError, match="already over"):
                handle.goto("http://t/")
            return Decision(action="click [1]")

    traj = rollout.run_episode("test/shop", Walker())
    assert traj.truncated and traj.error_source == "env" and "crashed" in traj.err_msg
    assert traj.steps[0].action is None and len(traj.steps) == 1


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

    monkeypatch.setattr(rollout, "_make_env", lambda e, p, kw: TextSiteEnv())
    traj = rollout.run_episode("test/shop", Idle(), max_steps=4)
    assert len(traj.steps) == 4 and traj.forced_stop and traj.truncated and traj.reward == 0.0
    assert traj.evaluation == {"answer": "", "string_match": 0.0} and traj.counters["interactions"] == 0


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


def test_the_interaction_budget_stops_handle_steps_and_non_answer_actions(envs):
    class Busy(Explorer):
        def act(self, obs, handle) -> Decision:
            if not self.seen:
                handle.step("click [2]")
                handle.step("click [1]")
                with pytest.raises(BudgetExhausted) as spent:
                    handle.step("click [1]")
                assert spent.value.budget == "interactions" and handle.budget.interactions_left == 0
                self.seen.append("spent")
                return Decision(action="click [2]")  # not an answer: refused, the episode ends
            return Decision(action="stop [$12]")

    traj = rollout.run_episode("test/shop", Busy(), max_interactions=2)
    assert traj.budget == {"decisions": 30, "interactions": 2} and traj.budget_exhausted == "interactions"
    assert traj.forced_stop and traj.truncated and traj.reward == 0.0 and len(traj.steps) == 1
    assert traj.counters["interactions"] == 2 and envs[0].n == 2
    assert "interaction budget is spent" in traj.steps[0].action_error
    assert traj.summary_info()["stats.cum_interactions"] == 2.0


def test_an_answer_is_still_delivered_when_the_interaction_budget_is_spent(envs):
    class Answerer(Explorer):
        def act(self, obs, handle) -> Decision:
            handle.step("click [1]")
            with pytest.raises(BudgetExhausted):
                handle.step("click [2]")
            return Decision(action="stop [$12]")

    traj = rollout.run_episode("test/shop", Answerer(), max_interactions=1)
    assert traj.terminated and traj.reward == 1.0 and traj.budget_exhausted is None


class Oracle(Explorer):
    """Two trials: a wrong answer, scored by look-ahead; then the right one."""

    def __init__(self, lookahead: bool):
        self.lookahead = lookahead

    def allows_lookahead(self) -> bool:
        return self.lookahead

    def act(self, obs, handle) -> Decision:
        if not self.seen:
            verdict = handle.evaluate("$9")
            self.seen.append(f"{verdict['score']}:{verdict['method']}")
            handle.end_trial("$9", outcome="self-judged failure")
            handle.restore(handle.initial)
            return Decision(action="click [1]")
        handle.end_trial("$12", outcome="answered")
        return Decision(action="stop [$12]")


def test_lookahead_is_refused_unless_the_policy_allows_it(envs):
    traj = rollout.run_episode("test/shop", Oracle(lookahead=False))
    assert traj.error_source == "policy" and "look-ahead evaluation is not enabled" in traj.err_msg
    assert not traj.oracle_assisted and traj.counters["lookahead_calls"] == 0


def test_lookahead_and_trials_are_recorded_and_leave_the_score_alone(envs, tmp_path):
    traj = rollout.run_episode("test/shop", Oracle(lookahead=True), out_dir=tmp_path)
    assert traj.reward == 1.0 and traj.oracle_assisted and traj.final_policy_state == {"seen": ["0.0:exact"]}
    assert traj.lookahead == [{"step": 0, "answer": "$9", "score": 0.0, "method": "exact"}]
    assert [(t["index"], t["answer"], t["score"], t["outcome"]) for t in traj.trials] == [
        (0, "$9", 0.0, "self-judged failure"),
        (1, "$12", 1.0, "answered"),
    ]
    assert [t["start_step"] for t in traj.trials] == [0, 1] and traj.counters["restores"] == 1
    data = json.loads((tmp_path / "trajectory.json").read_text())
    validate(data)
    assert data["summary"]["stats.n_trials"] == 2.0 and data["summary"]["stats.cum_lookahead_calls"] == 1.0


def test_a_search_tree_is_recorded(envs):
    from webarena_gym.policies.search_tree import SearchTree

    class Searcher(Explorer):
        def act(self, obs, handle) -> Decision:
            self.tree = SearchTree.rooted(state=handle.snapshot(), url=obs["url"])
            node = self.tree.add(self.tree.root, label="open hats", actions=["click [1]"], value=1.0, visits=1)
            self.tree.final_path = self.tree.path_to(node.id)
            return Decision(action="stop [$12]")

        def search_tree(self):
            return self.tree

    traj = rollout.run_episode("test/shop", Searcher())
    assert traj.tree["final_path"] == [0, 1] and traj.tree["nodes"][1]["label"] == "open hats"
    assert traj.tree["nodes"][0]["state"] == "snap0"
    validate(traj.to_dict())


def test_an_error_raised_while_handling_a_browser_error_is_a_browser_error():
    """A wrapper that trips over a dead browser's observation still names the browser as what failed."""
    import playwright.sync_api

    from webarena_gym.experiments.rollout import _error_kind

    try:
        try:
            raise playwright.sync_api.Error("Target page, context or browser has been closed")
        except playwright.sync_api.Error:
            raise KeyError("axtree_object")  # noqa: B904 - the implicit context is what is tested
    except KeyError as exc:
        assert _error_kind(exc) == "browser"
    assert _error_kind(KeyError("axtree_object")) is None


def test_actions_a_replay_restore_runs_again_count_as_interactions(monkeypatch):
    """Real sites restore by reset + replay: the replayed actions ran in the browser again, so the
    interaction count (the report's interaction column and the interaction budget) includes them."""

    class ReplayingEnv(TextSiteEnv):
        def restore(self, snap):
            obs, _ = self.reset()
            for _ in range(snap[1]):
                obs, *_ = self.step("click [1]")
            return obs, {"restore_method": "replay", "replayed_actions": snap[1]}

    class Backtrack(Explorer):
        def act(self, obs, handle) -> Decision:
            handle.step("click [1]")
            token = handle.snapshot()
            handle.step("click [2]")
            _, info = handle.restore(token)  # replays the one click
            self.seen.append(f"{info['replayed_actions']}:{handle.budget.interactions}")
            return Decision(action="stop [$12]")

    monkeypatch.setattr(rollout, "_make_env", lambda env_id, preset, kwargs: ReplayingEnv())
    traj = rollout.run_episode("test/shop", Backtrack())
    assert traj.final_policy_state == {"seen": ["1:3"]}  # two handle steps and one replayed action
    assert traj.counters["interactions"] == 4 and traj.counters["replayed_actions"] == 1  # + the answer
    assert traj.summary_info()["stats.cum_interactions"] == 4.0
    assert traj.steps[0].handle_calls[-1]["info"]["replayed_actions"] == 1
