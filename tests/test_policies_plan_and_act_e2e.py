"""Plan-and-Act end to end on local tasks (real browser, sites and evaluator, litellm's real call path):
in the main run the scripted executor only carries out the newest plan (each element found by role and
name on the page in its prompt), so its reward is the plans' doing; elsewhere it writes the task's reference
steps in the WebRL grammar, read off the page the env gave, and scripted planners write plans.

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


# The reference route of ANSWER_TASK as plan steps that name each element by its role and accessible name.
ROUTE = ("Click the link 'Forums'", "Click the link 'Alphabetical'", "Answer 'books, boston'")
_PLAN_STEP = re.compile(r"^Step: (Click the (link|button) '([^']+)'|Answer '([^']*)')\.?$", re.M)
_TAGS = {"link": "a", "button": "button"}


def route_plan(steps: tuple[str, ...], cot: bool) -> str:
    text = "\n".join(f"## Step {i}\nReasoning: That is the way there.\nStep: {s}." for i, s in enumerate(steps, 1))
    return f"I will look at the page first.\n[Start of Plan]\n{text}\n[End of Plan]" if cot else text


def route_planners(cot: bool, route: tuple[str, ...] = ROUTE) -> dict:
    """A planner that writes the whole route, and a replanner that drops the steps already carried out
    (counted off the previous actions its prompt lists)."""

    def replan(messages: list[dict]) -> str:
        done = len(re.findall(r"^- Action \d+:", messages[-1]["content"], re.M))
        return route_plan(route[done:], cot)

    return {"planner": [route_plan(route, cot)], "replanner": Script.forever(replan)}


def plan_follower(cot: bool):
    """A scripted executor that carries out the first step of the newest plan in its prompt, finding the
    element by role and name on the page its prompt shows: what it does depends on the plans alone."""

    def execute(messages: list[dict]) -> str:
        planned = [m["content"] for m in messages if _PLAN_STEP.search(m["content"])][-1]
        step = _PLAN_STEP.search(planned)
        assert step is not None
        if step.group(4) is not None:
            action = f"exit(message={json.dumps(step.group(4))})"
        else:
            tag, name = _TAGS[step.group(2)], step.group(3)
            found = re.search(rf'<{tag} id="([^"]+)"[^>]*>\s*{re.escape(name)}\s*</{tag}>', messages[-1]["content"])
            assert found, f"no {step.group(2)} {name!r} on the page shown"
            action = f'# Element: the {step.group(2)} {name}\ndo(action="Click", element="{found.group(1)}")'
        return f"The plan's next step.\n[Start of Action]\n{action}\n[End of Action]" if cot else action

    return execute


def roles(traj) -> list[list[str]]:
    return [[c["role"] for c in s.llm_calls] for s in traj.steps]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def follow(name: str, route: tuple[str, ...] = ROUTE):
    """``name`` with route planners and the plan-following executor."""
    cot = registered_defaults(name).get("cot", True)
    script = Script({**route_planners(cot, route), "executor": Script.forever(plan_follower(cot))})
    return make_policy(name, script=script)


def test_plan_and_act_plans_replans_executes_and_answers():
    traj = run_episode(f"webarena/local.{ANSWER_TASK}", follow("plan_and_act"))
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
    for i, (step, version, round_) in enumerate(zip(traj.steps, state["plan_versions"], state["rounds"], strict=True)):
        assert version["html_sha256"] == sha256(strip_ids(step.observation))
        assert round_["html_sha256"] == sha256(step.observation) == step.parsed["executor"]["html_sha256"]
        assert step.parsed["plan"]["text"].startswith(
            f"## Step 1\nReasoning: That is the way there.\nStep: {ROUTE[i]}."
        )
        assert step.parsed["executor"]["action"] == step.action


def test_the_reward_follows_the_plans():
    """The executor only carries out plans: the same route with another answer in its last step fails."""
    wrong = (*ROUTE[:2], "Answer 'books, news'")
    traj = run_episode(f"webarena/local.{ANSWER_TASK}", follow("plan_and_act", wrong))
    assert traj.err_msg is None, traj.stack_trace
    assert [s.action.split("\n")[0] for s in traj.steps[:2]] == ["# Element: the link Forums",
                                                                 "# Element: the link Alphabetical"]  # fmt: skip
    assert traj.terminated and traj.reward == 0.0 and traj.steps[-1].action.endswith('exit(message="books, news")')


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
