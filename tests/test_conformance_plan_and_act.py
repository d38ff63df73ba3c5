"""The conformance model's Plan-and-Act answers on the method's own prompts, read by its own parsers: plans
that name the reference steps by role and name, progress counted off what each prompt lists as done, and
executor ids read off the simplified HTML of the current round only."""

from __future__ import annotations

import pytest

from webarena_gym.experiments.conformance.model import LACKS_ELEMENT, NO_GRAMMAR, ConformanceModel
from webarena_gym.experiments.conformance.plan_and_act import html_elements
from webarena_gym.policies.plan_and_act.parsing import parse_action, parse_plan
from webarena_gym.policies.plan_and_act.prompts import (
    PastRound,
    executor_messages,
    planner_messages,
    replanner_messages,
)
from webarena_gym.wrappers.actions.webrl_grammar import COMMANDS
from webarena_gym.wrappers.observations.html import PLACEHOLDER, strip_ids

GOAL = "Get the order number of my most recent cancelled order"
# Local task 0 (shopping): click "My Account", click "My Orders", answer 000000195.
HOME = '<html>\n <body>\n  <ul>\n   <li>\n    <a id="10">My Account</a>\n   </li>\n  </ul>\n </body>\n</html>'
ACCOUNT = '<a id="194">My Wish List</a>\n<a id="196">My Orders</a>'
# Local task 6 (shopping): type "chairs" + Enter in the search box, sort by price, answer Done.
SEARCH = (
    '<form role="search">\n <label id="20">Search</label>\n <input id="21" type="text" placeholder="Search here"/>\n'
    ' <button id="22" type="submit" title="Search">Search</button>\n</form>'
)
RESULTS = (
    '<label>Sort By</label>\n<select id="40">\n <option value="position">Position</option>\n'
    ' <option value="price">Price</option>\n</select>'
)


def executor(model: ConformanceModel, page: str, history: tuple[PastRound, ...] = (), cot: bool = False) -> str:
    plan = parse_plan(model.responder.answer("planner", planner_messages(GOAL, strip_ids(page), cot)), cot).text
    messages = executor_messages(GOAL, COMMANDS, page, history, plan=plan, cot=cot, dynamic=True)
    return parse_action(model.responder.answer("executor", messages), cot, COMMANDS).action.text()


@pytest.mark.parametrize("cot", [False, True])
def test_the_planners_write_the_steps_still_to_come_by_role_and_name(cot):
    model = ConformanceModel(0, "plan_and_act", ("shopping",))
    plan = parse_plan(model.responder.answer("planner", planner_messages(GOAL, strip_ids(HOME), cot)), cot)
    assert [s.step for s in plan.steps] == ["Click the link 'My Account'.", "Click the link 'My Orders'.",
                                            "Answer '000000195'."]  # fmt: skip
    # The replanner's prompt lists one action taken: the plan keeps the two steps after it.
    messages = replanner_messages(GOAL, [plan.text], ['do(action="Click", element="10")'], strip_ids(ACCOUNT), cot)
    replan = parse_plan(model.responder.answer("replanner", messages), cot)
    assert [s.step for s in replan.steps] == ["Click the link 'My Orders'.", "Answer '000000195'."]
    assert model.finding is None


@pytest.mark.parametrize("cot", [False, True])
def test_the_executor_counts_its_rounds_and_reads_ids_off_the_current_page(cot):
    model = ConformanceModel(0, "plan_and_act", ("shopping",))
    first = executor(model, HOME, cot=cot)
    assert first.endswith('do(action="Click", element="10")')
    # Round 2 shows the first round done (its page replaced); the id comes from this round's page only.
    done = (PastRound(PLACEHOLDER, first),)
    moved = ACCOUNT.replace('"196"', '"301"')
    orders = executor(model, moved, done, cot)
    assert orders == "# Element: Click the link 'My Orders'\n" + 'do(action="Click", element="301")'
    second = (*done, PastRound(PLACEHOLDER, 'do(action="Click", element="301")'))
    assert executor(model, "<p>Order 000000195</p>", second, cot) == 'exit(message="000000195")'
    assert model.finding is None


def test_fields_are_named_by_their_label_and_dropdowns_chosen_by_the_label_shown():
    elements = html_elements(SEARCH + "\n" + RESULTS)
    assert [(e.bid, e.role, e.name) for e in elements][:3] == [("20", "label", "Search"), ("21", "textbox", "Search"),
                                                               ("22", "button", "Search")]  # fmt: skip
    model = ConformanceModel(6, "plan_and_act_dynamic", ("shopping",))
    assert executor(model, SEARCH).endswith('do(action="Search", element="21", argument="chairs")')
    done = (PastRound(PLACEHOLDER, 'do(action="Search", element="21", argument="chairs")'),)
    action = executor(model, RESULTS, done)
    assert action.endswith('do(action="Select Dropdown Option", element="40", argument="Price")')


def test_a_radio_is_named_by_the_label_after_it_a_textbox_by_the_one_before():
    rating = (
        '<label id="290">Nickname</label>\n<input id="291" type="text"/>\n'
        '<input id="292" type="radio" value="1"/>\n<label id="293">1 star</label>\n'
        '<input id="294" type="radio" value="2"/>\n<label id="295">2 stars</label>\n'
        '<input id="296" type="checkbox"/>\n<label id="297">Remember me</label>'
    )
    named = {e.bid: e.name for e in html_elements(rating) if e.role in ("textbox", "radio", "checkbox")}
    assert named == {"291": "Nickname", "292": "1 star", "294": "2 stars", "296": "Remember me"}


def test_a_details_summary_is_read_as_the_disclosure_triangle_the_reference_names():
    (clone,) = [e for e in html_elements('<details><summary id="150">Clone</summary></details>') if e.bid == "150"]
    assert (clone.role, clone.name) == ("DisclosureTriangle", "Clone")


def test_a_page_without_the_element_or_a_step_without_a_command_is_a_finding():
    model = ConformanceModel(0, "plan_and_act", ("shopping",))
    assert executor(model, ACCOUNT, cot=True) == 'exit(message="cannot continue: observation lacks the element")'
    assert model.finding is not None and model.finding.cause == LACKS_ELEMENT
    assert "link named 'My Account'" in model.finding.detail
    # the multi-site path starts at the homepage (go_home), which WebRL's grammar cannot reach
    home_first = ConformanceModel(602, "plan_and_act_dynamic", ("wikipedia", "map"))
    assert executor(home_first, HOME) == 'exit(message="cannot continue: grammar cannot express the action")'
    assert home_first.finding is not None and home_first.finding.cause == NO_GRAMMAR
