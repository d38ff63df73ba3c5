"""CoAct without a browser: output parsers, prompt builders, and the state machine driven by a scripted
LLM (litellm's real call path) over hand-made observations, through every path of its state machine."""

from __future__ import annotations

import re

import numpy as np
import pytest
from coact_support import Brain, actions, collation, decision, plan, request_of
from hypothesis import given, settings
from hypothesis import strategies as st

from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.policies.base import Budget, TaskSpec
from webarena_gym.policies.coact import (
    GLOBAL,
    LOCAL,
    CoActPolicy,
    MalformedOutput,
    Phase,
    parse_collation,
    parse_decision,
    parse_global_plan,
    parse_local_plan,
    resolve_search,
)
from webarena_gym.policies.coact.text import CHECK_WORDS, DECIDE_WORDS, global_system, local_system, user_content
from webarena_gym.policies.react import WEBARENA_ACTIONS
from webarena_gym.wrappers.actions.grammar import parse_command
from webarena_gym.wrappers.presets import PRESETS

COMMANDS = PRESETS["webarena"].actions
TASK = TaskSpec("webarena/local.203", 203, 'List all forums whose names start with the letter "B".', commands=COMMANDS)
PAGE = {"text": "[13] link 'Forums'\n[15] link 'Wiki'", "url": "http://forum/"}
TWO_PHASES = plan(
    ("Open the list of forums.", "The forum list is shown."), ("Sort it by name.", "The B forums are known.")
)
ONE_PHASE = plan(("Find the forums starting with B.", "Their names are known."))


FUZZ_TOKENS = [
    *"*-#:[]`'\" \n\tAa1x",
    "Action 1:",
    "Subtask 2:",
    "Expected State:",
    "FINAL ANSWER:",
    "Reasons:",
    "click",
    "stop",
]


# -- parsers -----------------------------------------------------------------------------------------


def test_global_plan_in_the_documented_format():
    assert parse_global_plan(TWO_PHASES) == [
        Phase("Open the list of forums.", "The forum list is shown."),
        Phase("Sort it by name.", "The B forums are known."),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "### Phase 1: Open the forum list\n* Subtask: open it\n  with the top menu\n* Expected State: list shown\n",
        "**Subtask 1:**\n- **Subtask:** open it\n  with the top menu\n- **Expected State:** [list shown]",
        "1. **Phase 1**\n   - Subtask: open it with the top menu\n   - Expected state: list shown\n",
    ],
)
def test_global_plan_tolerates_markdown_variants_and_multiline_fields(text):
    (phase,) = parse_global_plan(text)
    assert " ".join(phase.subtask.split()) == "open it with the top menu" and phase.expected_state == "list shown"


def test_global_plan_header_title_stands_in_for_a_missing_subtask_field():
    assert parse_global_plan("**Subtask 1: Open the forum list**\n- **Expected State**: shown") == [
        Phase("Open the forum list", "shown")
    ]


@pytest.mark.parametrize(
    "text,problem",
    [
        ("First open the forums, then sort them.", "no phase blocks"),
        ("**Subtask 1:**\n- **Subtask**: open the forums", "phase 1 has no '- **Expected State**:' line"),
        ("**Subtask 1:**\n- **Expected State**: shown", "phase 1 has no '- **Subtask**:' line"),
        ("", "no phase blocks"),
    ],
)
def test_malformed_global_plans_are_rejected_with_a_reason(text, problem):
    with pytest.raises(MalformedOutput, match=re.escape(problem)):
        parse_global_plan(text)


def test_local_plan_reads_each_numbered_line_with_the_strict_grammar():
    text = (
        "I will search first.\n**Action 1:** type [17] [books] [1]\n**Action 2:** `click [40]` (the first result)\n"
        "Action 3: [scroll [down]]\n**Action 4:** stop [books, boston]"  # no trailing newline
    )
    steps = parse_local_plan(text, COMMANDS)
    assert [s.action for s in steps] == ["type [17] [books] [1]", "click [40]", "scroll [down]", "stop [books, boston]"]
    assert all(s.error is None for s in steps)


def test_local_plan_keeps_unreadable_lines_with_their_error():
    steps = parse_local_plan("**Action 1:** click [12]\n**Action 2:** jump to [3]\n**Action 3:** go_home", COMMANDS)
    assert steps[0].action == "click [12]"
    assert steps[1].action is None and "unknown action 'jump'" in steps[1].error
    assert steps[2].action is None and "not available here" in steps[2].error  # go_home: not in this preset


