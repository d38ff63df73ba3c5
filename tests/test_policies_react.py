"""ReAct: prompt assembly, answer parsing, early stops, and end-to-end runs on local tasks with a
scripted LLM that answers with the task's reference actions (real browser, sites and evaluator)."""

from __future__ import annotations

import pytest

from webarena_gym.experiments.rollout import run_episode
from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.policies.base import TaskSpec
from webarena_gym.policies.react import (
    ANSWER_PHRASE,
    WEBARENA_ACTIONS,
    ActionParseError,
    ReActPolicy,
    describe_action,
    parse_answer,
    system_prompt,
    truncate_tokens,
)
from webarena_gym.wrappers.presets import PRESETS

TASK = TaskSpec(
    "webarena/local.200",
    200,
    "Who posted the top post in books?",
    ("reddit",),
    "http://r/",
    commands=PRESETS["webarena"].actions,
)


def say(action: str, why: str = "Let's think step by step. The page shows what I need.") -> str:
    return f"{why} {ANSWER_PHRASE} ```{action}```"


# -- parsing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,action",
    [
        (say("click [12]"), "click [12]"),
        (
            "Thinking.\nIn summary, the next action I will perform is\n```\ntype [3] [red hat] [1]\n```\n",
            "type [3] [red hat] [1]",
        ),
        ("in summary, THE NEXT ACTION I WILL PERFORM IS ```stop [N/A]```", "stop [N/A]"),
        ("First ```scroll [down]``` maybe, but finally ```go_back```", "go_back"),  # no phrase: the last block
        ("Example: " + say("click [1]") + " ... " + say("stop [42]"), "stop [42]"),  # the last phrase wins
    ],
)
def test_parse_answer_extracts_the_action(text, action):
    assert parse_answer(text, WEBARENA_ACTIONS)[1] == action


def test_parse_answer_keeps_the_reasoning():
    reasoning, _ = parse_answer(say("click [12]", "The link [12] opens the forum."), WEBARENA_ACTIONS)
    assert reasoning == "The link [12] opens the forum."


@pytest.mark.parametrize(
    "text,message",
    [
        ("I would click the first link.", "no action found"),
        (say("jump [3]"), r"'jump \[3\]' is not an available action"),
        (say("note [remember this]"), "is not an available action"),
        (f"{ANSWER_PHRASE} click [3]", "no action found"),
    ],
)
def test_parse_answer_rejects_unusable_answers(text, message):
    with pytest.raises(ActionParseError, match=message):
        parse_answer(text, WEBARENA_ACTIONS)


def test_re_asks_show_a_concrete_action_of_the_page_not_a_placeholder():
    policy = ReActPolicy(script=Script({"actor": ["I would click the first link."]}), actions=list(WEBARENA_ACTIONS))
    policy.reset(TASK)
    decision = policy.act({"text": "[7] StaticText 'Hi'\n[12] link 'Books'", "url": "http://r/"}, None)
    assert decision.action is None
    assert f'for example "{ANSWER_PHRASE} ```click [7]```"' in policy.s.previous_action
    assert "<action>" not in policy.s.previous_action
    with pytest.raises(ActionParseError, match=r"for example ```scroll \[down\]```"):
        parse_answer(say("jump [3]"), WEBARENA_ACTIONS, "scroll [down]")


def test_parse_answer_only_accepts_enabled_actions():
    with pytest.raises(ActionParseError, match="use one of: click, type, stop"):
        parse_answer(say("hover [4]"), ("click", "type", "stop"))


# -- prompt assembly -------------------------------------------------------------------------------


def test_system_prompt_lists_exactly_the_enabled_actions_in_webarena_order():
    full = system_prompt(WEBARENA_ACTIONS, None)
    order = [full.index(f"`{a}") for a in WEBARENA_ACTIONS]
    assert order == sorted(order)
    for group in ("Page operations:", "Tab management:", "URL navigation:", "Completion:"):
        assert group in full
    assert ANSWER_PHRASE in full and "homepage" not in full
    reduced = system_prompt(("click", "type", "scroll", "stop"), "http://home/")
    assert "`hover" not in reduced and "Tab management" not in reduced and "`scroll [direction=down|up]`" in reduced
    # WebArena's prompt names the homepage and its page of accounts, on every task
    assert "homepage at http://home, which lists every website" in reduced
    assert "The page http://home/password.html lists the account name and password of each website" in reduced


