"""The conformance model's Devil's Advocate answers, on prompts built by the method's own prompt functions
and read back by its own readers: the plan from the reference, progress from the history its alignment
check wrote, truthful checks, and a finding where the prompt lacks what the next step needs."""

from __future__ import annotations

import pytest

from webarena_gym.experiments.conformance.model import LACKS_ELEMENT, NO_GRAMMAR, ConformanceModel
from webarena_gym.policies.devils_advocate import text as T

SITE = "http://127.0.0.1:1"
# Local task 0 (shopping): click "My Account", click "My Orders", answer 000000195.
HOME = "[10] link 'My Account'\n[12] link 'Cart'"
ACCOUNT = "[194] link 'My Orders'\n[196] link 'My Wish List'"
PLAN = ["Click the link 'My Account'.", "Click the link 'My Orders'."]


def ask(model: ConformanceModel, role: str, prompt: str, *earlier: dict) -> str:
    """The model's reply through the script entry point (``earlier``: the turns before ``prompt``)."""
    return str(model.script().next(role, [*earlier, {"role": "user", "content": prompt}]))


def action_prompt(page: str, memos: list[T.Memo], step: str = PLAN[0], sites: dict | None = None, trial: int = 1):
    return T.action_prompt(
        sites=T.render_sites(sites or {"shopping": SITE}, T.site_intros()),
        task="Get the order number of my last order",
        plan=T.numbered(PLAN, ""),
        history=T.render_history(memos, trial=trial),
        step=step,
        observation=page,
        notes="None yet.",
        commands=T.render_commands(T.PROMPT_COMMANDS),
    )


def check_prompt(objective: str, memos: list[T.Memo]) -> str:
    history = T.render_history(memos)
    return T.completion_prompt(
        objective=objective, plan=T.numbered(PLAN, ""), history=history, notes="", observation=""
    )


def aligned(model: ConformanceModel, action: str, step: str, before: str, after: str) -> tuple[str | None, bool | None]:
    prompt = T.align_prompt(step=step, plan=T.numbered(PLAN, ""), action=action, obs1=before, obs2=after)
    return T.parse_alignment(ask(model, "align", prompt))


def test_a_task_runs_on_the_history_its_alignment_check_writes():
    model = ConformanceModel(0, "devils_advocate", ("shopping",))
    assert T.parse_plan(ask(model, "plan", "any plan prompt")) == PLAN
    assert T.parse_action(ask(model, "action", action_prompt(HOME, [])), T.PROMPT_COMMANDS) == "click [10]"
    description, verdict = aligned(model, "click [10]", PLAN[0], HOME, ACCOUNT)
    assert description == "The action is to click [10] where [10] is link 'My Account'." and verdict is True
    memos = [T.Memo(1, description)]
    # The checks and the next action read how far the task got from that entry, ids from the page.
    assert T.parse_verdict(ask(model, "task_check", check_prompt("Get the order", memos))) is False
    assert T.parse_verdict(ask(model, "subtask_check", check_prompt(PLAN[0], memos))) is True
    assert T.parse_verdict(ask(model, "subtask_check", check_prompt(PLAN[1], memos))) is False
    moved = ACCOUNT.replace("[194]", "[301]")
    prompt = action_prompt(moved, memos, PLAN[1])
    assert T.parse_action(ask(model, "action", prompt), T.PROMPT_COMMANDS) == "click [301]"
    # A remedy (asked after the action, in its conversation) is the same step: the policy drops it.
    conversation = ({"role": "user", "content": prompt}, {"role": "assistant", "content": "click [301]"})
    remedy = ask(model, "remedy", T.remedy_question(), *conversation)
    assert T.parse_action(remedy, T.PROMPT_COMMANDS) == "click [301]"
    memos.append(T.Memo(1, "The action is to click [301] where [301] is link 'My Orders'."))
    assert T.parse_verdict(ask(model, "task_check", check_prompt("Get the order", memos))) is True
    answer = T.answer_prompt(task="Get the order", history=T.render_history(memos), notes="", observation="")
    assert T.parse_answer(ask(model, "answer", answer)) == "000000195"
    assert model.finding is None and model.calls["action"] == 2


