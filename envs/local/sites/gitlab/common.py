"""Helpers every GitLab-like view shares: the signed-in account, project lookup and access levels."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from flask import abort, g, session

from webarena_gym.envs.local.framework import get_db

PROJECT_SELECT = """
SELECT p.*, p.namespace || '/' || p.path AS full_path,
       (SELECT f.namespace || '/' || f.path FROM gitlab_project f WHERE f.id = p.forked_from_id) AS forked_from,
       (SELECT COUNT(*) FROM gitlab_project f WHERE f.forked_from_id = p.id) AS forks,
       (SELECT COUNT(*) FROM gitlab_star s WHERE s.project_id = p.id) AS stars,
       (SELECT COUNT(*) FROM gitlab_issuable i WHERE i.project_id = p.id AND i.kind = 'issue'
         AND i.state = 'opened') AS open_issues,
       (SELECT COUNT(*) FROM gitlab_issuable i WHERE i.project_id = p.id AND i.kind = 'merge_request'
         AND i.state = 'opened') AS open_mrs
FROM gitlab_project p
"""


def now() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def current_user() -> sqlite3.Row:
    if "user" not in g:
        uid = session.get("user_id")
        g.user = get_db().execute("SELECT * FROM gitlab_user WHERE id = ?", (uid,)).fetchone() if uid else None
    return g.user


def visible_clause() -> tuple[str, tuple[Any, ...]]:
    """Private projects are visible to their members only."""
    return (
        "(p.visibility != 'private' OR EXISTS (SELECT 1 FROM gitlab_member m WHERE m.project_id = p.id"
        " AND m.user_id = ?))",
        (current_user()["id"],),
    )


def get_project(namespace: str, path: str) -> sqlite3.Row:
    vis, params = visible_clause()
    row = (
        get_db()
        .execute(f"{PROJECT_SELECT} WHERE p.namespace = ? AND p.path = ? AND {vis}", (namespace, path, *params))
        .fetchone()
    )
    if row is None:
        abort(404)
    g.project = row
    return row


def _member_level(table: str, key: str, key_id: int) -> int:
    """The signed-in user's access level in a project's or a group's members (0: not a member)."""
    sql = f"SELECT access_level FROM {table} WHERE {key} = ? AND user_id = ?"
    row = get_db().execute(sql, (key_id, current_user()["id"])).fetchone()
    return row["access_level"] if row else 0


def access_level(project_id: int) -> int:
    return _member_level("gitlab_member", "project_id", project_id)


def group_level(group_id: int) -> int:
    return _member_level("gitlab_group_member", "group_id", group_id)


def get_group(path: str) -> sqlite3.Row:
    row = get_db().execute("SELECT * FROM gitlab_group WHERE path = ?", (path,)).fetchone()
    if row is None:
        abort(404)
    return row


def require_level(project_id: int, level: int) -> None:
    if access_level(project_id) < level:
        abort(403)


def list_members(project_id: int) -> list[sqlite3.Row]:
    return (
        get_db()
        .execute(
            "SELECT u.*, m.access_level, m.created_at AS member_since FROM gitlab_member m JOIN gitlab_user u"
            " ON u.id = m.user_id WHERE m.project_id = ? ORDER BY m.access_level DESC, u.name",
            (project_id,),
        )
        .fetchall()
    )


def set_nav(section: str) -> None:
    """Name the project sidebar section the page belongs to (GitLab expands that one)."""
    g.nav_section = section


def header_counts() -> dict[str, int]:
    """The numbers in the top bar: open issues and merge requests assigned to the account, pending to-dos."""
    user = current_user()
    if user is None:
        return {"issues": 0, "merge_requests": 0, "todos": 0}
    db = get_db()
    assigned = {
        r["kind"]: r["n"]
        for r in db.execute(
            "SELECT i.kind, COUNT(*) AS n FROM gitlab_issuable i JOIN gitlab_issuable_user iu ON iu.issuable_id = i.id"
            " WHERE iu.user_id = ? AND iu.role = 'assignee' AND i.state = 'opened' GROUP BY i.kind",
            (user["id"],),
        )
    }
    todos = db.execute(
        "SELECT COUNT(*) FROM gitlab_todo WHERE user_id = ? AND state = 'pending'", (user["id"],)
    ).fetchone()[0]
    return {"issues": assigned.get("issue", 0), "merge_requests": assigned.get("merge_request", 0), "todos": todos}


def long_date(value: str | None) -> str:
    """``2030-12-31`` or a timestamp -> ``Dec 31, 2030`` (GitLab's date format); empty stays empty."""
    if not value:
        return ""
    day = datetime.fromisoformat(value[:10])
    return f"{day:%b} {day.day}, {day.year}"


def time_ago(value: str) -> str:
    """GitLab's relative time ("3 weeks ago") of a stored timestamp, measured from the real clock."""
    seconds = max(0, int((datetime.now() - datetime.fromisoformat(value)).total_seconds()))
    for unit, size in (
        ("year", 365 * 86400),
        ("month", 30 * 86400),
        ("week", 7 * 86400),
        ("day", 86400),
        ("hour", 3600),
        ("minute", 60),
    ):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    return "just now"


def site_host(url: str) -> str:
    """A website as GitLab prints it on a profile: without the scheme."""
    return url.split("://", 1)[-1].rstrip("/")
