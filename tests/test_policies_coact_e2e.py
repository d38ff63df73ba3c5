"""CoAct end to end on the local suite: real browser, real forum site, real evaluator, and a scripted
LLM played through litellm's own call path (answers picked by the request each prompt makes).

Task 203 asks for the forums whose names start with "B" (string_match: books, boston): open the
forum list, order it alphabetically, answer.
"""

from __future__ import annotations

import csv
import functools
import json

import pytest
from coact_support import Brain, actions, click, collation, decision, plan

from webarena_gym.experiments.compare import EpisodeJob, PolicySpec, compare, run_job
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.rollout import run_episode
from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.policies.coact import GLOBAL, LOCAL, CoActPolicy

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TASK = "webarena/local.203"
ANSWER = "books, boston"
PHASES = (
    ("Open the list of all forums from the top menu.", "The page listing every forum is shown."),
    ("Order the forum list alphabetically.", "The forums are listed by name, so those starting with B can be read."),
)


def two_phase_brains() -> tuple[Brain, Brain]:
    """The first local plan clicks an element id the page does not have; the local agent blames the
    global plan, the planner agrees and re-plans, and the second attempt goes through."""
    gp = Brain(
        global_plan=plan(*PHASES),
        decide=decision("revise", "The first phase should name the menu link to use."),
        revise=plan(("Click the 'Forums' link of the top menu.", PHASES[0][1]), PHASES[1]),
        collation=collation(ANSWER),
    )
    la = Brain(
        local_plan=[actions("click [99999]"), click("link", "Forums"), click("link", "Alphabetical")],
        false_check=decision("request", "No element 99999 exists; the phase does not say which link opens the list."),
        pass_check=[decision("move"), decision("move")],
    )
    return gp, la


def scripted(name: str, gp: Brain, la: Brain) -> CoActPolicy:
    return make_policy(name, script=Script({GLOBAL: Script.forever(gp), LOCAL: Script.forever(la)}))


def test_a_wrong_id_is_checked_requested_replanned_and_the_task_solved(tmp_path):
    traj = run_episode(TASK, scripted("coact", *two_phase_brains()), out_dir=tmp_path)
    assert traj.err_msg is None, traj.stack_trace
    assert traj.terminated and traj.reward == 1.0, traj.evaluation
    # one env action per act: four decisions, each with exactly its own action and no extra env calls
    assert [s.action for s in traj.steps][0] == "click [99999]" and traj.steps[-1].action == f"stop [{ANSWER}]"
    assert all(s.action and not s.handle_calls for s in traj.steps) and len(traj.steps) == 4
    assert "element [99999] is not on the current page" in traj.steps[0].action_error
    assert (traj.counters["decisions"], traj.counters["interactions"]) == (4, 3)  # the invalid id reached no browser
    assert [[c["role"] for c in s.llm_calls] for s in traj.steps] == [
        [GLOBAL, LOCAL],
        [LOCAL, GLOBAL, GLOBAL, LOCAL],
        [LOCAL, LOCAL],
        [LOCAL, GLOBAL],
    ]
    state = traj.final_policy_state
    assert state["calls"] == [
        "global_planner.global_plan",
        "local_agent.local_plan",
        "local_agent.false_check",
        "global_planner.decide",
        "global_planner.revise",
        "local_agent.local_plan",
        "local_agent.pass_check",
        "local_agent.local_plan",
        "local_agent.pass_check",
        "global_planner.collation",
    ]
    counters = state["counters"]
    assert (counters["exchanges"], counters["local_revisions"], counters["global_replans"]) == (5, 0, 1)
    assert (
        state["plan_version"] == 2 and state["finished"]["reason"] == "every phase of the global plan passed its check"
    )
    # every call with its tokens and cost, per role
    assert all(c["prompt_tokens"] > 100 and c["cost"] > 0 for s in traj.steps for c in s.llm_calls)
    roles = traj.role_stats()
    assert (roles[GLOBAL]["calls"], roles[LOCAL]["calls"]) == (4, 6)
    saved = json.loads((tmp_path / "trajectory.json").read_text())
    assert saved["policy"]["name"] == "coact" and saved["policy"]["config"]["force_stop"] is False


