"""The harness for search and reflective methods, end to end on the local suite in a real browser:
budgets, held-back exploratory answers, exact restores that undo site state, look-ahead evaluation,
trials, search trees, and handle observations identical to ``env.step``'s.

The policies here are scripted test policies (no model): they walk reference solutions through the
rollout's handle the way Plan-MCTS and Devil's Advocate do.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from webarena_gym.envs.local.registry import load_solutions
from webarena_gym.experiments.rollout import run_episode
from webarena_gym.experiments.trajectory import Trajectory
from webarena_gym.policies.base import Decision, EnvHandle, Obs, Policy, TaskSpec
from webarena_gym.policies.baselines import reference_command
from webarena_gym.policies.search_tree import SearchTree
from webarena_gym.wrappers.presets import make_env

pytestmark = [pytest.mark.browser, pytest.mark.slow]

POST_TASK = 212  # post a question in the consoles forum (program_html on the forum's newest post)
TITLE = "What is the recommended console to buy these days?"
ANSWER_TASK = 0  # the number of the most recent cancelled order (string_match: 195)


def walk(steps: list[dict[str, Any]], obs: Obs, handle: EnvHandle, task: TaskSpec) -> tuple[list[str], Obs]:
    """Run reference steps through ``handle.step`` (an explored branch); the answer step is left out."""
    done, i = [], 0
    while i < len(steps):
        command, used = reference_command(steps, i, obs, task.commands, task.site_urls)
        obs, *_ = handle.step(command)
        assert not obs.get("last_action_error"), obs.get("last_action_error")
        done.append(command)
        i += used
    return done, obs


class TwoBranchSearch(Policy):
    """Branch A posts the question in the wrong forum; restore; branch B posts it right; answer."""

    preset = "agentoccam"
    uses_llm = False

    def reset(self, task: TaskSpec) -> None:
        self.task, self.tree, self.leftover = task, SearchTree(), None

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        steps = load_solutions()[POST_TASK][:-1]
        root = handle.snapshot()
        self.tree = SearchTree.rooted(state=root, url=obs["url"])
        wrong = [dict(s, value="books") if s["action"] == "select_option" else s for s in steps]
        actions_a, _ = walk(wrong, obs, handle, self.task)
        self.tree.add(self.tree.root, label="post it in books", actions=actions_a, reward=0.0, status="failed")
        start, info = handle.restore(root)
        assert info["restore_method"] == "exact" and start["url"] == obs["url"]
        actions_b, posted = walk(steps, start, handle, self.task)
        _, _, terminated, truncated, held = handle.step("stop [Posted.]")  # an exploratory answer
        assert not (terminated or truncated) and held["answer"] == "Posted."
        good = self.tree.add(self.tree.root, label="post it in consoles", actions=actions_b, reward=1.0,
                             status="terminal", answer=held["answer"])  # fmt: skip
        self.tree.final_path = self.tree.path_to(good.id)
        books, _ = handle.goto(f"{self.task.site_urls['reddit']}/f/books/new")
        self.leftover = TITLE in books["text"]  # branch A's post, if the restore had not undone it
        handle.goto(posted["url"])  # the task ends on the new post's forum (url_match)
        return Decision(action=f"stop [{held['answer']}]")

    def state(self) -> dict[str, Any]:
        return {"leftover": self.leftover}

    def search_tree(self) -> SearchTree:
        return self.tree


def test_a_search_policy_explores_two_branches_restores_and_answers(tmp_path):
    traj = run_episode(f"webarena/local.{POST_TASK}", TwoBranchSearch(), out_dir=tmp_path)
    assert traj.err_msg is None and traj.terminated and traj.reward == 1.0, traj.err_msg
    assert traj.final_policy_state == {"leftover": False}  # the abandoned post is gone before the evaluator runs
    n_a, n_b = (len(traj.tree["nodes"][i]["actions"]) for i in (1, 2))
    c = traj.counters
    assert (c["decisions"], c["interactions"], c["restores"], c["gotos"]) == (1, n_a + n_b + 1, 1, 2)
    assert c["intercepted_answers"] == 1 and len(traj.steps) == 1  # the exploratory answer ended nothing
    assert traj.budget == {"decisions": 30, "interactions": None} and traj.budget_exhausted is None
    ops = [call["op"] for call in traj.steps[0].handle_calls]
    assert ops == ["snapshot"] + ["step"] * n_a + ["restore"] + ["step"] * (n_b + 1) + ["goto", "goto"]
    assert traj.tree["final_path"] == [0, 2] and traj.tree["nodes"][1]["status"] == "failed"
    assert Trajectory.load(tmp_path).tree == traj.tree


class Retrier(Policy):
    """Two trials: a wrong answer, then the reference answer; ``oracle`` asks the evaluator first."""

    preset = "agentoccam"
    uses_llm = False

    def __init__(self, oracle: bool) -> None:
        self.oracle = oracle

    def allows_lookahead(self) -> bool:
        return self.oracle

    def reset(self, task: TaskSpec) -> None:
        self.task, self.verdicts = task, []

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        steps = load_solutions()[ANSWER_TASK]
        for answer in ("000000001", steps[-1]["text"]):
            if self.oracle:
                self.verdicts.append(handle.evaluate(answer)["score"])
            handle.end_trial(answer, outcome="answered" if answer == steps[-1]["text"] else "self-judged failure")
            if answer != steps[-1]["text"]:
                obs, _ = handle.restore(handle.initial)
                walk(steps[:-1], obs, handle, self.task)
        return Decision(action=f"stop [{steps[-1]['text']}]")

    def state(self) -> dict[str, Any]:
        return {"verdicts": self.verdicts}


@pytest.mark.parametrize("oracle", [False, True])
def test_trials_are_scored_for_the_report_and_lookahead_changes_no_score(oracle):
    traj = run_episode(f"webarena/local.{ANSWER_TASK}", Retrier(oracle))
    assert traj.err_msg is None and traj.reward == 1.0
    assert [(t["answer"], t["score"], t["method"]) for t in traj.trials] == [
        ("000000001", 0.0, "exact"),
        ("000000195", 1.0, "exact"),
    ]
    assert traj.oracle_assisted is oracle and traj.counters["lookahead_calls"] == (2 if oracle else 0)
    assert traj.final_policy_state == {"verdicts": [0.0, 1.0] if oracle else []}
    assert [entry["score"] for entry in traj.lookahead] == ([0.0, 1.0] if oracle else [])


def test_handle_observations_are_those_env_step_gives():
    """goto / restore through the wrappers give exactly the observation ``env.step`` gives for that state."""
    env = make_env(f"webarena/local.{ANSWER_TASK}", "webarena")
    try:
        start, info = env.reset(seed=0)
        target = f"{info['site_urls']['shopping']}/customer/account/"
        snap = env.snapshot()
        stepped, *_ = env.step(f"goto [{target}]")
        env.restore(snap)
        moved, _ = env.goto(target)
        assert moved["text"] == stepped["text"] and moved["url"] == stepped["url"]
        restored, info = env.restore(snap)
        assert info["restore_method"] == "exact"
        assert restored["text"] == start["text"] and restored["url"] == start["url"]
        link = re.search(r"\[(\d+)\] link", restored["text"]).group(1)
        clicked, *_ = env.step(f"click [{link}]")  # the action wrapper checks ids against the restored page
        assert not clicked["last_action_error"]
    finally:
        env.close()
