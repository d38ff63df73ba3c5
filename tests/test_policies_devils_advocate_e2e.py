"""Devil's Advocate end to end on local tasks: real browser, real sites and evaluator, the scripted LLM on
litellm's real call path. The scripted "model" reads the pages it is shown (ids, element names), so
every id it answers with is the one the browser has.

* task 55 (open the most recent cancelled order): a wrong View Order click with two remedies, like the
  paper's Fig. 4-5; the alignment check says NO, the browser goes back to the recorded URL, the
  element-mapping call runs before each remedy (the page came back unscrolled), remedies pop LIFO;
  then YES and task completion: the answer, reward 1;
* task 9: every branch fails in every trial; each new trial restores the initial state and its plan
  prompt holds the failed plans; the 30-action cap ends the episode across trials (a clean failure);
* task 91 (add to wish list): the right click is misjudged, the trial fails, and the restart leaves the
  site pristine again (the report-only verdicts: 1 after trial 1, 0 at the end);
* a real WebArena id (the local shop served as ``WA_SHOPPING``): a new trial keeps what the last one
  changed on the sites, and the trajectory says so;
* a provider outage ends the episode cleanly; a study next to ReAct reports the trial curve and Table 1.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from webarena_gym.experiments.compare import PolicySpec, compare, run_job
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.rollout import run_episode
from webarena_gym.experiments.store import StudyStore
from webarena_gym.llm import Script
from webarena_gym.policies import make_policy

pytestmark = [pytest.mark.browser, pytest.mark.slow]

YES = "The action is to {}.\nYES"
NO = "The action is to {}.\nNO"
_ID_LINE = re.compile(r"^\s*\[(\w+)\] ")


def screen(messages: list[dict[str, Any]]) -> str:
    """The screen of the action prompt that opens the conversation (the remedy follow-ups continue it)."""
    return messages[0]["content"].split("The screen in front of me:\n", 1)[1].split("\nThe notes I have", 1)[0]


def click(name: str, role: str = "link"):
    """A scripted answer: click the element with this role and name on the screen the prompt shows."""

    def answer(messages: list[dict[str, Any]]) -> str:
        match = re.search(rf"\[(\w+)\] {role} '{re.escape(name)}'", screen(messages))
        assert match, f"{role} {name!r} is not on the screen the model was shown"
        return f"The next action is: click [{match.group(1)}]"

    return answer


def nth_menuitem(k: int):
    def answer(messages: list[dict[str, Any]]) -> str:
        ids = re.findall(r"\[(\w+)\] menuitem '", screen(messages))
        return f"click [{ids[k]}]"

    return answer


def same_element(messages: list[dict[str, Any]]) -> str:
    """Element mapping as a model would do it: find the old element's line, then that line on the new screen."""
    prompt = messages[-1]["content"]
    old_id = re.search(r"element whose id is (\w+):", prompt).group(1)
    old, new = prompt.split("On the next screen", 1)
    line = re.search(rf"\[{old_id}\] ([^\n]+)", old).group(1)
    match = re.search(rf"\[(\w+)\] {re.escape(line)}", new)
    return f"New element id is: {match.group(1) if match else old_id}"


def keep_elements(messages: list[dict[str, Any]]) -> str:
    """A summary that keeps the lines of elements with ids (what the summary prompt asks to keep)."""
    tree = messages[-1]["content"].split("Accessibility tree:\n", 1)[1]
    return "\n".join(line.strip() for line in tree.splitlines() if _ID_LINE.match(line))


def roles(traj) -> list[list[str]]:
    return [[c["role"] for c in step.llm_calls if c["role"] != "summarize"] for step in traj.steps]


def calls(traj, role: str) -> list[dict[str, Any]]:
    return [c for step in traj.steps for c in step.llm_calls if c["role"] == role]


# -- a wrong click, two remedies, back to the recorded URL, element mapping, LIFO, answer ---------------------

PLAN_55 = (
    "List\n1. Click the 'My Account' link.\n2. Click the 'My Orders' link.\n"
    "3. Scroll down to the cancelled orders.\n4. Open the most recent cancelled order."
)


def cancelled_order_script() -> dict[str, Any]:
    return {
        "plan": [PLAN_55],
        "action": [click("My Account"), click("My Orders"), "scroll [down]", click("View Order 000000210")],
        "remedy": [
            "scroll [down]",
            "go_back",
            "scroll [down]",
            "go_back",
            "scroll [up]",
            "go_back",
            click("View Order 000000195"),
            click("View Order 000000205"),
        ],  # fmt: skip
        "align": [
            YES.format("open the account page"),
            YES.format("open the list of my orders"),
            YES.format("scroll down the order list"),
            NO.format("open order 000000210, which is not cancelled"),
            NO.format("open order 000000205, which is pending"),
            YES.format("open order 000000195, the most recent cancelled order"),
        ],
        "task_check": ["NO", "NO", "NO", "YES"],
        "subtask_check": ["YES", "YES", "YES"],
        "element_map": Script.forever(same_element),
        "answer": ["###Answer Order 000000195 is open."],
        "summarize": Script.forever(keep_elements),
    }


