"""The local GitLab-like site through Flask's test client on a freshly seeded database."""

from __future__ import annotations

import re
import sqlite3

import pytest

from webarena_gym.envs.local.data import build
from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.sites import gitlab

SITE = "gitlab"
ME = gitlab.ACCOUNT["username"]


@pytest.fixture
def client(db_path):
    client = gitlab.create_app(SiteContext("gitlab", str(db_path))).test_client()
    assert (
        client.post("/users/sign_in", data={"username": ME, "password": gitlab.ACCOUNT["password"]}).status_code == 302
    )
    return client


def _one(db_path, sql: str, *params):
    return sqlite3.connect(db_path).execute(sql, params).fetchone()


def test_seed_is_deterministic_and_realistic(pristine, tmp_path):
    again = tmp_path / "again.sqlite"
    build(again, [SITE])
    dump = lambda p: list(sqlite3.connect(p).iterdump())  # noqa: E731
    assert dump(pristine) == dump(again)
    count = lambda sql: _one(pristine, sql)[0]  # noqa: E731
    assert count("SELECT COUNT(*) FROM gitlab_project") == 30
    assert count("SELECT COUNT(*) FROM gitlab_user") >= 60
    assert count("SELECT COUNT(*) FROM gitlab_issuable WHERE kind = 'issue'") >= 300
    assert count("SELECT COUNT(*) FROM gitlab_issuable WHERE kind = 'merge_request'") >= 100
    assert count("SELECT COUNT(*) FROM gitlab_commit") >= 1000


def test_everything_but_sign_in_needs_a_session(db_path):
    anon = gitlab.create_app(SiteContext("gitlab", str(db_path))).test_client()
    assert anon.get("/primer/design").headers["Location"].startswith("/users/sign_in")
    bad = anon.post("/users/sign_in", data={"username": ME, "password": "nope"})
    assert bad.status_code == 401 and b"Invalid login or password." in bad.data


@pytest.mark.parametrize(
    "path, min_links",
    [
        ("/dashboard/projects", 25),
        ("/explore/projects", 40),
        ("/primer/design", 20),
        ("/primer/design/-/commits/main", 15),
        ("/a11yproject/a11yproject.com/-/issues?state=all", 40),
        ("/primer/design/-/merge_requests?state=all", 20),
        ("/primer/design/-/project_members", 20),
        ("/dashboard/merge_requests?reviewer_username=byteblaze", 15),
    ],
)
def test_pages_render_with_many_elements(client, path, min_links):
    response = client.get(path)
    assert response.status_code == 200
    assert response.data.decode().count("<a ") >= min_links


def test_every_page_kind_renders(client):
    for path in (
        "/",
        "/explore",
        "/dashboard/projects/starred",
        "/dashboard/groups",
        "/explore/groups",
        "/groups/primer",
        "/groups/primer/-/group_members",
        "/primer",
        "/kilian",
        f"/users/{ME}/starred",
        "/-/profile",
        "/projects/new",
        "/primer/design/-/tree/main/docs",
        "/primer/design/-/blob/main/README.md",
        "/primer/design/-/issues/1",
        "/primer/design/-/merge_requests/1",
        "/primer/design/-/issues/new",
        "/primer/design/-/merge_requests/new",
        "/primer/design/-/milestones",
        "/primer/design/-/labels",
        "/primer/design/-/edit",
        "/dashboard/issues?author_username=kilian",
    ):
        response = client.get(path, follow_redirects=True)
        assert response.status_code == 200, path


def test_private_projects_are_hidden_from_non_members(client, db_path):
    assert client.get("/byteblaze/dotfiles").status_code == 200
    client.post("/users/sign_out")
    uid = _one(db_path, "SELECT id FROM gitlab_user WHERE username = 'kilian'")[0]
    with client.session_transaction() as session:
        session["user_id"] = uid
    assert client.get("/byteblaze/dotfiles").status_code == 404


def test_file_browser_and_raw_file(client):
    tree = client.get("/primer/design/-/tree/main/").data.decode()
    assert "README.md" in tree and "LICENSE" in tree and "/-/tree/main/docs" in tree
    assert client.get("/primer/design/-/raw/main/LICENSE").data.startswith(b"MIT License")
    assert client.get("/primer/design/-/blob/main/missing.txt").status_code == 404