def test_local_plan_without_action_lines_is_malformed():
    with pytest.raises(MalformedOutput, match="no numbered action lines"):
        parse_local_plan("I would click the Forums link and then sort.", COMMANDS)


@pytest.mark.parametrize(
    "text,allowed,expected",
    [
        ("Action: move\nReasons: The forum list is shown.", ("move", "revise", "request"), "move"),
        ("**Action:** [REQUEST]\n**Reasons:** wrong page", ("move", "revise", "request"), "request"),
        ("Action: `replan`\nReasons: x", ("move", "revise", "request"), "request"),
        ("Action: “move” to the next phase\nReasons: x", ("move", "revise", "request"), "move"),
        ("Decision: revise.\nReasons: x", ("revise", "request"), "revise"),
    ],
)
def test_check_decisions_are_normalised(text, allowed, expected):
    assert parse_decision(text, allowed, CHECK_WORDS)[0] == expected


def test_decide_synonyms_and_reasons():
    text = "Reasons: The plan is fine;\nsearch by name instead.\nAction: disagree"
    assert parse_decision(text, ("revise", "overrule"), DECIDE_WORDS) == (
        "overrule",
        "The plan is fine;\nsearch by name instead.",
    )
    assert parse_decision("Action: agree\nReasons: a\nb", ("revise", "overrule"), DECIDE_WORDS) == ("revise", "a\nb")


@pytest.mark.parametrize(
    "text,problem",
    [
        ("Action: move\nReasons: x", "'move' is not one of revise, request"),  # false_check offers no move
        ("I think we should move on.", "no 'Action:' line"),
        ("Action:\nReasons: x", "'(empty)' is not one of"),
        ("Action: maybe\nReasons: x", "'maybe' is not one of"),
    ],
)
def test_unusable_decisions_are_rejected(text, problem):
    with pytest.raises(MalformedOutput, match=re.escape(problem)):
        parse_decision(text, ("revise", "request"), CHECK_WORDS)


def test_collation_answer_is_the_last_final_answer_line():
    text = "Example: FINAL ANSWER: x\nThe forums are listed.\n**FINAL ANSWER:** [books, boston]"
    assert parse_collation(text) == ("Example: FINAL ANSWER: x\nThe forums are listed.", "books, boston")
    assert parse_collation("FINAL ANSWER:\n- books\n- boston\n")[1] == "books; boston"
    for bad in ("The forums are books and boston.", "Summary.\nFINAL ANSWER:   "):
        with pytest.raises(MalformedOutput):
            parse_collation(bad)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FUZZ_TOKENS)).map("".join))
def test_parsers_only_ever_raise_malformed_output(text):
    for parse in (
        parse_global_plan,
        lambda t: parse_local_plan(t, COMMANDS),
        lambda t: parse_decision(t, ("move", "revise", "request"), CHECK_WORDS),
        parse_collation,
    ):
        try:
            parse(text)
        except MalformedOutput:
            pass
    try:
        steps = parse_local_plan(text, COMMANDS)
    except MalformedOutput:
        return
    for step in steps:  # a readable step is a command the action wrapper accepts as it stands
        assert (step.action is None) != (step.error is None)
        if step.action is not None:  # the wrapper reads it back to the same command
            assert parse_command(step.action, COMMANDS) == parse_command(str(parse_command(step.action, COMMANDS)))


# -- prompt builders ---------------------------------------------------------------------------------


def test_global_system_is_the_intro_then_the_request():
    for call, form in (
        ("global_plan", "- **Expected State**: [how things stand once this phase is done]"),
        ("decide", "Action: [revise or overrule]\nReasons: [your reasons and your guidance]"),
        ("revise", "**Subtask 1:**\n- **Subtask**:"),
        ("collation", "FINAL ANSWER: [answer]"),
    ):
        system = global_system(call, reasons="The Forums link is missing.")
        intro, request = system.split("\n\n" + f"Current request: `{call}`.")
        assert intro.startswith("You are an autonomous agent at the head of a two-level team")
        assert "Information" not in intro and "global_plan:" in intro and "collation:" in intro
        assert form in request
    assert "These are its reasons:\nThe Forums link is missing.\n" in global_system(
        "decide", "The Forums link is missing."
    )


