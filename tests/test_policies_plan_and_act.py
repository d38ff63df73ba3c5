"""Plan-and-Act without a browser: prompt builders (sections, placeholders, tags and formats in order),
the plan and action parsers, and the policy's loop with a scripted LLM on hand-made pages (roles per step,
replanning, history garbage collection, re-asks, early stops, what the trajectory records)."""

from __future__ import annotations

import hashlib
import re

import pytest

from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.policies.base import TaskSpec
from webarena_gym.policies.plan_and_act import TABLE1_GRID, PlanAndActPolicy, prompts
from webarena_gym.policies.plan_and_act.parsing import AnswerFormatError, parse_action, parse_plan, plan_steps, tagged
from webarena_gym.wrappers.actions.webrl_grammar import COMMANDS
from webarena_gym.wrappers.observations.html import PLACEHOLDER, Element, ElementInfo, HtmlPage, Option, strip_ids

GOAL = "How many orders are pending?"
PLAN = (
    "## Step 1\nReasoning: The dashboard has a Sales menu.\nStep: Open the orders grid.\n"
    "## Step 2\nReasoning: The grid can be filtered.\nStep: Count the pending orders."
)


def order(text: str, *markers: str) -> list[int]:
    """Positions of ``markers`` in ``text`` (each must be present)."""
    positions = [text.find(m) for m in markers]
    assert all(p >= 0 for p in positions), [m for m, p in zip(markers, positions, strict=True) if p < 0]
    return positions


def in_order(text: str, *markers: str) -> bool:
    positions = order(text, *markers)
    return positions == sorted(positions)


# ------------------------------------------------------------------------------------------------
# Prompt builders


def test_planner_prompt_sections_in_order():
    system, user = prompts.planner_messages(GOAL, "<html>page</html>", cot=False)
    assert system["role"] == "system" and user["role"] == "user"
    assert in_order(
        system["content"], "## Goal", "## Expected Output Format", "## Guidelines", "## High-level Goals Guidelines",
        "## Initial HTML State Guidelines", "## Formatting Guidelines",
    )  # fmt: skip
    assert in_order(system["content"], "## Step N\nReasoning: <", "\nStep: <")
    assert in_order(user["content"], "## User Query\n" + GOAL, "## Initial HTML State\n<html>page</html>", "## Step 1")


def test_cot_planner_prompt():
    (user,) = prompts.planner_messages(GOAL, "<html>page</html>", cot=True)
    assert user["role"] == "user"
    assert in_order(user["content"], "## Goal", "## Task\n" + GOAL, "## Initial HTML State\n<html>page</html>",
                    "## Guidelines", "[Start of Plan] and [End of Plan]")  # fmt: skip


def test_replanner_rounds_collapse_old_pages_and_actions():
    plans = [PLAN, PLAN.replace("orders grid", "pending filter")]
    actions = ['do(action="Click", element="7")', 'do(action="Scroll Down")']
    messages = prompts.replanner_messages(GOAL, plans, actions, "<html>now</html>", cot=False)
    system = messages[0]["content"]
    assert in_order(system, "# Goal and Rules", "## Expected Output Format", "## Be Specific",
                    "## High-level Goals Guidelines", "## Formatting Guidelines")  # fmt: skip
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"].startswith("## User Query\n" + GOAL)
    for earlier in (messages[1], messages[3]):
        assert in_order(earlier["content"], "# Previous Actions\n** List of previous actions **",
                        "# HTML\n** Simplified html **")  # fmt: skip
    assert [messages[2]["content"], messages[4]["content"]] == plans
    assert in_order(messages[-1]["content"], '# Previous Actions\n- Action 1:\ndo(action="Click", element="7")',
                    "- Action 2:\ndo(action=\"Scroll Down\")", "# HTML\n<html>now</html>")  # fmt: skip
    assert "## User Query" not in messages[-1]["content"]


