"""The local reddit (Postmill-like) site through Flask's test client on a freshly seeded database."""

from __future__ import annotations

import re
import sqlite3

import pytest

from webarena_gym.envs.local.data import build
from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.sites import reddit

SITE = "reddit"
USER = reddit.ACCOUNT["username"]


@pytest.fixture
def client(db_path):
    return reddit.create_app(SiteContext("reddit", str(db_path))).test_client()


@pytest.fixture
def member(client):
    response = client.post("/login", data={"_username": USER, "_password": reddit.ACCOUNT["password"]})
    assert response.status_code == 302
    return client


def _db(db_path) -> sqlite3.Connection:
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    return conn


def _post_id(db_path, title: str) -> int:
    return _db(db_path).execute("SELECT id FROM reddit_submission WHERE title = ?", (title,)).fetchone()[0]


def test_seed_is_deterministic_and_realistic(pristine, tmp_path):
    again = tmp_path / "again.sqlite"
    build(again, [SITE])
    dump = lambda p: list(sqlite3.connect(p).iterdump())  # noqa: E731
    assert dump(pristine) == dump(again)
    conn = _db(pristine)
    counts = {
        t: conn.execute(f"SELECT COUNT(*) FROM reddit_{t}").fetchone()[0]
        for t in ("forum", "user", "submission", "comment")
    }
    assert counts["forum"] == 40 and counts["user"] >= 150
    assert counts["submission"] >= 1200 and counts["comment"] >= 6000
    smallest = conn.execute("SELECT MIN(n) FROM (SELECT COUNT(*) AS n FROM reddit_submission GROUP BY forum_id)")
    assert smallest.fetchone()[0] >= 25  # every forum's first listing page is full, as on WebArena
    assert conn.execute("SELECT COUNT(*) FROM reddit_comment WHERE parent_id IS NOT NULL").fetchone()[0] > 500


@pytest.mark.parametrize(
    "path, min_links",
    [
        ("/", 100),
        ("/new", 100),
        ("/top?page=2", 100),
        ("/forums", 40),
        ("/forums/alphabetical", 40),
        ("/f/books", 60),
        ("/f/books/top", 60),
        ("/user/PageTurner_88", 10),
        ("/search?q=recommendations", 40),
    ],
)
def test_pages_render_with_many_elements(client, path, min_links):
    response = client.get(path)
    assert response.status_code == 200
    assert response.data.decode().count("<a ") >= min_links


def test_member_pages_render(member, db_path):
    cid, sid = (
        _db(db_path)
        .execute(
            "SELECT id, submission_id FROM reddit_comment WHERE submission_id IN"
            " (SELECT id FROM reddit_submission WHERE forum_id = 1) LIMIT 1"
        )
        .fetchone()
    )
    forum = _db(db_path).execute("SELECT name FROM reddit_forum WHERE id = 1").fetchone()[0]
    for path in (
        "/submit",
        "/submit/books",
        f"/user/{USER}/edit_biography",
        f"/user/{USER}/comments",
        f"/user/{USER}/submissions",
        f"/f/{forum}/{sid}/-/comment/{cid}",
        "/forums/submissions",
    ):
        assert member.get(path).status_code == 200, path
    assert 'class="comment-form"' in member.get(f"/f/{forum}/{sid}/-/comment/{cid}").data.decode()


def test_alphabetical_forum_list_is_sorted_case_insensitively(client):
    names = re.findall(r'<li><a href="/f/([^"]+)">', client.get("/forums/alphabetical").data.decode())
    assert len(names) == 40 and names == sorted(names, key=str.lower)


def test_sort_tabs_order_listings(client, db_path):
    top = re.findall(r'class="vote__net-score">(-?\d+)<', client.get("/f/space/top").data.decode())
    assert [int(s) for s in top] == sorted((int(s) for s in top), reverse=True)
    newest = re.findall(r'<time datetime="([^"]+)"', client.get("/f/space/new").data.decode())
    assert newest == sorted(newest, reverse=True)


