"""Devil's Advocate without a browser: prompt builders, reply readers (documented, malformed, fuzzed), and
the search machinery of Alg. 1 on a small text web behind a stand-in handle (stack order, backtracking
with element mapping, deep backtracking, early stop, plan revision with a restore, the action cap
across trials, notes, the summariser, the oracle trigger, unusable replies). The scripted LLM plays
through litellm's real call path."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.policies.base import Budget, BudgetUse, Decision, HandleUsageError, TaskSpec
from webarena_gym.policies.devils_advocate import text as T
from webarena_gym.policies.devils_advocate.policy import DevilsAdvocatePolicy

HOME = "http://shop.test/"
BUDGET = Budget(31, 30)  # the policy's defaults: 30 actions, one more decision for the answer
COMMANDS = ("click", "type", "hover", "press", "scroll", "goto", "go_back", "go_forward", "stop")

# -- a small text web and a stand-in for the rollout's handle ------------------------------------------

LINKS: dict[str, dict[str, tuple[str, str]]] = {
    HOME: {
        "1": ("Orders", "http://shop.test/orders"),
        "2": ("Wish list", "http://shop.test/wish"),
        "3": ("Cart", "http://shop.test/cart"),
    },  # fmt: skip
    "http://shop.test/orders": {
        "5": ("Order 210", "http://shop.test/o/210"),
        "6": ("Order 205", "http://shop.test/o/205"),
        "7": ("Order 195", "http://shop.test/o/195"),
    },  # fmt: skip
}


@dataclass
class TextWeb:
    """Pages are lists of numbered links; a click follows one, a scroll marks the page scrolled."""

    url: str = HOME
    scrolled: bool = False
    history: list[str] = field(default_factory=list)
    filler: int = 0  # extra lines per page (to make observations long)

    def obs(self, error: str = "") -> dict[str, Any]:
        lines = [f"RootWebArea '{self.url}'" + (" (scrolled down)" if self.scrolled else "")]
        lines += [f"[{i}] link '{name}'" for i, (name, _) in LINKS.get(self.url, {}).items()]
        lines += [f"StaticText 'filler line {k} of the page'" for k in range(self.filler)]
        return {"url": self.url, "text": "\n".join(lines), "last_action_error": error}

    def open(self, url: str) -> None:
        self.history.append(self.url)
        self.url, self.scrolled = url, False

    def run(self, action: str) -> dict[str, Any]:
        name, _, rest = action.partition(" ")
        if name == "click":
            target = LINKS.get(self.url, {}).get(rest.strip("[]"))
            if target is None:
                return self.obs(f"element {rest} is not on the page")
            self.open(target[1])
        elif name == "scroll":
            self.scrolled = rest == "[down]"
        elif name == "go_back" and self.history:
            self.url, self.scrolled = self.history.pop(), False
        return self.obs()


class StandInHandle:
    """The parts of the rollout's handle a policy sees, over a :class:`TextWeb`; records every call."""

    def __init__(
        self, web: TextWeb, *, lookahead: bool = False, verdicts: list[float] | None = None, budget: Budget = BUDGET
    ) -> None:
        self.web, self.lookahead, self.verdicts = web, lookahead, list(verdicts or [])
        self.limits = budget
        self.calls: list[tuple[str, Any]] = []
        self.decisions = self.interactions = self.restores = self.gotos = 0

    initial = "initial"
    done = False

    @property
    def budget(self) -> BudgetUse:
        return BudgetUse(self.decisions, self.limits.decisions, self.interactions, self.limits.interactions,
                         self.restores, self.gotos)  # fmt: skip

    def snapshot(self) -> str:
        raise AssertionError("Devil's Advocate never snapshots: it goes back by URL")

    def restore(self, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
        assert token == self.initial
        self.calls.append(("restore", token))
        self.restores += 1
        self.web.url, self.web.scrolled, self.web.history = HOME, False, []
        return self.web.obs(), {"restore_method": "reset"}

    def goto(self, url: str) -> tuple[dict[str, Any], dict[str, Any]]:
        self.calls.append(("goto", url))
        self.gotos += 1
        self.web.open(url)
        return self.web.obs(), {}

    def step(self, action: str):
        raise AssertionError("every action goes out as Decision.action")

    def evaluate(self, answer: str) -> dict[str, Any]:
        if not self.lookahead:
            raise HandleUsageError("look-ahead evaluation is not enabled for this policy")
        self.calls.append(("evaluate", answer))
        return {"score": self.verdicts.pop(0), "method": "exact"}

    def end_trial(self, answer: str | None = None, outcome: str = "", **notes: Any) -> None:
        self.calls.append(("end_trial", {"answer": answer, "outcome": outcome, **notes}))


@dataclass
class Run:
    decisions: list[Decision]
    handle: StandInHandle
    roles: list[str]
    prompts: dict[str, list[str]]  # role -> the last user message of each call

    @property
    def actions(self) -> list[str]:
        return [d.action or "" for d in self.decisions]

    def ops(self, *names: str) -> list[tuple[str, Any]]:
        return [c for c in self.handle.calls if c[0] in names]


def drive(policy: DevilsAdvocatePolicy, web: TextWeb | None = None, goal: str = "Open my most recent cancelled order",
          limit: int = 80, **handle_options: Any) -> Run:  # fmt: skip
    """The rollout loop in miniature: one act per decision, the decision's action run on the page."""
    web = web or TextWeb()
    handle = StandInHandle(web, **handle_options)
    site = {"shopping": "http://shop.test"}
    spec = TaskSpec("webarena/local.55", 55, goal, ("shopping",), HOME, site_urls=site, commands=COMMANDS)
    policy.reset(replace(spec, budget=handle.limits))
    policy.llm.log = []
    decisions: list[Decision] = []
    obs = web.obs()
    for _ in range(limit):
        decision = policy.act(obs, handle)
        handle.decisions += 1
        decisions.append(decision)
        if (decision.action or "").startswith("stop"):
            break
        handle.interactions += 1
        obs = web.run(decision.action or "")
    calls = policy.llm.log
    for call in calls:  # every call is a conversation a chat model accepts
        assert all(set(m) == {"role", "content"} and m["role"] in ("user", "assistant") for m in call.messages)
    prompts: dict[str, list[str]] = {}
    for call in calls:
        prompts.setdefault(call.role, []).append(call.messages[-1]["content"])
    return Run(decisions, handle, [c.role for c in calls], prompts)


def policy(script: dict[str, Any], **options: Any) -> DevilsAdvocatePolicy:
    return make_policy("devils_advocate", script=Script(script), **options)  # type: ignore[return-value]


NO = "The action is to open a page that does not help.\nNO"
YES = "The action is to open the right page.\nYES"

# -- prompt builders -----------------------------------------------------------------------------------


def in_order(text: str, *parts: str) -> bool:
    positions = [text.find(p) for p in parts]
    return -1 not in positions and positions == sorted(positions)


def test_plan_prompt_has_the_papers_sections_in_order():
    prompt = T.plan_prompt(sites="- SITES", website="WEBSITE", instructions="", start_screen="SCREEN", task="TASK",
                           failed_plans=T.render_failures([(1, ["Click A"], "every remedy failed")]),
                           history=T.render_history([T.Memo(1, "The action is to click A.")]))  # fmt: skip
    assert in_order(prompt, "click(), scroll(), goto(), go_back() and type()", "- SITES", "type [element_id] [text]",
                    "already signed in", "WEBSITE", "None.", "SCREEN", '"List"', "TASK",
                    "The plan of trial 1 (it failed: every remedy failed):\n1. Click A",
                    "1. The action is to click A.", "numbered 1., 2., 3.")  # fmt: skip


def test_action_prompt_lists_the_papers_grammar_in_order_and_only_enabled_commands():
    commands = T.render_commands(("click", "type", "scroll", "go_back", "note_down", "go_forward"))
    assert [line.split(":", 1)[1].strip() for line in commands.splitlines()] == [
        "click [element_id]", "scroll [up] or scroll [down]", "go_back", "type [element_id] [text to type]",
        "note_down [what to write down]",
    ]  # fmt: skip
    assert "goto" not in commands and "go_forward" not in commands  # not enabled / never offered
    prompt = T.action_prompt(sites="- SITES", task="TASK", plan="PLAN", history="HISTORY", step="STEP",
                             observation="OBS", notes="NOTES", commands=commands)  # fmt: skip
    assert in_order(prompt, "www.reddit.com", "- SITES", "TASK", "PLAN", "HISTORY", "STEP", "OBS", "NOTES",
                    "exactly one action", "click [element_id]", "The next action is:")  # fmt: skip


def test_check_prompts_have_their_slots_in_order():
    align = T.align_prompt(step="STEP", plan="PLAN", action="ACTION", obs1="ONE", obs2="TWO")
    assert in_order(align, "STEP", "PLAN", "ACTION", "Screen 1:\nONE", "Screen 2:\nTWO", '"The action is to"',
                    "YES or NO")  # fmt: skip
    assert align.rstrip().endswith("STEP")  # the step is repeated under the question
    done = T.completion_prompt(objective="GOAL", plan="PLAN", history="HIST", notes="NOTES", observation="OBS")
    assert in_order(done, "GOAL", "PLAN", "HIST", "NOTES", "OBS", "Answer YES", "Answer NO")
    answer = T.answer_prompt(task="GOAL", history="HIST", notes="NOTES", observation="OBS")
    assert in_order(answer, "GOAL", "HIST", "NOTES", "OBS", "###Answer")
    mapping = T.map_prompt(element_id="42", obs1="OLD", obs2="NEW")
    assert in_order(mapping, "42", "OLD", "NEW", "id now:")
    assert in_order(T.summary_prompt(task="GOAL", observation="TREE"), "GOAL", "[12] link", "TREE")
    assert "wrong" in T.remedy_question() and "instead" in T.remedy_question()


def test_history_is_numbered_with_a_heading_per_trial_once_there_are_several():
    one = [T.Memo(1, "The action is to click A."), T.Memo(1, "The action is to scroll.")]
    assert T.render_history(one) == "1. The action is to click A.\n2. The action is to scroll."
    two = [*one, T.Memo(2, "The action is to click B.")]
    assert T.render_history(two).splitlines() == [
        "In trial 1:", "1. The action is to click A.", "2. The action is to scroll.",
        "In trial 2:", "3. The action is to click B.",
    ]  # fmt: skip
    assert T.render_history([]) == "None yet."
    # In a prompt the policy builds, the headings say which trial is the current one, so that a new
    # trial's history (no entries of its own yet) does not read like the last trial's.
    assert T.render_history(one, trial=2).splitlines()[0] == "In trial 1 (before a restart):"
    assert T.render_history(two, trial=2).splitlines()[3] == "In trial 2 (the current trial):"


def test_plan_revision_reviews_the_notes_after_the_history():
    history = "1. The action is to open the orders."
    assert T.render_review(history, []) == history
    assert T.render_review(history, ["Order 195 was cancelled"]) == (
        f"{history}\n\nThe notes written down along the way:\n1. Order 195 was cancelled"
    )


# -- reply readers ---------------------------------------------------------------------------------------

GRAMMAR = T.PROMPT_COMMANDS + T.UNLISTED_COMMANDS


@pytest.mark.parametrize(
    "reply,action",
    [
        ("click [12]", "click [12]"),
        ("The next action is: ```click [12]```", "click [12]"),
        ("I will click on the link. click [12] to open it.", "click [12]"),
        ("`scroll [down]`.", "scroll [down]"),
        ("type [7] [blue shoes]", "type [7] [blue shoes] [1]"),  # Enter by default
        ("type [7] [size [M] shirt]", "type [7] [size [M] shirt] [1]"),
        ("go_back.", "go_back"),
        ("goto [http://shop.test/orders]", "goto [http://shop.test/orders]"),
        ("note_down [Order 195:   cancelled]", "note_down [Order 195: cancelled]"),
        ("go_forward", "go_forward"),  # in the action space though not in the prompt
        ("Maybe click [12] and then type [3] [x]", "click [12]"),
    ],
)
def test_actions_are_read_in_the_papers_grammar(reply, action):
    assert T.parse_action(reply, GRAMMAR) == action


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I am not sure what to do.",
        "click",
        "click [the button]",
        "hover [12]",
        "stop [done]",
        "note_down []",
        "scroll [sideways]",
        "type [7]",
    ],  # fmt: skip
)
def test_unusable_actions_raise_reply_errors(reply):
    with pytest.raises(T.ReplyError):
        T.parse_action(reply, GRAMMAR)