def test_cot_replanner_prompt():
    (user,) = prompts.replanner_messages(GOAL, ["old plan", PLAN], ["exit()"], "<html>now</html>", cot=True)
    assert in_order(user["content"], "ExecutionReplanner", "## Task Query\n" + GOAL,
                    f"## Previous Plan\n```\n{PLAN}\n```", "## Previous Actions Taken\n- Action 1:\nexit()",
                    "## Current HTML", "<html>now</html>", "[Start of Plan] and [End of Plan]")  # fmt: skip
    assert "old plan" not in user["content"]  # only the latest plan
    with pytest.raises(ValueError, match="initial plan"):
        prompts.replanner_messages(GOAL, [], [], "x", cot=True)


def test_executor_prompt_paper_style():
    history = [prompts.PastRound(PLACEHOLDER, 'do(action="Click", element="7")'),
               prompts.PastRound(PLACEHOLDER, 'do(action="Scroll Down")')]  # fmt: skip
    messages = prompts.executor_messages(GOAL, COMMANDS, "<html>now</html>", history, plan=PLAN, cot=False,
                                         dynamic=True, error="element 9 is gone")  # fmt: skip
    system = messages[0]["content"]
    assert in_order(system, "# Goal", f"# Task Instruction: {GOAL}", "# Global Plan", PLAN, "professional web-browsing",
                    "do(action, argument, element)", "exit(message)", "go_backward()", "Reminders:")  # fmt: skip
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"] == f"Task Instruction: {GOAL}\n\nRound 0\n{GOAL}"  # WebRL's round 0
    assert messages[3]["content"] == f"Round 1\n{PLACEHOLDER}"
    assert messages[2]["content"] == 'do(action="Click", element="7")'
    assert messages[-1]["content"] == (
        "Round 2\n\nThe previous action could not be carried out: element 9 is gone\n\n<html>now</html>"
    )
    first = prompts.executor_messages(GOAL, COMMANDS, "<html>p</html>", [], plan=None, cot=False, dynamic=False)
    assert "# Global Plan" not in first[0]["content"]  # no planner: the WebRL prompt alone
    assert first[1]["content"] == f"Task Instruction: {GOAL}\n\nRound 0\n\n<html>p</html>"


def test_webrl_prompt_lists_exactly_the_enabled_actions():
    text = prompts.webrl_system(("Click", "Type", "exit"))
    assert '"Click", "Type"' in text and "exit(message)" in text
    for absent in ("Scroll", "Hover", "Switch Tab", "go_backward", "Select Dropdown Option"):
        assert absent not in text
    assert 'do(action="Click", element="7")' in text  # the examples of enabled actions only
    with pytest.raises(ValueError, match="no Plan-and-Act description"):
        prompts.webrl_system(("Teleport",))


def test_cot_executor_rounds_dynamic_plan():
    history = [prompts.PastRound("<body>snippet 1</body>", 'do(action="Click", element="7")', "Reports first.")]
    messages = prompts.executor_messages(GOAL, COMMANDS, "<html>now</html>", history, plan=PLAN, cot=True, dynamic=True)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    first, answer, current = (m["content"] for m in messages)
    assert in_order(first, "Dynamic Executor Agent", "## Action Formats", '1. Click: `do(action="Click"',
                    "14. go_forward", "- `# Note:`", "# Task\n" + GOAL, "## Round 1", "<body>snippet 1</body>",
                    "[Start of Action] and [End of Action]")  # fmt: skip
    assert "# Current Plan" not in first and PLAN not in first  # the plan lives in the current round only
    assert answer == ('<think>\nReports first.\n</think>\n\n[Start of Action]\ndo(action="Click", element="7")\n'
                      "[End of Action]")  # fmt: skip
    assert in_order(current, "## Round 2", "# Updated Plan", PLAN, "<html>now</html>", "the UPDATED plan")
    (only,) = prompts.executor_messages(GOAL, COMMANDS, "<html>p</html>", [], plan=PLAN, cot=True, dynamic=True)
    assert in_order(only["content"], "# Task\n" + GOAL, "# Current Plan", PLAN, "## Round 1", "<html>p</html>")