def test_a_wrong_click_backtracks_maps_the_element_and_pops_remedies_lifo(tmp_path):
    policy = make_policy("devils_advocate", script=Script(cancelled_order_script()))
    traj = run_episode("webarena/local.55", policy, out_dir=tmp_path)
    assert traj.err_msg is None, traj.stack_trace
    assert traj.terminated and traj.reward == 1.0, traj.evaluation
    actions = [s.action for s in traj.steps]
    assert actions[2] == "scroll [down]" and actions[-1] == "stop [Order 000000195 is open.]"
    assert [s.parsed.get("origin") for s in traj.steps[:6]] == ["first attempt"] * 4 + ["remedy 2", "remedy 1"]
    assert roles(traj) == [
        ["plan", "action", "remedy", "remedy"],
        ["align", "task_check", "subtask_check", "action", "remedy", "remedy"],
        ["align", "task_check", "subtask_check", "action", "remedy", "remedy"],
        ["align", "task_check", "subtask_check", "action", "remedy", "remedy"],
        ["align", "element_map"],  # NO after order 210: nothing new is generated; back, then remedy 2
        ["align", "element_map"],  # NO after order 205: back, then remedy 1
        ["align", "task_check", "answer"],
    ]
    orders = traj.steps[3].url  # the scrolled order list: the state the remedies were recorded at
    moves = [[(c["op"], c["arg"]) for c in s.handle_calls] for s in traj.steps]
    assert moves == [[]] * 4 + [[("goto", orders)]] * 2 + [[("end_trial", "Order 000000195 is open.")]]
    assert [s.handle_calls[0]["url"] for s in traj.steps[4:6]] == [orders, orders]  # remedies ran from there
    for call, step, number in zip(calls(traj, "element_map"), traj.steps[4:6], ("000000205", "000000195"), strict=True):
        old, new = call["messages"][-1]["content"].split("On the next screen", 1)
        recorded, fresh = old.split(":\n", 1)[1].strip(), new.split("?\n", 1)[1].split("\n\nThe element's id")[0]
        assert recorded != fresh.strip()  # the list came back scrolled to the top, so the id was re-mapped
        clicked = re.search(r"click \[(\w+)\]", step.action).group(1)
        assert re.search(rf"\[{clicked}\] link 'View Order {number}'", new)
    c = traj.counters
    assert (c["decisions"], c["interactions"], c["gotos"], c["restores"]) == (7, 7, 2, 0)  # 6 actions + the answer
    assert [(t["score"], t["notes"]["actions"]) for t in traj.trials] == [(1.0, 6)]
    tree = traj.tree
    assert [tree["nodes"][i]["label"] for i in tree["final_path"]][:2] == ["task", "trial 1"]
    assert [n["status"] for n in tree["nodes"] if n["label"].startswith("click")][-3:] == [
        "failed", "failed", "terminal",
    ]  # fmt: skip
    counters = traj.final_policy_state["counters"]
    assert (counters["backtracks"], counters["element_maps"]) == (2, 2)
    saved = json.loads((tmp_path / "trajectory.json").read_text())
    assert saved["policy"]["config"]["retry_on"] == "self" and saved["oracle_assisted"] is False


# -- every branch fails: new trials from the initial state, failed plans in the plan prompt, the cap ------------


def failing_script(remedies: int) -> dict[str, Any]:
    plans = iter(range(1, 100))
    return {
        "plan": Script.forever(lambda m: f"List\n1. Open the category menu item number {next(plans)}."),
        "action": Script.forever(nth_menuitem(0)),
        "remedy": Script.forever(lambda m: nth_menuitem(sum(x["role"] == "assistant" for x in m))(m)),
        "align": Script.forever(NO.format("open a category that is not the one asked for")),
        "answer": Script.forever("###Answer I could not find the category."),
        "summarize": Script.forever(keep_elements),
        "element_map": Script.forever(same_element),
    }


