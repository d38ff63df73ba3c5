"""Plan-MCTS without a browser: UCT, backpropagation and the final choice; the parsers of the five
roles (documented forms, malformed ones, fuzzed); the prompt builders (sections in the figures'
order, images in place); and the search loop with its ablations and baselines over an in-memory
stand-in for the rollout's handle, with a scripted model through litellm's mock path. End-to-end runs
on the local suite are in ``test_policies_plan_mcts_e2e.py``."""

from __future__ import annotations

import io
import json
import math
import re
from typing import Any

import litellm
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from webarena_gym.llm import LLMError, Script, text_of
from webarena_gym.policies import make_policy
from webarena_gym.policies.base import BudgetExhausted, TaskSpec, registered_defaults
from webarena_gym.policies.plan_mcts import prompts as P
from webarena_gym.policies.plan_mcts.config import STATUS_SCORES, SearchConfig
from webarena_gym.policies.plan_mcts.policy import described_commands
from webarena_gym.policies.plan_mcts.search import majority
from webarena_gym.policies.plan_mcts.tree import (
    Edge,
    HistoryItem,
    Node,
    Page,
    Step,
    backpropagate,
    descend,
    path_to,
    uct_score,
    uct_select,
)
from webarena_gym.policies.search_tree import SearchTree, TreeNode
from webarena_gym.wrappers.presets import PRESETS

COMMANDS = PRESETS["set_of_marks"].actions
TASK = TaskSpec("webarena/local.0", 0, "Find the order number", ("shopping",), "http://site/", commands=COMMANDS)


# -- helpers shared with the end-to-end tests ----------------------------------------------------------


def prompt(messages: list[dict[str, Any]]) -> str:
    """The text of the user message of a call (the last one: re-asks append after it)."""
    users = [m for m in messages if m["role"] == "user"]
    return text_of(users[0])


def section(text: str, label: str) -> str:
    """The body of a ``### Label ###`` (or ``# Label``) section of a prompt."""
    start = text.index(label) + len(label)
    nxt = re.search(r"^#{1,3} ", text[start:], re.M)
    return text[start : start + nxt.start() if nxt else len(text)].strip()


def local_step(text: str) -> int:
    """How many actions the Operator already took for its subplan."""
    done = section(text, "### Interaction History (Current Subplan) ###")
    return 0 if done.startswith("No actions") else len(done.splitlines())


def operator_answer(action: str) -> str:
    return (
        "### Interaction History Summary ###\nOn track.\n### Observation Highlights ###\n1\n"
        "### Observation Description ###\nThe page is loaded.\n### Reason ###\nThis is the next step.\n"
        f"### Action ###\n{action}"
    )


def planner_answer(*subplans: str) -> str:
    return json.dumps({"subplans": [{"thought": f"option {i}", "subplan": s} for i, s in enumerate(subplans)]})


def macro_answer(code: str) -> str:
    return f"Thoughts: judged.\nSTATUS CODE: {code}\nNotes: seen {code}."


def micro_answer(yes: bool) -> str:
    return f'Thoughts: compared.\nCompleted: "{"yes" if yes else "no"}"'


# -- tree ----------------------------------------------------------------------------------------------


def edges(*stats: tuple[int, float]) -> list[Edge]:
    return [Edge(f"p{i}", "", "standard", TreeNode(i + 1, 0, 1), N=n, Q=q) for i, (n, q) in enumerate(stats)]


def test_uct_takes_unvisited_edges_first_in_planner_order_then_the_formula():
    assert uct_select(edges((1, 0.9), (0, 0.0), (0, 0.0)), 1.0).subplan == "p1"
    # all visited: Q + c sqrt(ln N(s) / N(s,p)) with N(s) = 4
    es = edges((3, 0.5), (1, 0.2))
    assert uct_select(es, 1.0).subplan == "p1"  # 0.2 + sqrt(ln 4) > 0.5 + sqrt(ln 4 / 3)
    assert uct_select(es, 0.0).subplan == "p0"  # no exploration: the best Q
    assert uct_select(edges((2, 0.5), (2, 0.5)), 1.0).subplan == "p0"  # ties: the Planner's order
    # N(s) is the sum of the visits, no more: 0.72 + sqrt(ln 4 / 3) > 0.2 + sqrt(ln 4), but not with ln 5
    assert uct_select(edges((1, 0.2), (3, 0.72)), 1.0).subplan == "p1"
    with pytest.raises(ValueError, match="no edges to select from"):
        uct_select([], 1.0)


def test_backpropagation_is_an_incremental_mean_on_every_edge_of_the_path():
    a, b = edges((0, 0.0), (2, 0.5))
    backpropagate([a, b], 1.0)
    assert (a.N, a.Q) == (1, 1.0) and (b.N, b.Q) == (3, pytest.approx(2 / 3))
    backpropagate([a], 0.0)
    assert (a.N, a.Q) == (2, 0.5) and (a.view.visits, a.view.value) == (2, 0.5)  # the viewer's copy follows


