"""The conformance model's Plan-MCTS roles on prompts built by the method's own builders, their answers
read by the method's own parsers: the plan is the reference in stretches, progress is what the history
and the subplan's actions show, ids come off the page text, and a prompt that lacks the next step's
element is a finding."""

from __future__ import annotations

from webarena_gym.experiments.conformance.model import LACKS_ELEMENT, METHOD_LOGIC, ConformanceModel
from webarena_gym.policies.plan_mcts import prompts as P
from webarena_gym.policies.plan_mcts.tree import HistoryItem, Page, Step

COMMANDS = ("click", "type", "scroll", "goto", "stop")
CTX = P.Context(goal="Buy the headphones", commands=COMMANDS, images=False)
# Local task 15 (shopping), 9 units: Electronics, Headphones, the price range, the product, Add to Cart |
# My Cart, Proceed to Checkout, Place Order | the answer.
FIRST = (
    "Click the menuitem 'Electronics'; then click the link 'Headphones'; then click the link '$100.00 - $199.99'; "
    "then click the link 'Sony Hi-Res Over-Ear Studio Headphones, Blue - Ships from USA'."
)
SECOND = (
    "Click the button 'Add to Cart'; then click the link 'My Cart'; then click the link 'Proceed to Checkout'; "
    "then click the button 'Place Order'."
)
HOME = Page("http://127.0.0.1:1/", "RootWebArea 'Home'\n\tmenubar [29] \"[31] 'Beauty'; [106] 'Electronics'\"")
PRODUCT = Page("http://127.0.0.1:1/sony.html", "RootWebArea 'Sony'\n\tbutton [52] 'Add to Cart'\n\tlink [60] 'My Cart'")


def model() -> ConformanceModel:
    return ConformanceModel(15, "plan_mcts", ("shopping",))


def ask(m: ConformanceModel, role: str, messages: list) -> str:
    answer = m.script().next(role, messages)  # through the script entry point, as the policy calls it
    assert isinstance(answer, str)
    return answer


def done(subplan: str) -> HistoryItem:
    return HistoryItem(subplan, True, "C", 0.5, "")


def test_the_planner_proposes_the_next_stretch_after_the_history():
    m = model()
    first = P.parse_subplans(ask(m, "planner", P.planner_messages(CTX, 3, [], [], HOME)), 3)
    assert [c.subplan for c in first] == [FIRST]  # the three variations are one subplan: the method keeps one
    second = P.parse_subplans(ask(m, "planner", P.planner_messages(CTX, 3, [done(FIRST)], [], PRODUCT)), 3)
    assert [c.subplan for c in second] == [SECOND]
    assert m.finding is None


def test_a_history_that_skips_the_reference_steps_is_a_finding():
    m = model()
    answer = ask(m, "planner", P.planner_messages(CTX, 3, [done(SECOND)], [], PRODUCT))
    assert P.parse_subplans(answer, 3)[0].subplan.startswith("Stop: the task cannot continue")
    assert m.finding is not None and m.finding.cause == METHOD_LOGIC


def test_the_operator_reads_ids_off_the_page_and_progress_off_the_subplans_actions():
    m = model()
    history = [done(FIRST)]
    first = ask(m, "operator", P.operator_messages(CTX, SECOND, history, [], [], PRODUCT))
    assert P.parse_operator(first, COMMANDS)[0] == "click [52]"
    # A scroll and a failed action are no reference step; the next one is My Cart, under its new id.
    local = [Step("click [52]", url=PRODUCT.url), Step("scroll [down]"), Step("click [9]", error="no element 9")]
    moved = Page(PRODUCT.url, PRODUCT.text.replace("[60]", "[61]"))
    second = ask(m, "operator", P.operator_messages(CTX, SECOND, history, [], local, moved))
    assert P.parse_operator(second, COMMANDS)[0] == "click [61]"
    four = [Step(f"click [{i}]") for i in range(4)]
    last = ask(m, "operator", P.operator_messages(CTX, SECOND, history, [], four, moved))
    assert P.parse_operator(last, COMMANDS)[0] == P.DONE


def test_the_operator_scrolls_to_an_element_the_page_names_outside_the_viewport():
    m = model()
    below = Page(PRODUCT.url, "RootWebArea 'Sony'\n\tlink [60] 'My Cart'\n\tbutton 'Add to Cart'")
    answer = ask(m, "operator", P.operator_messages(CTX, SECOND, [done(FIRST)], [], [], below))
    assert P.parse_operator(answer, COMMANDS)[0] == "scroll [down] []"  # the grammar's form
    assert m.finding is None