def test_post_page_nests_comments(client, db_path):
    sid = _post_id(db_path, "Adults reading to each other out loud?")
    page = client.get(f"/f/books/{sid}/adults-reading-to-each-other-out-loud").data.decode()
    assert "read Tolkien to each other every night" in page
    sid, forum, replies = (
        _db(db_path)
        .execute(
            "SELECT c.submission_id, f.name, COUNT(*) AS n FROM reddit_comment c JOIN reddit_submission s"
            " ON s.id = c.submission_id JOIN reddit_forum f ON f.id = s.forum_id WHERE c.parent_id IS NOT NULL"
            " GROUP BY c.submission_id ORDER BY n DESC LIMIT 1"
        )
        .fetchone()
    )
    page = client.get(f"/f/{forum}/{sid}/x").data.decode()
    assert replies >= 5 and len(re.findall(r'class="comment__replies">\s*<article', page)) >= 3


def test_login_rejects_bad_password_and_guards_writes(client):
    bad = client.post("/login", data={"_username": USER, "_password": "wrong"})
    assert bad.status_code == 401 and b"Invalid credentials." in bad.data
    assert client.get("/submit").headers["Location"].startswith("/login")
    assert client.post("/sv/1", data={"choice": "1"}).status_code == 302  # to the login form, no vote
    assert b"Log in" in client.get("/").data


def test_submit_validates_then_creates_post(member, db_path):
    bad = member.post("/submit", data={"title": " ", "url": "not a url", "forum": ""})
    assert bad.status_code == 400
    text = bad.data.decode()
    for message in ("This value should not be blank.", "This value is not a valid URL.", "Please choose a forum."):
        assert message in text
    good = member.post("/submit", data={"title": "Is a car necessary in NYC?", "body": "", "url": "", "forum": "nyc"})
    assert good.status_code == 302 and "/f/nyc/" in good.headers["Location"]
    newest = member.get("/f/nyc/new").data.decode()
    assert newest.index("Is a car necessary in NYC?") < newest.index("vote__net-score", newest.index("NYC?"))


def test_votes_toggle_and_keep_scores_consistent(member, db_path):
    sid = _post_id(db_path, "A custom gaming PC built inside a vintage typewriter")
    score = lambda: (  # noqa: E731
        _db(db_path).execute("SELECT upvotes - downvotes FROM reddit_submission WHERE id = ?", (sid,)).fetchone()[0]
    )
    before = score()
    url = f"/f/gadgets/{sid}/x"
    member.post(f"/sv/{sid}", data={"choice": "1", "next": url})
    assert 'class="vote vote--user-upvoted"' in member.get(url).data.decode() and score() == before + 1
    member.post(f"/sv/{sid}", data={"choice": "-1", "next": url})
    assert 'class="vote vote--user-downvoted"' in member.get(url).data.decode() and score() == before - 1
    member.post(f"/sv/{sid}", data={"choice": "0", "next": url})
    assert score() == before
    assert member.post(f"/sv/{sid}", data={"choice": "5"}).status_code == 400 and score() == before
    assert member.post(f"/sv/{sid}", data={"choice": "1", "next": "//evil.example"}).headers["Location"] == "/"


def test_reply_is_nested_under_its_parent(member, db_path):
    conn = _db(db_path)
    cid, sid = conn.execute(
        "SELECT c.id, c.submission_id FROM reddit_comment c JOIN reddit_user u ON u.id = c.user_id"
        " WHERE u.username = 'BookishOwl' AND c.body LIKE '%Tolkien%'"
    ).fetchone()
    assert member.post(f"/f/books/{sid}/-/comment", data={"comment": "", "parent": cid}).status_code == 302
    assert (
        _db(db_path)
        .execute("SELECT COUNT(*) FROM reddit_comment WHERE parent_id = ? AND body = ''", (cid,))
        .fetchone()[0]
        == 0
    )
    member.post(f"/f/books/{sid}/-/comment", data={"comment": "Same here!", "parent": cid})
    assert (
        _db(db_path)
        .execute("SELECT COUNT(*) FROM reddit_comment WHERE parent_id = ? AND body = 'Same here!'", (cid,))
        .fetchone()[0]
        == 1
    )