@pytest.mark.parametrize(
    "reply,verdict",
    [
        ("YES", True), ("no", False), ("Answer: **NO**.", False), ("Yes, the task is done.", True),
        ("Looking at the screen, the order is shown.\nYES", True), ("It is not clear. NO", False),
        ("YES and NO", None), ("maybe", None), ("", None),
    ],
)  # fmt: skip
def test_verdicts_and_ambiguity(reply, verdict):
    assert T.parse_verdict(reply) is verdict


def test_alignment_reply_gives_the_description_and_a_verdict_the_description_cannot_sway():
    assert T.parse_alignment("The action is to click 'NO thanks'. It leads away.\nYES") == (
        "The action is to click 'NO thanks'.",
        True,
    )
    assert T.parse_alignment("NO. The action is to open the cart") == ("The action is to open the cart", False)
    assert T.parse_alignment("It went fine.") == (None, None)
    # A quoted name with a sentence mark in it stays whole (the history entry would lose the rest).
    quoted = "The action is to click [57] where [57] is link 'What are you reading? (March 31)'."
    assert T.parse_alignment(f"{quoted} It's the post.\nYES") == (quoted, True)
    assert T.parse_alignment("The action is to open the user's cart. It's done.\nNO")[0] == (
        "The action is to open the user's cart."
    )
    typed = "The action is to type [41] [I am new to DIY. Which toolkit? Under $100.] [0] into the Body."
    assert T.parse_alignment(f"{typed} It fills the form.\nYES") == (typed, True)  # the typed text stays whole


