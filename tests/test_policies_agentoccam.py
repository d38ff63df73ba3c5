"""AgentOccam (+ Judge): golden prompt assembly, plan tree after branch/prune, pivotal-node replay,
output parsing and bounded re-asks, the judge's selection. End-to-end runs on the local suite are in
``test_policies_agentoccam_e2e.py``."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from test_wrappers_observation import GOOGLE, N, axtree

from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.policies.agentoccam import (
    AgentOccamPolicy,
    PlanError,
    PlanTree,
    StepRecord,
    parse_candidates,
    parse_fields,
    render_history,
)
from webarena_gym.policies.base import Budget, TaskSpec
from webarena_gym.wrappers.observations.agentoccam import process_axtree
from webarena_gym.wrappers.presets import PRESETS

SINGLE_SITE_COMMANDS = tuple(c for c in PRESETS["agentoccam"].actions if c != "go_home")  # as the wrapper says
ONE_SITE = TaskSpec(
    "webarena/local.203", 203, "Find the dean's email", ("reddit",), "http://r/", commands=SINGLE_SITE_COMMANDS
)
MULTI = TaskSpec(
    "webarena/local.600",
    600,
    "Post it",
    ("reddit", "gitlab"),
    "http://r/",
    True,
    "http://home",
    commands=PRESETS["agentoccam"].actions,
)


def answer(action: str, *, highlight: str = "", reason: str = "It helps.", description: str = "A page.") -> str:
    return (
        f"INTERACTION HISTORY SUMMARY:\nNothing yet.\nOBSERVATION DESCRIPTION:\n{description}\n"
        f"REASON:\n{reason}\nACTION:\n{action}\nOBSERVATION HIGHLIGHT:\n{highlight}"
    )


def page_obs(tree: dict, url: str = "http://r/") -> dict:
    text_tree = process_axtree(tree)
    return {"text": text_tree.render(True), "text_tree": text_tree, "url": url, "last_action_error": ""}


def policy(answers: list, task: TaskSpec = ONE_SITE, **kw) -> AgentOccamPolicy:
    """A policy reset on ``task`` as the rollout would: the preset's commands and the policy's budget."""
    p = make_policy(
        kw.pop("name", "agentoccam"), script=Script(answers if isinstance(answers, dict) else {"actor": answers}), **kw
    )
    commands = tuple(c for c in PRESETS[p.preset].actions if task.multi_site or c != "go_home")
    p.reset(dataclasses.replace(task, commands=commands, budget=Budget(decisions=p.max_steps)))
    return p


class Handle:
    """Records the controlled navigations a policy asks for (the rollout's handle in e2e tests)."""

    def __init__(self):
        self.gotos: list[str] = []

    def goto(self, url: str):
        self.gotos.append(url)
        return {}, {}


GOOGLE_OBS = page_obs(GOOGLE, "http://google/")
OTHER_OBS = page_obs(
    axtree(N("RootWebArea", "Results", None, [N("link", "Stanford Engineering", "5")])), "http://google/search"
)


# -- prompt assembly -------------------------------------------------------------------------------


def test_user_message_sections_in_order_and_empty_ones_omitted():
    p = policy([])
    user = p.messages(GOOGLE_OBS)[1]["content"]
    assert user == (
        "OBJECTIVE:\nFind the dean's email\n"
        'PREVIOUS PLANS:\n[0] (Active Plan) Find the solution to "Find the dean\'s email"\n'
        f"CURRENT OBSERVATION:\n{GOOGLE_OBS['text']}\n"
    )
    p = policy([answer("click [12]")])
    p.act(GOOGLE_OBS, Handle())
    user = p.messages(OTHER_OBS)[1]["content"]
    heads = [
        user.index(s) for s in ("OBJECTIVE:\n", "PREVIOUS PLANS:\n", "INTERACTION HISTORY:\n", "CURRENT OBSERVATION:\n")
    ]
    assert heads == sorted(heads)


def test_system_prompt_lists_fields_and_commands_per_configuration():
    system = policy([]).messages(GOOGLE_OBS)[0]["content"]
    fields = [
        "INTERACTION HISTORY SUMMARY:",
        "OBSERVATION DESCRIPTION:",
        "REASON:",
        "ACTION:",
        "OBSERVATION HIGHLIGHT:",
    ]
    assert [system.index(f"\n{f}\n") for f in fields] == sorted(system.index(f"\n{f}\n") for f in fields)
    order = [
        "- branch [parent_plan_id] [new_subplan_intent]:",
        "- prune [resume_plan_id] [reason]:",
        "- click [id]:",
        "- type [id] [content] [press_enter_after=0|1]:",
        "- stop [answer]:",
        "- note [content]:",
        "- go_back:",
    ]
    assert [system.index(c) for c in order] == sorted(system.index(c) for c in order)
    assert "go_home" not in system and "scroll" not in system
    assert "- go_home:" in policy([], MULTI).messages(GOOGLE_OBS)[0]["content"]

    flat = policy([], planning=False)
    assert flat.preset == "history"
    system, user = (m["content"] for m in flat.messages(GOOGLE_OBS))
    assert "branch [" not in system and "prune [" not in system and "plans made so far" not in system
    assert "PREVIOUS PLANS" not in user and "INTERACTION HISTORY SUMMARY:" in system

    bare = policy([], planning=False, history=False)
    assert bare.preset == "simplified_obs"
    assert "INTERACTION HISTORY SUMMARY" not in bare.messages(GOOGLE_OBS)[0]["content"]
    scrolling = policy([], planning=False, history=False, preset="reduced_actions")
    assert "- scroll [down|up] [reason]:" in scrolling.messages(GOOGLE_OBS)[0]["content"]


def test_final_step_warning_only_on_the_last_step():
    p = policy([answer("note [a]"), answer("note [b]")], max_steps=2)
    assert "last one" not in p.messages(GOOGLE_OBS)[0]["content"]
    p.act(GOOGLE_OBS, Handle())
    assert "Your budget is 2 steps and this is the last one" in p.messages(GOOGLE_OBS)[0]["content"]


def test_final_step_warning_follows_the_episodes_budget_not_max_steps():
    p = policy([answer("note [a]"), answer("note [b]"), answer("note [c]")])  # max_steps 20
    p.reset(dataclasses.replace(p.task, budget=Budget(decisions=2)))  # what a study's --max-steps gives
    p.act(GOOGLE_OBS, Handle())
    assert "Your budget is 2 steps and this is the last one" in p.messages(GOOGLE_OBS)[0]["content"]


def test_a_forced_stop_answers_agentoccams_failure_message():
    p = policy([])
    failed = "The trajectory failed: step 21 would go beyond the maximum of 20 steps."
    assert p.forced_stop_answer("decisions") == failed
    p.reset(dataclasses.replace(p.task, budget=Budget(decisions=5, interactions=40)))
    assert p.forced_stop_answer("decisions").startswith("The trajectory failed: step 6 ")
    assert "40 browser actions" in p.forced_stop_answer("interactions")


def test_defaults_are_the_papers():
    p = make_policy("agentoccam", script={"actor": []})
    actor = p.llm.settings("actor")
    assert (actor.temperature, actor.top_p, actor.max_tokens) == (0.5, 0.95, 1024)  # [C]: no cap (see the policy)
    assert (p.max_steps, p.preset, p.history_depth, p.pivotal_max_nodes, p.highlight_max_words) == (
        20,
        "agentoccam",
        3,
        30,
        200,
    )
    j = make_policy("agentoccam_judge", script={"actor": []})
    assert j.judge and j.history_depth is None and j.llm.settings("judge").temperature == 0.5
    assert type(j) is type(p)


# -- plan tree -------------------------------------------------------------------------------------

OBJECTIVE = 'Open my latest updated issue that has keyword "feature" in its title to check if it is closed'


def test_plan_tree_rendering_after_branches_matches_the_papers_example():
    tree = PlanTree(OBJECTIVE, "http://g/")
    assert tree.render() == f'[0] (Active Plan) Find the solution to "{OBJECTIVE}"'
    tree.branch(
        0,
        'Navigate to the Issues page to search for the latest issue with the keyword "feature" in the title.',
        "http://g/",
        0,
    )
    tree.branch(
        1,
        'Search for the latest issue with the keyword "feature" in the title and check if it is closed.',
        "http://g/issues",
        2,
    )
    tree.branch(1, 'Open the latest issue with the keyword "feature" in the title.', "http://g/issues?s=f", 5)
    assert tree.render() == (
        f'[0] Find the solution to "{OBJECTIVE}"\n'
        '\t[1] Navigate to the Issues page to search for the latest issue with the keyword "feature" in the title.\n'
        '\t\t[2] Search for the latest issue with the keyword "feature" in the title and check if it is closed.\n'
        '\t\t[3] (Active Plan) Open the latest issue with the keyword "feature" in the title.'
    )


def test_prune_hides_abandoned_plans_and_resumes_with_their_steps():
    tree = PlanTree("goal", "http://g/")
    tree.record(0)
    tree.branch(0, "A", "http://g/a", 1)  # step 1
    tree.record(2)
    tree.note("price is $5", 2)
    tree.branch(1, "B", "http://g/b", 3)
    tree.record(4)
    tree.branch(0, "C", "http://g/c", 5)
    tree.record(6)
    resumed = tree.prune(1, "B led nowhere")
    assert resumed.id == 1 and tree.active_id == 1 and resumed.url == "http://g/a"
    assert resumed.steps_taken == [1, 2, 3, 4]  # its own steps, its creation and its former subtree's
    assert tree.render() == (
        '[0] Find the solution to "goal"\n\t[1] (Active Plan) A # resumed 1 time(s); reasons: 0. B led nowhere'
    )
    with pytest.raises(PlanError):
        tree.branch(3, "C again", "u", 7)  # C was a later sibling: gone with the abandoned branch
    assert tree.branch(1, "D", "u", 7).id == 4  # ids stay unique
    tree.note("check twice", 8)
    assert tree.render().endswith("\t\t[4] (Active Plan) D\n\t\tNote 0 (step 8): check twice")


def test_policy_branch_prune_navigate_back_and_scope_the_history():
    script = [
        answer("branch [0] [Use the search box]"),
        answer("type [12] [dean email]", description="Google."),
        answer("note [search has no email]"),
        answer("prune [0] [Search is a dead end]"),
        answer("click [5]"),
    ]
    p = policy(script)
    handle = Handle()
    assert p.act(GOOGLE_OBS, handle).action == "branch [0] [Use the search box]"
    assert p.tree.active.text == "Use the search box"
    assert "INTERACTION HISTORY" not in p.messages(GOOGLE_OBS)[1]["content"]  # empty right after a branch
    assert p.act(GOOGLE_OBS, handle).action == "type [12] [dean email] [1]"
    p.act(OTHER_OBS, handle)
    user = p.messages(OTHER_OBS)[1]["content"]
    assert "<step_0_interaction>" in user and "<step_1_interaction>" in user and "<step_2" not in user
    assert "ACTIVE PLAN:\n[1] Use the search box" in user
    assert "\tNote 0 (step 2): search has no email" in user  # notes stay visible in PREVIOUS PLANS
    decision = p.act(OTHER_OBS, handle)
    assert decision.action == "prune [0] [Search is a dead end]"
    assert handle.gotos == ["http://google/"]  # where the root plan began
    assert p.tree.active_id == 0 and p.tree.active.steps_taken == [0, 1, 2]
    user = p.messages(GOOGLE_OBS)[1]["content"]
    plans = user.split("PREVIOUS PLANS:\n")[1].split("INTERACTION HISTORY:")[0]
    assert plans == (
        '[0] (Active Plan) Find the solution to "Find the dean\'s email"'
        " # resumed 1 time(s); reasons: 0. Search is a dead end\n"
    )
    assert user.count("<step_") == 3 and "ACTION:\nbranch [0] [Use the search box]" in user
    assert json.loads(json.dumps(p.state()))["plan_tree"]["active"] == 0


def test_invalid_plan_id_becomes_a_note_and_changes_nothing():
    p = policy([answer("branch [7] [Somewhere]")])
    assert p.act(GOOGLE_OBS, Handle()).action == "branch [7] [Somewhere]"
    assert list(p.tree.nodes) == [0]
    assert "could not be applied (there is no plan [7] in PREVIOUS PLANS)" in p.tree.render()


# -- pivotal-node replay ---------------------------------------------------------------------------

PAPER_REASON = (
    "To progress towards finding the email address of the Dean of the School of Engineering at "
    "Stanford University, the first logical step is to search for relevant information."
)


def test_pivotal_highlight_replayed_as_in_the_papers_example():
    p = policy(
        [
            answer(
                "type [12] [Dean of the School of Engineering Stanford University email] [1]",
                highlight="12, 272",
                reason=PAPER_REASON,
            )
        ]
    )
    p.act(GOOGLE_OBS, Handle())
    user = p.messages(OTHER_OBS)[1]["content"]
    assert (
        """INTERACTION HISTORY:
<step_0_interaction>
OBSERVATION:
RootWebArea 'Google'
\tsearch
\t\tcombobox 'Search' [required: False]
\t\tbutton 'Search by voice'
\t\tbutton 'Search by image'
\t\tbutton 'Google Search'
\t\tbutton "I'm Feeling Lucky"
REASON FOR ACTION:
"""
        + PAPER_REASON
        + """
ACTION:
type [12] [Dean of the School of Engineering Stanford University email] [1]
</step_0_interaction>
CURRENT OBSERVATION:
"""
        in user
    )
    same = p.messages(GOOGLE_OBS)[1]["content"]  # the page did not change: a placeholder
    assert "OBSERVATION:\nThe same as the CURRENT OBSERVATION section below.\nREASON" in same


def record(description: str, highlight: str = "", page: str = "p") -> StepRecord:
    return StepRecord("u", "click [1]", "why", description, highlight, "[0] root", 0, page=page)


def test_replay_falls_back_to_the_description_and_only_the_last_steps_replay_pages():
    wordy = " ".join(["word"] * 200)
    records = [record("d0", "h0"), record("d1", wordy), record("d2", "h2"), record("d3", "h3"), record("d4", "")]
    text = render_history(records, "current", depth=3, max_words=200, show_plan=True)
    observations = [block.split("OBSERVATION:\n")[1].split("\nREASON")[0] for block in text.split("</step_")[:-1]]
    assert observations == ["d0", "d1", "h2", "h3", "d4"]  # 0-1 outside the window; 4 has no highlight
    text = render_history(records, "current", depth=None, max_words=200, show_plan=False)
    assert [b.split("OBSERVATION:\n")[1].split("\n")[0] for b in text.split("</step_")[:-1]] == [
        "h0",
        "d1",
        "h2",
        "h3",
        "d4",
    ]  # 200 words is not below the threshold
    assert "ACTIVE PLAN" not in text


def test_highlight_over_the_node_threshold_is_not_kept():
    p = policy([answer("click [29]", highlight="29")], pivotal_max_nodes=5)  # root + 7 named siblings
    p.act(GOOGLE_OBS, Handle())
    assert p.records[0].highlight == ""
    p = policy([answer("click [29]", highlight="29, x, 9999")])
    p.act(GOOGLE_OBS, Handle())
    assert p.records[0].highlight.startswith("RootWebArea 'Google'\n\tlink 'About'")


# -- parsing and re-asks ---------------------------------------------------------------------------


def test_parse_fields_tolerates_markdown_and_missing_fields():
    fields = parse_fields("**REASON:** because\nit is\n### Action:\n```\nclick [3]\n```\nOBSERVATION HIGHLIGHT: 3")
    assert fields == {"REASON": "because\nit is", "ACTION": "```\nclick [3]\n```", "OBSERVATION HIGHLIGHT": "3"}
    assert parse_fields("no headers at all") == {}


@pytest.mark.parametrize(
    "written,sent",
    [
        ("type [12] [dean email]", "type [12] [dean email] [1]"),  # no flag: Enter
        ("type [12] [dean email] [0]", "type [12] [dean email] [0]"),
        ("stop [N/A: the school lists no dean]", "stop [N/A: the school lists no dean]"),
        ("```\nclick [272]\n```", "click [272]"),
        ("note [the dean is Jane]\nclick [272]", "note [the dean is Jane]\nclick [272]"),
    ],
)
def test_actions_are_parsed_into_canonical_commands(written, sent):
    decision = policy([answer(written)]).act(GOOGLE_OBS, Handle())
    assert decision.action == sent and decision.error is None and decision.parsed["reasks"] == 0


def test_malformed_answers_are_re_asked_with_a_penalty_then_given_up():
    p = policy(
        [
            "I think I should click the search box.",
            answer("click [999]"),
            answer("hover [12]"),
            answer("click [12]\nclick [272]"),
            answer("click [12]"),
        ],
        max_reasks=3,
    )
    decision = p.act(GOOGLE_OBS, Handle())
    assert decision.action is None and len(decision.llm_calls) == 4
    assert "no valid action after re-asks: only one browser command per step" in decision.error
    systems = [c.messages[0]["content"] for c in decision.llm_calls]
    assert "cannot be run here: the ACTION field is missing or empty" in systems[1]
    assert all(re.search(r"for example `click \[\d+\]`\.", system) for system in systems[1:])  # a real id
    assert "`click [999]`, which cannot be run here: element [999] is not in the current observation" in systems[2]
    assert "action not available here 'hover'" in systems[3]
    assert "did not work" in p.tree.render()  # the failure is noted on the active plan
    assert p.act(GOOGLE_OBS, Handle()).action == "click [12]"  # the next step asks afresh


def test_repeated_note_is_re_asked():
    p = policy([answer("note [Jane]"), answer("note [Jane]"), answer("click [12]")])
    p.act(GOOGLE_OBS, Handle())
    decision = p.act(GOOGLE_OBS, Handle())
    assert decision.action == "click [12]" and decision.parsed["reasks"] == 1
    assert "repeated the note `note [Jane]`" in decision.llm_calls[1].messages[0]["content"]


def test_env_action_errors_are_noted_on_the_plan():
    p = policy([answer("click [12]"), answer("click [272]")])
    p.act(GOOGLE_OBS, Handle())
    p.act(dict(GOOGLE_OBS, last_action_error="Timeout 500ms exceeded"), Handle())
    assert "Note 0 (step 1): The action `click [12]` did not work: Timeout 500ms exceeded" in p.tree.render()


# -- judge -----------------------------------------------------------------------------------------


def candidates(*pairs: tuple[str, str]) -> str:
    items = "\n\n".join(f"- reason: [{r}]\n- action: [{a}]" for r, a in pairs)
    return (
        f"INTERACTION HISTORY SUMMARY:\nNone.\nOBSERVATION DESCRIPTION:\nGoogle.\n"
        f"ACTION CANDIDATES:\n{items}\nOBSERVATION HIGHLIGHT:\n12"
    )


def test_parse_candidates():
    text = (
        "- reason: [search]\n- action: [type [12] [x] [1]]\n\n- reason: [no action]\n\n- reason: [r]\n- action: go_back"
    )
    assert parse_candidates(text) == [("search", "type [12] [x] [1]"), ("r", "go_back")]


def test_judge_picks_among_distinct_candidates():
    def pick_click(messages):
        choices = messages[1]["content"].split("ACTION CHOICES:\n")[1]
        assert messages[0]["content"].startswith("You are a seasoned web navigator")
        blocks = choices.split("\n\n")
        index = next(i for i, b in enumerate(blocks) if "\nclick [272]\n" in b)
        return f"PLAN PROGRESS ASSESSMENT:\n- plan [0]\nACTION ASSESSMENT:\nfine\nACTION SELECTION:\n{index}"

    p = policy(
        {
            "actor": [
                candidates(
                    ("search", "click [272]"), ("other", "go_back"), ("bad", "click [999]"), ("again", "click [272]")
                )
            ],
            "judge": [pick_click],
        },
        name="agentoccam_judge",
    )
    decision = p.act(GOOGLE_OBS, Handle())
    assert decision.action == "click [272]" and decision.thought == "search"
    assert [c.role for c in decision.llm_calls] == ["actor", "judge"]
    assert sorted(c["action"] for c in decision.parsed["candidates"]) == ["click [272]", "go_back"]
    assert "|\taction [0]:\n" in decision.llm_calls[1].messages[1]["content"]


def test_judge_is_skipped_for_one_action_and_falls_back_on_a_bad_reply():
    p = policy({"actor": [candidates(("a", "click [12]"), ("b", "click [12]"))]}, name="agentoccam_judge")
    decision = p.act(GOOGLE_OBS, Handle())
    assert decision.action == "click [12]" and [c.role for c in decision.llm_calls] == ["actor"]
    p = policy(
        {"actor": [candidates(("a", "click [12]"), ("b", "go_back"))], "judge": ["I like both."]},
        name="agentoccam_judge",
    )
    decision = p.act(GOOGLE_OBS, Handle())
    assert decision.action == decision.parsed["candidates"][0]["action"]


def test_judge_variant_re_asks_when_no_candidate_is_valid():
    p = policy({"actor": [candidates(("a", "click [999]")), candidates(("b", "click [12]"))]}, name="agentoccam_judge")
    decision = p.act(GOOGLE_OBS, Handle())
    assert decision.action == "click [12]" and decision.parsed["reasks"] == 1
    re_ask = decision.llm_calls[1].messages[0]["content"]
    assert "holds no valid item (an item's action line reads `- action: [click [" in re_ask and "[...]" not in re_ask


def test_llm_failures_propagate_with_the_recorded_call():
    """The rollout loop ends the episode on an LLMError (source "llm"); the failed call is attached."""
    from webarena_gym.llm import LLMError
    from webarena_gym.llm.tokens import litellm_module as _litellm

    limit = _litellm().RateLimitError("mock rate limit", llm_provider="openai", model="gpt-4-turbo")
    p = policy([limit], retries=0)
    with pytest.raises(LLMError, match="RateLimitError") as info:
        p.act(GOOGLE_OBS, Handle())
    assert info.value.call is not None and info.value.call.role == "actor"
    assert p.records == [] and p.decisions == 0
