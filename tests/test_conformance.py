"""The conformance model (ids read off the prompt only, progress from what the prompt shows, a finding
when the prompt lacks what the next step needs) and the CI sample of the conformance matrix."""

from __future__ import annotations

import pytest

from webarena_gym.experiments.conformance.model import (
    LACKS_ELEMENT,
    LACKS_HISTORY,
    NO_GRAMMAR,
    ConformanceModel,
    Stuck,
    find_element,
    offered_commands,
    option_element,
    page_elements,
    units,
)
from webarena_gym.policies.agentoccam.text import parse_fields
from webarena_gym.policies.react import parse_answer, system_prompt, user_message

REACT_ACTIONS = ("click", "type", "goto", "go_back", "stop")
# Local task 0 (shopping): click "My Account", click "My Orders", answer 000000195.
ORDERS_PAGE = "[10] link 'My Account'\n[194] link 'My Orders'\n[196] link 'My Wish List'"


def react_messages(page: str, previous: str = "None", actions=REACT_ACTIONS) -> list:
    return [
        {"role": "system", "content": system_prompt(actions, None)},
        {"role": "user", "content": user_message(page, "http://127.0.0.1:1/customer/", "Get the order", previous)},
    ]


def react_command(model: ConformanceModel, messages: list) -> str:
    return parse_answer(model.responder.answer("actor", messages), (*REACT_ACTIONS, "press"))[1]


def test_elements_are_read_off_both_tree_texts_and_folded_dropdowns():
    webarena = page_elements('[21] textbox \'Search\' required: False\n\t[22] button "Say \\"hi\\""')
    assert [(e.bid, e.role, e.name) for e in webarena] == [("21", "textbox", "Search"), ("22", "button", 'Say "hi"')]
    occam = page_elements("group [112] 'Filter'\ncombobox \"Period: [117] 'Day'; [119] 'Year'\"\ntextbox [122] 'From'")
    dropdown = find_element(occam, "combobox", "Period", allow_folded=True)
    assert option_element(occam, dropdown, "year").bid == "119"
    assert find_element(occam, "textbox", "from").bid == "122"  # the reference's substring rule, any case
    menu = page_elements("menubar [29] \"[31] 'Beauty'; [121] 'Video Games'\"\nlink [30] 'Cart'")
    assert find_element(menu, "menuitem", "Video Games").bid == "121"
    with pytest.raises(Stuck) as stuck:
        find_element(occam, "combobox", "Period")  # a folded container has no id to click
    assert stuck.value.finding.cause == LACKS_ELEMENT


def test_fill_then_enter_is_one_unit_and_answer_fields_are_not_commands():
    steps = [
        {"action": "fill", "target": {"role": "textbox", "name": "Search"}, "value": "x"},
        {"action": "press", "target": {"role": "textbox", "name": "Search"}, "value": "Enter"},
        {"action": "send_msg_to_user", "text": "done"},
    ]
    assert [len(u.steps) for u in units(steps)] == [2, 1]
    assert offered_commands("- click [id]: ...\n- go_back: ...\n- reason: [why]\n- action: [click [3]]") == {
        "click",
        "go_back",
    }


def test_react_progress_comes_from_previous_action_and_ids_from_the_page():
    model = ConformanceModel(0, "react", ("shopping",))
    assert react_command(model, react_messages(ORDERS_PAGE)) == "click [10]"
    # The same page text with other ids: the model follows the text, not a memory of earlier ids.
    moved = ORDERS_PAGE.replace("[194]", "[301]")
    after_account = "click [10] where [10] is link 'My Account'"
    assert react_command(model, react_messages(moved, after_account)) == "click [301]"
    after_orders = "click [301] where [301] is link 'My Orders'"
    assert react_command(model, react_messages(moved, after_orders)) == "stop [000000195]"
    assert model.finding is None


def test_react_reads_a_previous_type_described_with_the_fields_properties():
    model = ConformanceModel(6, "react", ("shopping",))  # type "chairs" + Enter, sort by price, answer
    page = "[21] textbox 'Search' required: False\n[40] combobox 'Sort By'\n\t[41] option 'Price'"
    previous = "type [21] [chairs] [1] where [21] is textbox 'Search' required: False"
    assert react_command(model, react_messages(page, previous)) == "click [41]"


def test_a_dropdown_without_its_options_shown_is_set_by_typing_its_label():
    """WebArena's viewport tree leaves a collapsed list's options out; its type picks one by type-ahead."""
    model = ConformanceModel(6, "react", ("shopping",))
    page = "[21] textbox 'Search' required: False\n[40] combobox 'Sort By' hasPopup: menu expanded: False"
    previous = "type [21] [chairs] [1] where [21] is textbox 'Search' required: False"
    assert react_command(model, react_messages(page, previous)) == "type [40] [Price] [1]"
    typed = "type [40] [Price] [1] where [40] is combobox 'Sort By' hasPopup: menu expanded: False"
    assert react_command(model, react_messages(page, typed)) == "stop [Done]"  # the typed label is progress
    no_type = ConformanceModel(6, "react", ("shopping",))
    no_type.responder.answer("actor", react_messages(page, previous, actions=("click", "stop")))
    assert no_type.finding is not None and no_type.finding.cause == LACKS_ELEMENT