def test_every_task_is_told_the_homepage_and_the_accounts_page():
    policy = ReActPolicy(script=Script({}), actions=list(WEBARENA_ACTIONS))
    policy.reset(TaskSpec("webarena/local.200", 200, "x", ("reddit",), "http://r/", homepage_url="http://h:9"))
    assert "http://h:9/password.html" in policy.messages({"text": "", "url": ""})[0]["content"]


def test_messages_follow_webarena_layout():
    policy = ReActPolicy(script=Script({}), actions=list(WEBARENA_ACTIONS))
    policy.reset(TASK)
    messages = policy.messages({"text": "[1] link 'Books'", "url": "http://r/f/books"})
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert ANSWER_PHRASE in messages[2]["content"] and messages[2]["content"].endswith("```")
    assert messages[-1]["content"] == (
        "OBSERVATION:\n[1] link 'Books'\nURL: http://r/f/books\n"
        "OBJECTIVE: Who posted the top post in books?\nPREVIOUS ACTION: None"
    )
    without = ReActPolicy(script=Script({}), actions=list(WEBARENA_ACTIONS), examples=False)
    without.reset(TASK)
    assert len(without.messages({"text": "", "url": ""})) == 2


def test_observation_is_cut_to_the_token_budget():
    long = " ".join(f"[{i}] link 'item number {i}'" for i in range(3000))
    cut = truncate_tokens(long, 1920, "gpt-4-turbo")
    import litellm

    assert (
        len(litellm.encode(model="gpt-4-turbo", text=cut)) <= 1920 < len(litellm.encode(model="gpt-4-turbo", text=long))
    )
    assert long.startswith(cut[:-20])
    assert truncate_tokens("short", 1920, "gpt-4-turbo") == "short"


@pytest.mark.parametrize(
    "action, observation, described",
    [
        (
            "click [12]",
            "[1] RootWebArea 'Shop'\n\t[12] link 'Cart', url='http://s/cart'",
            "click [12] where [12] is link 'Cart', url='http://s/cart'",
        ),  # noqa: E501
        (
            "type [7] [red hat] [1]",
            "\t\t[7] textbox 'Search' required: False",
            "type [7] [red hat] [1] where [7] is textbox 'Search' required: False",
        ),  # noqa: E501
        ("hover [3]", "main\n\tbutton [3] 'Menu'", "hover [3] where [3] is button 'Menu'"),  # AgentOccam's layout
        (
            "click [9]",
            "[19] link 'x'\n[99] link 'y'",
            'Tried to "click" the element [9], but the observation has no element with this id. '
            "Read the observation more carefully.",
        ),
        ("scroll [down]", "[1] link 'x'", "scroll [down]"),
        ("stop [42]", "", "stop [42]"),
    ],
)
def test_previous_action_describes_the_element_as_webarena_does(action, observation, described):
    assert describe_action(action, observation) == described


def test_previous_action_names_the_element_from_the_page_it_was_chosen_on():
    policy = ReActPolicy(script=Script({"actor": [say("click [12]")]}), actions=list(WEBARENA_ACTIONS))
    policy.reset(TASK)
    policy.act({"text": "[12] link 'Books'", "url": "u"}, None)
    after = policy.messages({"text": "[30] heading 'Books'", "url": "u/books"})[-1]["content"]
    assert after.endswith("PREVIOUS ACTION: click [12] where [12] is link 'Books'")


def test_failed_action_is_reported_in_previous_action():
    policy = ReActPolicy(
        script=Script({"actor": [say("click [99]"), say("click [1]")]}), actions=list(WEBARENA_ACTIONS)
    )
    policy.reset(TASK)
    policy.act({"text": "", "url": "u"}, None)
    messages = policy.messages({"text": "", "url": "u", "last_action_error": "element [99] is not on the current page"})
    assert messages[-1]["content"].endswith(
        'PREVIOUS ACTION: Tried to "click" the element [99], but the observation has no element with this id. '
        "Read the observation more carefully. (it failed: element [99] is not on the current page)"
    )