def test_every_branch_failing_restarts_from_the_initial_state_until_the_action_cap():
    # a 2k context: WebArena's tree text of these pages is about 1-2k tokens each, so together they exceed it
    policy = make_policy("devils_advocate", script=Script(failing_script(4)), remedies=4, context_tokens=2048)
    traj = run_episode("webarena/local.9", policy)
    assert traj.err_msg is None, traj.stack_trace
    assert traj.terminated and traj.reward == 0.0 and traj.steps[-1].action == "stop [I could not find the category.]"
    c = traj.counters
    assert (c["interactions"], c["decisions"], c["restores"]) == (31, 31, 5)  # 6 trials of 5 actions, the answer
    assert traj.budget == {"decisions": 31, "interactions": 30} and traj.budget_exhausted is None
    assert [t["notes"]["actions"] for t in traj.trials] == [5] * 6
    assert traj.trials[-1]["outcome"].startswith("stopped: the 30-action cap is reached")
    start = traj.steps[0].url
    plans = calls(traj, "plan")
    assert len(plans) == 6
    for step in traj.steps:
        restores = [c for c in step.handle_calls if c["op"] == "restore"]
        if restores:
            assert restores[0]["arg"] == "initial" and restores[0]["info"]["restore_method"] == "reset"
            assert restores[0]["url"] == start  # the new trial's first action runs from the start page
    for k, call in enumerate(plans[1:], 2):
        prompt = call["messages"][-1]["content"]
        earlier = prompt.split("Experience from earlier trials")[1]
        for j in range(1, k):
            assert f"The plan of trial {j}" in earlier and f"menu item number {j}." in earlier
    last = traj.trials[-1]["notes"]
    assert last["restore_method"] == "reset" and last["site_data"].startswith("pristine again")
    # Home and category pages together exceed the 2k context: each distinct page is summarised once, for all trials.
    assert len(calls(traj, "summarize")) == 6  # the home page and the five categories
    assert all("InlineTextBox" not in c["messages"][-1]["content"] for c in calls(traj, "align"))


# -- a state-changing task is pristine again after a failed trial -----------------------------------------------

KETTLE = "Hamilton Beach Stainless Steel Electric Kettle"
KETTLE_PAGE = "hamilton-beach-stainless-steel-electric-kettle-1-7-liter-auto-shut-off-and-boil-dry-protection.html"


def test_a_failed_trial_of_a_state_changing_task_leaves_the_site_pristine():
    script = {
        "plan": ["1. Click 'Add to Wish List'.", "1. Check the wish list."],
        "action": [click("Add to Wish List", "button"), click("My Wish List")],
        "remedy": ["scroll [down]", "scroll [up]", "scroll [down]", "scroll [up]"],
        "align": Script.forever(NO.format("do something that does not help")),  # the right click is misjudged
        "answer": ["###Answer The kettle is not in the wish list."],
        "summarize": Script.forever(keep_elements),
    }
    policy = make_policy("devils_advocate", script=Script(script), max_trials=2)
    traj = run_episode("webarena/local.91", policy)
    assert traj.err_msg is None, traj.stack_trace
    # Trial 1 had added the kettle (its report-only verdict is 1); the restart undid it, so the end state fails.
    assert [t["score"] for t in traj.trials] == [1.0, 0.0] and traj.reward == 0.0
    aligns = [c["messages"][-1]["content"] for c in calls(traj, "align")]
    after_click = aligns[0].split("Screen 2:")[1]
    assert "(4 items)" in after_click and f"{KETTLE}, 1.7 Liter" in after_click
    revision = calls(traj, "plan")[1]["messages"][-1]["content"]
    assert "(3 items)" in revision.split("What the starting screen shows:")[1]
    wish_list = aligns[3].split("Screen 2:")[1]  # trial 2 opens the wish list: the kettle is not there
    assert "RootWebArea 'My Wish List'" in wish_list and KETTLE not in wish_list and "(3 items)" in wish_list
    assert traj.trials[1]["notes"]["site_data"].startswith("pristine again")


# -- a real WebArena id: a new trial cannot undo what the last one changed on the sites --------------------------


@pytest.fixture
def shop_as_real_webarena(monkeypatch):
    """The local shop served as if it were the self-hosted WebArena shop (``WA_SHOPPING``): a real task id then
    runs against sites nobody resets, exactly like the real containers."""
    from webarena_gym.envs.local.launcher import LocalSites

    sites = LocalSites(["shopping"])
    try:
        monkeypatch.setenv("WA_SHOPPING", sites.urls["shopping"])
        yield sites.urls["shopping"]
    finally:
        sites.close()


def nth_call(first: str, then: str):
    seen = iter(range(1000))
    return lambda messages: first if next(seen) == 0 else then


