"""The per-episode LLM budget, end to end for every LLM method: a scripted model that would go on
calling runs out of its ``max_llm_calls`` mid-episode on a local task (real browser, sites and
evaluator); the episode ends cleanly through the method's stop path, recorded like the other budgets,
and no more calls are made than the budget allows."""

from __future__ import annotations

import pytest
from model_server import ModelServer
from test_faults_model_server import EXACT_TASK, MODEL, run_cli, say, study_args
from test_policies_coact_e2e import endless_brains
from test_policies_devils_advocate_e2e import failing_script
from test_policies_plan_and_act_e2e import planners
from test_policies_plan_mcts_e2e import OrdersModel

from webarena_gym.benchmarks.support.oracle import ReferenceOracle, WebRLOracle
from webarena_gym.experiments.rollout import run_episode
from webarena_gym.experiments.store import StudyStore
from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.policies.agentoccam.text import actor_answer
from webarena_gym.policies.base import Policy
from webarena_gym.policies.coact import GLOBAL, LOCAL
from webarena_gym.policies.react import ANSWER_PHRASE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FORUMS = 203  # reddit: Forums, Alphabetical, then the answer "books, boston"
ORDERS = 0  # shopping: My Account, My Orders, then the most recent cancelled order


def oracle(name: str, render, limit: int, **roles) -> Policy:
    """A method whose actor plays the reference steps of FORUMS (it would answer on the third call)."""
    source = ReferenceOracle(FORUMS, "agentoccam" if name.startswith("agentoccam") else "webarena", render)
    script = Script({"actor": Script.forever(source), **roles})
    return source.attach(make_policy(name, script=script, max_llm_calls=limit))


def occam_judge(limit: int) -> Policy:
    """AgentOccam + Judge: two candidates per step (the reference step and a give-up), the judge picks the
    first; each step is two calls."""

    def candidates(command: str) -> str:
        return (
            "INTERACTION HISTORY SUMMARY:\nOn track.\nOBSERVATION DESCRIPTION:\nThe page.\nACTION CANDIDATES:\n"
            f"- reason: [the next step]\n- action: [{command}]\n\n- reason: [give up]\n- action: [stop [N/A]]\n"
            "OBSERVATION HIGHLIGHT:\n"
        )

    judge = "PLAN PROGRESS ASSESSMENT:\n- plan [0]\nACTION ASSESSMENT:\n- action [0]: ok\nACTION SELECTION:\n0"
    return oracle("agentoccam_judge", candidates, limit, judge=Script.forever(judge))


def plan_and_act(name: str, limit: int) -> Policy:
    cot = name == "plan_and_act"
    source = WebRLOracle(FORUMS, cot)
    script = Script({**planners(cot), "executor": Script.forever(source)})
    return source.attach(make_policy(name, script=script, max_llm_calls=limit))


def coact(name: str, limit: int) -> Policy:
    gp, la = endless_brains()
    script = Script({GLOBAL: Script.forever(gp), LOCAL: Script.forever(la)})
    return make_policy(name, script=script, max_llm_calls=limit)


# method -> (task, policy builder, LLM call limit): each limit is reached before the method would finish
METHODS = {
    "react": (FORUMS, lambda: oracle("react", lambda c: f"{ANSWER_PHRASE} ```{c}```", 2)),
    "agentoccam": (FORUMS, lambda: oracle("agentoccam", actor_answer, 2)),
    "agentoccam_judge": (FORUMS, lambda: occam_judge(3)),
    "coact": (FORUMS, lambda: coact("coact", 5)),
    "coact_fs": (FORUMS, lambda: coact("coact_fs", 5)),
    "plan_and_act": (FORUMS, lambda: plan_and_act("plan_and_act", 3)),
    "plan_and_act_dynamic": (FORUMS, lambda: plan_and_act("plan_and_act_dynamic", 3)),
    "devils_advocate": (9, lambda: make_policy("devils_advocate", script=Script(failing_script(4)), max_llm_calls=7)),
    "plan_mcts": (ORDERS, lambda: make_policy("plan_mcts", script=OrdersModel().script(), max_llm_calls=3)),
}


@pytest.mark.parametrize("name", METHODS)
def test_a_spent_llm_call_budget_ends_every_method_cleanly(name):
    task, build = METHODS[name]
    policy = build()
    limit = policy.llms()[0].limits.llm_calls
    traj = run_episode(f"webarena/local.{task}", policy)

    assert traj.err_msg is None, traj.stack_trace  # a budget is no error
    assert traj.budget["llm_calls"] == limit and traj.budget_exhausted == "llm_calls"
    assert traj.stats()["cum_llm_calls"] == limit  # every call the budget allowed, and not one more
    assert traj.evaluation is not None and traj.reward == 0.0  # scored, though cut short of the answer
    assert traj.counters["interactions"] >= 1  # cut off mid-episode, not before it began
    if traj.forced_stop:  # the loop stopped it with the method's own answer for a spent budget
        assert traj.truncated and traj.steps[-1].decision_error.startswith("no decision: the LLM calls budget")
    else:  # the method answered itself from what it had (a search from its best path)
        assert name == "plan_mcts" and traj.terminated


def test_the_budget_flags_reach_the_study_and_a_cost_budget_without_a_price_stops_it(tmp_path):
    """Through the command line, against a server: ``--max-llm-calls`` ends the episode and is recorded;
    ``--max-cost`` for a model litellm has no price for stops the study at once, naming the other flags."""
    server = ModelServer(lambda request: say("scroll [down]"))
    try:
        calls = run_cli(*study_args(tmp_path / "calls", EXACT_TASK, "--policy", "react", "--model", MODEL,
                                    "--api-base", server.url, "--max-llm-calls", "2"))  # fmt: skip
        sent = len(server.requests)
        cost = run_cli(*study_args(tmp_path / "cost", EXACT_TASK, "--policy", "react", "--model", MODEL,
                                   "--api-base", server.url, "--max-cost", "0.05"))  # fmt: skip
    finally:
        server.close()
    assert calls.returncode == 0, calls.stderr[-3000:]
    (result,) = StudyStore(tmp_path / "calls").latest().values()
    assert (result.status, result.budget_exhausted, result.llm_calls) == ("done", "llm_calls", 2) and sent == 2
    assert StudyStore(tmp_path / "calls").read_manifest()["llm_budget"] == {"max_llm_calls": 2}
    report = tmp_path / "calls" / "report"
    (page,) = [p for p in report.glob("*.html") if p.name != "index.html"]
    assert "LLM calls 2/2" in page.read_text() and "ended by the llm_calls budget" in page.read_text()
    assert "## LLM budget" in (report / "summary.md").read_text() and (report / "success_vs_spend.png").exists()

    assert cost.returncode == 3 and len(server.requests) == sent  # stopped before any call was sent
    assert "--max-cost" in cost.stderr and "--max-tokens" in cost.stderr
