"""HTTP views of the Postmill-like forum.

URLs, form field names and CSS classes follow Postmill's (``/f/<forum>/<id>/<slug>``,
``div.submission__vote form.vote--user-upvoted``, ``.user-bio__biography`` ...) so that task checks
written in WebArena's style read the same state here.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime
from typing import Any

from flask import Flask, abort, flash, g, redirect, render_template, request, send_from_directory, session, url_for

from webarena_gym.envs.local.framework import (
    STATIC_DIR,
    SiteContext,
    get_db,
    int_arg,
    make_app,
    query_row,
    safe_next,
)

from .data import hash_password

PER_PAGE = 25
SORTS = ("hot", "new", "active", "top")
# Hot = score decayed by age; the reference instant is fixed so rankings are reproducible.
# Active = Postmill's last activity: the newest comment, or the submission itself when it has none.
_ORDER = {
    "new": "s.created_at DESC, s.id DESC",
    "active": "COALESCE((SELECT MAX(c.created_at) FROM reddit_comment c WHERE c.submission_id = s.id), s.created_at)"
    " DESC, s.id DESC",
    "top": "(s.upvotes - s.downvotes) DESC, s.id ASC",
    "hot": "(s.upvotes - s.downvotes + 10.0) / (MAX(julianday('2023-04-01') - julianday(s.created_at), 0) * 24 + 2)"
    " DESC, s.id DESC",
}
_LISTING = """
SELECT s.id, s.title, s.url, s.body, s.created_at, s.edited_at, s.user_id, f.name AS forum, u.username,
       s.upvotes - s.downvotes AS score,
       (SELECT COUNT(*) FROM reddit_comment c WHERE c.submission_id = s.id) AS n_comments