def test_local_system_lists_exactly_the_enabled_operations_and_the_plan_format():
    system = local_system("local_plan", ("click", "type", "scroll", "stop"))
    assert "`click [id]`" in system and "`scroll [direction=down|up]`" in system and "`hover" not in system
    assert system.index("`click [id]`") < system.index("`scroll") < system.index("`stop [answer]`")
    assert system.endswith("**Action 1:** [action]\n**Action 2:** [action]\n...\n**Action m:** [action]")
    full = local_system("false_check", WEBARENA_ACTIONS)
    assert "Tab management:" in full and full.endswith("Action: [revise or request]\nReasons: [reasons]")
    assert "These are its reasons and suggestions:\nSearch instead.\n" in local_system(
        "overruled", COMMANDS, "Search instead."
    )


def test_user_content_is_the_template_then_the_sections():
    text = user_content("[1] link 'A'", "http://x/", "Open A", "None", [("OVERALL TASK", "t"), ("PLAN", "a\nb")])
    template = "OBSERVATION:\n[1] link 'A'\nURL: http://x/\nOBJECTIVE: Open A\nPREVIOUS ACTION: None"
    assert text == template + "\nOVERALL TASK: t\nPLAN:\na\nb"


# -- the state machine -------------------------------------------------------------------------------


def coact(gp: Brain, la: Brain, name: str = "coact", task: TaskSpec = TASK, **config) -> CoActPolicy:
    policy = make_policy(name, script=Script({GLOBAL: Script.forever(gp), LOCAL: Script.forever(la)}), **config)
    policy.reset(task)
    return policy


def messages_of(policy: CoActPolicy, decision_) -> list[tuple[str, str, list[dict]]]:
    return [(c.role, request_of(c.messages), c.messages) for c in decision_.llm_calls]


def error_page(message: str) -> dict:
    return {**PAGE, "last_action_error": message}


def test_wrong_id_false_check_request_revise_then_success_and_collation():
    gp = Brain(
        global_plan=TWO_PHASES, decide=decision("revise"), revise=TWO_PHASES, collation=collation("books, boston")
    )
    la = Brain(
        local_plan=[actions("click [99]"), actions("click [13]"), actions("click [40]")],
        false_check=decision("request", "Element 99 does not exist; the plan's first phase needs another route."),
        pass_check=decision("move"),
    )
    policy = coact(gp, la)
    got = [policy.act(PAGE, None)]
    got.append(policy.act(error_page("element [99] is not on the current page"), None))
    got.append(policy.act({"text": "[40] link 'Alphabetical'", "url": "http://forum/forums"}, None))
    got.append(policy.act({"text": "books boston", "url": "http://forum/forums/alphabetical"}, None))
    assert [d.action for d in got] == ["click [99]", "click [13]", "click [40]", "stop [books, boston]"]
    assert [d.parsed["calls"] for d in got] == [
        ["global_planner.global_plan", "local_agent.local_plan"],
        ["local_agent.false_check", "global_planner.decide", "global_planner.revise", "local_agent.local_plan"],
        ["local_agent.pass_check", "local_agent.local_plan"],
        ["local_agent.pass_check", "global_planner.collation"],
    ]
    assert [[c.role for c in d.llm_calls] for d in got][1] == [LOCAL, GLOBAL, GLOBAL, LOCAL]
    counters = policy.state()["counters"]
    assert (counters["exchanges"], counters["local_revisions"], counters["global_replans"]) == (5, 0, 1)
    # what each call was shown
    false_check = got[1].llm_calls[0].messages[-1]["content"]
    missing = 'Tried to "click" the element [99], but the observation has no element with this id.'
    assert f"{missing} Read the observation more carefully. (it failed: element [99] is not on the" in false_check
    assert (
        "EXECUTION EXCEPTIONS:\nFailed action: click [99]\nError: element [99] is not on the current page"
        in false_check
    )
    decide = got[1].llm_calls[1].messages
    assert "Element 99 does not exist" in decide[0]["content"]
    assert "CURRENT PHASE: 1 of 2: Open the list of forums." in decide[-1]["content"]
    revise = got[1].llm_calls[2].messages[-1]["content"]
    assert "PREVIOUS GLOBAL PLAN:\n**Subtask 1:**" in revise and "LOCAL AGENT REQUEST REASONS:\nElement 99" in revise
    assert "DECISION REASONS:\nThat is what the page shows." in revise
    second_phase = got[2].llm_calls[1].messages[-1]["content"]
    assert "OBJECTIVE: Sort it by name.\n" in second_phase and "EXPECTED STATE: The B forums are known." in second_phase
    assert "OVERALL TASK: List all forums" in second_phase
    pass_check = got[3].llm_calls[0].messages[-1]["content"]
    assert "EXECUTION RESULTS:\n1. click [40] -> done; the page is now http://forum/forums/alphabetical" in pass_check
    summary = got[3].llm_calls[1].messages[-1]["content"]
    assert "1. (plan 1, phase 1) click [99] -> failed: element [99]" in summary
    assert "- plan 1, phase 1, decide: revise" in summary
    assert policy.state()["finished"]["reason"] == "every phase of the global plan passed its check"