def node(depth: int = 0, **kw: Any) -> Node:
    return Node("t", Page("u", ""), [], depth, TreeNode(0, None, depth), **kw)


def test_descend_follows_the_key_over_verified_edges_and_never_into_a_failed_state():
    root = node()
    root.edges = edges((1, 0.9), (1, 0.5), (1, 0.2))
    root.edges[0].child = node(1, failed=True)  # expand_after_failure's state: never the answer's
    root.edges[1].child = node(1)
    root.edges[2].dead = True
    assert descend(root, lambda e: e.Q) == [root.edges[1]]


def test_majority_breaks_ties_towards_the_worse_status():
    assert majority(["A", "B", "A"]) == "A" and majority(["A", "C"]) == "C" and majority([]) is None


# -- parsers -------------------------------------------------------------------------------------------


def test_planner_json_documented_and_tolerated_forms():
    text = "```json\n" + planner_answer("Open orders.", "Open   orders.", "Search.", "Extra.") + "\n```"
    got = P.parse_subplans(text, 3)
    assert [c.subplan for c in got] == ["Open orders.", "Search.", "Extra."]  # duplicate dropped, k kept
    assert got[0].thought == "option 0"
    mixed = json.dumps({"subplans": [{"subplan": ""}, "x", {"thought": 1, "subplan": "Go."}]})
    assert P.parse_subplans(mixed, 3) == [P.Candidate("", "Go.")]


@pytest.mark.parametrize(
    "text, error",
    [
        ("I will open the orders page.", "no JSON object"),
        ('{"subplans": [}', "does not parse"),
        ('{"plans": []}', '"subplans"'),
        ('{"subplans": [{"thought": "t"}]}', "non-empty"),
        ("[1, 2]", "no JSON object"),
    ],
)
def test_planner_malformed_answers(text, error):
    with pytest.raises(P.AnswerError, match=error):
        P.parse_subplans(text, 3)


@pytest.mark.parametrize(
    "action, sent",
    [
        ("click [12]", "click [12]"),
        ("`type [5] [blue shoes] [1]`", "type [5] [blue shoes] [1]"),
        ("scroll [down]", "scroll [down] []"),
        ("subplan_done", P.DONE),
        ("subplan_done()", P.DONE),
        ("stop [000000195]", "stop [000000195]"),
    ],
)
def test_operator_action_section(action, sent):
    got, sections = P.parse_operator(operator_answer(action), COMMANDS)
    assert got == sent and list(sections) == list(P.OPERATOR_SECTIONS)


@pytest.mark.parametrize(
    "text, error",
    [
        ("Reason: I click.\nclick [12]", "no ### Action ###"),
        (operator_answer("hover [12]"), "not available here"),
        (operator_answer("click [12]\nclick [13]"), "exactly one action"),
        (operator_answer(""), "empty"),
    ],
)
def test_operator_malformed_answers(text, error):
    with pytest.raises(P.AnswerError, match=error):
        P.parse_operator(text, COMMANDS)


def test_micro_and_macro_verdicts():
    assert P.parse_micro('Thoughts: the post is there.\nCompleted: "yes"') == (True, "the post is there.")
    assert P.parse_micro("**Completed:** No")[0] is False
    assert P.parse_micro('Completed: "no"\nOn reflection... Completed: yes')[0] is True  # the last line counts
    assert P.parse_macro("Thoughts: close.\nSTATUS CODE: **B**. ALMOST FINISHED\nNotes: the form\nis open.") == (
        "B",
        "the form is open.",
    )
    assert P.parse_macro("status code: (e)") == ("E", "")
    for parse, text in ((P.parse_micro, "Completed: maybe"), (P.parse_macro, "STATUS CODE: F"), (P.parse_macro, "")):
        with pytest.raises(P.AnswerError):
            parse(text)


def test_reflector_json():
    got = P.parse_reflection('Sure: {"reason": "Type A: no such link.", "revised_plan": "Use the\\nsearch box."}')
    assert got == P.Repair("Type A: no such link.", "Use the search box.")
    for text in ('{"reason": "x"}', '{"revised_plan": "  "}', "Type A"):
        with pytest.raises(P.AnswerError):
            P.parse_reflection(text)


PIECES = ["{", "}", "[", "]", '"', ":", ",", "\n", "###", " Action ", "subplans", "subplan", "revised_plan",
          "Completed:", "yes", "STATUS CODE:", "A", "click [1]", "stop [x]", "```", "json", "null", "1"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=25), st.text(max_size=20))
def test_parsers_raise_only_answer_errors(pieces, noise):
    text = "".join(pieces) + noise
    for parse in (
        lambda t: P.parse_subplans(t, 3),
        lambda t: P.parse_operator(t, COMMANDS),
        P.parse_micro,
        P.parse_macro,
        P.parse_reflection,
    ):
        try:
            parse(text)
        except P.AnswerError:
            pass