def test_plans_answers_and_element_ids():
    assert T.parse_plan("List\n1. Click 'My Account'.\n2) Open orders\n**3.** Scroll down") == [
        "Click 'My Account'.", "Open orders", "Scroll down",
    ]  # fmt: skip
    with pytest.raises(T.ReplyError):
        T.parse_plan("Click around until it works.")
    assert T.parse_answer("###Answer: 000000195") == "000000195"
    assert T.parse_answer("Reasoning...\n###Answer\nThe shop has\n3 items") == "The shop has 3 items"
    assert T.parse_answer("It is 195.") is None
    assert T.parse_element_id("New element id is: 255") == "255"
    assert T.parse_element_id("Screen 2 shows it as [a31]") == "a31"
    assert T.parse_element_id("I cannot find it.") is None


def test_re_ask_examples_are_concrete_actions_from_the_page():
    assert T.example_action("[8] list ''\n[10] link 'My Account'", GRAMMAR) == "click [10]"
    assert T.example_action("StaticText 'nothing here'", GRAMMAR) == "scroll [down]"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("clicktypescrol_note[]() \n`.12abAB:")), max_size=60))
def test_the_action_reader_returns_a_canonical_action_or_a_reply_error(reply):
    try:
        action = T.parse_action(reply, GRAMMAR)
    except T.ReplyError:
        return
    assert T.parse_action(action, GRAMMAR) == action  # canonical: reading it again changes nothing
    assert T.command_name(action) in GRAMMAR


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_other_readers_never_raise_on_any_text(reply):
    assert T.parse_verdict(reply) in (True, False, None)
    T.parse_alignment(reply)
    T.parse_answer(reply)
    T.parse_element_id(reply)
    try:
        assert T.parse_plan(reply)
    except T.ReplyError:
        pass