def test_local_plans_run_one_action_per_act_and_the_examples_only_go_to_local_plan():
    gp = Brain(global_plan=ONE_PHASE, collation=collation("books"))
    la = Brain(local_plan=actions("click [13]", "scroll [down]", "click [40]"), pass_check=decision("move"))
    policy = coact(gp, la)
    got = [policy.act(PAGE, None) for _ in range(4)]
    assert [d.action for d in got] == ["click [13]", "scroll [down]", "click [40]", "stop [books]"]
    assert [len(d.llm_calls) for d in got] == [2, 0, 0, 2]
    local_plan = got[0].llm_calls[1].messages
    assert [m["role"] for m in local_plan] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert local_plan[2]["content"] == "**Action 1:** stop [$64.99]"
    assert [m["role"] for m in got[3].llm_calls[0].messages] == ["system", "user"]
    assert got[1].thought.startswith("phase 1 of 1 (Find the forums starting with B.): action 2 of 3")


def test_pass_check_revise_uses_its_own_reasons_and_is_capped_per_phase():
    gp = Brain(global_plan=ONE_PHASE, decide=decision("overrule", "Keep going."), collation=collation("x"))
    la = Brain(
        local_plan=actions("click [13]"),
        pass_check=decision("revise", "The list is not sorted yet."),
        revise=[actions("scroll [down]"), actions("scroll [up]"), actions("scroll [down]")],
        overruled=actions("click [15]"),
    )
    policy = coact(gp, la)
    got = [policy.act(PAGE, None) for _ in range(5)]
    assert [d.action for d in got] == ["click [13]", "scroll [down]", "scroll [up]", "scroll [down]", "click [15]"]
    revise = got[1].llm_calls[1].messages
    assert "These are your reasons:\nThe list is not sorted yet.\n" in revise[0]["content"]
    assert "PREVIOUS LOCAL PLAN:\n**Action 1:** click [13]" in revise[-1]["content"]
    assert "EXECUTION RESULTS:\n1. click [13] -> done" in revise[-1]["content"]
    assert got[4].parsed["calls"] == ["local_agent.pass_check", "global_planner.decide", "local_agent.overruled"]
    capped = {"plan_version": 1, "phase": 1, "check": "pass_check", "decision": "revise", "capped_to": "request"}
    assert policy.state()["outcomes"][3] == capped | {"reasons": "The list is not sorted yet."}
    overruled = got[4].llm_calls[2].messages[0]["content"]
    assert "These are its reasons and suggestions:\nKeep going.\n" in overruled
    assert policy.state()["counters"]["local_revisions"] == 3 and policy.state()["phase_revisions"] == {"1": 3}


def test_a_global_revision_restarts_at_phase_1_of_the_new_plan():
    revised = plan(("Open the alphabetical index.", "The index is shown."), ("Read the B forums.", "They are known."))
    gp = Brain(global_plan=TWO_PHASES, decide=decision("revise"), revise=revised, collation=collation("x"))
    la = Brain(
        local_plan=[actions("click [13]"), actions("click [40]"), actions("click [15]")],
        pass_check=[decision("move"), decision("request", "Sorting is not offered here.")],
    )
    policy = coact(gp, la)
    assert [policy.act(PAGE, None).parsed["phase"] for _ in range(2)] == [1, 2]
    got = policy.act(PAGE, None)  # phase 2 asks for a new global plan
    assert got.parsed["calls"] == [
        "local_agent.pass_check", "global_planner.decide", "global_planner.revise", "local_agent.local_plan"
    ]  # fmt: skip
    assert got.action == "click [15]" and (got.parsed["phase"], got.parsed["plan_version"]) == (1, 2)
    local_plan = got.llm_calls[-1].messages[-1]["content"]
    assert "OBJECTIVE: Open the alphabetical index.\n" in local_plan
    assert "EXPECTED STATE: The index is shown." in local_plan