def test_a_wrong_action_is_judged_no_and_a_restarted_trial_starts_over():
    model = ConformanceModel(0, "devils_advocate", ("shopping",))
    assert aligned(model, "click [12]", PLAN[0], HOME, "[40] heading 'Cart'") == (
        "The action is to click [12] where [12] is link 'Cart'.",
        False,
    )
    error = ACCOUNT + "\n(The action could not be carried out: timeout)"
    assert aligned(model, "click [10]", PLAN[0], HOME, error)[1] is False
    # Trial 2 after a trial that clicked "My Account": the restore undid it, the first step is next.
    undone = [T.Memo(1, "The action is to click [10] where [10] is link 'My Account'.")]
    prompt = action_prompt(HOME, undone, trial=2)
    assert "In trial 1 (before a restart):" in prompt
    assert T.parse_action(ask(model, "action", prompt), T.PROMPT_COMMANDS) == "click [10]"
    redone = [*undone, T.Memo(2, undone[0].text)]
    prompt = action_prompt(ACCOUNT, redone, PLAN[1], trial=2)
    assert T.parse_action(ask(model, "action", prompt), T.PROMPT_COMMANDS) == "click [194]"


def test_an_element_off_the_viewport_is_scrolled_to_and_a_missing_one_is_a_finding():
    model = ConformanceModel(0, "devils_advocate", ("shopping",))
    assert ask(model, "action", action_prompt("[12] link 'Cart'", [])) == "scroll [down]"
    scrolls = [T.Memo(1, "The action is to scroll [down].")] * 10
    reply = ask(model, "action", action_prompt("[12] link 'Cart'", scrolls))
    assert model.finding is not None and model.finding.cause == LACKS_ELEMENT
    assert "link named 'My Account'" in model.finding.detail
    with pytest.raises(T.ReplyError):  # the reply carries no action: the method has no stop command
        T.parse_action(reply, T.PROMPT_COMMANDS)


def test_a_dropdown_whose_options_the_tree_hides_is_set_by_typing_its_label():
    model = ConformanceModel(100, "devils_advocate", ("shopping_admin",))  # Reports: Bestsellers, Period: Year
    page = "[116] combobox 'Period' hasPopup: menu expanded: False\n[122] textbox 'From' required: False"
    memos = [T.Memo(1, "The action is to click [94] where [94] is menuitem 'Reports: Bestsellers'.")]
    reply = ask(model, "action", action_prompt(page, memos, "Choose 'Year' in the combobox 'Period'."))
    assert "type [116] [Year] [1]" in reply and model.finding is None
    # Without the dropdown on the page, after ten scrolls, it is a finding. The method has no stop command:
    # the model says it cannot go on to every later call, which ends the trials without acting (an unusable
    # plan, no action, NO).
    lost = ConformanceModel(100, "devils_advocate", ("shopping_admin",))
    scrolled = memos + [T.Memo(1, "The action is to scroll [down].")] * 10
    ask(lost, "action", action_prompt(page.split("\n")[1], scrolled, "Choose 'Year' in the combobox 'Period'."))
    assert lost.finding is not None and lost.finding.cause == LACKS_ELEMENT
    assert "combobox named 'Period'" in lost.finding.detail
    with pytest.raises(T.ReplyError):
        T.parse_plan(ask(lost, "plan", "any plan prompt"))
    assert T.parse_verdict(ask(lost, "task_check", check_prompt("Get the report", []))) is False