# -- the machinery (Alg. 1) ---------------------------------------------------------------------------------


def scrolled_then_wrong_click() -> dict[str, Any]:
    """Subtask 1 scrolls the home page; at the scrolled page the first attempt (Wish list) and remedy 2
    (Cart) are wrong, remedy 1 (Orders) is right."""
    return {
        "plan": ["List\n1. Scroll down the home page.\n2. Open the orders page."],
        "action": ["scroll [down]", "The next action is: click [2]"],
        "remedy": ["scroll [up]", "go_back", "click [1]", "click [3]"],
        "align": [YES, NO, NO, YES],
        "task_check": ["NO", "YES"],
        "subtask_check": ["YES"],
        "element_map": ["[3]", "New element id is: 1"],
        "answer": ["###Answer The orders page is open."],
    }


def test_remedies_pop_in_lifo_order_after_going_back_and_mapping_the_element():
    agent = policy(scrolled_then_wrong_click())
    run = drive(agent)
    assert run.actions == ["scroll [down]", "click [2]", "click [3]", "click [1]", "stop [The orders page is open.]"]
    assert [d.parsed.get("origin") for d in run.decisions[:4]] == ["first attempt", "first attempt", "remedy 2",
                                                                   "remedy 1"]  # fmt: skip
    assert run.roles == [
        "plan", "action", "remedy", "remedy",
        "align", "task_check", "subtask_check", "action", "remedy", "remedy",
        "align",  # NO: nothing new is generated, the next pop backtracks
        "element_map", "align", "element_map",
        "align", "task_check", "answer",
    ]  # fmt: skip
    # Back to the recorded URL before each remedy; the scrolled page came back unscrolled, so ids were mapped.
    assert run.ops("goto", "restore") == [("goto", HOME), ("goto", HOME)]
    assert "(scrolled down)" in run.prompts["element_map"][0].split("On the next screen")[0]
    assert "(scrolled down)" not in run.prompts["element_map"][0].split("On the next screen")[1]
    ended = run.ops("end_trial")
    assert len(ended) == 1 and ended[0][1]["answer"] == "The orders page is open." and ended[0][1]["actions"] == 4
    counters = agent.state()["counters"]
    assert (counters["backtracks"], counters["element_maps"], counters["summaries"]) == (2, 2, 0)