def test_false_check_may_not_move_on_a_move_answer_is_asked_again():
    gp = Brain(global_plan=ONE_PHASE, collation=collation("x"))
    la = Brain(
        local_plan=actions("click [13]", "tap the sort link"),
        false_check=[decision("move"), decision("revise", "Line 2 was not an action.")],
        revise=actions("click [15]"),
    )
    policy = coact(gp, la)
    policy.act(PAGE, None)
    got = policy.act(PAGE, None)
    assert got.action == "click [15]"
    assert got.parsed["calls"] == ["local_agent.false_check", "local_agent.revise"]
    reask = got.llm_calls[1].messages[-1]["content"]
    assert "'move' is not one of revise, request" in reask
    assert [o["decision"] for o in policy.state()["outcomes"]] == ["revise"]


def test_every_prompt_shows_the_observation_cut_to_1920_tokens_by_default():
    import litellm

    lines = [f"[{i}] link 'Forum number {i}'" for i in range(1500)]
    page = {"text": "\n".join(lines), "url": "http://forum/"}
    gp = Brain(global_plan=ONE_PHASE, collation=collation("x"))
    policy = coact(gp, Brain(local_plan=actions("click [13]")))
    got = policy.act(page, None)
    assert len(got.llm_calls) == 2
    for call in got.llm_calls:
        user = call.messages[-1]["content"]
        shown = user.split("OBSERVATION:\n", 1)[1].split("\nURL: http://forum/", 1)[0]
        assert page["text"].startswith(shown[:-20]) and "Forum number 1499'" not in shown
        tokens = len(litellm.encode(model=policy.llm.model_for(call.role), text=shown))
        assert 1900 <= tokens <= 1920, tokens
    whole = coact(Brain(global_plan=ONE_PHASE), Brain(local_plan=actions("click [13]")), max_obs_tokens=None)
    assert "Forum number 1499'" in whole.act(page, None).llm_calls[0].messages[-1]["content"]


def test_global_replans_are_capped_then_overruled():
    gp = Brain(global_plan=ONE_PHASE, decide=decision("revise"), revise=ONE_PHASE, collation=collation("x"))
    la = Brain(local_plan=actions("click [13]"), pass_check=decision("request"), overruled=actions("click [15]"))
    policy = coact(gp, la, max_global_replans=2, repeat_th=0)
    calls = [c for _ in range(4) for c in policy.act(PAGE, None).parsed["calls"]]
    assert calls.count("global_planner.revise") == 2 and calls[-1] == "local_agent.overruled"
    assert policy.state()["outcomes"][-1]["capped_to"] == "overrule"


def test_unreadable_plan_lines_become_exceptions_for_false_check():
    gp = Brain(global_plan=ONE_PHASE, collation=collation("x"))
    la = Brain(
        local_plan=actions("click [13]", "tap the sort link"),
        false_check=decision("revise", "Line 2 was not an action."),
        revise=actions("stop [books, boston]"),
    )
    policy = coact(gp, la)
    first, second = policy.act(PAGE, None), policy.act(PAGE, None)
    assert first.action == "click [13]" and second.action == "stop [books, boston]"
    exceptions = second.llm_calls[0].messages[-1]["content"]
    assert "Failed action: tap the sort link\nError: unknown action 'tap'" in exceptions
    assert "Actions carried out before it:\n1. click [13] -> done" in exceptions


