"""Non-LLM baselines: reference-step translation into the bracketed grammar, the reference policy on a
real episode (also through the AgentOccam preset, whose missing ``goto`` uses the rollout handle), and
the random policy's candidate set."""

from __future__ import annotations

import pytest

from webarena_gym.experiments.rollout import run_episode
from webarena_gym.policies import make_policy
from webarena_gym.policies.base import TaskSpec
from webarena_gym.policies.baselines import RandomPolicy, ReferenceStepError, reference_command
from webarena_gym.wrappers.actions.agentoccam import AGENTOCCAM_COMMANDS, WEBARENA_COMMANDS

SINGLE_SITE = tuple(c for c in AGENTOCCAM_COMMANDS if c != "go_home")  # what the action wrapper enables


def node(node_id: str, role: str, name: str, bid: str | None, parent: str | None = None) -> dict:
    n = {"nodeId": node_id, "role": {"value": role}, "name": {"value": name}, "parentId": parent}
    if bid:
        n["browsergym_id"] = bid
    return n


def dropdown(name: str, bid: str, options: dict[str, str]) -> list[dict]:
    """A <select> named ``name`` with id ``bid`` under the root node "1": its popup and its options (id -> label)."""
    return [
        node(f"s{bid}", "combobox", name, bid, "1"),
        node(f"p{bid}", "MenuListPopup", "", None, f"s{bid}"),
        *(node(f"o{opt}", "option", label, opt, f"p{bid}") for opt, label in options.items()),
    ]


OBS = {
    "url": "http://site/form",
    "text": "[5] searchbox 'Search'\n[6] combobox 'Label'\n\t[9] link 'Home'\n[11] button 'Go'",
    "axtree_object": {
        "nodes": [
            node("1", "RootWebArea", "Form", None),
            node("2", "searchbox", "Search", "5", "1"),
            *dropdown("Label", "6", {"7": "bug", "8": "enhancement"}),
            node("10", "link", "Home", "9", "1"),
            node("12", "button", "Go", "11", "1"),
        ]
    },
}
SEARCH = {"role": "searchbox", "name": "Search"}


@pytest.mark.parametrize(
    "steps,expected",
    [
        (
            [
                {"action": "fill", "target": SEARCH, "value": "red hat"},
                {"action": "press", "target": SEARCH, "value": "Enter"},
            ],
            ("type [5] [red hat] [1]", 2),
        ),
        ([{"action": "fill", "target": SEARCH, "value": "red hat"}], ("type [5] [red hat] [0]", 1)),
        (
            [{"action": "select_option", "target": {"role": "combobox", "name": "Label"}, "value": "enhancement"}],
            ("click [8]", 1),
        ),
        ([{"action": "click", "target": {"role": "link", "name": "Home"}}], ("click [9]", 1)),
        ([{"action": "goto", "url": "__REDDIT__/f/books"}], ("goto [http://r.test/f/books]", 1)),
        ([{"action": "go_back"}], ("go_back", 1)),
        ([{"action": "send_msg_to_user", "text": "42 [approx]"}], ("stop [42 [approx]]", 1)),
        ([{"action": "report_infeasible", "text": "no such order"}], ("stop [N/A: no such order]", 1)),
    ],
)
def test_reference_steps_translate_to_the_bracketed_grammar(steps, expected):
    assert reference_command(steps, 0, OBS, WEBARENA_COMMANDS, {"reddit": "http://r.test"}) == expected


def test_untranslatable_reference_steps_are_clear_errors():
    with pytest.raises(ReferenceStepError, match="does not offer"):
        reference_command([{"action": "goto", "url": "http://x/"}], 0, OBS, ("click", "type", "stop"))
    with pytest.raises(ReferenceStepError, match="no option 'wontfix'"):
        reference_command(
            [{"action": "select_option", "target": {"role": "combobox", "name": "Label"}, "value": "wontfix"}],
            0,
            OBS,
            WEBARENA_COMMANDS,
        )