@dataclass
class RenumberingWeb(TextWeb):
    """A text web whose home page numbers its links anew on every load (+10 per visit), as a page that
    builds its elements in another order or count each time: an id recorded before a backtrack is stale."""

    visits: int = 0

    def open(self, url: str) -> None:
        super().open(url)
        self.visits += url == HOME

    def shift(self) -> int:
        return 10 * self.visits if self.url == HOME else 0

    def obs(self, error: str = "") -> dict[str, Any]:
        page = super().obs(error)
        shift = self.shift()
        page["text"] = re.sub(r"\[(\d+)\]", lambda m: f"[{int(m.group(1)) + shift}]", page["text"])
        return page

    def run(self, action: str) -> dict[str, Any]:
        shift = self.shift()
        return super().run(re.sub(r"\[(\d+)\]", lambda m: f"[{int(m.group(1)) - shift}]", action, count=1))


def map_by_line(messages: list[dict[str, Any]]) -> str:
    """Element mapping as a model does it: the old element's line, found again on the new screen."""
    prompt = messages[-1]["content"]
    old_id = re.search(r"element whose id is (\w+):", prompt).group(1)
    old, new = prompt.split("On the next screen", 1)
    line = re.search(rf"\[{old_id}\] ([^\n]+)", old).group(1)
    found = re.search(rf"\[(\w+)\] {re.escape(line)}", new)
    return f"New element id is: {found.group(1)}"


def test_after_a_backtrack_the_mapped_new_id_is_the_one_clicked():
    script = {
        "plan": ["List\n1. Open the orders page."],
        "action": ["The next action is: click [2]"],  # Wish list: wrong
        "remedy": ["click [1]", "click [3]"],  # Orders (right), Cart (wrong); popped last first
        "align": [NO, NO, YES],
        "task_check": ["YES"],
        "element_map": Script.forever(map_by_line),
        "answer": ["###Answer The orders page is open."],
    }
    web = RenumberingWeb()
    run = drive(policy(script), web)
    # the ids of the home page were 1-3, then 11-13 after the first backtrack, 21-23 after the second
    assert run.actions == ["click [2]", "click [13]", "click [21]", "stop [The orders page is open.]"]
    assert run.ops("goto") == [("goto", HOME), ("goto", HOME)] and web.url == "http://shop.test/orders"
    first, second = run.prompts["element_map"]
    assert "[3] link 'Cart'" in first.split("On the next screen")[0]
    assert "[13] link 'Cart'" in first.split("On the next screen")[1]
    assert "[21] link 'Orders'" in second.split("On the next screen")[1]


def test_no_mapping_when_the_page_comes_back_the_same():
    script = {
        "plan": ["1. Open the orders page."],
        "action": ["click [2]"],
        "remedy": ["click [1]", "click [3]"],
        "align": [NO, NO, YES],
        "task_check": ["YES"],
        "answer": ["###Answer done"],
    }
    run = drive(policy(script))
    assert run.actions[:3] == ["click [2]", "click [3]", "click [1]"]
    assert "element_map" not in run.roles and run.handle.gotos == 2


def test_the_mapped_element_id_is_the_one_clicked_after_going_back():
    script = {
        "plan": ["1. Scroll down the home page.\n2. Open the orders page."],
        "action": ["scroll [down]", "click [2]"],
        "remedy": ["scroll [up]", "click [3]"],  # chosen on the scrolled page, where [3] was 'Orders'
        "align": [YES, NO, YES],
        "task_check": ["NO", "YES"],
        "subtask_check": ["YES"],
        "element_map": ["On the new screen it is [1]."],
        "answer": ["###Answer done"],
    }
    run = drive(policy(script, remedies=1))
    assert run.actions == ["scroll [down]", "click [2]", "click [1]", "stop [done]"]
    assert run.ops("goto") == [("goto", HOME)] and run.handle.web.url == "http://shop.test/orders"
    assert "[3]" in run.prompts["element_map"][0] and "click [1]" in run.prompts["align"][-1]


def test_a_page_at_the_same_url_with_other_content_is_another_state():
    script = {
        "plan": ["1. Open the orders page."],
        "action": ["scroll [down]"],
        "remedy": ["click [1]"],
        "align": [NO, YES],
        "task_check": ["YES"],
        "answer": ["###Answer done"],
    }
    agent = policy(script, remedies=1)
    run = drive(agent)
    assert run.actions == ["scroll [down]", "click [1]", "stop [done]"]
    # the scroll left the URL as it was, but the page it recorded for the remedy is the unscrolled one
    assert run.ops("goto") == [("goto", HOME)] and agent.state()["counters"]["backtracks"] == 1
    assert "element_map" not in run.roles  # the page came back as recorded
    assert run.decisions[1].parsed["origin"] == "remedy 1"