def test_cot_executor_static_plan_stays_in_the_first_round():
    history = [prompts.PastRound(PLACEHOLDER, "exit()", "done")]
    first, _, current = prompts.executor_messages(GOAL, COMMANDS, "<html>x</html>", history, plan=PLAN, cot=True,
                                                  dynamic=False)  # fmt: skip
    assert in_order(first["content"], "an Executor Agent", "# Task", "# Plan\n", PLAN, "## Round 1", PLACEHOLDER)
    assert PLAN not in current["content"] and "# Updated Plan" not in current["content"]


def test_retry_messages_carry_a_concrete_example():
    for kind, cot, sample in [("plan", False, "## Step 1\nReasoning:"), ("plan", True, "[Start of Plan]\n## Step 1"),
                              ("action", False, 'do(action="Search", element="12"'),
                              ("action", True, "[Start of Action]\n# Element:")]:  # fmt: skip
        message = prompts.retry_message(kind, "it was empty", cot)
        assert message["role"] == "user" and "it was empty" in message["content"] and sample in message["content"]
        assert "<action>" not in message["content"] and "<element_id>" not in message["content"]


# ------------------------------------------------------------------------------------------------
# Parsers


def test_parse_plan_paper_format():
    plan = parse_plan("Here is my plan.\n\n" + PLAN, cot=False)
    assert plan.text == PLAN
    assert [(s.number, s.step) for s in plan.steps] == [(1, "Open the orders grid."), (2, "Count the pending orders.")]
    assert plan_steps(PLAN)[0].reasoning == "The dashboard has a Sales menu."
    for bad in ("", "Step 1: open the grid", "## Step 1\nStep: no reasoning line"):
        with pytest.raises(AnswerFormatError, match="no plan step"):
            parse_plan(bad, cot=False)


def test_parse_plan_cot_tags():
    text = f"<think>\nI should mention [Start of Plan] later.\n</think>\n\n[Start of Plan]\n{PLAN}\n[End of Plan]"
    plan = parse_plan(text, cot=True)
    assert plan.text == PLAN and plan.reasoning == "I should mention [Start of Plan] later." and len(plan.steps) == 2
    assert parse_plan("[Start of Plan]\nGo to the orders and count.\n[End of Plan]", cot=True).steps == ()
    for bad, message in [(PLAN, "no [Start of Plan]"), (f"[Start of Plan]\n{PLAN}", "no [End of Plan]"),
                         ("[Start of Plan]\n\n[End of Plan]", "empty")]:  # fmt: skip
        with pytest.raises(AnswerFormatError, match=re.escape(message)):
            parse_plan(bad, cot=True)


def test_tagged_blocks_end_at_the_first_end_tag_after_the_last_start_tag():
    text = "I mention [End of Plan] first.\n[Start of Plan]\nP\n[End of Plan]\nAnd [End of Plan] again."
    assert tagged(text, prompts.PLAN_TAGS) == ("I mention [End of Plan] first.", "P")
    assert (
        parse_plan(PLAN, cot=False).reasoning == ""
        and parse_action('do(action="Click", element="1")', False).reasoning == ""
    )
    with pytest.raises(
        AnswerFormatError, match=re.escape("the plan between [Start of Plan] and [End of Plan] is empty")
    ):
        parse_plan("[Start of Plan]\n[End of Plan]", cot=True)
    with pytest.raises(AnswerFormatError, match=re.escape("every step needs a '## Step N' line, a 'Reasoning:' line")):
        parse_plan("Open the orders.", cot=False)