# -- prompt builders -----------------------------------------------------------------------------------

SHOT = np.zeros((20, 30, 3), dtype=np.uint8)
HISTORY = [HistoryItem("Open the orders page.", True, "C", 0.5, "the table lists orders")]
RAW = [Step("click [3]", url="http://site/orders")]


def labels(message: dict[str, Any]) -> list[str]:
    """Section labels and image markers of a user message, in order."""
    content = message["content"]
    out = []
    for part in content if isinstance(content, list) else [{"type": "text", "text": content}]:
        if part["type"] == "image_url":
            out.append("<image>")
        else:
            out += re.findall(r"^(#{1,3} [^\n]+?)\s*$", part["text"], re.M)
    return out


def ctx(**kw: Any) -> P.Context:
    return P.Context(goal="Find the order number", commands=COMMANDS, **kw)


PAGE = Page("http://site/orders", "link [3] 'Orders'", error="element [9] is gone", screenshot=SHOT)


def test_planner_prompt_sections_and_system_text():
    messages = P.planner_messages(ctx(), 3, HISTORY, RAW, PAGE)
    assert labels(messages[1]) == [
        "### User Instruction ###",
        "### Subplan History ###",
        "### Current Screenshot ###",
        "<image>",
        "### Current Page Accessibility Tree ###",
    ]
    system, user = messages[0]["content"], text_of(messages[1])
    assert "exactly 3 different subplans" in system and '"subplans"' in system
    assert [v in system for v in ('"Standard"', '"Granular"', '"Alternative"')] == [True] * 3
    assert "1. Open the orders page. [Completed]" in user and "URL: http://site/orders" in user
    assert "Error of the last action: element [9] is gone" in user and user.endswith("JSON object described above.")
    actions = P.planner_messages(ctx(), 2, [], [], PAGE, actions=True)[0]["content"]
    assert "exactly 2 different candidate actions" in actions and "- click [id]:" in actions


def test_operator_prompt_sees_the_plan_history_and_only_its_subplan_actions():
    local = [Step("click [3]", url="http://site/orders")]
    messages = P.operator_messages(ctx(), "Open the latest order.", HISTORY, RAW, local, PAGE)
    assert labels(messages[1]) == [
        "### User Instruction ###",
        "### Previous Subplans ###",
        "### Current Subplan to Execute ###",
        "### Interaction History (Current Subplan) ###",
        "### Current Screenshot ###",
        "<image>",
        "# Current page Accessibility Tree",
    ]
    system = messages[0]["content"]
    for header in P.OPERATOR_SECTIONS:
        assert f"### {header} ###" in system
    assert "- subplan_done:" in system and "- goto [url]:" in system and "hover" not in system
    raw = P.operator_messages(ctx(raw_history=True), "Open the latest order.", HISTORY, RAW, [], PAGE)
    assert "### Interaction History (All Previous Actions) ###\n1. click [3] -> http://site/orders" in text_of(raw[1])
    assert "### Previous Subplans ###" not in text_of(raw[1])


def test_check_and_reflector_prompts_in_the_figures_order():
    before, after = PAGE, Page("http://site/order/7", "heading 'Order 7'", screenshot=SHOT)
    micro = P.micro_messages(ctx(), "Open order 7.", RAW, before, after)
    assert labels(micro[1]) == [
        "### Current Subplan ###",
        "### Interaction History (Actions for This Subplan) ###",
        "### Initial State (Before Subplan Execution) ###",
        "<image>",
        "### Current State (After Subplan Execution) ###",
        "<image>",
    ]
    assert '"Open order 7."' in micro[0]["content"] and 'Completed: "yes" or "no"' in micro[0]["content"]
    macro = P.macro_messages(ctx(), "Open order 7.", HISTORY, RAW, RAW, before, after)
    assert labels(macro[1]) == [
        "### Overall Task Objective ###",
        "### Previously Executed Subplans ###",
        "### Initial State (Before Current Subplan) ###",
        "<image>",
        "### Current Subplan Action History ###",
        "### Current Subplan Being Evaluated ###",
        "### Current State (After Subplan Execution) ###",
        "<image>",
    ]
    assert "[Completed] status C, score 0.50; notes: the table lists orders" in text_of(macro[1])
    assert all(f"{c}. " in macro[0]["content"] for c in STATUS_SCORES)
    reflector = P.reflector_messages(ctx(), "Open order 7.", RAW, after)
    assert labels(reflector[1]) == [
        "## Context ##",
        "## Execution Trace ##",
        "## Last Screenshot ##",
        "<image>",
        "## Last Page State (Accessibility Tree) ##",
        "## Task ##",
    ]
    assert '{"reason": ' in reflector[0]["content"] and "2 to 5 concrete actions" in reflector[0]["content"]