def test_only_the_author_edits_a_post_and_biography(member, db_path):
    own = _post_id(db_path, "The Night Agent renewed for season 2 at Netflix")
    other = _post_id(db_path, "Adults reading to each other out loud?")
    assert member.get(f"/f/books/{other}/-/edit").status_code == 403
    form = member.get(f"/f/television/{own}/-/edit").data.decode()
    assert "Great news, the first season was a fun ride.</textarea>" in form
    assert member.post(f"/f/television/{own}/-/edit", data={"title": "", "body": "x"}).status_code == 400
    member.post(f"/f/television/{own}/-/edit", data={"title": "The Night Agent renewed", "body": "Line two"})
    assert "Line two" in member.get(f"/f/television/{own}/x").data.decode()
    assert member.get("/user/PageTurner_88/edit_biography").status_code == 403
    member.post(f"/user/{USER}/edit_biography", data={"biography": "I am a robot"})
    assert '<div class="user-bio__biography">I am a robot</div>' in member.get(f"/user/{USER}").data.decode()


def test_subscribing_shows_in_the_front_page_sidebar(member):
    assert "Subscribe</button>" in member.get("/f/space").data.decode()
    front = member.get("/").data.decode()
    assert front.index('class="sidebar__subscriptions"') < front.index('class="sidebar__welcome"')
    assert '<a href="/f/space">space</a>' not in front
    member.post("/f/space/subscribe", data={"next": "/f/space"})
    assert "Unsubscribe</button>" in member.get("/f/space").data.decode()
    subscriptions = member.get("/").data.decode().split('class="sidebar__welcome"')[0]
    assert '<a href="/f/space">space</a>' in subscriptions


def test_forum_creation_validates_and_makes_the_creator_moderator(member):
    bad = member.post("/create_forum", data={"name": "no spaces allowed", "title": "x"})
    assert bad.status_code == 400 and "3 to 25 letters" in bad.data.decode()
    taken = member.post("/create_forum", data={"name": "books", "title": "Books"})
    assert taken.status_code == 400 and "already exists" in taken.data.decode()
    made = member.post(
        "/create_forum", data={"name": "sci_fi", "title": "Sci-fi", "description": "A wild place", "sidebar": "New"}
    )
    assert made.status_code == 302 and made.headers["Location"].endswith("/f/sci_fi")
    edit = member.get("/f/sci_fi/edit").data.decode()
    assert 'id="forum_description" name="description" rows="3">A wild place<' in edit
    member.post("/f/sci_fi/edit", data={"title": "Sci-fi", "description": "Changed", "sidebar": "New\nClassic"})
    assert "Changed" in member.get("/f/sci_fi").data.decode()
    assert member.get("/f/books/edit").status_code == 403  # only moderators edit a forum


def test_post_urls_accept_the_canonical_trailing_slash(client, db_path):
    sid = _post_id(db_path, "Adults reading to each other out loud?")
    assert client.get(f"/f/books/{sid}/").status_code == 200
    assert client.get(f"/f/space/{sid}/").status_code == 404  # the post is not in that forum


def test_active_sort_puts_the_last_commented_post_first(member, db_path):
    """Postmill's "Active" listing ranks by last activity: a new comment lifts an old post to the top."""
    first = re.findall(r'href="/f/DIY/(\d+)/', member.get("/f/DIY/active").data.decode())
    old = (
        _db(db_path)
        .execute(
            "SELECT MIN(s.id) FROM reddit_submission s JOIN reddit_forum f ON f.id = s.forum_id WHERE f.name = 'DIY'"
        )
        .fetchone()[0]
    )
    assert str(old) not in first[:25]
    member.post(f"/f/DIY/{old}/-/comment", data={"comment": "Still relevant."})
    assert re.findall(r'href="/f/DIY/(\d+)/', member.get("/f/DIY/active").data.decode())[0] == str(old)


def test_image_submissions_show_a_thumbnail_of_an_image_the_site_serves(client):
    """/f/pics holds image submissions as Postmill's uploads: a thumbnail in the listing, the file at its own path."""
    images = re.findall(r'<img src="(/submission_images/[0-9a-f]{64}\.jpg)"', client.get("/f/pics").data.decode())
    assert len(images) == 4
    response = client.get(images[0])
    assert response.status_code == 200 and response.mimetype == "image/jpeg" and response.data[:2] == b"\xff\xd8"
    assert client.get("/submission_images/missing.jpg").status_code == 404
