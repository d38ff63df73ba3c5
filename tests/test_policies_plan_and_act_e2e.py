"""Plan-and-Act end to end on local tasks (real browser, sites and evaluator, litellm's real call path):
a scripted executor writes the task's reference steps in the WebRL grammar, scripted planners write plans.

The tests walk the method's machinery: the roles per step, what each role is shown (no element id for the
planners, old pages replaced for the executor), re-asks, dropdowns chosen by label, answers delivered with
``exit(message=...)``, clean failures, and the Table 1 grid in one study next to ReAct."""

from __future__ import annotations

import functools
import hashlib
import json
import re

import pytest

from webarena_gym.benchmarks.support.oracle import ReferenceOracle, WebRLOracle
from webarena_gym.experiments.compare import EpisodeJob, PolicySpec, compare, run_job
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.report.summary import summarize
from webarena_gym.experiments.report.tables import all_tables
from webarena_gym.experiments.rollout import run_episode
from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.policies.base import registered_defaults
from webarena_gym.policies.plan_and_act import TABLE1_GRID
from webarena_gym.policies.react import ANSWER_PHRASE
from webarena_gym.wrappers.observations.html import PLACEHOLDER, strip_ids

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ANSWER_TASK = 203  # reddit: Forums, Alphabetical, answer "books, boston" (string_match)
FORM_TASK = 212  # reddit: submit a post, choosing its forum in a <select> (url_match + program_html)


def plan(version: int, cot: bool) -> str:
    text = (
        "## Step 1\nReasoning: The page is the forum's front page with a Forums link in the header.\n"
        f"Step: Open the list of forums.\n## Step 2\nReasoning: Plan version {version}.\nStep: Finish the task."
    )
    return f"I will look at the page first.\n[Start of Plan]\n{text}\n[End of Plan]" if cot else text


def planners(cot: bool) -> dict:
    versions = iter(range(1, 100))
    return {"planner": [plan(0, cot)], "replanner": Script.forever(lambda messages: plan(next(versions), cot))}


def plan_and_act(name: str, task_id: int, *, prefix: tuple = (), wrong_answer: str | None = None, **config):
    cot = config.get("cot", registered_defaults(name).get("cot", True))
    oracle = WebRLOracle(task_id, cot, wrong_answer)
    script = Script({**planners(cot), "executor": [*prefix, *[oracle] * 12]})
    return oracle.attach(make_policy(name, script=script, **config))


def roles(traj) -> list[list[str]]:
    return [[c["role"] for c in s.llm_calls] for s in traj.steps]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_plan_and_act_plans_replans_executes_and_answers():
    traj = run_episode(f"webarena/local.{ANSWER_TASK}", plan_and_act("plan_and_act", ANSWER_TASK))
    assert traj.err_msg is None, traj.stack_trace
    assert traj.terminated and traj.reward == 1.0, traj.evaluation
    assert roles(traj) == [["planner", "executor"], ["replanner", "executor"], ["replanner", "executor"]]
    assert traj.steps[-1].action.endswith('exit(message="books, boston")')
    assert traj.evaluation["answer"] == "books, boston" and traj.evaluation["details"]["string_match"]["score"] == 1.0
    calls = [c for s in traj.steps for c in s.llm_calls]
    for call in calls:  # the planners never see an element id; the executor acts on them
        text = json.dumps(call["messages"])
        assert (' id=\\"' in text) == (call["role"] == "executor"), call["role"]
    assert "Forums" in json.dumps(calls[0]["messages"])  # the planner did see the page
    # the executor's history: earlier pages only as snippets around the element acted on
    last = traj.steps[2].llm_calls[-1]["messages"]
    for earlier in traj.steps[:2]:
        assert earlier.observation not in json.dumps(last) and earlier.observation[:200] not in last[0]["content"]
    assert 'id="13"' in last[0]["content"] and len(last[0]["content"]) < len(traj.steps[0].observation)
    assert traj.steps[2].observation in last[-1]["content"]
    # what the training-data pipeline needs: every plan version, the pages each call saw
    state = traj.final_policy_state
    assert [(v["version"], v["role"]) for v in state["plan_versions"]] == [(0, "planner"), (1, "replanner"),
                                                                          (2, "replanner")]  # fmt: skip
    for step, version, round_ in zip(traj.steps, state["plan_versions"], state["rounds"], strict=True):
        assert version["html_sha256"] == sha256(strip_ids(step.observation))
        assert round_["html_sha256"] == sha256(step.observation) == step.parsed["executor"]["html_sha256"]
        assert step.parsed["plan"]["text"].endswith(f"Plan version {version['version']}.\nStep: Finish the task.")
        assert step.parsed["executor"]["action"] == step.action