def test_parse_action_forms():
    paper = parse_action('# Element: Go\ndo(action="click", element="16")}', cot=False)
    assert paper.action.call() == 'do(action="Click", element="16")' and paper.action.comments == ("# Element: Go",)
    cot = parse_action(
        'The Go button.\n[Start of Action]\n# Note: 29km\nexit(message="0:34")\n[End of Action]', cot=True
    )
    assert (
        cot.action.message == "0:34" and cot.reasoning == "The Go button." and cot.action.comments == ("# Note: 29km",)
    )
    for bad, cot_, message in [('do(action="Click", element="16")', True, "no [Start of Action]"),
                               ("[Start of Action]\ndo(action='Fly')\n[End of Action]", True, "unknown action"),
                               ("Click the Go button.", False, "no action found")]:  # fmt: skip
        with pytest.raises(AnswerFormatError, match=re.escape(message)):
            parse_action(bad, cot=cot_)
    with pytest.raises(AnswerFormatError, match="not available"):
        parse_action('do(action="Hover", element="3")', cot=False, commands=("Click", "exit"))


# ------------------------------------------------------------------------------------------------
# The loop with a scripted LLM on hand-made pages


def page_obs(n: int, *, error: str = "") -> dict:
    """Page ``n``: a list with links 1..3 (ids "<n>1".."<n>3") and a dropdown "<n>9"."""
    body = Element("body", None, [])
    items = [Element("li", None, [], [Element("a", f"{n}{i}", [], [f"Link {i} of page {n}"])]) for i in (1, 2, 3)]
    ul = Element("ul", None, [], items)
    select = Element("select", f"{n}9", [], [Element("option", None, [("selected", "")], ["Any"]),
                                              Element("option", None, [], ["Pending"])])  # fmt: skip
    body.children = [f"Page {n}", ul, select]
    root = Element("html", None, [], [body])
    for parent in (root, body, ul, *items, select):
        for child in parent.children:
            if isinstance(child, Element):
                child.parent = parent
    infos = {f"{n}{i}": ElementInfo("a") for i in (1, 2, 3)}
    infos[f"{n}9"] = ElementInfo("select", options=(Option("Any", "Any", True), Option("Pending", "Pending", False)))
    page = HtmlPage(root, infos)
    return {"text": page.html, "text_no_ids": strip_ids(page.html), "text_tree": page, "url": f"http://x.test/{n}",
            "last_action_error": error}  # fmt: skip


def task() -> TaskSpec:
    return TaskSpec(env_id="webarena/local.0", task_id=0, goal=GOAL, commands=COMMANDS)


def click(element: str, cot: bool) -> str:
    action = f'# Element: link\ndo(action="Click", element="{element}")'
    return f"I click it.\n[Start of Action]\n{action}\n[End of Action]" if cot else action


def plan_answer(cot: bool, version: int = 0) -> str:
    plan = PLAN + f"\n## Step 3\nReasoning: Version {version}.\nStep: Answer."
    return f"Thinking about it.\n[Start of Plan]\n{plan}\n[End of Plan]" if cot else plan


def run_steps(policy: PlanAndActPolicy, n: int, errors: dict[int, str] | None = None):
    """``n`` decisions on pages 1..n; returns the decisions."""
    policy.reset(task())
    decisions = []
    for step in range(n):
        decisions.append(policy.act(page_obs(step + 1, error=(errors or {}).get(step, "")), None))  # type: ignore[arg-type]
    return decisions


def roles(decision) -> list[str]:
    return [c.role for c in decision.llm_calls]


@pytest.mark.parametrize("cot", [True, False])
def test_dynamic_loop_replans_once_per_step_after_the_first(cot):
    versions = iter(range(1, 10))
    script = Script({
        "planner": [plan_answer(cot)],
        "replanner": Script.forever(lambda messages: plan_answer(cot, next(versions))),
        "executor": [click(f"{i}1", cot) for i in (1, 2, 3)],
    })  # fmt: skip
    policy = make_policy("plan_and_act", script=script, cot=cot)
    decisions = run_steps(policy, 3)
    assert [roles(d) for d in decisions] == [
        ["planner", "executor"],
        ["replanner", "executor"],
        ["replanner", "executor"],
    ]
    assert [d.action for d in decisions] == [f'# Element: link\ndo(action="Click", element="{i}1")' for i in (1, 2, 3)]
    state = policy.state()
    assert [v["role"] for v in state["plan_versions"]] == ["planner", "replanner", "replanner"]
    assert [v["step"] for v in state["plan_versions"]] == [0, 1, 2]
    # every version's text is in its step's record; the hash is of the id-free page the call saw
    assert decisions[2].parsed["plan"]["text"].endswith("Version 2.\nStep: Answer.")
    assert decisions[1].parsed["plan"]["html_sha256"] == hashlib.sha256(page_obs(2)["text_no_ids"].encode()).hexdigest()
    assert decisions[1].parsed["executor"]["html_sha256"] == hashlib.sha256(page_obs(2)["text"].encode()).hexdigest()
    assert [r["plan_version"] for r in state["rounds"]] == [0, 1, 2]
    # no element id ever reaches a planner
    for d in decisions:
        for call in d.llm_calls:
            text = str(call.messages)
            assert (' id="' in text) == (call.role == "executor"), call.role


