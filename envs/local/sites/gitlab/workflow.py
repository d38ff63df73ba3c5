"""The GitLab-like site's people and planning pages: follows, to-dos, milestones, branches, and the
project features the local suite has no data for (pipelines, wiki ...), which show GitLab's empty states
so that every sidebar link leads somewhere real."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Flask, abort, redirect, render_template, request

from webarena_gym.envs.local.framework import get_db

from .common import current_user, get_project, require_level, set_nav

# Project pages that exist on GitLab but hold nothing here: first path segment under "/-/" -> (sidebar
# section, title). Their empty states keep every link of the real page layout pointing somewhere.
EMPTY_FEATURES = {
    "pipelines": ("cicd", "Pipelines"),
    "jobs": ("cicd", "Jobs"),
    "pipeline_schedules": ("cicd", "Schedules"),
    "security": ("security", "Security configuration"),
    "environments": ("deployments", "Environments"),
    "releases": ("deployments", "Releases"),
    "tags": ("repository", "Tags"),
    "compare": ("repository", "Compare revisions"),
    "commit": ("repository", "Commit"),
    "find_file": ("repository", "Find file"),
    "ide": ("repository", "Web IDE"),
    "archive": ("repository", "Download"),
    "new": ("repository", "New file"),
    "packages": ("packages", "Package Registry"),
    "incidents": ("monitor", "Incidents"),
    "value_stream_analytics": ("analytics", "Value stream analytics"),
    "wikis": ("wiki", "Wiki"),
    "snippets": ("snippets", "Snippets"),
    "settings": ("settings", "Settings"),
    "usage_quotas": ("settings", "Usage Quotas"),
    "starrers": ("information", "Starrers"),
    "forks": ("information", "Forks"),
    "activity": ("information", "Activity"),
    "container_registry": ("packages", "Container Registry"),
}


def _user(username: str) -> Any:
    user = get_db().execute("SELECT * FROM gitlab_user WHERE username = ?", (username,)).fetchone()
    if user is None:
        abort(404)
    return user


def _parse_date(value: str) -> str | None:
    """A milestone date from the form (``YYYY-MM-DD``), or None when empty or malformed."""
    try:
        return datetime.strptime(value.strip(), "%Y-%m-%d").strftime("%Y-%m-%d")
    except ValueError:
        return None


def register(app: Flask) -> None:
    """Add these routes to the site's app."""

    @app.post("/users/<username>/<any(follow, unfollow):action>")
    def follow(username: str, action: str) -> Any:
        user, me = _user(username), current_user()
        if user["id"] == me["id"]:
            abort(400)
        db = get_db()
        if action == "follow":
            db.execute("INSERT OR IGNORE INTO gitlab_follow VALUES (?, ?)", (me["id"], user["id"]))
        else:
            db.execute("DELETE FROM gitlab_follow WHERE follower_id = ? AND followee_id = ?", (me["id"], user["id"]))
        db.commit()
        return redirect(f"/{username}")

    @app.get("/users/<username>/<any(following, followers):tab>")
    def follows(username: str, tab: str) -> str:
        user = _user(username)
        mine, theirs = ("follower_id", "followee_id") if tab == "following" else ("followee_id", "follower_id")
        people = (
            get_db()
            .execute(
                f"SELECT u.* FROM gitlab_follow f JOIN gitlab_user u ON u.id = f.{theirs} WHERE f.{mine} = ?"
                " ORDER BY u.name",
                (user["id"],),
            )
            .fetchall()
        )
        return render_template("user.html", user=user, tab=tab, people=people, **follow_counts(user["id"]))

    @app.get("/dashboard/todos")
    def todos() -> str:
        rows = (
            get_db()
            .execute(
                "SELECT t.*, i.title, i.iid, i.kind, p.namespace || '/' || p.path AS full_path, p.name AS project_name,"
                " a.name AS author_name, a.username AS author_username FROM gitlab_todo t"
                " JOIN gitlab_issuable i ON i.id = t.issuable_id JOIN gitlab_project p ON p.id = i.project_id"
                " JOIN gitlab_user a ON a.id = t.author_id WHERE t.user_id = ? AND t.state = 'pending'"
                " ORDER BY t.created_at DESC",
                (current_user()["id"],),
            )
            .fetchall()
        )
        return render_template("todos.html", todos=rows)

    @app.get("/dashboard/<any(milestones, activity, snippets):page>")
    @app.get("/help", defaults={"page": "help"})
    def dashboard_page(page: str) -> str:
        db = get_db()
        rows: list[Any] = []
        if page == "milestones":
            rows = db.execute(
                "SELECT ms.*, p.namespace || '/' || p.path AS full_path FROM gitlab_milestone ms JOIN gitlab_project p"
                " ON p.id = ms.project_id JOIN gitlab_member m ON m.project_id = p.id AND m.user_id = ?"
                " WHERE ms.state = 'active' ORDER BY ms.due_date",
                (current_user()["id"],),
            ).fetchall()
        elif page == "activity":
            rows = db.execute(
                "SELECT n.body, n.created_at, u.name, u.username, i.title, i.iid, i.kind,"
                " p.namespace || '/' || p.path AS full_path FROM gitlab_note n JOIN gitlab_user u ON u.id = n.author_id"
                " JOIN gitlab_issuable i ON i.id = n.issuable_id JOIN gitlab_project p ON p.id = i.project_id"
                " JOIN gitlab_member m ON m.project_id = p.id AND m.user_id = ? ORDER BY n.created_at DESC LIMIT 20",
                (current_user()["id"],),
            ).fetchall()
        return render_template("dashboard_page.html", page=page, rows=rows)

    @app.get("/<namespace>/<project>/-/milestones/new")
    def new_milestone(namespace: str, project: str) -> str:
        get_project(namespace, project)
        set_nav("issues")
        return render_template("milestone_new.html", errors={}, values={})

    @app.post("/<namespace>/<project>/-/milestones")
    def create_milestone(namespace: str, project: str) -> Any:
        row = get_project(namespace, project)
        set_nav("issues")
        require_level(row["id"], 20)
        form = request.form
        title = form.get("title", "").strip()
        start, due = _parse_date(form.get("start_date", "")), _parse_date(form.get("due_date", ""))
        errors = {}
        if not title:
            errors["title"] = "Title can't be blank."
        if form.get("start_date", "").strip() and start is None or form.get("due_date", "").strip() and due is None:
            errors["dates"] = "Dates must be valid dates (YYYY-MM-DD)."
        elif start and due and due < start:
            errors["dates"] = "Due date must be greater than start date."
        if errors:
            return render_template("milestone_new.html", errors=errors, values=form), 400
        db = get_db()
        mid = db.execute(
            "INSERT INTO gitlab_milestone (project_id, title, description, start_date, due_date, state)"
            " VALUES (?, ?, ?, ?, ?, 'active')",
            (row["id"], title, form.get("description", "").strip(), start, due),
        ).lastrowid
        db.commit()
        return redirect(f"/{namespace}/{project}/-/milestones/{mid}")

    @app.get("/<namespace>/<project>/-/milestones/<int:mid>")
    def milestone(namespace: str, project: str, mid: int) -> str:
        row = get_project(namespace, project)
        set_nav("issues")
        db = get_db()
        ms = db.execute("SELECT * FROM gitlab_milestone WHERE id = ? AND project_id = ?", (mid, row["id"])).fetchone()
        if ms is None:
            abort(404)
        issues = db.execute(
            "SELECT * FROM gitlab_issuable WHERE milestone_id = ? ORDER BY kind, iid", (mid,)
        ).fetchall()
        return render_template("milestone.html", milestone=ms, issues=issues)

    @app.get("/<namespace>/<project>/-/branches")
    def branches(namespace: str, project: str) -> str:
        row = get_project(namespace, project)
        set_nav("repository")
        db = get_db()
        names = [
            r[0]
            for r in db.execute(
                "SELECT name FROM gitlab_branch WHERE project_id = ? ORDER BY name != 'main', name", (row["id"],)
            )
        ]
        last = db.execute(
            "SELECT * FROM gitlab_commit WHERE project_id = ? ORDER BY created_at DESC LIMIT ?", (row["id"], len(names))
        ).fetchall()
        return render_template("branches.html", branches=names, commits=last)

    @app.get("/<namespace>/<project>/<any(activity, container_registry):feature>")
    @app.get("/<namespace>/<project>/-/<path:feature>")
    def project_feature(namespace: str, project: str, feature: str) -> str:
        get_project(namespace, project)
        key = feature.split("/", 1)[0]
        if key not in EMPTY_FEATURES:
            abort(404)
        section, title = EMPTY_FEATURES[key]
        set_nav(section)
        return render_template("project_feature.html", title=title, feature=key)


def follow_counts(user_id: int) -> dict[str, Any]:
    """Followers/following numbers and whether the account follows ``user_id`` (profile header)."""
    db = get_db()
    me = current_user()
    return {
        "n_followers": db.execute("SELECT COUNT(*) FROM gitlab_follow WHERE followee_id = ?", (user_id,)).fetchone()[0],
        "n_following": db.execute("SELECT COUNT(*) FROM gitlab_follow WHERE follower_id = ?", (user_id,)).fetchone()[0],
        "followed": db.execute(
            "SELECT 1 FROM gitlab_follow WHERE follower_id = ? AND followee_id = ?", (me["id"], user_id)
        ).fetchone()
        is not None,
    }
