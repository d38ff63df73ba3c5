"""The conformance model's CoAct answers on CoAct's own prompts, read back with CoAct's own parsers:
a phase per page of the reference, progress from the subtask and the numbered results, ids from the page."""

from __future__ import annotations

from webarena_gym.experiments.conformance.coact import phases
from webarena_gym.experiments.conformance.model import LACKS_ELEMENT, METHOD_LOGIC, ConformanceModel
from webarena_gym.policies.coact.text import (
    CHECK_WORDS,
    DECIDE_WORDS,
    global_system,
    local_system,
    parse_collation,
    parse_decision,
    parse_global_plan,
    parse_local_plan,
    user_content,
)

ACTIONS = ("click", "type", "goto", "go_back", "stop")
URL = "http://127.0.0.1:1/"
# Local task 100 (shopping_admin): open Bestsellers, choose the Year period, type From and To, click Show Report.
REPORT_PAGE = (
    "[112] combobox 'Period'\n\t[117] option 'Day'\n\t[119] option 'Year'\n"
    "[122] textbox 'From'\n[123] textbox 'To'\n[130] button 'Show Report'"
)


def local(model: ConformanceModel, call: str, page: str, objective: str, sections=()) -> list[str]:
    """The local agent's plan for ``call`` on ``page``, as CoAct's parser reads it."""
    messages = [
        {"role": "system", "content": local_system(call, ACTIONS, "reasons")},
        {"role": "user", "content": user_content(page, URL, objective, "None", sections)},
    ]
    steps = parse_local_plan(model.script().next("local_agent", messages), ACTIONS)
    return [str(step.action) for step in steps]


def planner(model: ConformanceModel, call: str, sections=(), reasons: str = "") -> str:
    messages = [
        {"role": "system", "content": global_system(call, reasons)},
        {"role": "user", "content": user_content("[1] link 'Home'", URL, "the task", "None", sections)},
    ]
    return model.script().next("global_planner", messages)


def test_the_global_plan_has_a_phase_per_page_naming_its_reference_steps():
    model = ConformanceModel(100, "coact", ("shopping_admin",))
    plan = parse_global_plan(planner(model, "global_plan"))
    # Typing without Enter stays on the page: From and To join the click on Show Report.
    assert [p.subtask.split(":")[0] for p in plan] == ["Step 1 of 6", "Step 2 of 6", "Steps 3-5 of 6", "Step 6 of 6"]
    assert "type '1/1/22' into the textbox 'From'" in plan[2].subtask
    assert phases(model.units) == [(0, 0), (1, 1), (2, 4), (5, 5)]


def test_a_local_plan_covers_its_phase_with_the_ids_of_the_page_shown():
    model = ConformanceModel(100, "coact", ("shopping_admin",))
    plan = parse_global_plan(planner(model, "global_plan"))
    assert local(model, "local_plan", REPORT_PAGE, plan[1].subtask) == ["click [119]"]
    moved = REPORT_PAGE.replace("[122]", "[222]")  # the text's ids, not a memory of earlier ones
    assert local(model, "local_plan", moved, plan[2].subtask) == [
        "type [222] [1/1/22] [0]",
        "type [123] [12/31/22] [0]",
        "click [130]",
    ]
    assert model.finding is None


def test_a_revised_plan_starts_after_the_actions_the_results_list_as_done():
    model = ConformanceModel(100, "coact", ("shopping_admin",))
    subtask = parse_global_plan(planner(model, "global_plan"))[2].subtask
    previous = (
        "**Action 1:** type [122] [1/1/22] [0]\n**Action 2:** type [123] [12/31/22] [0]\n**Action 3:** click [130]"
    )
    failed = "Failed action: type [123] [12/31/22] [0]\nError: timeout\nActions carried out before it:\n"
    failed += f"1. type [122] [1/1/22] [0] -> done; the page is now {URL}"
    sections = [("PREVIOUS LOCAL PLAN", previous), ("EXECUTION EXCEPTIONS", failed)]
    assert local(model, "revise", REPORT_PAGE, subtask, sections) == ["type [123] [12/31/22] [0]", "click [130]"]


def test_checks_are_truthful_about_the_results_shown():
    model = ConformanceModel(0, "coact", ("shopping",))
    plan = "**Action 1:** click [10]\n**Action 2:** click [194]"
    one_done = f"1. click [10] -> done; the page is now {URL}"

    def check(call: str, results: tuple[str, str]) -> str:
        messages = [
            {"role": "system", "content": local_system(call, ACTIONS)},
            {"role": "user", "content": user_content("", URL, "x", "None", [("LOCAL PLAN", plan), results])},
        ]
        allowed = ("move", "revise", "request") if call == "pass_check" else ("revise", "request")
        return parse_decision(model.script().next("local_agent", messages), allowed, CHECK_WORDS)[0]

    assert check("pass_check", ("EXECUTION RESULTS", f"{one_done}\n2. click [194] -> done; ...")) == "move"
    assert check("pass_check", ("EXECUTION RESULTS", one_done)) == "revise"
    assert (
        check("false_check", ("EXECUTION EXCEPTIONS", f"Failed action: click [194]\nError: x\n{one_done}")) == "revise"
    )
    decide = planner(model, "decide", [("CURRENT GLOBAL PLAN", "...")], reasons="the plan is wrong")
    assert parse_decision(decide, ("revise", "overrule"), DECIDE_WORDS)[0] == "overrule"