def test_contributors_rank_commit_counts(client):
    page = client.get("/primer/design/-/graphs/main").data.decode()
    counts = [int(n) for n in re.findall(r'class="person-commits">(\d+) commits', page)]
    assert counts == sorted(counts, reverse=True)
    assert re.search(r'person-name">Carol Nguyen</td>', page).start() < page.index("person-commits")


def test_issue_filters_and_state_tabs(client, db_path):
    page = client.get("/a11yproject/a11yproject.com/-/issues?label_name[]=bug&state=opened").data.decode()
    titles = re.findall(r'class="issue-title title"><a [^>]+>([^<]+)</a>', page)
    expected = _one(
        db_path,
        "SELECT COUNT(*) FROM gitlab_issuable i JOIN gitlab_issuable_label il ON il.issuable_id = i.id"
        " JOIN gitlab_label l ON l.id = il.label_id JOIN gitlab_project p ON p.id = i.project_id"
        " WHERE p.path = 'a11yproject.com' AND i.kind = 'issue' AND i.state = 'opened'"
        " AND l.name = 'bug'",
    )[0]
    assert len(titles) == expected and "404 error on the resources page after the redesign" in titles
    closed = client.get("/a11yproject/a11yproject.com/-/issues?state=closed").data.decode()
    assert "OPEN" not in closed and closed.count("<strong>CLOSED</strong>") >= 1


def test_create_issue_validates_and_assigns(client):
    bad = client.post("/primer/design/-/issues/new", data={"title": "", "due_date": "tomorrow"})
    assert (
        bad.status_code == 400 and b"Title can&#39;t be blank." in bad.data and b"Due date must be a date" in bad.data
    )
    created = client.post(
        "/primer/design/-/issues/new",
        data={
            "title": "401 bad gateway",
            "assignee": "carol_dev",
            "labels": ["bug", "performance"],
            "due_date": "2023-05-01",
        },
    )
    page = client.get(created.headers["Location"]).data.decode()
    assert '<h1 class="title" data-qa-selector="title_content">401 bad gateway</h1>' in page
    assert "@carol_dev" in page.split('class="block assignee"')[1].split("</div>")[0]
    labels = page.split('class="block labels"')[1].split("</div>")[0]
    assert "bug" in labels and "performance" in labels and "2023-05-01" in page


def test_non_members_cannot_be_assigned(client, db_path):
    iid = _one(db_path, "SELECT iid FROM gitlab_issuable WHERE title = 'Outdated screen reader survey statistics'")[0]
    url = f"/a11yproject/a11yproject.com/-/issues/{iid}"
    client.post(f"{url}/update", data={"assignee": "kilian"})  # not a member of this project
    assert "None" in client.get(url).data.decode().split('class="block assignee"')[1].split("</div>")[0]
    client.post(f"{url}/state", data={"state": "closed"})
    assert '<span class="issuable-status-badge">Closed</span>' in client.get(url).data.decode()
    assert client.post(f"{url}/state", data={"state": "merged"}).status_code == 400


def test_merge_request_reviewer_and_dashboard(client, db_path):
    iid = _one(
        db_path,
        "SELECT i.iid FROM gitlab_issuable i JOIN gitlab_project p ON p.id = i.project_id"
        " WHERE p.path = 'design' AND i.title = 'Add octovisuals page'",
    )[0]
    client.post(f"/primer/design/-/merge_requests/{iid}/update", data={"reviewer": "carol_dev"})
    listing = client.get("/dashboard/merge_requests?reviewer_username=carol_dev").data.decode()
    assert "Add octovisuals page" in listing
    assert client.get("/dashboard/issues").headers["Location"].endswith(f"assignee_username={ME}")