@pytest.mark.parametrize("cot", [True, False])
def test_the_executor_follows_the_newest_plan_and_the_replanner_sees_every_action(cot):
    versions = iter(range(1, 10))
    script = Script({
        "planner": [plan_answer(cot)],
        "replanner": Script.forever(lambda messages: plan_answer(cot, next(versions))),
        "executor": [click(f"{i}1", cot) for i in (1, 2, 3)],
    })  # fmt: skip
    decisions = run_steps(make_policy("plan_and_act", script=script, cot=cot), 3)
    for step, decision in enumerate(decisions):
        executor = "\n".join(str(m["content"]) for m in decision.llm_calls[-1].messages)
        assert f"Version {step}." in executor
        assert not any(f"Version {v}." in executor for v in range(3) if v != step)
    for step in (1, 2):
        replanner = decisions[step].llm_calls[0].messages[-1]["content"]
        listed = replanner.rsplit("Previous Actions", 1)[1]  # the section's heading in either style
        assert [f'element="{i}1"' in listed for i in (1, 2, 3)] == [i <= step for i in (1, 2, 3)]
        assert f"- Action {step}:" in listed and f"- Action {step + 1}:" not in listed


@pytest.mark.parametrize("dynamic", [True, False])
def test_every_call_carries_the_task_and_the_records_name_each_round(dynamic):
    """The task reaches the executor and the replanner; the CoT executor's history replays each round's
    own reasoning; a dynamic executor reads the plan in the current round, a static one in the first;
    the decision and the state record the step, the page seen (its hash and snippet) and the plan version."""
    script = Script({
        "planner": [plan_answer(True)],
        "replanner": Script.forever(lambda messages: plan_answer(True, 1)),
        "executor": [click(f"{i + 1}1", True).replace("I click it.", f"Reason {i}.") for i in range(2)],
    })  # fmt: skip
    policy = make_policy("plan_and_act", script=script, cot=True, dynamic_replanning=dynamic)
    policy.reset(task())
    first = policy.act(page_obs(1), None)  # type: ignore[arg-type]
    bare = {k: v for k, v in page_obs(2).items() if k != "text_no_ids"}  # the planner strips the ids itself
    second = policy.act(bare, None)  # type: ignore[arg-type]
    executor = second.llm_calls[-1].messages
    assert GOAL in executor[0]["content"] and "<think>\nReason 0.\n</think>" in executor[1]["content"]
    assert ("Version 1." in executor[-1]["content"]) == dynamic
    assert ("Version 0." in executor[0]["content"]) == (not dynamic)
    if dynamic:
        replanner = "\n".join(str(m["content"]) for m in second.llm_calls[0].messages)
        assert GOAL in replanner and strip_ids(page_obs(2)["text"]) in replanner and ' id="' not in replanner
    assert first.parsed["step"] == 0 and second.parsed["step"] == 1
    state = policy.state()
    assert [v["version"] for v in state["plan_versions"]] == ([0, 1] if dynamic else [0])
    assert [r["html_sha256"] for r in state["rounds"]] == [
        hashlib.sha256(page_obs(n)["text"].encode()).hexdigest() for n in (1, 2)
    ]
    assert "Link 1 of page 1" in first.parsed["executor"]["snippet"]