def test_a_failed_action_is_judged_with_its_error_and_every_step_is_recorded():
    script = {
        "plan": ["1. Open the orders page."],
        "action": ["click [9]"],
        "remedy": ["click [1]"],
        "align": [NO, YES],
        "task_check": ["YES"],
        "answer": ["###Answer done"],
    }
    agent = policy(script, remedies=1)
    run = drive(agent)
    assert run.actions == ["click [9]", "click [1]", "stop [done]"]
    failed = "(The action could not be carried out: element [9] is not on the page)"
    assert failed in run.prompts["align"][0] and "could not be carried out" not in run.prompts["align"][1]
    first = run.decisions[0]
    assert first.thought == "trial 1, step 1 of 1 (Open the orders page.): first attempt"
    assert (first.parsed["step"], first.parsed["action"], first.parsed["subtask"]) == ("Open the orders page.",
                                                                                      "click [9]", 0)  # fmt: skip
    tree = agent.search_tree()
    assert tree is not None
    nodes = {n.label: n for n in tree.nodes}
    assert (nodes["click [9]"].status, nodes["click [1]"].status) == ("failed", "terminal")
    assert nodes["click [9]"].llm_calls == 1 and nodes["click [9]"].notes["description"].startswith("The action")
    assert tree.final_path[-1] == nodes["click [1]"].id and nodes["click [1]"].answer == "done"
    ended = run.ops("end_trial")[0][1]
    assert (ended["outcome"], ended["trial"], ended["answer"]) == ("finished: the task is judged complete", 1, "done")
    assert run.decisions[-1].parsed == {"trial": 1, "answer": "done"} and tree.nodes[0].label == "task"
    assert "None: this is the first trial." in run.prompts["plan"][0]
    answer = run.prompts["answer"][0]
    assert "Open my most recent cancelled order" in answer
    assert answer.split("kept to help you answer in the end:\n")[1].startswith("None.\n")
    assert agent.config()["history_mode"] == "append_all" and agent.config()["remedies"] == 1


def test_deep_backtracking_returns_to_an_earlier_state_when_a_states_remedies_are_spent():
    script = {
        "plan": ["1. Open the orders page.\n2. Open the cancelled order."],
        "action": ["click [1]", "click [5]"],
        "remedy": ["click [2]", "click [3]", "click [6]", "click [7]"],
        "align": [YES, NO, NO, NO, YES],  # every action on the orders page fails; the Cart (home, remedy 2) works
        "task_check": ["NO", "YES"],
        "subtask_check": ["YES"],
        "answer": ["###Answer done"],
    }
    run = drive(policy(script), limit=10)
    assert run.actions == ["click [1]", "click [5]", "click [7]", "click [6]", "click [3]", "stop [done]"]
    orders = "http://shop.test/orders"
    assert run.ops("goto") == [("goto", orders), ("goto", orders), ("goto", HOME)]  # k < t on the last one
    assert run.decisions[4].parsed["subtask"] == 0  # the subtask index travels with the entry
    assert run.roles.count("action") == 2


def test_task_completion_stops_early_even_with_subtasks_left():
    script = {
        "plan": ["1. Open orders.\n2. Open the order.\n3. Read the total."],
        "action": ["click [1]"],
        "remedy": ["click [2]", "click [3]"],
        "align": [YES],
        "task_check": ["YES"],
        "answer": ["###Answer 12.67"],
    }
    run = drive(policy(script))
    assert run.actions == ["click [1]", "stop [12.67]"]
    assert "subtask_check" not in run.roles


def test_an_empty_stack_revises_the_plan_after_restoring_the_initial_state():
    script = {
        "plan": ["1. Click the wish list.", "1. Click the orders link."],
        "action": ["click [2]", "click [1]"],
        "remedy": ["click [3]", "click [2]"],
        "align": [
            "The action is to open the wish list.\nNO",
            "The action is to open the cart.\nNO",
            YES,
        ],
        "task_check": ["YES"],
        "answer": ["###Answer done"],
    }
    run = drive(policy(script, remedies=1))
    assert run.actions == ["click [2]", "click [3]", "click [1]", "stop [done]"]
    assert [c[0] for c in run.ops("goto", "restore", "end_trial")] == ["goto", "end_trial", "restore", "end_trial"]
    first_end = run.ops("end_trial")[0][1]
    assert first_end["answer"] is None and first_end["outcome"].startswith("failed: every action and remedy")
    revision = run.prompts["plan"][1]
    failed = revision.split("Experience from earlier trials")[1]
    assert "The plan of trial 1" in failed and "1. Click the wish list." in failed
    assert "1. The action is to open the wish list." in failed and "2. The action is to open the cart." in failed
    assert "RootWebArea 'http://shop.test/'" in revision  # the new trial starts from the initial screen
    last = run.ops("end_trial")[1][1]
    assert last["restore_method"] == "reset" and last["site_data"].startswith("pristine again")
    # The history persists into the new trial's prompts, under a heading per trial.
    undone = "In trial 1 (before a restart):"
    assert undone in run.prompts["action"][1] and undone in run.prompts["answer"][0]


