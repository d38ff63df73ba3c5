"""Plan-MCTS end to end on the local suite: real Chromium, real Flask sites, the real evaluator, and a
scripted model played through litellm's mock path (``llm.Script``) that reads the pages it is shown.

The forum test walks the whole machinery: the Planner's candidates, a subplan that posts in the wrong
forum, the Micro check saying no, the Reflector's pivot, an exact restore that undoes the wrong post
(a later subplan looks at that forum), Q/N after backpropagation, unvisited edges first, the success
candidate's answer delivered as the one decision, reward 1.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from test_policies_plan_mcts import local_step, macro_answer, operator_answer, planner_answer, prompt, section

from webarena_gym.experiments.rollout import run_episode
from webarena_gym.llm import Script, text_of
from webarena_gym.policies import make_policy

pytestmark = [pytest.mark.browser, pytest.mark.slow]

POST_TASK = 212  # post the console question where it gets answered (url_match on /f/consoles + program_html)
TITLE = "what is the recommended console to buy these days"
ANSWER_TASK = 0  # the number of the most recent cancelled order (string_match 195)


def element(page: str, role: str, name: str) -> str:
    found = re.search(rf"{role} \[(\d+)\] '{re.escape(name)}'", page)
    assert found, f"no {role} {name!r} on the page shown"
    return found.group(1)


def option(page: str, name: str) -> str:
    found = re.search(rf"\[(\d+)\] '{re.escape(name)}'(?:;| \[selected|\")", page)
    assert found, f"no option {name!r} on the page shown"
    return found.group(1)


class ForumModel:
    """The scripted model of the forum test: each role answers from the prompt it is given."""

    WRONG = "Post the question in the books forum."
    RIGHT = "Post the question in the consoles forum, where console questions get answers."
    OPEN = "Open the consoles forum."
    SEARCH = "Search the site for a console forum."
    CHECK = "Look at the books forum, then go back to the new post and report that it is posted."

    def __init__(self) -> None:
        self.subplans_run: list[str] = []  # the subplan of every Operator call, in order
        self.books_page = ""  # the books forum as the Operator saw it on the final path
        self.wrong_post_page = ""  # the page after the wrong post, as the Micro check saw it
        self.planner_prompts: list[str] = []

    def script(self) -> Script:
        return Script(
            {
                "planner": [self.planner] * 3,
                "operator": [self.operator] * 40,
                "micro": [self.micro] * 8,
                "macro": [macro_answer(c) for c in ("B", "B", "C", "C", "C", "C", "A", "A", "A")],
                "reflector": [
                    json.dumps({"reason": "Type A: the books forum is the wrong place.", "revised_plan": self.RIGHT}),
                    json.dumps({"reason": "Type B: nothing was done.", "revised_plan": self.SEARCH + " Carefully."}),
                ],
            }
        )

    def planner(self, messages: list[dict[str, Any]]) -> str:
        text = prompt(messages)
        self.planner_prompts.append(text)
        history = section(text, "### Subplan History ###")
        if "None yet" in history:
            return planner_answer(self.WRONG, self.OPEN, self.SEARCH)
        if self.RIGHT in history:
            return planner_answer(self.CHECK, "Upvote the new post.", "Add a comment to the new post.")
        return planner_answer("Click Submit in the consoles forum.", "Read the forum's sidebar.", "Sort by new.")

    def operator(self, messages: list[dict[str, Any]]) -> str:
        text = prompt(messages)
        subplan = section(text, "### Current Subplan to Execute ###")
        step = local_step(text)
        page = section(text, "# Current page Accessibility Tree")
        url = re.search(r"^URL: (\S+)", page, re.M).group(1)
        base = re.match(r"https?://[^/]+", url).group(0)
        self.subplans_run.append(subplan)
        if subplan in (self.WRONG, self.RIGHT):
            forum = "books" if subplan == self.WRONG else "consoles"
            actions = [
                lambda: f"click [{element(page, 'link', 'Submit')}]",
                lambda: f"type [{element(page, 'textbox', 'Title')}] [{TITLE}] [0]",
                lambda: f"click [{option(page, forum)}]",
                lambda: f"click [{element(page, 'button', 'Create submission')}]",
            ]
            return operator_answer(actions[step]() if step < len(actions) else "subplan_done")
        if subplan == self.OPEN:
            return operator_answer(f"goto [{base}/f/consoles]" if step == 0 else "subplan_done")
        if subplan == self.CHECK:
            if step == 0:
                self.post_url = url
                return operator_answer(f"goto [{base}/f/books/new]")
            if step == 1:
                self.books_page = page
                return operator_answer(f"goto [{self.post_url}]")
            return operator_answer("stop [Posted in the consoles forum.]")
        return operator_answer("subplan_done")  # the search subplan (and its repair) do nothing

    def micro(self, messages: list[dict[str, Any]]) -> str:
        text = prompt(messages)
        subplan = section(text, "### Current Subplan ###")
        after = text[text.index("### Current State (After Subplan Execution) ###") :]
        if subplan == self.WRONG:
            self.wrong_post_page = after
        ok = subplan in (self.RIGHT, self.OPEN, self.CHECK)
        return f'Thoughts: compared the pages.\nCompleted: "{"yes" if ok else "no"}"'


def test_plan_mcts_repairs_a_wrong_post_restores_exactly_and_answers(tmp_path):
    model = ForumModel()
    policy = make_policy("plan_mcts", refine_from="parent", script=model.script(), model="gpt-4o")
    traj = run_episode(f"webarena/local.{POST_TASK}", policy, out_dir=tmp_path)

    assert traj.err_msg is None, traj.stack_trace
    assert traj.terminated and traj.reward == 1.0
    # the wrong post really happened (the Micro check saw it in the books forum) ...
    assert "/f/books/" in model.wrong_post_page and TITLE in model.wrong_post_page
    # ... and the exact restore removed it: on the final path the books forum does not have it
    assert model.books_page and TITLE not in model.books_page and "books" in model.books_page.lower()

    tree = traj.tree
    nodes = tree["nodes"]
    by_label = {n["label"]: n for n in nodes}
    a, b, c = (by_label[s] for s in (ForumModel.RIGHT, ForumModel.OPEN, ForumModel.SEARCH + " Carefully."))
    d = by_label[ForumModel.CHECK]
    # unvisited edges first: the three root subplans ran in the Planner's order before any second visit
    order = [n["notes"]["iteration"] for n in (a, b, c, d)]
    assert order == [1, 2, 3, 4]
    # the Reflector rewrote the failed edge (pivot) and its repair was verified
    assert a["notes"]["refinements"][0]["failed"] == ForumModel.WRONG and a["notes"]["micro"] == ["no", "yes"]
    assert a["notes"]["macro"] == ["B", "B", "C"] and c["status"] == "dead" and c["notes"]["micro"] == ["no", "no"]
    # Q/N after backpropagation (incremental means): A was visited twice (R=2/3, then 1.0)
    assert (a["visits"], b["visits"], c["visits"], d["visits"]) == (2, 1, 1, 1)
    assert a["value"] == pytest.approx((2 / 3 + 1.0) / 2) and b["value"] == pytest.approx(0.5)
    assert c["value"] == 0.0 and d["value"] == 1.0 and d["status"] == "terminal"
    assert tree["final_path"] == [0, a["id"], d["id"]] and tree["iterations"] == 4 and tree["iteration_budget"] == 10
    assert d["answer"] == "Posted in the consoles forum." and a["notes"]["restore_method"] == "exact"

    # one decision delivered the answer; everything else was exploration through the handle
    assert len(traj.steps) == 1 and traj.steps[0].action == "stop [Posted in the consoles forum.]"
    wrong = a["notes"]["refinements"][0]["actions"]  # undone by the restore, so not on A's path
    assert len(wrong) == 4 and len(a["actions"]) == 4 and len(b["actions"]) == 1 and len(d["actions"]) == 3
    assert (traj.counters["decisions"], traj.counters["restores"], traj.counters["intercepted_answers"]) == (1, 4, 1)
    assert traj.counters["interactions"] == 4 + 4 + 1 + 2 + 1  # the held-back stop is none; the delivered one is
    assert traj.final_policy_state["path_actions"] == 7
    restores = [call["info"]["restore_method"] for call in traj.steps[0].handle_calls if call["op"] == "restore"]
    assert restores == ["exact"] * 4
    roles = [call["role"] for call in traj.steps[0].llm_calls]
    assert roles[:2] == ["planner", "operator"] and roles.count("reflector") == 2 and roles.count("macro") == 9
    assert traj.final_policy_state["stopped"] == "success candidate found"
    # the marked screenshot went to the models, and the Planner saw H_P with statuses
    assert traj.images and any("[Completed]" in p for p in model.planner_prompts)


class OrdersModel:
    """The scripted model of the budget test: the first subplan reads the answer (macro B: no early
    stop), the second one is cut off by the interaction budget."""

    READ = "Open My Account, then My Orders, and read the most recent cancelled order."
    OTHER = "Open My Account and look for the orders there."

    def script(self) -> Script:
        return Script(
            {
                "planner": [planner_answer(self.READ, self.OTHER, "Search the site for orders.")],
                "operator": Script.forever(self.operator),
                "micro": Script.forever('Thoughts: fine.\nCompleted: "yes"'),
                "macro": Script.forever(macro_answer("B")),
            }
        )

    def operator(self, messages: list[dict[str, Any]]) -> str:
        text = prompt(messages)
        step = local_step(text)
        page = section(text, "# Current page Accessibility Tree")
        if step == 0:
            return operator_answer(f"click [{element(page, 'link', 'My Account')}]")
        if step == 1:
            return operator_answer(f"click [{element(page, 'link', 'My Orders')}]")
        return operator_answer("stop [000000195]")


def test_budget_exhaustion_mid_search_answers_from_the_best_path():
    policy = make_policy("plan_mcts", script=OrdersModel().script(), model="gpt-4o", screenshots=False)
    traj = run_episode(f"webarena/local.{ANSWER_TASK}", policy, max_interactions=3)

    assert traj.err_msg is None, traj.stack_trace
    assert traj.reward == 1.0 and traj.terminated and not traj.truncated and traj.budget_exhausted is None
    assert traj.steps[0].action == "stop [000000195]" and len(traj.steps) == 1
    state = traj.final_policy_state
    assert state["stopped"] == "interaction budget spent" and state["iterations"] == 2
    nodes = traj.tree["nodes"]
    read, other = nodes[1], nodes[2]
    assert read["status"] == "terminal" and read["value"] == 0.75 and read["answer"] == "000000195"
    assert other["notes"]["interrupted"] == "interaction budget spent" and len(other["actions"]) == 1
    assert traj.tree["final_path"] == [0, read["id"]]
    # 2 + 1 explored actions, then the delivered answer; the restores back to the answer's state
    assert traj.counters["interactions"] == 4 and traj.counters["restores"] == 2
    assert not any("image_url" in json.dumps(c["messages"]) for c in traj.steps[0].llm_calls)  # screenshots off


def test_unusable_model_answers_fail_cleanly():
    """A model that never answers in form: bounded re-asks with a concrete example, then an empty
    answer; the episode is scored, nothing crashes."""
    seen: list[str] = []

    def chatter(messages: list[dict[str, Any]]) -> str:
        seen.append(text_of(messages[-1]))
        return "I would rather describe the page."

    policy = make_policy("plan_mcts", script=Script({r: Script.forever(chatter) for r in ("planner", "operator")}))
    traj = run_episode(f"webarena/local.{ANSWER_TASK}", policy)

    assert traj.err_msg is None and traj.terminated and traj.reward == 0.0
    assert traj.steps[0].action == "stop []"
    roles = [c["role"] for c in traj.steps[0].llm_calls]
    assert roles == ["planner"] * 3 + ["operator"] * 3  # each: the call and two re-asks
    assert '{"subplans": [{"thought"' in seen[1] and "### Action ###\nclick [12]" in seen[4]
    assert "<" not in seen[1].split("for example:")[1]  # a concrete example, no placeholder
    state = traj.final_policy_state
    assert [u.split(":")[0] for u in state["unusable_answers"]] == ["planner", "operator"]
    assert traj.tree["nodes"][0]["notes"]["unusable_answers"][0].startswith("planner")


ANSWERING = {  # string-only scripts (a study's policy config is JSON): read the answer and give it
    "planner": [planner_answer("Give the number of the most recent cancelled order.", "Open My Orders.", "Search.")],
    "operator": [operator_answer("stop [000000195]")],
    "micro": ['Thoughts: the answer is given.\nCompleted: "yes"'],
    "macro": [macro_answer("A")] * 3,
}
REACT_ANSWER = "The number is known. In summary, the next action I will perform is ```stop [000000195]```"


def test_plan_mcts_and_its_ablations_in_a_study_next_to_react(tmp_path):
    from webarena_gym.experiments.compare import PolicySpec, compare
    from webarena_gym.experiments.report import build_report
    from webarena_gym.experiments.store import StudyStore

    policies = [
        PolicySpec("react", {"script": {"actor": [REACT_ANSWER]}}, label="react [scripted]"),
        PolicySpec("plan_mcts", {"script": ANSWERING, "model": "gpt-4o"}, label="plan_mcts [scripted]"),
        PolicySpec(
            "plan_mcts_micro_only",
            {"script": {k: v for k, v in ANSWERING.items() if k != "macro"}, "model": "gpt-4o"},
            label="micro-only [scripted]",
        ),
    ]
    study = compare(policies, f"webarena/local.{ANSWER_TASK}", tmp_path / "study", progress=False)
    results = {r.policy: r for r in StudyStore(study).latest().values()}
    assert {p: r.reward for p, r in results.items()} == {p.label: 1.0 for p in policies}
    mcts = results["plan_mcts [scripted]"]
    assert (mcts.search_iterations, mcts.search_budget, mcts.path_length, mcts.interactions) == (1, 10, 1, 1)
    assert results["react [scripted]"].path_length == 1 and results["react [scripted]"].search_budget is None

    report = build_report(study)
    search = (report / "search.csv").read_text().splitlines()
    assert search[0] == "Policy,SR,Budget util (%),Path length,Action interactions/task,Tokens/task"
    rows = {line.split(",")[0]: line.split(",") for line in search[1:]}
    assert rows["plan_mcts [scripted]"][2:5] == ["10.0", "1.0", "1.0"] and rows["react [scripted]"][2] == "-"
    roles = (report / "roles.csv").read_text()
    assert all(f"plan_mcts [scripted],{role}," in roles for role in ("planner", "operator", "micro", "macro"))
    assert "micro-only [scripted],macro," not in roles
    page = next(p for p in report.glob("*.html") if "plan_mcts" in p.name and "micro" not in p.name)
    html = page.read_text()
    assert "Search tree (4 nodes; executed path 0 &rarr; 1; 1/10 iterations)" in html
    assert "macro: [&#39;A&#39;, &#39;A&#39;, &#39;A&#39;]" in html and "micro: [&#39;yes&#39;]" in html


class TypedSearchModel:
    """The scripted model of the issue-26 scenario: a subplan types a search term without pressing
    Enter and becomes a node; two other subplans move the browser elsewhere; the typed node is then
    restored and its next subplan clicks Search, reading the search box from the page it is shown."""

    TYPE = "Type the product name into the search box."
    HOME = "Read the home page."
    FOOTER = "Look at the footer links."
    SEARCH = "Click the Search button to search for the typed name."
    TERM = "backpack"

    def __init__(self) -> None:
        self.search_pages: list[str] = []  # the pages the Operator saw for the Search subplan

    def script(self) -> Script:
        return Script(
            {
                "planner": Script.forever(self.planner),
                "operator": Script.forever(self.operator),
                "micro": Script.forever('Thoughts: fine.\nCompleted: "yes"'),
                "macro": Script.forever(self.macro),
            }
        )

    def planner(self, messages: list[dict[str, Any]]) -> str:
        history = section(prompt(messages), "### Subplan History ###")
        if "None yet" in history:
            return planner_answer(self.TYPE, self.HOME, self.FOOTER)
        if self.TYPE in history:
            return planner_answer(self.SEARCH, self.HOME, self.FOOTER)
        return planner_answer("Nothing else.", "Wait.", "Stop looking.")

    def operator(self, messages: list[dict[str, Any]]) -> str:
        text = prompt(messages)
        subplan = section(text, "### Current Subplan to Execute ###")
        step = local_step(text)
        page = section(text, "# Current page Accessibility Tree")
        if subplan == self.TYPE:
            typed = f"type [{element(page, 'textbox', 'Search')}] [{self.TERM}] [0]"
            return operator_answer(typed if step == 0 else "subplan_done")
        if subplan in (self.HOME, self.FOOTER):  # moves the browser off the typed state
            return operator_answer(f"click [{element(page, 'link', 'My Account')}]" if step == 0 else "subplan_done")
        if subplan == self.SEARCH:
            self.search_pages.append(page)
            if step == 0:
                return operator_answer(f"click [{element(page, 'button', 'Search')}]")
            url = re.search(r"^URL: (\S+)", page, re.M).group(1)
            return operator_answer(f"stop [{url}]")
        return operator_answer("subplan_done")

    def macro(self, messages: list[dict[str, Any]]) -> str:
        subplan = section(prompt(messages), "### Current Subplan Being Evaluated ###")
        return macro_answer({self.TYPE: "B", self.SEARCH: "A"}.get(subplan, "E"))


def test_a_node_with_typed_unsubmitted_text_is_restored_with_it_and_searched_from_it():
    """Issue 26: restoring a node whose subplan typed into the search box without Enter keeps the typed
    text, the Operator is shown the restored page, and its Search click searches for the text."""
    model = TypedSearchModel()
    policy = make_policy("plan_mcts", script=model.script(), model="gpt-4o", screenshots=False)
    traj = run_episode(f"webarena/local.{ANSWER_TASK}", policy)

    assert traj.err_msg is None, traj.stack_trace
    nodes = traj.tree["nodes"]
    typed, home, footer = (n for n in nodes if n["parent"] == 0)
    search = next(n for n in nodes if n["label"] == TypedSearchModel.SEARCH)
    # iterations 2 and 3 left the typed state; iteration 4 restored it to run the Search subplan
    assert typed["label"] == TypedSearchModel.TYPE and [home["notes"]["iteration"], footer["notes"]["iteration"]] == [
        2,
        3,
    ]
    assert search["notes"]["iteration"] == 4 and typed["notes"]["restores"] == 1
    # the Operator saw the restored search box with the text, and the click searched for it
    shown = model.search_pages[0]
    assert re.search(rf"textbox \[\d+\] 'Search'[^\n]*{TypedSearchModel.TERM}", shown), shown[:1500]
    assert f"/catalogsearch/result/index/?q={TypedSearchModel.TERM}" in search["url"]
    assert traj.steps[0].action == f"stop [{search['url']}]"
    assert typed["notes"]["restore_method"] == "exact" and "restore_exact" not in typed["notes"]
    restores = [c["info"] for c in traj.steps[0].handle_calls if c["op"] == "restore"]
    assert restores and all(info["restore_exact"] for info in restores)
