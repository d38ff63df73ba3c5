"""AgentOccam and AgentOccam + Judge end to end on local tasks (real browser, sites and evaluator):
a scripted LLM answers with the task's reference steps in AgentOccam's output fields."""

from __future__ import annotations

import pytest

from webarena_gym.benchmarks.support.oracle import ReferenceOracle
from webarena_gym.experiments.rollout import run_episode
from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.policies.agentoccam import AgentOccamPolicy
from webarena_gym.policies.agentoccam.text import actor_answer as fields

pytestmark = [pytest.mark.browser, pytest.mark.slow]
TASKS = (203, 212, 306)  # reddit (click, answer), reddit (form with a select), gitlab; no goto steps
GIVE_UP = "stop [N/A: the page does not show it]"


def candidate_fields(action: str) -> str:
    """Judge variant: the reference command and a premature give-up as the two candidates."""
    return (
        f"INTERACTION HISTORY SUMMARY:\nSo far on track.\nOBSERVATION DESCRIPTION:\nThe page.\n"
        f"ACTION CANDIDATES:\n- reason: [the next step of the solution]\n- action: [{action}]\n\n"
        f"- reason: [maybe it cannot be done]\n- action: [{GIVE_UP}]\nOBSERVATION HIGHLIGHT:\n"
    )


def judge_choosing(pred):
    """A judge that selects the first listed choice whose command satisfies ``pred``."""

    def judge(messages):
        choices = messages[-1]["content"].split("ACTION CHOICES:\n")[1].split("\n\n")
        index = next(i for i, c in enumerate(choices) if pred(c.split("\n")[1]))
        return (
            f"PLAN PROGRESS ASSESSMENT:\n- plan [0]\nACTION ASSESSMENT:\n- action [0]: ok\nACTION SELECTION:\n{index}"
        )

    return judge


def oracle_policy(
    task_id: int,
    *,
    judge: bool = False,
    wrong_answer: str | None = None,
    good_judge: bool = True,
    prefix: list | None = None,
) -> AgentOccamPolicy:
    oracle = ReferenceOracle(task_id, "agentoccam", candidate_fields if judge else fields, wrong_answer=wrong_answer)
    script = {"actor": [*(prefix or []), *[oracle] * 12]}
    if judge:
        script["judge"] = [judge_choosing(lambda a: (a != GIVE_UP) == good_judge)] * 12
    return oracle.attach(make_policy("agentoccam_judge" if judge else "agentoccam", script=Script(script)))


@pytest.mark.parametrize(
    "task_id,judge",
    [(212, False), (306, False), *((t, True) for t in TASKS)],
    ids=["agentoccam-212", "agentoccam-306", *(f"judge-{t}" for t in TASKS)],
)
def test_solves_local_tasks_with_reference_answers(task_id, judge):
    traj = run_episode(f"webarena/local.{task_id}", oracle_policy(task_id, judge=judge))
    assert traj.err_msg is None, traj.stack_trace
    assert traj.terminated and traj.reward == 1.0, traj.evaluation
    assert traj.steps[-1].action.startswith("stop [")
    assert all(s.decision_error is None for s in traj.steps)
    roles = [[c["role"] for c in s.llm_calls] for s in traj.steps]
    assert roles == [["actor", "judge"] if judge else ["actor"]] * len(traj.steps)
    assert traj.final_policy_state["plan_tree"]["active"] == 0


def test_fails_cleanly_on_a_wrong_answer_and_a_misled_judge():
    wrong = run_episode("webarena/local.203", oracle_policy(203, wrong_answer="SomebodyElse"))
    assert wrong.err_msg is None and wrong.terminated and wrong.reward == 0.0
    assert wrong.steps[-1].action == "stop [SomebodyElse]" and wrong.evaluation is not None
    misled = run_episode("webarena/local.203", oracle_policy(203, judge=True, good_judge=False))
    assert misled.err_msg is None and misled.terminated and misled.reward == 0.0
    assert [s.action for s in misled.steps] == [GIVE_UP]


def test_branch_and_prune_navigate_back_through_the_rollout():
    """AgentOccam's third solved task: branch, a reference click under the subplan, prune back to the
    root (the start page), then the reference solution from the start; prune's return is a recorded goto."""
    explorer = ReferenceOracle(203, "agentoccam", fields)
    policy = oracle_policy(
        203,
        prefix=[fields("branch [0] [Open the forum first]"), explorer, fields("prune [0] [Wrong forum, start again]")],
    )
    traj = run_episode("webarena/local.203", explorer.attach(policy))
    assert traj.err_msg is None and traj.reward == 1.0, traj.stack_trace or traj.evaluation
    actions = [s.action for s in traj.steps]
    assert actions[0] == "branch [0] [Open the forum first]"
    assert actions[2] == "prune [0] [Wrong forum, start again]"
    start = traj.steps[0].url
    assert traj.steps[1].url == start and traj.steps[2].url != start  # the click moved, then ...
    assert [(c["op"], c["arg"]) for c in traj.steps[2].handle_calls] == [("goto", start)]
    assert traj.steps[3].url == start  # ... prune brought the browser back
    tree = traj.final_policy_state["plan_tree"]
    assert tree["active"] == 0 and [n["visible"] for n in tree["nodes"]] == [True, False]
    last_prompt = traj.steps[-1].llm_calls[0]["messages"][1]["content"]
    assert "<step_1_interaction>" in last_prompt and "# resumed 1 time(s)" in last_prompt