def test_invite_member_with_role(client):
    bad = client.post("/byteblaze/dotfiles/-/project_members", data={"username": "", "access_level": "10"})
    assert bad.status_code == 400 and b"Select a user to invite." in bad.data
    client.post("/byteblaze/dotfiles/-/project_members", data={"username": "vinta", "access_level": "20"})
    page = client.get("/byteblaze/dotfiles/-/project_members").data.decode()
    row = page.split('data-username="vinta"')[1].split("</tr>")[0]
    assert '<span class="gl-avatar-labeled-sublabel">@vinta</span>' in row
    assert '<td class="col-max-role member-role" data-label="Max role"><span>Reporter</span></td>' in row
    again = client.post("/byteblaze/dotfiles/-/project_members", data={"username": "vinta", "access_level": "30"})
    assert again.status_code == 400 and b"already a member" in again.data


def test_profile_settings_validate_and_show_on_profile(client):
    bad = client.post("/-/profile", data={"name": "", "website": "egg"})
    assert bad.status_code == 400 and b"Full name can&#39;t be blank." in bad.data
    client.post(
        "/-/profile",
        data={"name": "Byte Blaze", "status_message": "Busy", "bio": "Hi there", "website": "https://egg.tart.com"},
    )
    profile = client.get(f"/{ME}").data.decode()
    assert re.search(r'class="cover-status">.*</span>Busy</div>', profile)
    assert 'itemprop="url" href="https://egg.tart.com"' in profile and "Hi there" in profile


def test_star_and_new_project(client):
    client.post("/primer/octicons/-/star")
    assert "primer / octicons" in client.get(f"/users/{ME}/starred").data.decode()
    assert client.post("/projects/new", data={"name": "", "visibility": "private"}).status_code == 400
    created = client.post("/projects/new", data={"name": "planner", "visibility": "private", "readme": "1"})
    assert created.headers["Location"] == f"/{ME}/planner"
    assert 'title="Private"' in client.get(f"/{ME}/planner").data.decode()


def test_website_shows_without_its_scheme_and_links_with_one(client):
    client.post("/-/profile", data={"name": "Byte Blaze", "website": "a11yproject.contributor.me"})
    profile = client.get(f"/{ME}").data.decode()
    assert 'href="https://a11yproject.contributor.me">a11yproject.contributor.me</a>' in profile
    assert client.post("/-/profile", data={"name": "Byte Blaze", "website": "not a url"}).status_code == 400


def test_follow_and_following_page(client):
    assert "is not following anyone" in client.get(f"/users/{ME}/following").data.decode()
    client.post("/users/yjlou/follow")
    following = client.get(f"/users/{ME}/following").data.decode()
    assert "@yjlou" in following and "1 following" in following
    assert "Unfollow</button>" in client.get("/yjlou").data.decode()
    client.post("/users/yjlou/unfollow")
    assert "@yjlou" not in client.get(f"/users/{ME}/following").data.decode()
    assert client.post(f"/users/{ME}/follow").status_code == 400  # nobody follows themself


def test_milestone_dates_validate_and_show_in_gitlab_format(client):
    bad = client.post("/primer/design/-/milestones", data={"title": "Launch", "start_date": "1/16/2030"})
    assert bad.status_code == 400 and b"valid dates" in bad.data
    backwards = client.post(
        "/primer/design/-/milestones", data={"title": "Launch", "start_date": "2030-02-01", "due_date": "2030-01-01"}
    )
    assert backwards.status_code == 400
    made = client.post(
        "/primer/design/-/milestones", data={"title": "Launch", "start_date": "2030-01-16", "due_date": "2030-02-05"}
    )
    page = client.get(made.headers["Location"]).data.decode()
    assert "Jan 16, 2030" in page.split('class="block start_date"')[1] and "Feb 5, 2030" in page


def test_merge_request_page_names_source_then_target_branch(client):
    created = client.post(
        "/primer/design/-/merge_requests/new",
        data={
            "source_branch": "dialog-component",
            "target_branch": "dialog",
            "title": "Dialogs",
            "reviewer": "carol_dev",
        },
    )
    page = client.get(created.headers["Location"]).data.decode()
    description = page.split('class="detail-page-description')[1].split('<div class="md">')[0]
    assert description.index(">dialog-component</a>") < description.index(">dialog</a>")
    assert "Carol Nguyen" in page.split('class="block reviewer"')[1].split("</div>")[0]