def test_static_plan_and_no_planner():
    script = Script({"planner": [plan_answer(False)], "executor": [click(f"{i}1", False) for i in (1, 2)]})
    static = make_policy("plan_and_act_static", script=script)
    assert [roles(d) for d in run_steps(static, 2)] == [["planner", "executor"], ["executor"]]
    assert len(static.state()["plan_versions"]) == 1
    alone = make_policy("plan_and_act_no_planner", script=Script({"executor": [click("11", False)]}))
    (decision,) = run_steps(alone, 1)
    assert roles(decision) == ["executor"] and alone.state()["plan"] is None
    assert "# Global Plan" not in decision.llm_calls[0].messages[0]["content"]


@pytest.mark.parametrize("history, cot", [("placeholder", True), ("snippet", False), (None, True), (None, False)])
def test_old_pages_are_replaced_in_the_executor_history(history, cot):
    script = Script({"planner": [plan_answer(cot)], "replanner": Script.forever(plan_answer(cot)),
                     "executor": [click(f"{i}2", cot) for i in (1, 2, 3)]})  # fmt: skip
    policy = make_policy("plan_and_act", script=script, cot=cot, executor_history=history)
    decisions = run_steps(policy, 3)
    mode = history or ("snippet" if cot else "placeholder")
    assert policy.config()["executor_history"] == mode
    messages = decisions[2].llm_calls[-1].messages
    seen = "\n".join(str(m["content"]) for m in messages)
    assert page_obs(3)["text"] in messages[-1]["content"]  # the current page in full
    assert "Page 1" not in seen and "Page 2" not in seen  # earlier pages never in full
    if mode == "placeholder":
        assert seen.count(PLACEHOLDER) == (2 if cot else 1)  # WebRL's round 0 repeats the task instead
    else:  # the acted-on elements with their ancestors only
        for n in (1, 2):
            snippet = page_obs(n)["text_tree"].snippet(f"{n}2")
            assert snippet in seen and f"Link 2 of page {n}" in snippet and "<select" not in snippet
    with pytest.raises(ValueError, match="executor_history"):
        PlanAndActPolicy(executor_history="full")


def test_a_malformed_executor_answer_is_re_asked_with_a_correction():
    script = Script({"planner": [plan_answer(True)],
                     "executor": ["I would click the first link.", '[Start of Action]\ndo(action="Click", '
                                  'element="99")\n[End of Action]', click("12", True)]})  # fmt: skip
    policy = make_policy("plan_and_act", script=script)
    (decision,) = run_steps(policy, 1)
    assert roles(decision) == ["planner", "executor", "executor", "executor"]
    assert decision.action.endswith('element="12")') and decision.error is None
    third = decision.llm_calls[-1].messages
    assert third[-4] == {"role": "assistant", "content": "I would click the first link."}
    assert (
        "no [Start of Action] tag" in third[-3]["content"] and "[Start of Action]\n# Element:" in third[-3]["content"]
    )
    assert 'element "99" is not on the current page' in third[-1]["content"]  # checked against the page shown
    assert policy.state()["retries"]["executor"] == 2


def test_spent_re_asks_end_the_episode_with_an_early_stop_answer():
    script = Script({"planner": [plan_answer(False)], "executor": Script.forever("I am not sure.")})
    policy = make_policy("plan_and_act_static", script=script)
    (decision,) = run_steps(policy, 1)
    assert roles(decision) == ["planner"] + ["executor"] * 4  # one call and max_retries=3 re-asks
    assert decision.action.startswith('exit(message="Early stop: the executor gave no usable answer after 4 attempts')
    assert decision.error and policy.state()["early_stop"] and decision.thought.startswith("early stop: the executor")
    bad_plan = make_policy("plan_and_act", script=Script({"planner": Script.forever("no plan")}), max_retries=1)
    (decision,) = run_steps(bad_plan, 1)
    assert roles(decision) == ["planner", "planner"] and "Early stop: the planner" in decision.action