def test_the_collation_answers_what_the_summary_shows_was_reached():
    model = ConformanceModel(0, "coact", ("shopping",))
    answered = "Why the work stopped: the local agent issued stop.\nThe local agent's answer: 000000195"
    assert parse_collation(planner(model, "collation", [("EXECUTION SUMMARY", answered)]))[1] == "000000195"
    # A force stop before the answer's phase: the answer is the plan's once every phase before it passed.
    forced = "Why the work stopped: force stop: 11 exchanges between the agents (limit 10).\n"
    early = forced + "Progress: 1 of the 3 phases of global plan version 1 passed."
    assert parse_collation(planner(model, "collation", [("EXECUTION SUMMARY", early)]))[1] == "N/A"
    late = forced + "Progress: 2 of the 3 phases of global plan version 1 passed."
    assert parse_collation(planner(model, "collation", [("EXECUTION SUMMARY", late)]))[1] == "000000195"
    assert model.calls == {"global_planner": 3}
    # The early stop is the miss's cause: the method's limit and how far the plan got.
    assert model.finding is not None and model.finding.cause == METHOD_LOGIC
    assert model.finding.detail == (
        "the work stopped before the answer: force stop: 11 exchanges between the agents (limit 10); "
        "Progress: 1 of the 3 phases"
    )
    reached = ConformanceModel(0, "coact", ("shopping",))
    planner(reached, "collation", [("EXECUTION SUMMARY", late)])
    assert reached.finding is None


def test_a_page_without_the_element_or_a_subtask_without_steps_is_a_finding():
    model = ConformanceModel(0, "coact", ("shopping",))
    subtask = parse_global_plan(planner(model, "global_plan"))[0].subtask
    assert local(model, "local_plan", "[5] link 'Home'", subtask) == [
        "stop [cannot continue: observation lacks the element]"
    ]
    assert model.finding is not None and model.finding.cause == LACKS_ELEMENT and "'My Account'" in model.finding.detail
    fallback = ConformanceModel(0, "coact", ("shopping",))  # the policy's one-phase fallback plan: the task itself
    stop = local(fallback, "local_plan", "[10] link 'My Account'", "Get the order")
    assert stop == ["stop [cannot continue: method logic]"]
    assert fallback.finding is not None and fallback.finding.cause == METHOD_LOGIC


def test_a_phase_below_the_viewport_scrolls_and_the_page_shows_where_to_go_on():
    """Task 100's third phase (type From and To, click Show Report) on a view that shows only From: the
    plan ends in a scroll, the check sends it back, and the scrolled page's typed field shows it done."""
    model = ConformanceModel(100, "coact", ("shopping_admin",))
    subtask = parse_global_plan(planner(model, "global_plan"))[2].subtask
    scrolling = (*ACTIONS, "scroll")

    def plan(call: str, page: str, sections=()) -> list[str]:
        messages = [
            {"role": "system", "content": local_system(call, scrolling, "reasons")},
            {"role": "user", "content": user_content(page, URL, subtask, "None", sections)},
        ]
        return [str(s.action) for s in parse_local_plan(model.script().next("local_agent", messages), scrolling)]

    top = "[112] combobox 'Period'\n[122] textbox 'From'"
    assert plan("local_plan", top) == ["type [122] [1/1/22] [0]", "scroll [down]"]
    assert model.finding is not None and model.finding.cause == LACKS_ELEMENT  # until a view shows To
    previous = "**Action 1:** type [122] [1/1/22] [0]\n**Action 2:** scroll [down]"
    results = (
        f"1. type [122] [1/1/22] [0] -> done; the page is now {URL}\n2. scroll [down] -> done; the page is now {URL}"
    )
    check = [
        {"role": "system", "content": local_system("pass_check", scrolling)},
        {
            "role": "user",
            "content": user_content(
                top, URL, subtask, "None", [("LOCAL PLAN", previous), ("EXECUTION RESULTS", results)]
            ),
        },
    ]
    assert (
        parse_decision(model.script().next("local_agent", check), ("move", "revise", "request"), CHECK_WORDS)[0]
        == "revise"
    )
    sections = [("PREVIOUS LOCAL PLAN", previous), ("EXECUTION RESULTS", results)]
    below = "[122] textbox 'From' value: 1/1/22\n[123] textbox 'To'\n[130] button 'Show Report'"
    assert plan("revise", below, sections) == ["type [123] [12/31/22] [0]", "click [130]"]
    assert model.finding is None
    retyped = below.replace("value: 1/1/22", "value: 1/1/21")  # the field does not show the step done
    assert plan("revise", retyped, sections)[0] == "type [122] [1/1/22] [0]"


def test_a_revised_plan_types_the_dropdown_label_the_exception_listed():
    """Task 363's reviewer is named by the option's value; the exception lists the labels."""
    model = ConformanceModel(363, "coact", ("gitlab",))
    subtask = parse_global_plan(planner(model, "global_plan"))[3].subtask
    assert subtask.startswith("Steps 4-5 of 7")
    page = "[109] textbox 'Title (required)'\n[125] combobox 'Reviewer' hasPopup: menu expanded: False"
    title = "type [109] [Merge redesign into feature/markdown-figure-block] [0]"
    assert local(model, "local_plan", page, subtask) == [title, "type [125] [byteblaze] [1]"]
    listing = "'Unassigned', 'Byte Blaze (@byteblaze)'"
    failed = "Failed action: type [125] [byteblaze] [1]\nError: Invalid action: no option of the dropdown [125] "
    failed += f"starts with 'byteblaze'; its options are {listing}\nActions carried out before it:\n"
    failed += f"1. {title} -> done; the page is now {URL}"
    previous = f"**Action 1:** {title}\n**Action 2:** type [125] [byteblaze] [1]"
    sections = [("PREVIOUS LOCAL PLAN", previous), ("EXECUTION EXCEPTIONS", failed)]
    assert local(model, "revise", page, subtask, sections) == ["type [125] [Byte Blaze (@byteblaze)] [1]"]