def test_the_action_cap_holds_across_trials():
    always = {
        "plan": Script.forever("1. Find the order."),
        "action": Script.forever("click [1]"),
        "remedy": Script.forever(lambda m: f"click [{2 + sum(x['role'] == 'assistant' for x in m) - 1}]"),
        "align": Script.forever(NO),
        "answer": Script.forever("###Answer I could not find it."),
    }
    run = drive(policy(always, max_trials=20), limit=60)
    assert run.actions[-1] == "stop [I could not find it.]"
    assert len(run.actions) - 1 == 30  # 10 trials of a_t and two remedies, then the cap
    ends = run.ops("end_trial")
    assert len(ends) == 10 and run.handle.restores == 9
    assert ends[-1][1]["outcome"].startswith("stopped: the 30-action cap is reached [began with a reset restore")
    assert sum(e[1]["actions"] for e in ends) == 30


def test_a_study_budget_overrides_the_cap():
    always = {
        "plan": Script.forever("1. Find the order."),
        "action": Script.forever("click [1]"),
        "remedy": Script.forever("click [2]"),
        "align": Script.forever(NO),
        "answer": Script.forever("###Answer none"),
    }
    run = drive(policy(always, remedies=1), budget=Budget(31, 5))
    assert len(run.actions) - 1 == 5 and run.actions[-1] == "stop [none]"


def test_notes_run_inside_the_policy_and_reach_later_prompts():
    script = {
        "plan": ["1. Note the order status.\n2. Open orders."],
        "action": ["note_down [Order 195 was cancelled]", "click [1]"],
        "remedy": ["scroll [down]", "go_back", "click [2]", "click [3]"],
        "align": [
            "The action is to write down that order 195 was cancelled.\nYES",
            YES,
        ],
        "task_check": ["NO", "YES"],
        "subtask_check": ["YES"],
        "answer": ["###Answer 195"],
    }
    run = drive(policy(script))
    assert run.actions == ["click [1]", "stop [195]"]  # the note never reached the browser ...
    assert run.handle.interactions == 1
    align = run.prompts["align"][0]
    assert (
        align.split("Screen 1:")[1].split("Screen 2:")[0].strip()
        == align.split("Screen 2:")[1].split("\n\n")[0].strip()
    )
    assert (
        "1. Order 195 was cancelled" in run.prompts["action"][1]
        and "1. Order 195 was cancelled" in run.prompts["answer"][0]
    )
    assert run.ops("end_trial")[0][1]["actions"] == 2  # ... but counts as an action


def test_long_observations_are_summarised_once_per_page():
    script = {
        "plan": ["1. Open orders."],
        "action": ["click [1]"],
        "remedy": ["click [2]", "click [3]"],
        "align": [YES],
        "task_check": ["YES"],
        "answer": ["###Answer done"],
        "summarize": Script.forever(
            lambda m: "SUMMARY: " + " ".join(x for x in m[0]["content"].splitlines() if x.startswith("["))
        ),
    }
    run = drive(policy(script, context_tokens=1500), web=TextWeb(filler=200))
    assert run.roles.count("summarize") == 2  # the home page and the orders page, each summarised once
    assert run.roles.index("summarize") == 0  # before the plan, whose starting screen is too long
    assert "SUMMARY: [1] link 'Orders'" in run.prompts["action"][0] and "filler line" not in run.prompts["action"][0]
    short = drive(policy({**script, "summarize": []}, context_tokens=None), web=TextWeb(filler=200))
    assert "summarize" not in short.roles


def test_oracle_retries_a_wrong_answer_and_is_marked_as_look_ahead():
    script = {
        "plan": ["1. Open the wish list.", "1. Open orders."],
        "action": ["click [2]", "click [1]"],
        "remedy": ["click [3]", "click [3]"],
        "align": [YES, YES],
        "task_check": ["YES", "YES"],
        "answer": ["###Answer wish list", "###Answer orders"],
    }
    oracle = make_policy("devils_advocate_oracle", script=Script(script), remedies=1)
    assert oracle.allows_lookahead() and oracle.config()["oracle_assisted"]
    run = drive(oracle, lookahead=True, verdicts=[0.0, 1.0])
    assert run.actions == ["click [2]", "click [1]", "stop [orders]"]
    assert [c[0] for c in run.ops("evaluate", "end_trial", "restore")] == [
        "evaluate", "end_trial", "restore", "evaluate", "end_trial",
    ]  # fmt: skip
    assert "rejected" in run.prompts["plan"][1]
    honest = drive(policy({**script, "plan": script["plan"][:1]}, remedies=1))
    assert honest.actions == ["click [2]", "stop [wish list]"] and not honest.ops("evaluate")