def test_a_repeated_previous_action_the_page_cannot_place_is_a_history_finding():
    """Task 780 searches twice, then opens another product each time: after a search, PREVIOUS ACTION
    cannot say which of the two was done."""
    search = "[21] textbox 'Search' required: False\n"
    clear = "[50] link 'EYZUTAK Clear Phone Case, for iPhone 14 - Upgraded 2023 Version'\n"
    glitter = "[51] link 'EYZUTAK Glitter Phone Case for iPhone 13, Sparkly Bling Cover - Pink'\n"
    previous = "type [21] [EYZUTAK phone case] [1] where [21] is textbox 'Search' required: False"
    one_left = ConformanceModel(780, "react", ("shopping",))
    assert react_command(one_left, react_messages(search + glitter, previous)) == "click [51]"
    assert one_left.finding is None  # the probe of the first search's successor records nothing
    both = ConformanceModel(780, "react", ("shopping",))
    assert react_command(both, react_messages(search + clear + glitter, previous)).startswith("stop [cannot")
    assert both.finding is not None and both.finding.cause == LACKS_HISTORY


def test_a_prompt_without_the_element_or_the_command_is_a_finding():
    model = ConformanceModel(0, "react", ("shopping",))
    answer = model.responder.answer("actor", react_messages("[5] link 'Home'"))
    assert answer.rstrip().endswith("```stop [cannot continue: observation lacks the element]```")
    assert model.finding is not None and "link named 'My Account'" in model.finding.detail
    no_click = ConformanceModel(0, "react", ("shopping",))
    no_click.responder.answer("actor", react_messages(ORDERS_PAGE, actions=("type", "stop")))
    assert no_click.finding is not None and no_click.finding.cause == NO_GRAMMAR


def test_agentoccam_progress_is_the_number_of_actions_in_its_history():
    model = ConformanceModel(0, "agentoccam", ("shopping",))
    system = "Use only these commands:\n- click [id]: click.\n- stop [answer]: end.\n"
    history = "<step_0_interaction>\nOBSERVATION:\nlink 'My Account'\nACTION:\nclick [10]\n</step_0_interaction>\n"
    user = f"OBJECTIVE:\nGet the order\nINTERACTION HISTORY:\n{history}CURRENT OBSERVATION:\nlink [77] 'My Orders'\n"
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    fields = parse_fields(model.script().next("actor", messages))  # through the script entry point
    assert fields["ACTION"] == "click [77]" and fields["OBSERVATION HIGHLIGHT"] == "77"
    assert model.calls == {"actor": 1}


# -- the CI sample of the matrix: one task per site, every covered method --------------------------

SAMPLE = (0, 100, 200, 300, 400, 500, 602)  # shopping, shopping_admin, reddit, gitlab, map, wikipedia, multisite
# The multi-site task's goto-free path starts at the homepage (go_home), which WebRL's grammar lacks.
NO_HOMEPAGE = {602: NO_GRAMMAR}
# What each method's prompt or grammar cannot carry on the sample (a finding each; every other task conforms).
EXPECTED_FINDINGS = {
    "react": {100: LACKS_ELEMENT, 602: LACKS_ELEMENT},  # viewport tree cut at 1920 tokens; no wikipedia address
    "agentoccam": {},  # no goto: it follows the goto-free paths (200, 300 and 602 open another page first)
    "agentoccam_judge": {},
    # CoAct sees React's observation (cut at 1920 tokens) and has goto, but not the wikipedia address.
    "coact": {100: LACKS_ELEMENT, 602: LACKS_ELEMENT},
    "coact_fs": {100: LACKS_ELEMENT, 602: LACKS_ELEMENT},
    "plan_and_act": NO_HOMEPAGE,  # WebRL's grammar has no goto (its prompt says never to type addresses)
    "plan_and_act_dynamic": NO_HOMEPAGE,
    # WebArena's viewport tree drops a collapsed <select>'s options (boxes of no area): Period on 100 and
    # Mode on 602 are set by typing their labels into the dropdowns, as WebArena's type does.
    "devils_advocate": {},
    "plan_mcts": {602: LACKS_ELEMENT},  # goto is a command; the wikipedia address is nowhere in the prompt
}


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(EXPECTED_FINDINGS))
def test_conformance_sample(method, tmp_path):
    from webarena_gym.experiments import tasksets
    from webarena_gym.experiments.conformance.matrix import cause, run_matrix
    from webarena_gym.experiments.store import StudyStore

    tasks = [t for t in tasksets.local_tasks() if t.task_id in SAMPLE]
    results = StudyStore(run_matrix([method], tasks, tmp_path / "study")).latest().values()
    causes = {r.task_id: cause(r) for r in results}
    assert len(causes) == len(SAMPLE)
    assert {t: c for t, c in causes.items() if c is not None} == EXPECTED_FINDINGS[method]
    assert all(r.llm_calls >= r.n_steps for r in results if r.success)