def test_a_local_stop_is_delivered_after_the_collation_unless_it_overrides():
    def run(**config):
        gp = Brain(global_plan=ONE_PHASE, collation=collation("books, boston"))
        policy = coact(gp, Brain(local_plan=actions("stop [books]")), **config)
        return policy, policy.act(PAGE, None)

    policy, got = run()
    assert got.action == "stop [books]" and got.parsed["calls"][-1] == "global_planner.collation"
    assert "The local agent's answer: books" in got.llm_calls[-1].messages[-1]["content"]
    assert policy.state()["finished"] | {"collation": ""} == {
        "reason": "the local agent issued stop", "end": "answer", "forced": False, "answer": "books",
        "local_answer": "books", "collation_answer": "books, boston", "collation": "",
    }  # fmt: skip
    assert run(collation_overrides_answer=True)[1].action == "stop [books, boston]"


def endless() -> tuple[Brain, Brain]:
    """The local agent never accepts its results; the planner re-plans while it may."""
    gp = Brain(global_plan=ONE_PHASE, decide=decision("revise"), revise=ONE_PHASE, collation=collation("books, boston"))
    flip = iter(["scroll [down]", "scroll [up]"] * 50)
    la = Brain(
        local_plan=lambda m: actions(next(flip)),
        revise=lambda m: actions(next(flip)),
        overruled=lambda m: actions(next(flip)),
        pass_check=decision("revise", "Still not there."),
    )
    return gp, la


def test_force_stop_ends_the_dialogue_with_the_collation_after_fs_limit_exchanges():
    policy = coact(*endless(), name="coact_fs")
    got = [policy.act(PAGE, None) for _ in range(17)]
    assert all(d.action.startswith("scroll") for d in got[:-1]) and got[-1].action == "stop [books, boston]"
    assert got[-1].parsed["calls"] == ["local_agent.pass_check", "global_planner.collation"]  # no call wasted
    state = policy.state()
    assert (state["counters"]["exchanges"], state["counters"]["global_replans"]) == (11, 3)
    assert state["finished"]["reason"] == "force stop: 11 exchanges between the agents (limit 10)"
    assert state["finished"]["forced"] is True and state["finished"]["end"] == "force stop"
    assert (state["counters"]["force_stops"], state["counters"]["early_stops"]) == (1, 0)


def test_without_force_stop_the_round_limit_ends_the_episode_webarena_style():
    policy = coact(*endless())
    got = [policy.act(PAGE, None) for _ in range(22)]
    assert got[-1].parsed["calls"] == ["local_agent.pass_check"]  # the request: no decide after the limit
    assert got[-1].action == "stop [Early stop: round limit: 21 exchanges between the agents (limit 20)]"
    assert "global_planner.collation" not in policy.state()["calls"]
    assert (policy.state()["counters"]["force_stops"], policy.state()["counters"]["early_stops"]) == (0, 1)


@pytest.mark.parametrize("name", ["coact", "coact_fs"])
def test_webarena_early_stop_on_repeated_actions(name):
    gp = Brain(global_plan=ONE_PHASE, collation=collation("books"))
    policy = coact(gp, Brain(local_plan=actions("scroll [down]", "scroll [down]", "scroll [down]", "click [1]")), name)
    got = [policy.act(PAGE, None) for _ in range(4)]
    expected = "stop [books]" if name == "coact_fs" else "stop [Early stop: same action repeated 3 times]"
    assert got[-1].action == expected


def test_force_stop_answers_on_the_last_step_of_the_budget():
    gp = Brain(global_plan=ONE_PHASE, collation=collation("books"))
    la = Brain(local_plan=actions("scroll [down]", "scroll [up]", "scroll [down]", "scroll [up]"))
    task = TaskSpec(TASK.env_id, TASK.task_id, TASK.goal, commands=COMMANDS, budget=Budget(decisions=3))
    policy = coact(gp, la, "coact_fs", task=task)
    assert [policy.act(PAGE, None).action for _ in range(3)] == ["scroll [down]", "scroll [up]", "stop [books]"]
    assert policy.state()["finished"]["reason"] == "force stop: the last of the 3 steps of the budget"


def test_without_force_stop_a_spent_budget_answers_webarenas_early_stop_message():
    policy = coact(Brain(global_plan=ONE_PHASE), Brain(local_plan=actions("scroll [down]")))
    assert policy.forced_stop_answer("decisions") == "Early stop: reached the maximum of 30 steps"
    assert policy.forced_stop_answer("interactions").startswith("Early stop: reached the maximum of ")