def test_on_real_webarena_a_new_trial_keeps_the_sites_changes(shop_as_real_webarena):
    kettle = f"{shop_as_real_webarena}/{KETTLE_PAGE}"
    script = {
        "plan": ["1. Open the kettle's page.\n2. Add it to the wish list.", "1. Look at the wish list count."],
        "action": [f"goto [{kettle}]", click("Add to Wish List", "button"), "scroll [down]"],
        "remedy": Script.forever(
            lambda m: ("scroll [up]", "scroll [down]")[sum(x["role"] == "assistant" for x in m) % 2]
        ),
        "align": Script.forever(nth_call(YES.format("open the kettle"), NO.format("do something that does not help"))),
        "task_check": ["NO"],
        "subtask_check": ["YES"],
        "answer": ["###Answer I do not know."],
        "summarize": Script.forever(keep_elements),
    }
    policy = make_policy("devils_advocate", script=Script(script), max_trials=2)
    # A real WebArena task id (its own goal does not matter here); its fuzzy answer check gets a judge that
    # answers, since a judge that cannot be called makes the evaluation an error.
    traj = run_episode("webarena/47", policy, env_kwargs={"judge_mock": "Verdict: incorrect"})
    assert traj.err_msg is None, traj.stack_trace
    assert len(traj.trials) == 2 and [t["method"] for t in traj.trials] == ["partial", "partial"]
    restore = next(c for s in traj.steps for c in s.handle_calls if c["op"] == "restore")
    assert restore["info"]["restore_method"] == "reset"
    notes = traj.trials[1]["notes"]
    assert notes["restore_method"] == "reset" and notes["site_data"].startswith("not restored: real WebArena")
    assert "site data not restored" in traj.trials[1]["outcome"]
    revision = calls(traj, "plan")[1]["messages"][-1]["content"].split("What the starting screen shows:")[1]
    assert "(4 items)" in revision  # trial 1's wish-list addition is still there when trial 2 starts


# -- failures and a study ---------------------------------------------------------------------------------------


def test_a_provider_outage_ends_the_episode_cleanly():
    import litellm

    outage = litellm.ServiceUnavailableError("the provider is down", llm_provider="openai", model="gpt-4o")
    script = {**cancelled_order_script(), "align": [outage]}
    policy = make_policy("devils_advocate", script=Script(script), retries=0)
    traj = run_episode("webarena/local.55", policy)
    assert traj.error_source == "llm" and "ServiceUnavailableError" in traj.err_msg
    assert len(traj.steps) == 2 and traj.steps[0].action.startswith("click [") and traj.reward == 0.0


def second_trial_solves(job) -> Any:
    """Task 9 for the study: trial 1's three categories are wrong, trial 2 opens Video Games."""
    if job.policy.name == "react":
        script = {"actor": ["In summary, the next action I will perform is ```stop [Done]```"]}
        return make_policy("react", script=Script(script))
    script = {
        "plan": ["1. Open the category.", "1. Open the Video Games category from the menu."],
        "action": [nth_menuitem(0), click("Video Games", "menuitem")],
        "remedy": [nth_menuitem(1), nth_menuitem(2), nth_menuitem(3), nth_menuitem(4)],
        "align": [NO.format("open the wrong category")] * 3 + [YES.format("open Video Games")],
        "task_check": ["YES"],
        "answer": ["###Answer Done"],
        "summarize": Script.forever(keep_elements),
        "element_map": Script.forever(same_element),
    }
    return make_policy(job.policy.name, script=Script(script))


def test_a_study_next_to_react_reports_success_per_trial_and_table_1(tmp_path):
    policies = [PolicySpec("devils_advocate", label="devils_advocate [scripted]"), PolicySpec("react", label="react")]
    runner = functools.partial(run_job, build_policy=second_trial_solves)
    study = compare(policies, "webarena/local.9", tmp_path / "study", runner=runner, progress=False)
    results = {r.policy: r for r in StudyStore(study).latest().values()}
    da = results["devils_advocate [scripted]"]
    assert (da.reward, da.trial_scores, da.trial_actions) == (1.0, [0.0, 1.0], [3, 1])
    assert results["react"].reward == 0.0 and results["react"].trial_actions == []
    report = build_report(study)
    trials = (report / "trials.csv").read_text().splitlines()
    assert trials[0] == "Policy,after trial 1,after trial 2" and trials[1] == "devils_advocate [scripted],0.0,100.0"
    stats = (report / "trial_stats.csv").read_text().splitlines()
    assert stats[1] == "devils_advocate [scripted],3.00,1.00,1.00,1"
    assert (report / "success_after_trial.png").stat().st_size > 0
    header, row = (line.split(",") for line in (report / "policy_counters.csv").read_text().splitlines()[:2])
    counters = dict(zip(header, row, strict=True))
    assert counters["Policy"] == "devils_advocate [scripted]"
    assert (counters["Backtracks/task"], counters["Element maps/task"]) == ("2.00", "0.00")  # same page each time
    summary = (report / "summary.md").read_text()
    assert "Trials: actions and plan revisions" in summary and "sites keep what earlier trials changed" in summary
    assert "success_after_trial.png" in Path(report / "index.html").read_text()