def test_branch_only_history_shows_the_current_branch_and_plan_exhaustion_backtracks():
    script = {
        "plan": ["1. Open a page."],
        "action": ["click [2]"],
        "remedy": ["click [1]"],
        "align": ["The action is to open the wish list.\nYES", "The action is to open the orders.\nYES"],
        "task_check": ["NO", "YES"],
        "subtask_check": ["YES"],
        "answer": ["###Answer done"],
    }
    run = drive(policy(script, remedies=1, history_mode="branch_only"))
    # The only subtask was done but the task was not: treated as a NO, so no new
    # action was generated at the wish list and remedy 1 ran from home.
    assert run.actions == ["click [2]", "click [1]", "stop [done]"]
    assert run.roles.count("action") == 1
    assert "wish list" not in run.prompts["answer"][0] and "open the orders" in run.prompts["answer"][0]
    everything = drive(policy(script, remedies=1))
    assert "wish list" in everything.prompts["answer"][0]


def test_remedy_modes_chain_or_restart_the_follow_up_conversation():
    script = {
        "plan": ["1. Open orders."],
        "action": ["click [1]"],
        "remedy": ["click [2]", "click [1]", "click [3]"],
        "align": [YES],
        "task_check": ["YES"],
        "answer": ["###Answer done"],
    }
    chained = make_policy("devils_advocate", script=Script(script), remedies=3)
    drive(chained)
    independent = make_policy("devils_advocate", script=Script(script), remedies=3, remedy_mode="independent")
    drive(independent)
    for p, lengths in ((chained, [3, 5, 7]), (independent, [3, 3, 3])):
        assert [len(c.messages) for c in p.llm.log if c.role == "remedy"] == lengths
    assert chained.state()["counters"]["remedies_dropped"] == 1  # "click [1]" repeats the first attempt


def test_unusable_replies_everywhere_end_cleanly_with_an_answer():
    roles = ("plan", "action", "remedy", "align", "task_check", "subtask_check", "element_map", "answer")
    garbage = {role: Script.forever("I am not sure what you mean.") for role in roles}
    p = policy(garbage, max_trials=2)
    run = drive(p)
    assert run.actions == ["stop [I am not sure what you mean.]"]
    assert run.handle.restores == 1 and len(run.ops("end_trial")) == 2
    state = p.state()
    assert state["plan"] == ["Open my most recent cancelled order"] and state["counters"]["plan_fallbacks"] == 2
    reasks = [c for c in p.llm.log if c.role == "action"]
    assert "for example `click [1]`" in reasks[-1].messages[-1]["content"]  # a concrete example from the page


def test_options_are_checked_and_budgets_follow_the_cap():
    with pytest.raises(ValueError, match="remedies and max_reasks must be >= 0"):
        make_policy("devils_advocate", remedies=-1)
    assert make_policy("devils_advocate", remedies=0).remedies == 0  # no remedies: the first attempts only
    with pytest.raises(RuntimeError, match="reset"):
        make_policy("devils_advocate").act({}, None)  # type: ignore[arg-type]
    everything = make_policy("devils_advocate")
    everything.reset(TaskSpec("webarena/local.55", 55, "Find it", commands=()))
    assert set(everything.commands) >= {"click", "type", "scroll", "goto", "go_back", T.NOTE}
    with pytest.raises(ValueError, match="remedy_mode"):
        make_policy("devils_advocate", remedy_mode="sampled")
    with pytest.raises(ValueError, match="retry_on"):
        make_policy("devils_advocate", retry_on="always")
    p = make_policy("devils_advocate")
    assert (p.preset, p.max_interactions, p.max_steps, p.allows_lookahead()) == ("webarena", 30, 31, False)
    assert (p.context_tokens, p.max_reasks, p.remedies, p.max_trials) == (8192, 2, 2, 7)
    per_trial = make_policy("devils_advocate", cap_scope="trial")
    assert per_trial.max_interactions == 30 * 7
    settings_ = p.llm.describe()["roles"]
    assert set(settings_) == {"plan", "action", "remedy", "align", "task_check", "subtask_check", "element_map",
                              "answer", "summarize"}  # fmt: skip
    assert all(s["temperature"] == 1.0 and s["max_tokens"] == 512 for s in settings_.values())