def test_previous_action_is_webarenas_description_of_the_element_acted_on():
    gp = Brain(global_plan=ONE_PHASE, collation=collation("books"))
    la = Brain(local_plan=actions("click [13]"), pass_check=decision("move"))
    policy = coact(gp, la)
    assert policy.act(PAGE, None).action == "click [13]"
    last = policy.act({"text": "[40] link 'Alphabetical'", "url": "http://forum/forums"}, None)
    check = last.llm_calls[0].messages[-1]["content"]
    assert request_of(last.llm_calls[0].messages) == "pass_check"
    assert "\nPREVIOUS ACTION: click [13] where [13] is link 'Forums'\n" in check


def test_open_tabs_head_the_observation_of_both_agents_as_in_webarena():
    gp = Brain(global_plan=ONE_PHASE, collation=collation("books"))
    la = Brain(local_plan=actions("tab_focus [1]"), pass_check=decision("move"))
    policy = coact(gp, la)
    tabs = {"open_pages_titles": ("Postmill", "Wiki"), "open_pages_urls": ("http://forum/", "http://wiki/")}
    first = policy.act({**PAGE, **tabs, "active_page_index": np.asarray([0])}, None)
    last = policy.act({**PAGE, **tabs, "active_page_index": np.asarray([1])}, None)
    assert first.action == "tab_focus [1]"
    shown = [c.messages[-1]["content"] for c in (*first.llm_calls, *last.llm_calls)]
    assert [request_of(c.messages) for c in (*first.llm_calls, *last.llm_calls)] == [
        "global_plan",
        "local_plan",
        "pass_check",
        "collation",
    ]
    for content in shown[:2]:
        assert content.startswith("OBSERVATION:\nTab 0 (current): Postmill | Tab 1: Wiki\n\n[13] link 'Forums'")
    for content in shown[2:]:
        assert content.startswith("OBSERVATION:\nTab 0: Postmill | Tab 1 (current): Wiki\n\n[13] link 'Forums'")


def test_malformed_answers_are_reasked_with_an_example_then_take_the_failure_path():
    gp = Brain(global_plan=["Let me think about it.", "Still thinking."], collation=["No idea.", "Hmm."])
    la = Brain(local_plan=actions("click [13]"), pass_check=["Looks fine.", decision("move")])
    policy = coact(gp, la)
    first = policy.act(PAGE, None)
    assert policy.state()["global_plan"] == [{"subtask": TASK.goal, "expected_state": "the task is completed"}]
    reask = first.llm_calls[1].messages
    assert [m["role"] for m in reask[-2:]] == ["assistant", "user"] and reask[-2]["content"] == "Let me think about it."
    assert "it has no phase blocks" in reask[-1]["content"]
    assert "- **Subtask**: Open the list of all forums from the top menu." in reask[-1]["content"]
    assert "[" not in reask[-1]["content"].split("for example:")[1]  # a concrete example, no placeholders
    last = policy.act(PAGE, None)
    assert [c.role for c in last.llm_calls] == [LOCAL, LOCAL, GLOBAL, GLOBAL]
    assert "Action: revise\nReasons: The click opened" in last.llm_calls[1].messages[-1]["content"]
    assert last.action == "stop [N/A]"  # the collation stayed unreadable: the fallback "N/A"
    assert policy.state()["calls"] == [
        "global_planner.global_plan", "local_agent.local_plan", "local_agent.pass_check", "global_planner.collation"
    ]  # fmt: skip


def test_malformed_checks_count_as_revise_decisions_as_overrule_and_failures_in_a_row_stop_early():
    gp = Brain(global_plan=ONE_PHASE, decide="I cannot decide.", collation=collation("x"))
    la = Brain(local_plan=actions("click [13]"), pass_check="Hmm.", revise=actions("click [15]"))
    policy = coact(gp, la, parse_failure_th=0)
    policy.act(PAGE, None)
    assert policy.act(PAGE, None).parsed["calls"] == ["local_agent.pass_check", "local_agent.revise"]
    assert policy.state()["outcomes"][-1]["decision"] == "revise"
    stopping = coact(
        Brain(global_plan=ONE_PHASE), Brain(local_plan=actions("click [13]"), pass_check="Hmm.", revise="Hmm.")
    )
    stopping.act(PAGE, None)
    assert stopping.act(PAGE, None).action == "stop [Early stop: 3 malformed model answers in a row]"
    overruled = coact(
        gp, Brain(local_plan=actions("click [13]"), pass_check=decision("request"), overruled=actions("click [15]"))
    )
    overruled.act(PAGE, None)
    assert overruled.act(PAGE, None).parsed["calls"][-1] == "local_agent.overruled"
    assert overruled.state()["outcomes"][-1]["decision"] == "overrule"