def endless_brains() -> tuple[Brain, Brain]:
    """The local agent never accepts its results; the planner re-plans while it may."""
    flip = iter(["scroll [down]", "scroll [up]"] * 30)
    gp = Brain(
        global_plan=plan(("Find the forums whose names start with B.", "Their names are known.")),
        decide=decision("revise", "Try again."),
        revise=plan(("Find the forums whose names start with B.", "Their names are known.")),
        collation=collation(ANSWER),
    )
    la = Brain(
        local_plan=lambda m: actions(next(flip)),
        revise=lambda m: actions(next(flip)),
        overruled=lambda m: actions(next(flip)),
        pass_check=decision("revise", "The names are not visible yet."),
    )
    return gp, la


def test_force_stop_delivers_the_collations_answer_and_it_is_scored():
    traj = run_episode(TASK, scripted("coact_fs", *endless_brains()))
    assert traj.err_msg is None, traj.stack_trace
    assert traj.terminated and traj.reward == 1.0 and traj.budget_exhausted is None
    assert traj.steps[-1].action == f"stop [{ANSWER}]" and len(traj.steps) == 17
    assert [c["role"] for c in traj.steps[-1].llm_calls] == [LOCAL, GLOBAL]
    state = traj.final_policy_state
    assert state["finished"]["reason"] == "force stop: 11 exchanges between the agents (limit 10)"
    assert (state["counters"]["local_revisions"], state["counters"]["global_replans"]) == (12, 3)


def test_without_force_stop_the_same_dialogue_fails_cleanly_and_a_dead_model_is_recorded():
    traj = run_episode(TASK, scripted("coact", *endless_brains()))
    assert traj.err_msg is None and traj.terminated and traj.reward == 0.0
    assert traj.steps[-1].action.startswith("stop [Early stop: round limit: 21 exchanges")
    assert "global_planner.collation" not in traj.final_policy_state["calls"]

    silent = make_policy("coact", script=Script({GLOBAL: [plan(*PHASES)], LOCAL: []}))
    dead = run_episode(TASK, silent)
    assert dead.error_source == "llm" and "no answer left for role 'local_agent'" in dead.err_msg
    assert len(dead.steps) == 1 and dead.reward == 0.0 and dead.final_policy_state["mode"] == "local_plan"


def scripted_study_policy(job: EpisodeJob):
    """What the study below runs: ReAct answering with the reference steps, CoAct with its script."""
    if job.policy.name == "react":
        from webarena_gym.benchmarks.support.oracle import ReferenceOracle
        from webarena_gym.policies.react import ANSWER_PHRASE, ReActPolicy

        oracle = ReferenceOracle(job.task.task_id, "webarena", lambda c: f"On this page: {ANSWER_PHRASE} ```{c}```")
        return oracle.attach(ReActPolicy(script=Script({"actor": [oracle] * 6})))
    return scripted(job.policy.name, *two_phase_brains())


def test_coact_runs_in_a_study_next_to_react_with_its_calls_and_cost_per_role(tmp_path):
    policies = [PolicySpec("react", label="react [scripted]"), PolicySpec("coact", label="coact [scripted]")]
    runner = functools.partial(run_job, build_policy=scripted_study_policy)
    study = compare(policies, TASK, tmp_path / "study", runner=runner, progress=False)
    report = build_report(study)
    summary = json.loads((report / "summary.json").read_text())
    assert {r["policy"]: r["success"]["all"]["mean"] for r in summary["rows"]} == {
        "react [scripted]": 1.0,
        "coact [scripted]": 1.0,
    }
    with open(report / "roles.csv") as f:
        rows = {(r["Policy"], r["Role"]): r for r in csv.DictReader(f)}
    assert set(rows) == {("react [scripted]", "actor"), ("coact [scripted]", GLOBAL), ("coact [scripted]", LOCAL)}
    assert float(rows[("coact [scripted]", GLOBAL)]["Calls/task"]) == 4.0
    assert float(rows[("coact [scripted]", LOCAL)]["Calls/task"]) == 6.0
    assert all(float(r["Cost/task ($)"]) > 0 for r in rows.values())
    markdown = (report / "summary.md").read_text()
    assert "| coact [scripted] | global_planner |" in markdown and "| coact [scripted] | local_agent |" in markdown
    with open(report / "policy_counters.csv") as f:
        react, counters = sorted(csv.DictReader(f), key=lambda r: r["Policy"] != "react [scripted]")
    assert (react["Policy"], react["Early stops/task"]) == ("react [scripted]", "0.00")  # ReAct counts only those
    assert counters["Policy"] == "coact [scripted]"
    assert (counters["Exchanges/task"], counters["Global replans/task"], counters["Force stops/task"]) == (
        "5.00",
        "1.00",
        "0.00",
    )