def test_text_only_prompts_send_no_images():
    messages = P.micro_messages(ctx(images=False), "x", [], PAGE, PAGE)
    assert isinstance(messages[1]["content"], str) and "(screenshots are not sent)" in messages[1]["content"]


def test_reasks_show_a_concrete_example_never_a_placeholder():
    for role in ("planner", "operator", "micro", "macro", "reflector"):
        text = P.reask(role, "something was missing")["content"]
        example = text.split("for example:", 1)[1]
        assert "something was missing" in text and example.strip() and "<" not in example


# -- configuration -------------------------------------------------------------------------------------


def test_defaults_are_the_papers_and_the_documented_ones():
    config = make_policy("plan_mcts").search_config
    assert (config.iterations, config.max_depth, config.width) == (10, 5, 3)  # PAPER
    assert (config.c, config.macro_samples, config.operator_steps, config.refinements) == (1.0, 3, 5, 1)  # UNSPECIFIED
    assert config.status_scores == {"A": 1.0, "B": 0.75, "C": 0.5, "D": 0.25, "E": 0.0}
    assert (config.refine_from, config.final_select, config.early_stop) == ("failure", "max_q", True)
    assert make_policy("plan_mcts").preset == "set_of_marks"
    assert registered_defaults("plan_mcts_micro_only") == {"reward": "micro"}
    assert registered_defaults("action_search")["search"] == "beam"
    with pytest.raises(ValueError, match="reward must be one of"):
        SearchConfig(reward="both")
    with pytest.raises(ValueError, match="status_scores"):
        SearchConfig(status_scores={"A": 1.0})
    with pytest.raises(TypeError, match="unknown option 'iteration'"):
        make_policy("plan_mcts", iteration=3)
    policy = make_policy("plan_mcts", iterations=4, macro_temperature=0.2, macro_model="openai/judge")
    assert policy.search_config.iterations == 4 and policy.llm.roles["macro"].temperature == 0.2
    assert policy.config()["search"]["iterations"] == 4 and policy.llm.roles["operator"].max_tokens == 1024
    # the Operator is offered exactly the task's commands it has descriptions for, and always the answer
    assert described_commands(PRESETS["agentoccam"].actions) == ("click", "type", "stop")
    assert described_commands(("click", "goto")) == ("click", "goto", "stop")


# -- the search over an in-memory handle ---------------------------------------------------------------