def test_a_plan_without_any_readable_line_is_an_exception_for_false_check():
    gp = Brain(global_plan=ONE_PHASE, collation=collation("x"))
    la = Brain(local_plan=["Click forums.", "Then sort."], false_check=decision("revise"), revise=actions("click [13]"))
    policy = coact(gp, la)
    got = policy.act(PAGE, None)
    assert got.action == "click [13]"
    assert got.parsed["calls"] == [
        "global_planner.global_plan", "local_agent.local_plan", "local_agent.false_check", "local_agent.revise"
    ]  # fmt: skip
    assert "Failed action: (the whole local plan)" in got.llm_calls[3].messages[-1]["content"]


# -- configuration -----------------------------------------------------------------------------------


def test_defaults_and_variants():
    policy = make_policy("coact", script={})
    gp, la = policy.llm.settings(GLOBAL), policy.llm.settings(LOCAL)
    assert (gp.temperature, gp.top_p, gp.max_tokens) == (1.0, 0.9, 1024)
    assert (la.temperature, la.top_p, la.max_tokens) == (1.0, 0.9, 384)
    assert (policy.max_steps, policy.preset, policy.max_obs_tokens) == (30, "webarena", 1920)
    assert (policy.parse_failure_th, policy.repeat_th, policy.max_reasks) == (3, 3, 1)
    assert (policy.force_stop, policy.fs_limit, policy.max_rounds) == (False, 10, 20)
    assert (policy.max_local_revisions, policy.max_global_replans) == (3, 3)
    assert policy.collation_overrides_answer is False and policy.n_local_agents == 1
    fs = make_policy("coact_fs", script={})
    assert fs.force_stop and not fs.search_step and fs.name == "coact_fs"
    search = make_policy("coact_fs_search", script={})
    assert search.force_stop and search.search_step and search.search is None
    assert "no search function is configured" in search.config()["search_note"]
    tuned = make_policy("coact", script={}, global_planner_model="openai/big", local_agent_max_tokens=512)
    assert tuned.llm.model_for(GLOBAL) == "openai/big" and tuned.llm.settings(LOCAL).max_tokens == 512
    with pytest.raises(ValueError, match="one local agent"):
        make_policy("coact", script={}, n_local_agents=2)
    with pytest.raises(TypeError, match="global_planner_model"):
        make_policy("coact", script={}, planner_model="x")


def site_notes(goal: str, url: str) -> list[str]:
    return ["word " * 150, f"The forum list is at {url}forums."]


def test_search_step_adds_cut_passages_to_global_planning_and_replanning():
    assert resolve_search("test_policies_coact:site_notes") is site_notes or callable(
        resolve_search("test_policies_coact:site_notes")
    )
    gp = Brain(global_plan=ONE_PHASE, decide=decision("revise"), revise=ONE_PHASE, collation=collation("x"))
    la = Brain(local_plan=actions("click [13]"), pass_check=decision("request"))
    policy = coact(gp, la, "coact_fs_search", search=site_notes)
    first = policy.act(PAGE, None)
    knowledge = first.llm_calls[0].messages[-1]["content"].split("SEARCH KNOWLEDGE:\n")[1]
    assert knowledge == "- " + " ".join(["word"] * 100) + "\n- The forum list is at http://forum/forums."
    second = policy.act(PAGE, None)
    assert "SEARCH KNOWLEDGE:" in second.llm_calls[2].messages[-1]["content"]  # the planner's revise
    assert "SEARCH KNOWLEDGE" not in second.llm_calls[3].messages[-1]["content"]  # never to the local agent
    assert policy.config()["search"].endswith(":site_notes")

    def broken(goal: str, url: str) -> str:
        raise OSError("offline")

    failing = coact(Brain(global_plan=ONE_PHASE), la, "coact_fs_search", search=broken)
    assert "SEARCH KNOWLEDGE" not in failing.act(PAGE, None).llm_calls[0].messages[-1]["content"]
    assert failing.state()["search_error"] == "OSError: offline"
    with pytest.raises(ValueError, match="package.module:function"):
        resolve_search("no_colon_here")