def test_select_steps_name_options_by_label_or_value():
    labels = {"7": "Vinta Chen (@vinta)", "8": "Carol Chen (@vinta.c)", "9": "Private", "10": "private"}
    obs = {
        **OBS,
        "axtree_object": {"nodes": [node("1", "RootWebArea", "Form", None), *dropdown("Assignee", "6", labels)]},
    }

    def pick(value: str) -> str:
        step = {"action": "select_option", "target": {"role": "combobox", "name": "Assignee"}, "value": value}
        return reference_command([step], 0, obs, WEBARENA_COMMANDS)[0]

    assert pick("vinta") == "click [7]"  # the value as a whole word of one label, not of "@vinta.c"
    assert pick("Carol Chen (@vinta.c)") == "click [8]"  # the label itself
    assert pick("private") == "click [10]"  # an exact label wins over a case-insensitive one
    with pytest.raises(ReferenceStepError, match="no option 'chen'"):
        pick("chen")  # a word of two labels: ambiguous


def random_policy(seed: int) -> RandomPolicy:
    policy = RandomPolicy(preset="agentoccam", seed=seed)
    policy.reset(
        TaskSpec("webarena/local.1", 1, "Search for red hats", ("shopping",), "http://site/", commands=SINGLE_SITE)
    )
    return policy


def test_random_candidates_are_the_valid_actions_on_the_page():
    candidates = random_policy(3).candidates(OBS)
    assert {"click [5]", "click [6]", "click [9]", "click [11]", "go_back", "stop [N/A]"} <= set(candidates)
    typing = [c for c in candidates if c.startswith("type")]
    assert [c.split(" ")[1] for c in typing] == ["[5]", "[6]"] and all(c.endswith("[1]") for c in typing)
    assert "go_home" not in candidates and not any(c.startswith("scroll") for c in candidates)
    assert "click [7]" not in candidates  # hidden option ids are not shown in the text
    one, two, other = random_policy(3), random_policy(3), random_policy(4)
    picks = [one.act(OBS, None).action for _ in range(8)]
    assert picks == [two.act(OBS, None).action for _ in range(8)]  # reproducible per seed
    assert picks != [other.act(OBS, None).action for _ in range(8)] and len(set(picks)) > 2


@pytest.mark.browser
@pytest.mark.slow
def test_reference_policy_solves_a_task_through_the_agentoccam_preset():
    traj = run_episode("webarena/local.200", make_policy("reference", preset="agentoccam"))
    assert traj.err_msg is None and traj.reward == 1.0 and traj.terminated
    first = traj.steps[0]
    assert first.action is None and [c["op"] for c in first.handle_calls] == ["goto"]
    assert traj.steps[1].action.startswith("click [") and traj.steps[-1].action == "stop [PageTurner_88]"
    assert traj.summary_info()["stats.cum_llm_calls"] == 0


@pytest.mark.browser
@pytest.mark.slow
def test_random_policy_runs_within_its_budget():
    traj = run_episode("webarena/local.203", make_policy("random", seed=1), max_steps=4)
    assert traj.err_msg is None and 1 <= len(traj.steps) <= 4
    assert all(s.action and s.parsed["n_candidates"] > 3 for s in traj.steps)
    assert all(not (s.action_error or "").startswith("Invalid action") for s in traj.steps)


def test_replay_retries_a_failed_step_while_its_target_is_still_there():
    from webarena_gym.policies.baselines import ReferenceReplay

    steps = [
        {"action": "click", "target": {"role": "link", "name": "Home"}},
        {"action": "click", "target": {"role": "button", "name": "Go"}},
        {"action": "send_msg_to_user", "text": "done"},
    ]
    replay = ReferenceReplay(steps, {}, max_retries=1)
    assert replay.next_command(OBS, WEBARENA_COMMANDS) == "click [9]"
    failed = {**OBS, "last_action_error": "TimeoutError: Locator.click: Timeout 500ms exceeded."}
    assert replay.next_command(failed, WEBARENA_COMMANDS) == "click [9]"  # retried once
    assert replay.next_command(failed, WEBARENA_COMMANDS) == "click [11]"  # budget spent: go on
    gone = {**failed, "axtree_object": {"nodes": [node("1", "RootWebArea", "Done", None)]}}
    assert replay.next_command(gone, WEBARENA_COMMANDS) == "stop [done]"  # failed step's target gone
    assert replay.done