def test_repeated_actions_trigger_webarena_early_stop():
    policy = ReActPolicy(script=Script({"actor": [say("scroll [down]")] * 3}), actions=list(WEBARENA_ACTIONS))
    policy.reset(TASK)
    decisions = [policy.act({"text": "", "url": "u"}, None) for _ in range(4)]
    assert [d.action for d in decisions] == ["scroll [down]"] * 3 + ["stop [Early stop: same action repeated 3 times]"]
    assert decisions[-1].llm_calls == []  # decided before asking the model, as WebArena's runner does
    assert policy.state()["counters"] == {"early_stops": 1}  # reported, so a study can tell it from a model stop
    typing = ReActPolicy(
        script=Script(
            {
                "actor": [
                    say("type [3] [a] [1]"),
                    say("click [4]"),
                    say("type [3] [a] [1]"),
                    say("click [5]"),
                    say("type [3] [a] [1]"),
                ]
            }
        ),
        actions=list(WEBARENA_ACTIONS),
    )
    typing.reset(TASK)
    actions = [typing.act({"text": "", "url": "u"}, None).action for _ in range(6)]
    assert actions[4] == "type [3] [a] [1]" and actions[5].startswith("stop [Early stop: same action repeated")


def test_the_step_budget_ends_with_webarenas_early_stop_answer():
    policy = ReActPolicy(script=Script({}), actions=list(WEBARENA_ACTIONS))
    policy.reset(TASK)
    assert policy.forced_stop_answer("decisions") == "Early stop: reached the maximum of 30 steps"


def test_defaults_come_from_the_webarena_runner():
    policy = make_policy("react", script={"actor": []}, actions=list(WEBARENA_ACTIONS))
    actor = policy.llm.settings("actor")
    assert (actor.temperature, actor.top_p, actor.max_tokens) == (1.0, 0.9, 384)
    assert policy.max_steps == 30 and policy.max_obs_tokens == 1920 and policy.preset == "webarena"
    assert (policy.parse_failure_th, policy.repeat_th) == (3, 3)


# -- end to end on the local suite -------------------------------------------------------------------


def oracle_react(task_id: int, n_answers: int = 12, wrong_answer: str | None = None) -> ReActPolicy:
    """ReAct whose scripted LLM answers with the task's reference steps in ReAct's format."""
    from webarena_gym.benchmarks.support.oracle import ReferenceOracle

    oracle = ReferenceOracle(
        task_id, "webarena", lambda c: say(c, "Let's think step by step. On this page:"), wrong_answer=wrong_answer
    )
    return oracle.attach(ReActPolicy(script=Script({"actor": [oracle] * n_answers})))


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("task_id", [200, 203, 216])
def test_react_solves_local_tasks_with_reference_answers(task_id, tmp_path):
    traj = run_episode(f"webarena/local.{task_id}", oracle_react(task_id), out_dir=tmp_path)
    assert traj.err_msg is None, traj.stack_trace
    assert traj.terminated and traj.reward == 1.0, traj.evaluation
    assert traj.steps[-1].action.startswith("stop [")
    # (no check on action_error: under CPU load BrowserGym's 500 ms click timeout can report an error
    # for a click whose navigation did happen; the reward is the ground truth)
    assert all(s.decision_error is None for s in traj.steps)
    assert all(len(s.llm_calls) == 1 and s.llm_calls[0]["prompt_tokens"] > 200 for s in traj.steps)
    assert (tmp_path / "trajectory.json").exists()


@pytest.mark.browser
@pytest.mark.slow
def test_react_fails_cleanly_on_a_wrong_answer_and_on_a_dead_script(tmp_path):
    wrong = run_episode("webarena/local.200", oracle_react(200, wrong_answer="SomebodyElse"))
    assert wrong.err_msg is None and wrong.terminated and wrong.reward == 0.0
    assert wrong.steps[-1].action == "stop [SomebodyElse]" and wrong.evaluation is not None

    short = run_episode("webarena/local.200", oracle_react(200, n_answers=1))  # one answer, then nothing
    assert short.error_source == "llm" and "no answer left for role 'actor'" in short.err_msg
    assert len(short.steps) == 2 and short.steps[0].action.startswith("goto [") and short.reward == 0.0