class FakeHandle:
    """The rollout handle's protocol over an in-memory 'site' whose state is the actions applied."""

    initial = "initial"
    done = False

    def __init__(self, limit: int | None = None) -> None:
        self.state: tuple[str, ...] = ()
        self.snaps: dict[str, tuple[str, ...]] = {}
        self.log: list[tuple[str, str]] = []
        self.limit, self.interactions = limit, 0

    def obs(self) -> dict[str, Any]:
        return {"url": f"http://site/{len(self.state)}", "text": "actions so far: " + "; ".join(self.state)}

    def snapshot(self) -> str:
        token = f"s{len(self.snaps)}"
        self.snaps[token] = self.state
        self.log.append(("snapshot", token))
        return token

    def restore(self, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
        self.state = self.snaps[token]
        self.log.append(("restore", token))
        return self.obs(), {"restore_method": "exact"}

    def step(self, action: str):
        if action.startswith("stop"):
            return self.obs(), 0.0, False, False, {"answer": action[6:-1], "intercepted": True}
        if self.limit is not None and self.interactions >= self.limit:
            raise BudgetExhausted("interactions", "spent")
        self.interactions += 1
        self.state += (action,)
        self.log.append(("step", action))
        return self.obs(), 0.0, False, False, {}


class Model:
    """Rule-based scripted roles: ``plans`` per Planner call, actions per subplan, verdicts per subplan."""

    def __init__(self, plans, actions, micro=None, macro="C", reflections=()):
        self.plans = list(plans)
        self.actions = actions
        self.micro_verdicts = micro or {}
        self.macro = macro
        self.reflections = list(reflections)
        self.prompts: dict[str, list[str]] = {}

    def script(self) -> Script:
        return Script({role: Script.forever(getattr(self, role)) for role in ("planner", "operator", "micro")} | {
            "macro": Script.forever(self.macro_call), "reflector": Script.forever(self.reflector)})  # fmt: skip

    def _seen(self, role: str, messages) -> str:
        text = prompt(messages)
        self.prompts.setdefault(role, []).append(text)
        return text

    def planner(self, messages) -> str:
        self._seen("planner", messages)
        return planner_answer(*self.plans.pop(0)) if self.plans else planner_answer("Give up.")

    def operator(self, messages) -> str:
        text = self._seen("operator", messages)
        todo = self.actions.get(section(text, "### Current Subplan to Execute ###"), [])
        step = local_step(text)
        return operator_answer(todo[step] if step < len(todo) else "subplan_done")

    def micro(self, messages) -> str:
        text = self._seen("micro", messages)
        return micro_answer(self.micro_verdicts.get(section(text, "### Current Subplan ###"), True))

    def macro_call(self, messages) -> str:
        subplan = section(self._seen("macro", messages), "### Current Subplan Being Evaluated ###")
        return macro_answer(self.macro(subplan) if callable(self.macro) else self.macro)

    def reflector(self, messages) -> str:
        self._seen("reflector", messages)
        reason, plan = self.reflections.pop(0)
        return json.dumps({"reason": reason, "revised_plan": plan})


def search(model: Model, handle: FakeHandle | None = None, **options: Any):
    policy = make_policy("plan_mcts", script=model.script(), model="gpt-4o", **options)
    policy.reset(TASK)
    handle = handle or FakeHandle()
    decision = policy.act(handle.obs(), handle)
    return policy, decision, handle


def test_an_iteration_selects_simulates_refines_expands_and_backs_up():
    model = Model(
        plans=[("Wrong way.", "Right way.", "Other way."), ("Answer it.", "b", "c")],
        actions={"Wrong way.": ["click [1]"], "Fixed way.": ["click [2]"], "Answer it.": ["stop [42]"]},
        micro={"Wrong way.": False},
        macro=lambda subplan: "A" if subplan == "Answer it." else "C",
        reflections=[("Type A: wrong link.", "Fixed way.")],
    )
    policy, decision, handle = search(model)
    tree = policy.search.tree
    fixed, right, other, answer = (next(n for n in tree.nodes if n.label == s) for s in
                                   ("Fixed way.", "Right way.", "Other way.", "Answer it."))  # fmt: skip
    # iteration 1: the wrong way failed, was repaired on-policy (from the failed state) and verified
    assert fixed.actions == ["click [1]", "click [2]"] and fixed.notes["micro"] == ["no", "yes"]
    assert fixed.notes["refinements"][0] == {
        "failed": "Wrong way.", "reason": "Type A: wrong link.", "revised": "Fixed way.", "actions": ["click [1]"]
    }  # fmt: skip
    repair_micro = model.prompts["micro"][1]
    assert section(repair_micro, "### Initial State (Before Subplan Execution) ###").endswith("so far: click [1]")
    assert section(repair_micro, "### Interaction History (Actions for This Subplan) ###").endswith(
        "click [2] -> http://site/2"
    )
    assert (tree.nodes[0].state, tree.nodes[0].url, tree.nodes[0].llm_calls) == ("s0", "http://site/0", 1)
    assert fixed.notes["restore_method"] == "exact" and fixed.notes["thought"] == "option 0"
    # the Macro check judges the whole step, from the node's page, with every action of the edge
    first_macro = model.prompts["macro"][0]
    assert section(first_macro, "### Initial State (Before Current Subplan) ###").endswith("actions so far:")
    assert section(first_macro, "### Current Subplan Action History ###").count("click [") == 2
    # iterations 2-3: the unvisited root edges first; iteration 4 descends into the best child
    assert [n.notes["iteration"] for n in (fixed, right, other, answer)] == [1, 2, 3, 4]
    assert (fixed.visits, fixed.value) == (2, pytest.approx(0.75)) and (right.visits, right.value) == (1, 0.5)
    assert (answer.visits, answer.value, answer.status, answer.answer) == (1, 1.0, "terminal", "42")
    assert decision.action == "stop [42]" and tree.final_path == [0, fixed.id, answer.id]
    assert policy.state()["stopped"] == "success candidate found" and tree.iterations == 4
    # the environment ends at the answer's state: restored to the repaired child before answering
    assert handle.state == ("click [1]", "click [2]") and ("restore", fixed.state) in handle.log
    # H_P reached the Planner with the repaired subplan and its macro status
    assert "1. Fixed way. [Completed]" in model.prompts["planner"][1]
    assert "Fixed way. [Completed] status C, score 0.50" in model.prompts["macro"][-1]


@pytest.mark.parametrize("codes, success", [("AAC", True), ("ACC", False), ("AC", False), ("AAAC", True)])
def test_a_success_candidate_needs_most_macro_samples_to_say_a(codes, success):
    samples = iter(codes)
    model = Model([("Answer it.",)], {"Answer it.": ["stop [42]"]}, macro=lambda subplan: next(samples))
    policy, decision, _ = search(model, iterations=1, macro_samples=len(codes))
    answer = policy.search.tree.nodes[1]
    assert answer.status == "terminal" and answer.notes["macro"] == list(codes)
    stopped = "success candidate found" if success else "iteration budget spent"
    assert policy.state()["stopped"] == stopped and decision.action == "stop [42]"


@pytest.mark.parametrize("max_depth", [1, 2])
def test_nodes_at_the_depth_limit_are_not_expanded(max_depth):
    model = Model([("A.",), ("B.",), ("C.",)], {"A.": ["click [1]"], "B.": ["click [2]"], "C.": ["click [3]"]})
    policy, _, _ = search(model, iterations=4, max_depth=max_depth)
    assert len(model.prompts["planner"]) == max_depth  # the root, then one node per level above the limit
    executed = [n.label for n in policy.search.tree.nodes if n.visits]
    assert executed == ["A.", "B."][:max_depth]


@pytest.mark.parametrize("final_select, chosen", [("max_q", "B."), ("max_visits", "A.")])
def test_the_final_path_follows_the_highest_q_or_the_most_visits(final_select, chosen):
    # A (status C, Q 0.5) and B (status B, Q 0.75) are visited once each: Q decides for max_q; for
    # max_visits the tie goes to the Planner's order
    model = Model([("A.", "B.")], {"A.": ["click [1]"], "B.": ["click [2]"]},
                  macro=lambda subplan: {"A.": "C", "B.": "B"}[subplan])  # fmt: skip
    policy, _, handle = search(model, iterations=2, max_depth=1, final_select=final_select)
    tree = policy.search.tree
    node = next(n for n in tree.nodes if n.label == chosen)
    assert (node.visits, tree.final_path[:2]) == (1, [0, node.id])
    assert handle.state[:1] == (node.actions[0],)  # the environment was brought to the chosen leaf


def test_a_leaf_without_an_answer_gets_one_from_the_final_answer_subplan():
    final = P.texts()["final_subplan"]
    model = Model([("A.",)], {"A.": ["stop []"], final: ["stop [from the leaf]"]})
    policy, decision, handle = search(model, iterations=1)
    tree = policy.search.tree
    a, last = tree.nodes[1], tree.nodes[tree.final_path[-1]]
    assert a.answer == "" and a.status == "expanded"  # an empty answer: not terminal, the Operator is asked again
    assert decision.action == "stop [from the leaf]" and tree.final_path == [0, a.id, last.id]
    assert (last.label, last.status, last.answer, last.llm_calls) == (final, "terminal", "from the leaf", 1)
    assert last.notes["kind"] == "final answer" and last.actions == ["stop [from the leaf]"]
    silent = Model([("A.",)], {"A.": ["click [1]"]})
    assert search(silent, iterations=1)[1].action == "stop []"  # the final subplan gave no answer either


def test_an_unusable_planner_leaves_nothing_to_explore():
    script = Script(
        {"planner": Script.forever("no plan today"), "operator": Script.forever(operator_answer("stop [?]"))}
    )
    policy = make_policy("plan_mcts", script=script, model="gpt-4o")
    policy.reset(TASK)
    handle = FakeHandle()
    decision = policy.act(handle.obs(), handle)
    assert policy.state()["stopped"] == "nothing to explore" and decision.action == "stop [?]"
    assert policy.state()["unusable_answers"][0].startswith("planner: ")


def test_best_macro_never_answers_from_a_failed_state():
    model = Model([("A.",), ("B.",)], {"A.": ["click [1]"], "B.": ["click [2]"]}, micro={"B.": False}, macro="E")
    policy, _, _ = search(model, iterations=2, refinement="none", expand_after_failure=True, final_select="best_macro")
    tree = policy.search.tree
    b = next(n for n in tree.nodes if n.label == "B.")
    assert b.status == "failed" and b.id not in tree.final_path and tree.final_path[1] == 1


def test_refine_from_parent_undoes_the_failed_attempt():
    model = Model([("Wrong way.",)], {"Wrong way.": ["click [1]"], "Fixed way.": ["click [2]"]},
                  micro={"Wrong way.": False}, reflections=[("Type A", "Fixed way.")])  # fmt: skip
    policy, _, handle = search(model, refine_from="parent", iterations=1)
    fixed = policy.search.tree.nodes[1]
    assert fixed.actions == ["click [2]"] and fixed.notes["refinements"][0]["actions"] == ["click [1]"]
    assert handle.log[:3] == [("snapshot", "s0"), ("step", "click [1]"), ("restore", "s0")]


class LossyHandle(FakeHandle):
    """A handle whose restores bring back a page that differs from the one the snapshot saw."""

    def restore(self, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, _ = super().restore(token)
        obs["text"] += " (restored without the typed text)"
        return obs, {"restore_method": "exact", "restore_exact": False, "restore_differences": ["missing: x"]}


def test_prompts_show_the_restored_page_never_the_cached_one():
    model = Model([("A.", "B.")], {"A.": ["click [1]"], "B.": ["click [2]"]})
    policy, _, handle = search(model, LossyHandle(), iterations=2)
    assert handle.log[:4] == [("snapshot", "s0"), ("step", "click [1]"), ("snapshot", "s1"), ("restore", "s0")]
    # B ran from the root as restored: its Operator was shown that page, as were its checks
    assert "restored without the typed text" in model.prompts["operator"][2]
    assert "restored without the typed text" in model.prompts["micro"][1]
    root = policy.search.tree.root
    assert root.notes["restore_exact"] is False and root.notes["restore_differences"] == ["missing: x"]


def test_the_restore_is_skipped_only_where_the_page_shown_is_the_nodes():
    model = Model([("A.",)], {})
    policy, _, handle = search(model, iterations=1)
    s = policy.search
    root = s.root
    s.at, s.here = root, Page.of(handle.obs())  # nothing ran since the root was reached
    logged = len(handle.log)
    assert s.go(root) is s.here and len(handle.log) == logged
    s.here = Page.of({"url": root.page.url, "text": "the same URL, but the typed text is gone"})
    page = s.go(root)
    assert handle.log[logged:] == [("restore", root.token)] and page.text == root.page.text and s.here is page


def test_dead_edges_back_up_zero_and_the_iteration_budget_ends_with_the_best_path():
    model = Model([("A.", "B.")], {"A.": ["click [1]"], "B.": ["click [2]"]}, micro={"B.": False},
                  reflections=[("Type B", "B again.")])  # fmt: skip
    model.micro_verdicts["B again."] = False
    policy, decision, handle = search(model, iterations=5)
    tree = policy.search.tree
    a, b = tree.nodes[1], tree.nodes[2]
    assert b.status == "dead" and b.value == 0.0 and b.visits >= 1
    assert tree.iterations == 5 and policy.state()["stopped"] == "iteration budget spent"
    # no leaf answered: the Operator ran the final-answer subplan from the best leaf (A's child)
    final = tree.nodes[tree.final_path[-1]]
    assert final.label == P.texts()["final_subplan"] and tree.final_path[1] == a.id
    assert decision.action == "stop []"


def test_an_empty_answer_is_not_terminal():
    model = Model([("A.",), ("B.",)], {"A.": ["stop []"], "B.": ["stop [x]"]}, macro="A")
    policy, decision, _ = search(model, iterations=2)
    a, b = policy.search.tree.nodes[1], policy.search.tree.nodes[2]
    assert (a.status, a.answer, b.status) == ("expanded", "", "terminal") and decision.action == "stop [x]"


def test_micro_only_and_macro_only_rewards():
    plans = [("A.",)]
    policy, decision, _ = search(Model(plans, {"A.": ["stop [x]"]}, macro="E"), reward="micro")
    a = policy.search.tree.nodes[1]
    assert (a.reward, a.status, "macro" in a.notes) == (1.0, "terminal", False) and decision.action == "stop [x]"
    assert policy.state()["stopped"] == "success candidate found"  # no macro samples: the micro check decides
    model = Model([("A.",)], {"A.": ["click [1]"]}, micro={"A.": False}, macro="B")
    policy, _, _ = search(model, reward="macro", iterations=1)
    a = policy.search.tree.nodes[1]
    assert "micro" not in model.prompts and (a.reward, a.status) == (0.75, "expanded")  # no gate: expanded


def test_no_refinement_and_reflection_based_variants():
    def model() -> Model:
        return Model([("A.", "B.")], {"A.": ["click [1]"]}, micro={"A.": False},
                     reflections=[("Type A: the link is missing.", "Try the menu.")])  # fmt: skip

    m = model()
    policy, _, _ = search(m, refinement="none", iterations=1)
    assert "reflector" not in m.prompts and policy.search.tree.nodes[1].status == "dead"
    m = model()
    policy, _, _ = search(m, refinement="reflection", iterations=2)
    a = policy.search.tree.nodes[1]
    assert a.label == "A." and a.status == "dead" and "refinements" not in a.notes  # not rewritten
    lesson = section(m.prompts["operator"][-1], "### Lessons From Failed Subplans ###")
    assert lesson == '- "A." failed: Type A: the link is missing. Suggested: Try the menu.'


def test_raw_history_context_shows_earlier_subplans_actions():
    model = Model([("A.",), ("B.",)], {"A.": ["click [1]"], "B.": ["click [2]"]})
    search(model, context="raw", iterations=2)
    b_prompt = model.prompts["operator"][-1]
    assert "1. click [1] -> http://site/1" in section(b_prompt, "### Interaction History (All Previous Actions) ###")
    assert "### Previous Subplans ###" not in b_prompt


def test_beam_search_keeps_the_best_children_per_level():
    model = Model([("A.", "B.", "C."), ("A1.", "A2.", "A3."), ("C1.", "C2.", "C3.")],
                  {s: [f"click [{i}]"] for i, s in enumerate(["A.", "B.", "C.", "A1."])},
                  macro=lambda s: {"A.": "B", "B.": "D", "C.": "C"}.get(s, "E"))  # fmt: skip
    policy, _, _ = search(model, search="beam", beam_width=2, iterations=4)
    tree = policy.search.tree
    executed = [n.label for n in sorted(tree.nodes[1:], key=lambda n: n.notes.get("iteration", 99)) if n.visits]
    assert executed == ["A.", "B.", "C.", "A1."]  # level 1 in full, then the best child's candidates
    assert len(model.prompts["planner"]) == 3  # the root, then A and C (the two best); B is dropped
    assert tree.nodes[0].status == "expanded" and policy.state()["iterations"] == 4
    assert policy.state()["stopped"] == "iteration budget spent"


def test_action_level_search_runs_planner_commands_directly():
    model = Model([("click [4]", "hover [4]", "stop [done]")], {}, macro="A")
    policy, decision, handle = search(model, granularity="action", refinement="none", early_stop=False, iterations=2)
    labels_ = [n.label for n in policy.search.tree.nodes[1:]]
    assert labels_ == ["click [4]", "stop [done]"]  # the invalid candidate is dropped
    assert "operator" not in model.prompts and handle.log[1] == ("step", "click [4]")
    assert decision.action == "stop [done]"  # the terminal action's answer, A from every macro sample


def test_budget_exhaustion_mid_search_answers_from_the_best_path():
    model = Model([("A.", "B.")], {"A.": ["click [1]", "stop [7]"], "B.": ["click [2]", "click [3]"]}, macro="B")
    policy, decision, handle = search(model, FakeHandle(limit=2))
    tree = policy.search.tree
    assert decision.action == "stop [7]" and policy.state()["stopped"] == "interaction budget spent"
    assert tree.nodes[2].notes["interrupted"] == "interaction budget spent" and tree.nodes[2].actions == ["click [2]"]
    assert handle.state == ("click [1]",) and tree.final_path == [0, 1]


def test_expand_after_failure_plans_from_the_failed_state():
    model = Model([("A.",), ("Recover.",)], {"A.": ["click [1]"]}, micro={"A.": False})
    policy, _, _ = search(model, refinement="none", expand_after_failure=True, iterations=2)
    a = policy.search.tree.nodes[1]
    assert a.status == "failed" and a.state is not None
    assert "1. A. [Not Completed]" in section(model.prompts["planner"][1], "### Subplan History ###")


def test_provider_outage_propagates_with_the_tree_so_far():
    script = Script({"planner": [planner_answer("A.")], "operator": [litellm.BadRequestError("no", "gpt-4o", "x")]})
    policy = make_policy("plan_mcts", script=script, model="gpt-4o", retries=0)
    policy.reset(TASK)
    handle = FakeHandle()
    with pytest.raises(LLMError):
        policy.act(handle.obs(), handle)
    assert [n.label for n in policy.search_tree().nodes] == ["", "A."]


def test_uct_formula_value():
    e = edges((2, 0.5))[0]
    assert uct_score(e, 8, 1.0) == pytest.approx(0.5 + math.sqrt(math.log(8) / 2))
    assert uct_score(e, 1, 1.0) == uct_score(e, 0, 1.0) == 0.5  # ln N(s) is 0 until a second visit


def test_a_page_keeps_url_text_error_and_a_colour_screenshot_encoded_once():
    shot = np.zeros((4, 5, 3), dtype=np.uint8)
    shot[1, 2] = (255, 0, 0)
    page = Page.of(
        {"url": "http://site/1", "text": "[1] link 'A'", "last_action_error": "boom", "som_screenshot": shot}
    )
    assert (page.url, page.text, page.error, page.screenshot is shot) == ("http://site/1", "[1] link 'A'", "boom", True)
    png = page.png()
    assert png is not None and png.startswith(b"\x89PNG") and page.png() is png
    decoded = np.asarray(Image.open(io.BytesIO(png)))
    assert decoded.shape == (4, 5, 3) and tuple(decoded[1, 2]) == (255, 0, 0)
    empty = Page.of({"url": None, "text": None, "last_action_error": None})
    assert (empty.url, empty.text, empty.error, empty.screenshot, empty.png()) == ("", "", "", None, None)
    for unusable in (np.zeros((4, 5), dtype=np.uint8), np.zeros((1, 5, 3), dtype=np.uint8), "not an image"):
        assert Page.of({"som_screenshot": unusable}).screenshot is None  # a grey or one-row image is no screenshot
    assert Page.of({"som_screenshot": np.zeros((2, 1, 3), dtype=np.uint8)}).screenshot is not None


def test_a_history_step_line_names_the_page_reached_and_the_error():
    assert Step("click [1]").line() == "click [1]"
    assert Step("click [1]", url="http://site/1").line() == "click [1] -> http://site/1"
    assert Step("click [9]", error="no element 9").line() == "click [9] (error: no element 9)"


def test_path_to_a_node_outside_the_tree_is_an_error():
    root, stranger = node(), node(1)
    root.edges = edges((1, 0.5))
    root.edges[0].child = child = node(1)
    assert path_to(root, child) == [root.edges[0]] and path_to(root, root) == []
    with pytest.raises(ValueError, match="target is not in this tree"):
        path_to(root, stranger)


def test_tree_dict_reports_iterations():
    tree = SearchTree.rooted(url="u")
    tree.iterations, tree.iteration_budget = 3, 10
    assert tree.to_dict()["iterations"] == 3 and tree.to_dict()["iteration_budget"] == 10