FROM reddit_submission s JOIN reddit_forum f ON f.id = s.forum_id JOIN reddit_user u ON u.id = s.user_id
"""
# Uploaded images live at Postmill's own path, named by the SHA-256 of their bytes.
_IMAGES_DIR = STATIC_DIR / "reddit" / "submission_images"
_URL_RE = re.compile(r"^https?://[^\s/$.?#].[^\s]*$", re.IGNORECASE)


def slugify(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)[:60].strip("-") or "-"


def _now() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def _current_user() -> sqlite3.Row | None:
    if "user" not in g:
        uid = session.get("user_id")
        g.user = get_db().execute("SELECT * FROM reddit_user WHERE id = ?", (uid,)).fetchone() if uid else None
    return g.user


def _require_login() -> sqlite3.Row:
    user = _current_user()
    if user is None:
        abort(redirect(url_for("login", next=request.full_path)))
    return user


def _votes(kind: str, ids: list[int]) -> dict[int, int]:
    user = _current_user()
    if user is None or not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = (
        get_db()
        .execute(
            f"SELECT target_id, choice FROM reddit_vote WHERE user_id = ? AND kind = ? AND target_id IN ({marks})",
            (user["id"], kind, *ids),
        )
        .fetchall()
    )
    return {r["target_id"]: r["choice"] for r in rows}


def _listing(where: str, params: tuple[Any, ...], sort: str) -> dict[str, Any]:
    """One page of submissions plus what the listing template needs (votes, pager)."""
    db = get_db()
    total = db.execute(
        f"SELECT COUNT(*) FROM reddit_submission s JOIN reddit_forum f ON f.id = s.forum_id"
        f" JOIN reddit_user u ON u.id = s.user_id WHERE {where}",
        params,
    ).fetchone()[0]
    page = int_arg("page", 1)
    rows = db.execute(
        f"{_LISTING} WHERE {where} ORDER BY {_ORDER[sort]} LIMIT ? OFFSET ?", (*params, PER_PAGE, (page - 1) * PER_PAGE)
    ).fetchall()
    return {
        "submissions": rows,
        "votes": _votes("submission", [r["id"] for r in rows]),
        "sort": sort,
        "page": page,
        "has_next": page * PER_PAGE < total,
        "total": total,
    }


def _forum(name: str) -> sqlite3.Row:
    forum = get_db().execute("SELECT * FROM reddit_forum WHERE name = ?", (name,)).fetchone()
    if forum is None:
        abort(404)
    return forum


def _forum_info(forum: sqlite3.Row) -> dict[str, Any]:
    """What the forum sidebar shows: subscription state, subscriber count, moderators."""
    db = get_db()
    me = _current_user()
    subscribed = me is not None and (
        db.execute(
            "SELECT 1 FROM reddit_subscription WHERE user_id = ? AND forum_id = ?", (me["id"], forum["id"])
        ).fetchone()
        is not None
    )
    return {
        "forum": forum,
        "subscribed": subscribed,
        "subscribers": query_row("SELECT COUNT(*) FROM reddit_subscription WHERE forum_id = ?", (forum["id"],))[0],
        "moderators": db.execute(
            "SELECT u.id, u.username FROM reddit_moderator m JOIN reddit_user u"
            " ON u.id = m.user_id WHERE m.forum_id = ? ORDER BY u.username",
            (forum["id"],),
        ).fetchall(),
    }


def time_ago(value: str) -> str:
    """Postmill's relative time ("2 years ago") of a stored timestamp, from the real clock."""
    seconds = max(0, int((datetime.now() - datetime.fromisoformat(value)).total_seconds()))
    for unit, size in (("year", 365 * 86400), ("month", 30 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    return "just now"


def long_time(value: str) -> str:
    """A timestamp as Postmill's tooltip prints it: ``March 31, 2023 at 6:00:00 PM``."""
    moment = datetime.fromisoformat(value)
    return f"{moment:%B} {moment.day}, {moment.year} at {moment.hour % 12 or 12}:{moment:%M:%S %p}"


def _submission(forum: str, sid: int) -> sqlite3.Row:
    row = get_db().execute(f"{_LISTING} WHERE s.id = ? AND f.name = ?", (sid, forum)).fetchone()
    if row is None:
        abort(404)
    return row


def _subscribed_forums() -> list[sqlite3.Row]:
    user = _current_user()
    if user is None:
        return []
    return (
        get_db()
        .execute(
            "SELECT f.name FROM reddit_subscription s JOIN reddit_forum f ON f.id = s.forum_id"
            " WHERE s.user_id = ? ORDER BY f.name COLLATE NOCASE",
            (user["id"],),
        )
        .fetchall()
    )


def _comment_tree(sid: int) -> tuple[dict[int | None, list[sqlite3.Row]], dict[int, int]]:
    rows = (
        get_db()
        .execute(
            "SELECT c.*, u.username, c.upvotes - c.downvotes AS score FROM reddit_comment c"
            " JOIN reddit_user u ON u.id = c.user_id WHERE c.submission_id = ?"
            " ORDER BY c.upvotes - c.downvotes DESC, c.id",
            (sid,),
        )
        .fetchall()
    )
    children: dict[int | None, list[sqlite3.Row]] = {}
    for row in rows:
        children.setdefault(row["parent_id"], []).append(row)
    return children, _votes("comment", [r["id"] for r in rows])


def _apply_vote(kind: str, target: int, choice: int) -> None:
    """Record the user's vote and keep the denormalised up/down counters in step with it."""
    user = _require_login()
    if choice not in (-1, 0, 1):
        abort(400)
    table = "reddit_submission" if kind == "submission" else "reddit_comment"
    db = get_db()
    if db.execute(f"SELECT 1 FROM {table} WHERE id = ?", (target,)).fetchone() is None:
        abort(404)
    old = db.execute(
        "SELECT choice FROM reddit_vote WHERE user_id = ? AND kind = ? AND target_id = ?", (user["id"], kind, target)
    ).fetchone()
    old_choice = old["choice"] if old else 0
    if old_choice == choice:
        return
    up = (choice == 1) - (old_choice == 1)
    down = (choice == -1) - (old_choice == -1)
    db.execute(f"UPDATE {table} SET upvotes = upvotes + ?, downvotes = downvotes + ? WHERE id = ?", (up, down, target))
    if choice == 0:
        db.execute(
            "DELETE FROM reddit_vote WHERE user_id = ? AND kind = ? AND target_id = ?", (user["id"], kind, target)
        )
    else:
        db.execute("INSERT OR REPLACE INTO reddit_vote VALUES (?, ?, ?, ?)", (user["id"], kind, target, choice))
    db.commit()


def _back(default: str) -> Any:
    return redirect(safe_next(default))


def _validate_submission(form: Any, need_forum: bool) -> tuple[dict[str, str], sqlite3.Row | None]:
    errors: dict[str, str] = {}
    title = form.get("title", "").strip()
    if not title:
        errors["title"] = "This value should not be blank."
    elif len(title) > 300:
        errors["title"] = "This value is too long. It should have 300 characters or less."
    url = form.get("url", "").strip()
    if url and not _URL_RE.match(url):
        errors["url"] = "This value is not a valid URL."
    forum = None
    if need_forum:
        name = form.get("forum", "")
        forum = get_db().execute("SELECT * FROM reddit_forum WHERE name = ?", (name,)).fetchone() if name else None
        if forum is None:
            errors["forum"] = "Please choose a forum."
    return errors, forum


_FORUM_NAME_RE = re.compile(r"^[A-Za-z0-9_]{3,25}$")


def _validate_forum(form: Any, creating: bool) -> dict[str, str]:
    errors: dict[str, str] = {}
    if creating:
        name = form.get("name", "").strip()
        if not _FORUM_NAME_RE.match(name):
            errors["name"] = "The name must be 3 to 25 letters, digits or underscores."
        elif get_db().execute("SELECT 1 FROM reddit_forum WHERE name = ?", (name,)).fetchone():
            errors["name"] = "A forum by that name already exists."
    if not form.get("title", "").strip():
        errors["title"] = "This value should not be blank."
    if len(form.get("description", "")) > 1500:
        errors["description"] = "This value is too long."
    return errors


def _user_page(name: str, tab: str) -> str:
    db = get_db()
    profile = db.execute("SELECT * FROM reddit_user WHERE username = ?", (name,)).fetchone()
    if profile is None:
        abort(404)
    karma = db.execute(
        "SELECT (SELECT COALESCE(SUM(upvotes - downvotes), 0) FROM reddit_submission WHERE user_id = :u)"
        " + (SELECT COALESCE(SUM(upvotes - downvotes), 0) FROM reddit_comment WHERE user_id = :u)",
        {"u": profile["id"]},
    ).fetchone()[0]
    ctx: dict[str, Any] = {"profile": profile, "karma": karma, "tab": tab, "page": int_arg("page", 1)}
    if tab in ("overview", "submissions"):
        ctx.update(_listing("s.user_id = ?", (profile["id"],), "new"))
    if tab in ("overview", "comments"):
        ctx["comments"] = db.execute(
            "SELECT c.*, s.title AS post_title, f.name AS forum, c.upvotes - c.downvotes AS score"
            " FROM reddit_comment c JOIN reddit_submission s ON s.id = c.submission_id"
            " JOIN reddit_forum f ON f.id = s.forum_id WHERE c.user_id = ?"
            " ORDER BY c.created_at DESC, c.id DESC LIMIT ? OFFSET ?",
            (profile["id"], PER_PAGE, (ctx["page"] - 1) * PER_PAGE),
        ).fetchall()
    return render_template("user.html", **ctx)


def create_app(ctx: SiteContext) -> Flask:
    app = make_app(ctx, __name__)

    @app.context_processor
    def _globals() -> dict[str, Any]:
        return {"me": _current_user(), "slugify": slugify, "subscriptions": _subscribed_forums()}

    app.jinja_env.filters.update(time_ago=time_ago, long_time=long_time)

    @app.route("/login", methods=["GET", "POST"])
    def login() -> Any:
        error = None
        if request.method == "POST":
            name = request.form.get("_username", "").strip()
            user = get_db().execute("SELECT * FROM reddit_user WHERE username = ?", (name,)).fetchone()
            if user and user["password_hash"] == hash_password(name, request.form.get("_password", "")):
                session.clear()
                session["user_id"] = user["id"]
                return redirect(safe_next("/"))
            error = "Invalid credentials."
        return render_template("login.html", error=error), (401 if error else 200)

    @app.post("/logout")
    def logout() -> Any:
        session.clear()
        return redirect("/")

    @app.get("/", defaults={"sort": "hot"})
    @app.get("/<any(hot, new, active, top):sort>")
    def front(sort: str) -> str:
        return render_template("front.html", **_listing("1 = 1", (), sort))

    @app.get("/forums", defaults={"order": "subscribers"})
    @app.get("/forums/<any(subscribers, submissions, alphabetical):order>")
    def forums(order: str) -> str:
        rows = (
            get_db()
            .execute(
                "SELECT f.*, (SELECT COUNT(*) FROM reddit_subscription s WHERE s.forum_id = f.id) AS subscribers,"
                " (SELECT COUNT(*) FROM reddit_submission s WHERE s.forum_id = f.id) AS submissions"
                " FROM reddit_forum f"
            )
            .fetchall()
        )
        if order == "alphabetical":
            groups: dict[str, list[sqlite3.Row]] = {}
            for row in sorted(rows, key=lambda r: r["name"].lower()):
                groups.setdefault(row["name"][0].upper(), []).append(row)
            return render_template("forums_alphabetical.html", groups=groups)
        rows = sorted(rows, key=lambda r: (-r[order], r["name"].lower()))
        return render_template("forums.html", forums=rows, order=order)

    @app.get("/f/<forum>", defaults={"sort": "hot"})
    @app.get("/f/<forum>/<any(hot, new, active, top):sort>")
    def forum(forum: str, sort: str) -> str:
        row = _forum(forum)
        return render_template("forum.html", **_forum_info(row), **_listing("s.forum_id = ?", (row["id"],), sort))

    @app.get("/comments", defaults={"forum": None})
    @app.get("/f/<forum>/comments")
    def comments(forum: str | None) -> str:
        row = _forum(forum) if forum else None
        where, params = ("WHERE s.forum_id = ?", (row["id"],)) if row else ("", ())
        rows = (
            get_db()
            .execute(
                "SELECT c.*, u.username, s.title AS post_title, f.name AS forum, c.upvotes - c.downvotes AS score"
                " FROM reddit_comment c JOIN reddit_submission s ON s.id = c.submission_id"
                f" JOIN reddit_forum f ON f.id = s.forum_id JOIN reddit_user u ON u.id = c.user_id {where}"
                " ORDER BY c.created_at DESC, c.id DESC LIMIT ?",
                (*params, PER_PAGE),
            )
            .fetchall()
        )
        return render_template("comments.html", forum=row, comments=rows)

    @app.route("/create_forum", methods=["GET", "POST"])
    def create_forum() -> Any:
        user = _require_login()
        errors: dict[str, str] = {}
        if request.method == "POST":
            errors = _validate_forum(request.form, creating=True)
            if not errors:
                db = get_db()
                fid = db.execute(
                    "INSERT INTO reddit_forum (name, title, description, sidebar, created_at) VALUES (?, ?, ?, ?, ?)",
                    (
                        request.form["name"].strip(),
                        request.form["title"].strip(),
                        request.form.get("description", "").strip(),
                        request.form.get("sidebar", "").strip(),
                        _now(),
                    ),
                ).lastrowid
                db.execute("INSERT INTO reddit_moderator VALUES (?, ?)", (fid, user["id"]))
                db.execute("INSERT INTO reddit_subscription VALUES (?, ?)", (user["id"], fid))
                db.commit()
                return redirect(url_for("forum", forum=request.form["name"].strip()))
        return render_template("forum_form.html", forum=None, errors=errors, values=request.form), (
            400 if errors else 200
        )

    @app.route("/f/<forum>/edit", methods=["GET", "POST"])
    def edit_forum(forum: str) -> Any:
        user = _require_login()
        row = _forum(forum)
        is_mod = (
            get_db()
            .execute("SELECT 1 FROM reddit_moderator WHERE forum_id = ? AND user_id = ?", (row["id"], user["id"]))
            .fetchone()
        )
        if is_mod is None:
            abort(403)
        errors: dict[str, str] = {}
        if request.method == "POST":
            errors = _validate_forum(request.form, creating=False)
            if not errors:
                get_db().execute(
                    "UPDATE reddit_forum SET title = ?, description = ?, sidebar = ? WHERE id = ?",
                    (
                        request.form["title"].strip(),
                        request.form.get("description", "").strip(),
                        request.form.get("sidebar", "").strip(),
                        row["id"],
                    ),
                )
                get_db().commit()
                flash("The forum was updated.")
                return redirect(url_for("edit_forum", forum=row["name"]))
        values = request.form if request.method == "POST" else dict(row)
        return render_template("forum_form.html", forum=row, errors=errors, values=values), (400 if errors else 200)

    @app.get("/<any(wiki, notifications):page>")
    def simple_page(page: str) -> str:
        text = {
            "wiki": "The wiki has no pages yet.",
            "notifications": "You have no new notifications.",
        }[page]
        return render_template("page.html", title=page.capitalize(), text=text)

    @app.post("/f/<forum>/<any(subscribe, unsubscribe):action>")
    def subscribe(forum: str, action: str) -> Any:
        user = _require_login()
        row = _forum(forum)
        db = get_db()
        if action == "subscribe":
            db.execute("INSERT OR IGNORE INTO reddit_subscription VALUES (?, ?)", (user["id"], row["id"]))
        else:
            db.execute("DELETE FROM reddit_subscription WHERE user_id = ? AND forum_id = ?", (user["id"], row["id"]))
        db.commit()
        flash(f"You are {'now' if action == 'subscribe' else 'no longer'} subscribed to {row['name']}.")
        return _back(url_for("forum", forum=row["name"]))

    @app.get("/f/<forum>/<int:sid>", defaults={"slug": ""})
    @app.get("/f/<forum>/<int:sid>/", endpoint="submission_slash", defaults={"slug": ""})
    @app.get("/f/<forum>/<int:sid>/<slug>")
    def submission(forum: str, sid: int, slug: str) -> str:
        post = _submission(forum, sid)
        children, comment_votes = _comment_tree(sid)
        return render_template(
            "submission.html",
            **_forum_info(_forum(forum)),
            post=post,
            children=children,
            comment_votes=comment_votes,
            vote=_votes("submission", [sid]).get(sid, 0),
            focus=None,
        )

    @app.get("/f/<forum>/<int:sid>/-/comment/<int:cid>")
    def comment(forum: str, sid: int, cid: int) -> str:
        post = _submission(forum, sid)
        children, comment_votes = _comment_tree(sid)
        focus = next((c for cs in children.values() for c in cs if c["id"] == cid), None)
        if focus is None:
            abort(404)
        return render_template(
            "submission.html",
            **_forum_info(_forum(forum)),
            post=post,
            children=children,
            comment_votes=comment_votes,
            vote=_votes("submission", [sid]).get(sid, 0),
            focus=focus,
        )

    @app.post("/f/<forum>/<int:sid>/-/comment")
    def post_comment(forum: str, sid: int) -> Any:
        user = _require_login()
        post = _submission(forum, sid)
        body = request.form.get("comment", "").strip()
        parent = request.form.get("parent", type=int)
        db = get_db()
        if (
            parent is not None
            and db.execute("SELECT 1 FROM reddit_comment WHERE id = ? AND submission_id = ?", (parent, sid)).fetchone()
            is None
        ):
            abort(400)
        if not body:
            flash("The comment must not be empty.", "error")
            return _back(url_for("submission", forum=forum, sid=sid, slug=slugify(post["title"])))
        cur = db.execute(
            "INSERT INTO reddit_comment (submission_id, parent_id, user_id, body, upvotes, downvotes,"
            " created_at) VALUES (?, ?, ?, ?, 1, 0, ?)",
            (sid, parent, user["id"], body, _now()),
        )
        db.execute("INSERT INTO reddit_vote VALUES (?, 'comment', ?, 1)", (user["id"], cur.lastrowid))
        db.commit()
        flash("Your comment was posted.")
        return redirect(url_for("comment", forum=forum, sid=sid, cid=cur.lastrowid))

    @app.post("/sv/<int:sid>")
    def vote_submission(sid: int) -> Any:
        _apply_vote("submission", sid, request.form.get("choice", 0, type=int) or 0)
        return _back("/")

    @app.post("/cv/<int:cid>")
    def vote_comment(cid: int) -> Any:
        _apply_vote("comment", cid, request.form.get("choice", 0, type=int) or 0)
        return _back("/")

    @app.route("/submit", methods=["GET", "POST"], defaults={"forum": None})
    @app.route("/submit/<forum>", methods=["GET", "POST"])
    def submit(forum: str | None) -> Any:
        user = _require_login()
        names = [r["name"] for r in get_db().execute("SELECT name FROM reddit_forum ORDER BY name COLLATE NOCASE")]
        errors: dict[str, str] = {}
        if request.method == "POST":
            errors, row = _validate_submission(request.form, need_forum=True)
            if not errors and row is not None:
                db = get_db()
                url = request.form.get("url", "").strip() or None
                cur = db.execute(
                    "INSERT INTO reddit_submission (forum_id, user_id, title, url, body, upvotes,"
                    " downvotes, created_at) VALUES (?, ?, ?, ?, ?, 1, 0, ?)",
                    (
                        row["id"],
                        user["id"],
                        request.form["title"].strip(),
                        url,
                        request.form.get("body", "").strip(),
                        _now(),
                    ),
                )
                db.execute("INSERT INTO reddit_vote VALUES (?, 'submission', ?, 1)", (user["id"], cur.lastrowid))
                db.commit()
                return redirect(
                    url_for("submission", forum=row["name"], sid=cur.lastrowid, slug=slugify(request.form["title"]))
                )
        values = request.form if request.method == "POST" else {"forum": forum or ""}
        return render_template("submit.html", forums=names, errors=errors, values=values), (400 if errors else 200)

    @app.route("/f/<forum>/<int:sid>/-/edit", methods=["GET", "POST"])
    def edit_submission(forum: str, sid: int) -> Any:
        user = _require_login()
        post = _submission(forum, sid)
        if post["user_id"] != user["id"]:
            abort(403)
        errors: dict[str, str] = {}
        if request.method == "POST":
            errors, _ = _validate_submission(request.form, need_forum=False)
            if not errors:
                db = get_db()
                db.execute(
                    "UPDATE reddit_submission SET title = ?, url = ?, body = ?, edited_at = ? WHERE id = ?",
                    (
                        request.form["title"].strip(),
                        request.form.get("url", "").strip() or None,
                        request.form.get("body", "").strip(),
                        _now(),
                        sid,
                    ),
                )
                db.commit()
                flash("The submission was edited.")
                return redirect(url_for("submission", forum=forum, sid=sid, slug=slugify(request.form["title"])))
        values = request.form if request.method == "POST" else dict(post)
        return render_template("edit_submission.html", post=post, errors=errors, values=values), (
            400 if errors else 200
        )

    @app.get("/user/<name>", defaults={"tab": "overview"})
    @app.get("/user/<name>/<any(submissions, comments):tab>")
    def user(name: str, tab: str) -> str:
        return _user_page(name, tab)

    @app.route("/user/<name>/edit_biography", methods=["GET", "POST"])
    def edit_biography(name: str) -> Any:
        me = _require_login()
        if me["username"] != name:
            abort(403)
        if request.method == "POST":
            bio = request.form.get("biography", "").strip()
            if len(bio) > 300:
                return render_template("edit_biography.html", error="The biography is too long.", value=bio), 400
            get_db().execute("UPDATE reddit_user SET biography = ? WHERE id = ?", (bio, me["id"]))
            get_db().commit()
            flash("Your biography was updated.")
            return redirect(url_for("user", name=name))
        return render_template("edit_biography.html", error=None, value=me["biography"])

    @app.get("/submission_images/<name>")
    def submission_image(name: str) -> Any:
        return send_from_directory(_IMAGES_DIR, name)

    @app.get("/search")
    def search() -> str:
        query = request.args.get("q", "").strip()
        ctx: dict[str, Any] = {
            "query": query,
            "submissions": [],
            "votes": {},
            "page": 1,
            "has_next": False,
            "total": 0,
            "sort": "new",
        }
        if query:
            like = f"%{query}%"
            ctx.update(_listing("(s.title LIKE ? OR s.body LIKE ?)", (like, like), "top"))
        return render_template("search.html", **ctx)

    return app
