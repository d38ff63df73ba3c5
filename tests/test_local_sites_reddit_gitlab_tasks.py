"""The reddit and gitlab tasks against the real sites in a real browser: the forms log in, the task files
are well formed and line up with WebArena's intent templates (their text, their eval types, this suite's
share of WebArena's mix), and neither a missing state change, nor a plausible wrong one, nor a wrong answer
scores. (Reference solutions scoring 1 is replayed through the environment in tests/test_local_tasks.py.)"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from webarena_gym.envs.evaluation.evaluator import Judge, check_eval_block, evaluate
from webarena_gym.envs.local.launcher import LocalSites
from webarena_gym.envs.local.reference import fill_placeholders
from webarena_gym.envs.local.registry import EVAL_KEYS, TASK_KEYS
from webarena_gym.envs.local.sites import gitlab, reddit

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
LOCAL = ROOT / "envs" / "local"
SITES = {"reddit": (reddit, range(200, 300)), "gitlab": (gitlab, [*range(300, 400), *range(700, 750)])}
TASKS = {site: json.loads((LOCAL / "tasks" / f"{site}.json").read_text()) for site in SITES}
SOLUTIONS = {site: json.loads((LOCAL / "solutions" / f"{site}.json").read_text()) for site in SITES}
ALL = [task for site in SITES for task in TASKS[site]]
BY_ID = {task["task_id"]: task for task in ALL}
LOCAL_TEMPLATE_BASE = 10000  # local-only tasks: today's template id + 10000

WEBARENA: dict[int, list[dict]] = {}
for _task in json.loads((ROOT / "envs" / "data" / "test.raw.json").read_text()):
    WEBARENA.setdefault(_task["intent_template_id"], []).append(_task)

# This suite's share of WebArena's mix (reddit: 21 templates / 106 tasks; gitlab: 41 / 180).
TARGETS = {"reddit": (13, 52), "gitlab": (26, 89)}

# Plausible wrong answers for the string_match tasks (fuzzy ones need the LLM judge and are left out).
WRONG_ANSWERS = {
    200: "BookishOwl",
    201: "OrbitWatcher",
    202: "CircuitSam",
    203: "books",
    204: "science, space, sports",
    223: "26",
    271: "2",
    272: "1",
    283: "Dune, Project Hail Mary",  # the single-book post just below the top 10
    284: "Dune by Frank Herbert, Project Hail Mary by Andy Weir",
    285: "Bookshop.org",
    300: "Hiro Ivanova",
    301: "Carol Ibrahim",
    302: "3",
    303: "3",
    322: "15",
    324: "Dave Greene",
    326: "Carol Nguyen, Hiro Ivanova, Tara Ibrahim",
    328: "Yes",
    329: "2",
    335: "Yes",
    336: "No",
    379: "vinta",
    392: "git clone git@gitlab.localhost:kilian/super-awesome-robot.git",
    700: "carolibrahim@gmail.com",  # the top contributor of another project
    701: "44",
    702: "2",
    703: "1",
    704: "2",
    712: "TMN_bBn9Z48qVbUFZV4",  # one character short
    721: "octicons",  # the second most starred
    722: "a11y-webring.club",  # the second least starred
    723: "cloud-to-butt, gimmiethat.space, timeit, pomodoro-cli, a11y-webring.club, web-scraper-kit",  # one missing
}


def _post_id(url: str) -> str:
    """The submission id in a Postmill post URL (``/f/<forum>/<id>/...``)."""
    return urlparse(url).path.split("/")[3]


def _targets(task: dict) -> list[str]:
    return [target["url"] for target in task["eval"]["program_html"]]


def _must(task: dict) -> str:
    """The first text the task's first state check requires (here: the title of the issue to assign)."""
    return task["eval"]["program_html"][0]["required_contents"]["must_include"][0]


def _iid(db: sqlite3.Connection, project: str, kind: str, title: str) -> int:
    namespace, path = project.split("/")
    return db.execute(
        "SELECT i.iid FROM gitlab_issuable i JOIN gitlab_project p ON p.id = i.project_id"
        " WHERE p.namespace = ? AND p.path = ? AND i.kind = ? AND i.title = ?",
        (namespace, path, kind, title),
    ).fetchone()[0]