def test_todos_list_review_requests_and_empty_feature_pages_render(client):
    todos = client.get("/dashboard/todos").data.decode()
    assert "requested a review of" in todos and "Add WCAG 2.2 success criteria" in todos
    assert client.get("/primer/design/-/pipelines").status_code == 200
    assert client.get("/primer/design/-/no-such-feature").status_code == 404


def test_issues_without_labels_filter(client, db_path):
    page = client.get("/a11yproject/a11yproject.com/-/issues?label_name[]=None&state=all").data.decode()
    listed = page.split('class="content-list issuable-list"')[1].split("</ul>")[0]
    assert 'class="gl-label"' not in listed and "issuable-row" in listed


def test_project_from_template_gets_its_files_description_and_commit(client):
    listing = client.get("/projects/new?tab=create_from_template").data.decode()
    assert 'aria-label="Use template Android"' in listing and "Pages/Plain HTML" in listing
    assert client.get("/projects/new?template_name=nope").status_code == 404
    created = client.post("/projects/new", data={"name": "site", "template_name": "plainhtml", "visibility": "private"})
    assert created.headers["Location"] == f"/{ME}/site"
    home = client.get(f"/{ME}/site").data.decode()
    assert "Example plain HTML site using GitLab Pages: https://pages.gitlab.io/plain-html" in home
    assert (
        "Initialized from &#39;Pages/Plain HTML&#39; project template"
        in client.get(f"/{ME}/site/-/commits").data.decode()
    )


def test_fork_copies_the_repository_into_a_namespace_of_the_account(client, db_path):
    form = client.get("/convexegg/chatgpt/-/forks/new").data.decode()
    assert f'<option value="{ME}">' in form and '<option value="primer">' not in form  # a Developer there
    no_namespace = {"name": "chatgpt", "path": "chatgpt", "visibility": "public"}
    assert client.post("/convexegg/chatgpt/-/forks/new", data=no_namespace).status_code == 400
    forked = client.post("/convexegg/chatgpt/-/forks/new", data={**no_namespace, "namespace": ME})
    assert forked.headers["Location"] == f"/{ME}/chatgpt"
    assert "Forked from" in client.get(f"/{ME}/chatgpt").data.decode()
    assert 'aria-label="1 forks"' in client.get("/convexegg/chatgpt").data.decode()
    commits = "SELECT COUNT(*) FROM gitlab_commit c JOIN gitlab_project p ON p.id = c.project_id WHERE p.namespace = ?"
    assert _one(db_path, commits + " AND p.path = 'chatgpt'", ME)[0] == _one(db_path, commits, "convexegg")[0] > 0
    again = client.post("/convexegg/chatgpt/-/forks/new", data={**no_namespace, "namespace": ME})
    assert again.status_code == 400 and b"already been taken" in again.data


def test_new_group_and_its_members(client):
    assert client.post("/groups/new", data={"name": "Primer", "path": "primer"}).status_code == 400  # taken
    assert client.post("/groups/new", data={"name": "Me", "path": ME}).status_code == 400  # a user's namespace
    created = client.post("/groups/new", data={"name": "web-lab", "path": "web-lab", "visibility": "private"})
    assert created.headers["Location"] == "/groups/web-lab"
    assert "web-lab" in client.get("/dashboard/groups").data.decode()
    client.post("/groups/web-lab/-/group_members", data={"username": "vinta", "access_level": "30"})
    page = client.get("/groups/web-lab/-/group_members").data.decode()
    assert "@vinta" in page and f"@{ME}" in page and "Invite members" in page
    again = client.post("/groups/web-lab/-/group_members", data={"username": "vinta", "access_level": "30"})
    assert b"already a member of this group" in client.get(again.headers["Location"]).data
    assert client.post("/groups/primer/-/group_members", data={"username": "vinta"}).status_code == 403


def test_contributed_projects_are_those_with_the_users_commits(client):
    page = client.get(f"/users/{ME}/contributed?sort=stars_desc").data.decode()
    listed = re.findall(r'class="project-title"><a href="/([^"]+)"', page)
    assert listed[:3] == ["a11yproject/a11yproject.com", "primer/octicons", "primer/css"]
    assert "convexegg/chatgpt" not in listed and f"{ME}/web-scraper-kit" == listed[-1]