def test_a_dropdown_value_whose_labels_only_an_alignment_error_lists_is_a_finding():
    """Task 100 chooses 'Year'; typed text no option starts with fails, and the error listing the labels
    reaches the alignment prompt only: the action prompt cannot retry with a label."""
    model = ConformanceModel(100, "devils_advocate", ("shopping_admin",))
    page = "[116] combobox 'Period' hasPopup: menu expanded: False"
    error = "no option of the dropdown [116] starts with 'Year'; its options are 'Day', 'Month', 'Yearly'"
    failed = f"{page}\n(The action could not be carried out: {error})"
    plan = T.parse_plan(ask(model, "plan", "any plan prompt"))
    step = next(item for item in plan if "Period" in item)

    def verdict(m: ConformanceModel, after: str) -> bool | None:
        prompt = T.align_prompt(
            step=step, plan=T.numbered(plan, ""), action="type [116] [Year] [1]", obs1=page, obs2=after
        )
        return T.parse_alignment(ask(m, "align", prompt))[1]

    assert verdict(model, failed) is False
    assert model.finding is not None and model.finding.cause == LACKS_ELEMENT
    ok = ConformanceModel(100, "devils_advocate", ("shopping_admin",))
    assert verdict(ok, page) is True and ok.finding is None


def test_goto_uses_the_address_the_prompt_lists_for_its_site():
    model = ConformanceModel(602, "devils_advocate", ("wikipedia", "map"))  # goto __WIKIPEDIA__ first
    sites = {"wikipedia": "http://127.0.0.1:7/", "map": "http://127.0.0.1:8"}
    assert ask(model, "action", action_prompt("", [], sites=sites)) == "goto [http://127.0.0.1:7]"
    no_address = ConformanceModel(602, "devils_advocate", ("wikipedia", "map"))
    ask(no_address, "action", action_prompt("", [], sites={"map": "http://127.0.0.1:8"}))
    assert no_address.finding is not None and "wikipedia site" in no_address.finding.detail


def test_element_mapping_and_summaries_keep_what_the_page_shows():
    model = ConformanceModel(0, "devils_advocate", ("shopping",))
    old = "[10] link 'Home'\n[11] link 'More'\n[12] link 'More'"
    new = "[50] link 'More'\n[51] link 'Home'\n[52] link 'More'"
    assert T.parse_element_id(ask(model, "element_map", T.map_prompt(element_id="12", obs1=old, obs2=new))) == "52"
    tree = "RootWebArea 'Shop'\n\t[10] link 'My Account'\n\tStaticText 'Welcome'\n\t[21] textbox 'Search'"
    summary = ask(model, "summarize", T.summary_prompt(task="Get the order", observation=tree))
    assert summary == "[10] link 'My Account'\n[21] textbox 'Search'"
    assert model.finding is None
    assert T.parse_element_id(ask(model, "element_map", T.map_prompt(element_id="12", obs1=old, obs2=""))) is None
    assert model.finding is not None and model.finding.cause == LACKS_ELEMENT


def test_text_with_a_line_break_is_a_finding_the_one_line_action_cannot_carry():
    model = ConformanceModel(218, "devils_advocate", ("reddit",))  # edit a post's body to two lines
    plan = T.parse_plan(ask(model, "plan", "any plan prompt"))
    assert len(plan) == 5 and plan[3].startswith("Type 'Great news, the first season was a fun ride. Done watching")
    memos = [
        T.Memo(1, "The action is to goto [http://127.0.0.1:1/user/MarvelsGrandpa/submissions]."),
        T.Memo(1, "The action is to click [93] where [93] is link 'The Night Agent renewed for season 2 at Netflix'."),
        T.Memo(1, "The action is to click [46] where [46] is link 'Edit'."),
    ]
    reply = ask(model, "action", action_prompt("[60] textbox 'Body'\n[70] button 'Save'", memos, plan[3]))
    assert model.finding is not None and model.finding.cause == NO_GRAMMAR
    with pytest.raises(T.ReplyError):
        T.parse_action(reply, T.PROMPT_COMMANDS)