def test_an_operator_prompt_without_the_element_is_a_finding():
    m = model()
    answer = ask(m, "operator", P.operator_messages(CTX, SECOND, [done(FIRST)], [], [], HOME))
    assert P.parse_operator(answer, COMMANDS)[0] == "stop [cannot continue: observation lacks the element]"
    assert m.finding is not None and m.finding.cause == LACKS_ELEMENT and "Add to Cart" in m.finding.detail


def test_the_checks_judge_the_subplans_actions_and_what_is_left():
    m = model()
    clicks = [Step(f"click [{i}]", url=PRODUCT.url) for i in range(4)]
    assert P.parse_micro(ask(m, "micro", P.micro_messages(CTX, FIRST, clicks, HOME, PRODUCT)))[0]
    failed = [*clicks[:3], Step("click [9]", error="no element 9")]
    assert not P.parse_micro(ask(m, "micro", P.micro_messages(CTX, FIRST, failed, HOME, PRODUCT)))[0]
    first = P.macro_messages(CTX, FIRST, [], [], clicks, HOME, PRODUCT)
    assert P.parse_macro(ask(m, "macro", first))[0] == "C"  # five of nine steps left
    answer = "Answer the user: " + str(m.units[-1].steps[0]["text"]) + "."
    last = P.macro_messages(CTX, answer, [done(FIRST), done(SECOND)], [], [Step("stop [x]")], PRODUCT, PRODUCT)
    assert P.parse_macro(ask(m, "macro", last))[0] == "E"  # the answer given is not the reference's
    given = [Step(f"stop [{m.units[-1].steps[0]['text']}]")]
    last = P.macro_messages(CTX, answer, [done(FIRST), done(SECOND)], [], given, PRODUCT, PRODUCT)
    assert P.parse_macro(ask(m, "macro", last))[0] == "A"


def test_the_reflector_keeps_the_steps_the_trace_does_not_show_done():
    m = model()
    trace = [Step("click [52]"), Step("click [60]")]
    repair = P.parse_reflection(ask(m, "reflector", P.reflector_messages(CTX, SECOND, trace, PRODUCT)))
    assert repair.revised_plan == "Click the link 'Proceed to Checkout'; then click the button 'Place Order'."
    assert repair.reason.startswith("Type A: observation lacks the element")  # this page has no Checkout link


def test_a_typed_text_over_several_lines_is_one_step_of_the_subplan():
    m = ConformanceModel(218, "plan_mcts", ("reddit",))  # goto, two clicks, a two-line body, save, answer
    edit = Page("http://127.0.0.1:1/f/television/1492/-/edit", "RootWebArea 'Edit'\n\ttextbox [41] 'Body'")
    subplan = P.parse_subplans(ask(m, "planner", P.planner_messages(CTX, 3, [], [], edit)), 3)[0].subplan
    body = str(m.units[3].steps[0]["value"])
    assert "\n" in body
    steps = [Step("goto [http://127.0.0.1:1/u]"), Step("click [93]"), Step("click [46]")]
    steps.append(Step(f"type [41] [{body}] [0]"))
    answer = ask(m, "operator", P.operator_messages(CTX, subplan, [], [], steps, edit))
    assert P.parse_operator(answer, COMMANDS)[0] == P.DONE
    assert P.parse_micro(ask(m, "micro", P.micro_messages(CTX, subplan, steps, edit, edit)))[0]


def test_a_typed_file_that_ends_in_a_line_break_counts_as_its_step():
    """Task 708 types a whole file, its last line break inside the brackets: the history's action is
    the reference's step (it once counted as not done, so the Operator typed the file until its budget)."""
    m = ConformanceModel(708, "plan_mcts", ("gitlab",))
    content = str(m.units[2].steps[0]["value"])
    assert content.endswith("\n")
    assert m.responder.carried_out(2, f"1. type [105] [{content}] [0]\n2. click [131]") == 2
    assert m.responder.carried_out(2, f"1. type [105] [{content.strip()} more] [0]") == 0


def test_a_typed_address_counts_as_its_step_whatever_the_site_s_origin():
    """Task 286 types the image's address, the reference's ``__REDDIT__`` standing for the site the page
    shows: the history's action, with the real origin, is the step (it once counted as not done, so the
    Operator typed the address until the search ended with no answer)."""
    m = ConformanceModel(286, "plan_mcts", ("reddit",))
    value = str(m.units[2].steps[0]["value"])
    typed_here = value.replace("__REDDIT__", "http://127.0.0.1:41234")
    assert value.startswith("__REDDIT__/") and m.units[2].kind == "fill"
    history = f"1. type [38] [{typed_here}] [0]\n2. type [41] [from /f/pics] [0]"
    assert m.responder.carried_out(2, history) == 2
    assert m.responder.carried_out(2, f"1. type [38] [{typed_here}] [1]") == 0  # Enter pressed: another command
    assert m.responder.carried_out(2, "1. type [38] [http://127.0.0.1:41234/other.jpg] [0]") == 0