A11Y = "/a11yproject/a11yproject.com"


def _repost(task: dict, forum: str, body: str) -> dict[str, str]:
    """The image submission form of a re-post task, filled with the task's image."""
    image = task["eval"]["program_html"][1]["required_contents"]["must_include"][0]
    return {
        "title": task["instantiation_dict"]["content"],
        "url": f"http://images.test/{image}",
        "body": body,
        "forum": forum,
    }


def _fork(project: str) -> tuple[str, str, dict[str, str]]:
    """The fork form's post that forks ``project`` into the account's namespace."""
    name = project.split("/")[1]
    return (
        "gitlab",
        f"/{project}/-/forks/new",
        {"name": name, "path": name, "namespace": "byteblaze", "visibility": "public"},
    )


def _invite(members_path: str, username: str) -> tuple[str, str, dict[str, str]]:
    return ("gitlab", members_path, {"username": username, "access_level": "30"})


WrongAction = Callable[[dict, sqlite3.Connection], list[tuple[str, str, dict[str, str]]]]
# Plausible wrong state changes, one or more (site, path, form) posts as the logged-in account, per eval
# pattern: the wrong vote, a partial set of votes, a post in the wrong forum or without the asked-for text,
# a reply that is not a reply, the wrong due date, swapped branches, the wrong role ...
WRONG_ACTIONS: dict[int, WrongAction] = {
    209: lambda t, db: [("reddit", f"/sv/{_post_id(_targets(t)[0])}", {"choice": "-1"})],  # downvote, not upvote
    211: lambda t, db: [("reddit", f"/sv/{_post_id(_targets(t)[0])}", {"choice": "1"})],
    229: lambda t, db: [("reddit", f"/sv/{_post_id(_targets(t)[0])}", {"choice": "-1"})],  # top 1 of top 3
    263: lambda t, db: [("reddit", f"/sv/{_post_id(_targets(t)[0])}", {"choice": "1"})],  # one of two posts
    267: lambda t, db: [("reddit", f"/sv/{_post_id(u)}", {"choice": "1"}) for u in _targets(t)],  # liked, not disliked
    212: lambda t, db: [("reddit", "/submit", {"title": t["instantiation_dict"]["question"], "forum": "gaming"})],
    281: lambda t, db: [
        ("reddit", "/submit", {"title": "Noise-cancelling headphones under $200?", "forum": "gadgets"})
    ],  # a fitting question in a less fitting forum
    236: lambda t, db: [("reddit", "/submit", {"title": "To Kill a Mockingbird by Harper Lee", "forum": "books"})],
    214: lambda t, db: [
        (
            "reddit",
            f"/f/books/{_post_id(_targets(t)[0])}/-/comment",
            {"comment": t["instantiation_dict"]["content_description"]},
        )
    ],  # a top-level comment, not a reply
    216: lambda t, db: [("reddit", "/user/MarvelsGrandpa/edit_biography", {"biography": "I am not a robot"})],
    218: lambda t, db: [
        (
            "reddit",
            f"/f/television/{_post_id(_targets(t)[0])}/-/edit",
            {"title": "The Night Agent renewed for season 2 at Netflix", "body": "Done watching, pretty cool!"},
        )
    ],  # the new line replaced the body instead of being added to it
    219: lambda t, db: [("reddit", "/f/science/subscribe", {"next": "/f/science"})],
    286: lambda t, db: [("reddit", "/submit", _repost(t, "EarthPorn", ""))],  # re-posted without the note
    287: lambda t, db: [("reddit", "/submit", _repost(t, "pics", "from /f/pics"))],  # in the forum it came from
    275: lambda t, db: [
        (
            "reddit",
            "/create_forum",
            {
                "name": "sci_fi",
                "title": "sci_fi",
                "description": "A wild place for sci-fi enthusiasts",
                "sidebar": "New\nClassic\nMovies",
            },
        )
    ],
    307: lambda t, db: [
        (
            "gitlab",
            "/a11yproject/a11yproject.com/-/issues/new",
            {"title": "401 bad gateway", "assignee": "roshanjossey", "due_date": "2030-12-30"},
        )
    ],
    309: lambda t, db: [
        ("gitlab", f"{A11Y}/-/issues/{_iid(db, A11Y[1:], 'issue', _must(t))}/update", {"assignee": "ericwu"})
    ],  # assigned to someone else
    312: lambda t, db: [
        ("gitlab", "/byteblaze/dotfiles/-/project_members", {"username": "vinta", "access_level": "20"})
    ],
    705: lambda t, db: [("gitlab", _targets(t)[0].removeprefix("__GITLAB__") + "/notes", {"note": "Thank you"})],
    708: lambda t, db: [
        (
            "gitlab",
            "/byteblaze/gimmiethat.space/-/edit/main/index.html",
            {"file_path": "index.html", "content": "<h1>GIVE ME SPACE</h1>", "commit_message": "Update title"},
        )
    ],  # the heading, not the title
    710: lambda t, db: [
        (
            "gitlab",
            "/byteblaze/timeit/-/edit/main/LICENSE",
            {"file_path": "LICENSE", "content": "Apache License, Version 2.0", "commit_message": "Relicense"},
        )
    ],
    372: lambda t, db: [
        (
            "gitlab",
            "/byteblaze/a11y-webring.club/-/project_members",
            {"username": "abisubramanya27", "access_level": "30"},
        )
    ],  # one of the two users
    375: lambda t, db: [
        ("gitlab", "/byteblaze/solarized-prism-theme/-/project_members", {"username": "vinta", "access_level": "10"})
    ],  # the wrong person
    314: lambda t, db: [("gitlab", "/-/profile", {"name": "Byte Blaze", "status_message": "Away"})],
    316: lambda t, db: [("gitlab", "/-/profile", {"name": "Byte Blaze", "website": "https://egg.tart.org"})],
    356: lambda t, db: [
        ("gitlab", _targets(t)[0].removeprefix("__GITLAB__") + "/notes", {"note": "Thanks, working on it"})
    ],
    360: lambda t, db: [
        (
            "gitlab",
            "/primer/design/-/merge_requests/new",
            {
                "source_branch": "dialog",
                "target_branch": "dialog-component",
                "title": "Dialogs",
                "reviewer": "carol_dev",
            },
        )
    ],  # branches swapped
    395: lambda t, db: [
        (
            "gitlab",
            "/primer/design/-/milestones",
            {"title": "Product launch", "start_date": "2030-01-16", "due_date": "2030-01-31"},
        )
    ],
    383: lambda t, db: [
        ("gitlab", "/projects/new", {"name": "planner", "visibility": "public"}),
        ("gitlab", "/byteblaze/planner/-/project_members", {"username": "abisubramanya27", "access_level": "10"}),
        ("gitlab", "/byteblaze/planner/-/project_members", {"username": "vinta", "access_level": "10"}),
    ],  # public, not private
    323: lambda t, db: [("gitlab", "/projects/new", {"name": "planer", "visibility": "private"})],
    387: lambda t, db: [("gitlab", "/primer/octicons/-/star", {}), ("gitlab", "/primer/design/-/star", {})],
    713: lambda t, db: [("gitlab", "/projects/new", {"name": "chatgpt", "visibility": "public", "readme": "1"})],
    # a new project of the same name, not a fork
    714: lambda t, db: [_fork("open-maps/tile-server")],  # one of the group's two projects
    715: lambda t, db: [_fork("webdev-guild/nodebb-theme")],  # another project
    716: lambda t, db: [
        ("gitlab", "/groups/new", {"name": "web-lab", "path": "web-lab"}),
        *(_invite("/groups/web-lab/-/group_members", u) for u in ("convexegg", "vinta")),
    ],  # one member missing
    717: lambda t, db: [
        ("gitlab", "/groups/new", {"name": "Crew", "path": "the-crew"}),
        *(_invite("/groups/the-crew/-/group_members", u) for u in ("abisubramanya27", "lahwaacz")),
    ],  # the group's URL is not the asked-for name
    718: lambda t, db: [
        ("gitlab", "/projects/new", {"name": "agent_notes", "visibility": "private", "readme": "1"}),
        *(_invite("/byteblaze/agent_notes/-/project_members", u) for u in ("abisubramanya27", "ericwu")),
    ],  # the wrong second member
    719: lambda t, db: [
        ("gitlab", "/projects/new", {"name": "droid_app", "template_name": "android", "visibility": "public"}),
        *(_invite("/byteblaze/droid_app/-/project_members", u) for u in ("convexegg", "Seirdy")),
    ],  # public, not private
    720: lambda t, db: [
        ("gitlab", "/projects/new", {"name": "static_site", "visibility": "private", "readme": "1"}),
        _invite("/byteblaze/static_site/-/project_members", "vinta"),
    ],  # a blank project, not the HTML template
    389: lambda t, db: [("gitlab", "/users/convexegg/follow", {})],
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
    for task in tasks:
        assert set(task) == TASK_KEYS and set(task["eval"]) <= EVAL_KEYS and task["sites"] == [site]
        template = task["intent_template_id"]
        assert task["task_id"] in ids
        assert template - LOCAL_TEMPLATE_BASE in ids or [site] in [t["sites"] for t in WEBARENA.get(template, [])]
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
def test_linked_tasks_instantiate_webarenas_templates_with_its_eval_types(site):
    linked = [t for t in TASKS[site] if t["intent_template_id"] < LOCAL_TEMPLATE_BASE]
    for task in linked:
        real = WEBARENA[task["intent_template_id"]]
        assert task["intent_template"] in {t["intent_template"] for t in real}, task["task_id"]
        assert set(re.findall(r"\{\{(\w+)\}\}", task["intent_template"])) == set(task["instantiation_dict"])
        used = {tuple(t["eval"]["eval_types"]) for t in real}
        assert tuple(task["eval"]["eval_types"]) in used or set(task["eval"]["eval_types"]) <= {
            kind for kinds in used for kind in kinds
        }, task["task_id"]
    templates, count = TARGETS[site]
    assert len({t["intent_template_id"] for t in linked}) >= templates and len(linked) >= count
    state_checks = [t for t in linked if "program_html" in t["eval"]["eval_types"]]
    assert len(state_checks) >= count // 2


@pytest.mark.parametrize("site", SITES)
def test_login_form_rejects_a_wrong_password(browser, sites, site):
    module, _ = SITES[site]
    context = browser.new_context()
    try:
        page = context.new_page()
        with pytest.raises(RuntimeError, match="rejected the login"):
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


def test_every_eval_type_has_wrong_samples():
    """The wrong-answer and wrong-state samples cover every eval type and both sites."""
    sampled = [BY_ID[i] for i in (*WRONG_ANSWERS, *WRONG_ACTIONS)]
    for site in SITES:
        types = {kind for t in sampled if t["sites"] == [site] for kind in t["eval"]["eval_types"]}
        assert types == {"string_match", "url_match", "program_html"}, site


@pytest.mark.slow
@pytest.mark.parametrize("task_id", WRONG_ACTIONS)
def test_plausible_wrong_state_changes_score_zero(page, sites, task_id):
    """The wrong change happens through the site's own forms; the page ends where that form leads."""
    sites.reset_state()
    task = BY_ID[task_id]
    db = sqlite3.connect(sites.db_path)
    try:
        posts: list[tuple[str, str, dict[str, Any]]] = WRONG_ACTIONS[task_id](task, db)
    finally:
        db.close()
    last = ""
    for site, path, form in posts:
        response = page.request.post(sites.urls[site] + path, form=form)
        assert response.ok  # the wrong change really happened (redirects are followed)
        last = response.url
    page.goto(last if last else fill_placeholders(task["start_url"], sites.urls))
    assert _score(task, page, sites, "Done.") == 0.0