def test_dropdown_options_are_checked_before_sending():
    select = 'do(action="Select Dropdown Option", element="19", argument="{}")'
    script = Script({"executor": [select.format("Shipped"), select.format("pending")]})
    policy = make_policy("plan_and_act_no_planner", script=script)
    (decision,) = run_steps(policy, 1)
    assert decision.action == select.format("pending") and len(decision.llm_calls) == 2
    assert "no option 'Shipped'; its options are: 'Any', 'Pending'" in decision.llm_calls[1].messages[-1]["content"]


def test_a_failed_action_is_reported_in_the_next_round():
    script = Script({"executor": [click("11", False), click("21", False)]})
    policy = make_policy("plan_and_act_no_planner", script=script)
    decisions = run_steps(policy, 2, errors={1: "TimeoutError: click timed out"})
    last = decisions[1].llm_calls[0].messages[-1]["content"]
    assert "The previous action could not be carried out: TimeoutError: click timed out" in last
    script = Script({"executor": [click("11", False), click("21", False)]})
    quiet = make_policy("plan_and_act_no_planner", script=script, show_action_errors=False)
    assert "could not be carried out" not in str(run_steps(quiet, 2, errors={1: "x"})[1].llm_calls[0].messages)


def test_repeats_stop_early():
    obs = page_obs(1)
    same = make_policy("plan_and_act_no_planner", script=Script({"executor": Script.forever(click("11", False))}),
                       repeat_th=3)  # fmt: skip
    same.reset(task())
    decisions = [same.act(obs, None) for _ in range(4)]  # type: ignore[arg-type]
    assert [len(d.llm_calls) for d in decisions] == [1, 1, 1, 0]  # the check comes before the model is asked
    assert decisions[3].action == 'exit(message="Early stop: the same action was repeated 3 times")'
    typed = 'do(action="Type", element="11", argument="x")'
    typing = make_policy("plan_and_act_no_planner", repeat_th=3,
                         script=Script({"executor": [typed, click("12", False)] * 2 + [typed]}))  # fmt: skip
    typing.reset(task())
    decisions = [typing.act(obs, None) for _ in range(6)]  # type: ignore[arg-type]
    assert [len(d.llm_calls) for d in decisions] == [1, 1, 1, 1, 1, 0]  # the same text typed 3 times, not in a row
    assert decisions[5].action == 'exit(message="Early stop: the same action was repeated 3 times")'


def test_variants_and_defaults():
    assert TABLE1_GRID == ("plan_and_act_no_planner", "plan_and_act_static", "plan_and_act_dynamic", "plan_and_act")
    expected = {
        "plan_and_act_no_planner": (False, False, False),
        "plan_and_act_static": (True, False, False),
        "plan_and_act_dynamic": (True, True, False),
        "plan_and_act": (True, True, True),
    }
    for name, switches in expected.items():
        policy = make_policy(name, model="gpt-4o")
        config = policy.config()
        assert (config["use_planner"], config["dynamic_replanning"], config["cot"]) == switches
        assert policy.name == name and policy.preset == "plan_and_act" and policy.max_steps == 30
        roles_ = config["llm"]["roles"]
        assert {r: (s["temperature"], s["max_tokens"]) for r, s in roles_.items()} == {
            "planner": (0.0, 4096), "replanner": (0.0, 4096), "executor": (0.0, 1024 if switches[2] else 512)
        }  # fmt: skip
    custom = make_policy("plan_and_act", planner_model="openai/my-planner", executor_max_tokens=256, model="gpt-4o")
    assert custom.config()["llm"]["roles"]["planner"]["model"] == "openai/my-planner"
    assert custom.config()["llm"]["roles"]["executor"]["max_tokens"] == 256
    with pytest.raises(ValueError, match="needs use_planner"):
        make_policy("plan_and_act", use_planner=False)
    with pytest.raises(TypeError, match="unknown option"):
        make_policy("plan_and_act", judge_model="x")
