"""The reddit and gitlab tasks against the real sites in a real browser: the forms log in, the task files
are well formed, and neither a missing state change, nor a plausible wrong one, nor a wrong answer scores.
(Reference solutions scoring 1 is replayed through the environment in tests/test_local_tasks.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.evaluator import Judge, check_eval_block, evaluate
from envs.local.launcher import LocalSites
from envs.local.registry import EVAL_KEYS, LOCAL_TEMPLATE_BASE, TASK_KEYS
from envs.local.sites import gitlab, reddit
from envs.local.solutions import fill_placeholders

pytestmark = pytest.mark.browser

LOCAL = Path(__file__).resolve().parents[1] / "envs" / "local"
SITES = {"reddit": (reddit, range(200, 300)), "gitlab": (gitlab, range(300, 400))}
TASKS = {site: json.loads((LOCAL / "tasks" / f"{site}.json").read_text()) for site in SITES}
SOLUTIONS = {site: json.loads((LOCAL / "solutions" / f"{site}.json").read_text()) for site in SITES}
ALL = [task for site in SITES for task in TASKS[site]]

# Plausible wrong answers for the string_match tasks (fuzzy ones need the LLM judge and are left out).
WRONG_ANSWERS = {
    200: "BookishOwl",
    201: "BoldReader206",
    202: "CircuitSam",
    203: "books",
    204: "science, space, sports",
    223: "26",
    300: "Dmitri Ivanova",
    301: "Olga Silva",
    302: "3",
    303: "2",
    322: "15",
}
# Plausible wrong state changes: (site, path, form) posted as the logged-in account.
WRONG_ACTIONS = {
    211: ("reddit", "/sv/158", {"choice": "1"}),  # upvote instead of downvote
    212: ("reddit", "/submit", {"title": "What is the recommended console to buy these days?", "forum": "gaming"}),
    214: ("reddit", "/f/books/366/-/comment", {"comment": "Same here, we just started The Hobbit!"}),  # not a reply
    216: ("reddit", "/user/MarvelsGrandpa/edit_biography", {"biography": "I am not a robot"}),
    309: ("gitlab", "/a11yproject/a11yproject.com/-/issues/19/update", {"assignee": "ericwu"}),
    310: ("gitlab", "/a11yproject/a11yproject.com/-/issues/20/update", {"labels": "bug"}),
    312: ("gitlab", "/byteblaze/dotfiles/-/project_members", {"username": "vinta", "access_level": "20"}),
    314: ("gitlab", "/-/profile", {"name": "Byte Blaze", "status_message": "Away"}),
    317: ("gitlab", "/primer/design/-/merge_requests/5/update", {"reviewer": "ericwu"}),
    323: ("gitlab", "/projects/new", {"name": "planner", "visibility": "public"}),
}


def _is_fuzzy(task: dict) -> bool:
    return "fuzzy_match" in (task["eval"].get("reference_answers") or {})


@pytest.fixture(scope="module")
def sites():
    with LocalSites(["reddit", "gitlab"]) as local:
        yield local


@pytest.fixture(scope="module")
def browser(leased_browser):
    return leased_browser


@pytest.fixture(scope="module")
def page(browser, sites):
    """One context logged in to both sites through their own forms."""
    context = browser.new_context()
    page = context.new_page()
    for name, (module, _) in SITES.items():
        module.login(page, sites.urls[name], module.ACCOUNT)
    yield page
    context.close()


@pytest.mark.parametrize("site", SITES)
def test_task_files_follow_webarena_format(site):
    tasks, solutions = TASKS[site], SOLUTIONS[site]
    _, ids = SITES[site]
    assert len(tasks) >= 14 and len({t["intent_template_id"] for t in tasks}) >= 5
    for task in tasks:
        assert set(task) == TASK_KEYS and set(task["eval"]) <= EVAL_KEYS and task["sites"] == [site]
        assert task["task_id"] in ids and task["intent_template_id"] - LOCAL_TEMPLATE_BASE in ids
        intent = task["intent_template"]
        for key, value in task["instantiation_dict"].items():
            intent = intent.replace("{{" + key + "}}", str(value))
        assert intent == task["intent"]
        filled = json.loads(fill_placeholders(json.dumps(task), {site: "http://127.0.0.1:1"}))
        assert check_eval_block(filled["eval"]) == []
        assert solutions[str(task["task_id"])][-1]["action"] == "send_msg_to_user"
    kinds = {rule for t in tasks for rule in (t["eval"]["reference_answers"] or {})}
    types = {kind for t in tasks for kind in t["eval"]["eval_types"]}
    assert kinds == {"exact_match", "must_include", "fuzzy_match"} and types == {
        "string_match",
        "url_match",
        "program_html",
    }
    assert any(t["eval"]["reference_answers"] == {"fuzzy_match": "N/A"} and t["eval"]["string_note"] for t in tasks)


@pytest.mark.parametrize("site", SITES)
def test_login_form_rejects_a_wrong_password(browser, sites, site):
    module, _ = SITES[site]
    context = browser.new_context()
    try:
        page = context.new_page()
        with pytest.raises(Exception):
            module.login(page, sites.urls[site], {**module.ACCOUNT, "password": "wrong"})
        assert page.get_by_role("alert").count() == 1
    finally:
        context.close()


def _score(task: dict, page, sites, answer: str) -> float:
    config = json.loads(fill_placeholders(json.dumps(task), sites.urls))
    return evaluate(config, page, answer, judge=Judge(mock_response="correct"), urls=sites.urls).score


@pytest.mark.slow
@pytest.mark.parametrize("task", [t for t in ALL if not _is_fuzzy(t)], ids=lambda t: str(t["task_id"]))
def test_untouched_sites_and_wrong_answers_score_zero(page, sites, task):
    sites.reset_state()
    page.goto(fill_placeholders(task["start_url"], sites.urls))
    assert page.get_by_role("button", name="Log out").count() + page.get_by_role("button", name="Sign out").count() == 1
    assert _score(task, page, sites, WRONG_ANSWERS.get(task["task_id"], "Done.")) == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("task_id", WRONG_ACTIONS)
def test_plausible_wrong_state_changes_score_zero(page, sites, task_id):
    sites.reset_state()
    site, path, form = WRONG_ACTIONS[task_id]
    response = page.request.post(sites.urls[site] + path, form=form)
    assert response.ok  # the wrong change really happened (redirects are followed)
    task = next(t for t in ALL if t["task_id"] == task_id)
    page.goto(fill_placeholders(task["start_url"], sites.urls))
    assert _score(task, page, sites, "Done.") == 0.0