def test_paper_prompts_static_plan_placeholders_and_a_dropdown_by_label():
    traj = run_episode(f"webarena/local.{FORM_TASK}", plan_and_act("plan_and_act_static", FORM_TASK))
    assert traj.err_msg is None, traj.stack_trace
    assert traj.terminated and traj.reward == 1.0, traj.evaluation
    assert roles(traj) == [["planner", "executor"]] + [["executor"]] * (len(traj.steps) - 1)
    chosen = next(s for s in traj.steps if "Select Dropdown Option" in (s.action or ""))
    assert re.fullmatch(r"select_option\('\d+', 'consoles'\)", chosen.browser_action)
    last = traj.steps[-1].llm_calls[0]["messages"]
    assert last[0]["role"] == "system" and "# Global Plan" in last[0]["content"]
    assert [m["content"] for m in last[3:-1:2]] == [f"Round {i}\n{PLACEHOLDER}" for i in range(1, len(traj.steps) - 1)]
    assert last[1]["content"].endswith(f"Round 0\n{traj.task['goal']}")  # WebRL's round 0 repeats the task
    assert traj.steps[-1].action.endswith('exit(message="Posted.")')


def test_a_malformed_executor_answer_takes_the_retry_path():
    policy = plan_and_act("plan_and_act_dynamic", ANSWER_TASK, prefix=("I think the Forums link is what I need.",))
    traj = run_episode(f"webarena/local.{ANSWER_TASK}", policy)
    assert traj.err_msg is None and traj.reward == 1.0, traj.evaluation
    assert roles(traj) == [["planner", "executor", "executor"], ["replanner", "executor"], ["replanner", "executor"]]
    retry = traj.steps[0].llm_calls[2]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "I think the Forums link is what I need."}
    assert "no action found" in retry[-1]["content"] and 'do(action="Search"' in retry[-1]["content"]
    assert traj.steps[0].decision_error is None and traj.final_policy_state["retries"]["executor"] == 1


def test_fails_cleanly_on_unusable_answers_and_on_a_wrong_answer():
    script = Script({**planners(True), "executor": Script.forever("Sorry, I cannot tell.")})
    traj = run_episode(f"webarena/local.{ANSWER_TASK}", make_policy("plan_and_act", script=script))
    assert traj.err_msg is None and traj.terminated and traj.reward == 0.0
    assert roles(traj) == [["planner"] + ["executor"] * 4]
    assert traj.steps[0].action.startswith('exit(message="Early stop: the executor gave no usable answer')
    assert traj.steps[0].decision_error and traj.evaluation is not None
    wrong = run_episode(f"webarena/local.{ANSWER_TASK}", plan_and_act("plan_and_act", ANSWER_TASK,
                                                                       wrong_answer="books, news"))  # fmt: skip
    assert wrong.err_msg is None and wrong.terminated and wrong.reward == 0.0
    assert wrong.steps[-1].action.endswith('exit(message="books, news")')


def scripted(job: EpisodeJob):
    """The study's policies with scripted LLMs that know the reference solution (ReAct in its own format)."""
    if job.policy.name == "react":
        oracle = ReferenceOracle(job.task.task_id, "webarena", lambda c: f"Let me see. {ANSWER_PHRASE} ```{c}```")
        return oracle.attach(make_policy("react", script=Script({"actor": [oracle] * 12})))
    return plan_and_act(job.policy.name, job.task.task_id)


def test_table1_grid_runs_in_one_study_next_to_react(tmp_path):
    policies = [PolicySpec(name) for name in TABLE1_GRID] + [PolicySpec("react")]
    out = compare(policies, f"webarena/local.{ANSWER_TASK}", tmp_path / "study",
                  runner=functools.partial(run_job, build_policy=scripted), progress=False)  # fmt: skip
    summary = summarize(out)
    assert {r["policy"]: r["success"]["all"]["mean"] for r in summary["rows"]} == dict.fromkeys(
        [*TABLE1_GRID, "react"], 1.0
    )
    calls = {r["policy"]: {role: s["calls"] for role, s in r["roles"].items()} for r in summary["rows"]}
    assert calls["plan_and_act_no_planner"] == {"executor": 3.0}
    assert calls["plan_and_act_static"] == {"planner": 1.0, "executor": 3.0}
    assert calls["plan_and_act_dynamic"] == calls["plan_and_act"] == {"planner": 1.0, "replanner": 2.0,
                                                                      "executor": 3.0}  # fmt: skip
    tables = {t.name: t for t in all_tables(summary)}
    steps = tables["outcome_steps"]
    assert steps.rows[0][:4] == ["plan_and_act_no_planner", "All", "1", "3.00"] and steps.rows[0][5] == "-"

    report = build_report(out)
    assert (report / "outcome_steps.csv").exists() and "Steps by outcome" in (report / "summary.md").read_text()
