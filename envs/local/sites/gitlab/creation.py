"""The GitLab-like site's pages that create namespaces and projects in them: new projects (blank or from a
built-in template), forks, new groups and the invitation of members to projects and groups."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from flask import Flask, abort, flash, redirect, render_template, request

from webarena_gym.envs.local.framework import get_db, inserted_id

from .common import current_user, get_group, get_project, group_level, now, set_nav
from .data import LABELS, ROLES
from .project_templates import PROJECT_TEMPLATES

_SLUG = re.compile(r"[a-zA-Z0-9_.-]+")
VISIBILITIES = ("private", "internal", "public")


def _slugify(name: str) -> str:
    """The URL slug GitLab proposes for a name."""
    return re.sub(r"[^a-zA-Z0-9_.-]+", "-", name).strip("-")


def _project_errors(namespace: str, name: str, path: str, visibility: str) -> dict[str, str]:
    """The new-project and fork forms' checks: a name, a free slug in the namespace, a visibility."""
    errors: dict[str, str] = {}
    if not name:
        errors["name"] = "Project name can't be blank."
    elif not _SLUG.fullmatch(path):
        errors["path"] = "Project slug can contain only letters, digits, '_', '-' and '.'."
    elif (
        get_db().execute("SELECT 1 FROM gitlab_project WHERE namespace = ? AND path = ?", (namespace, path)).fetchone()
    ):
        errors["path"] = "Project slug has already been taken."
    if visibility not in VISIBILITIES:
        errors["visibility"] = "Choose a visibility level."
    return errors


def _insert_project(
    namespace: str, path: str, name: str, description: str, visibility: str, forked_from: int | None = None
) -> int:
    """The project row with the account as its owner; the caller adds the repository."""
    db, stamp = get_db(), now()
    pid = inserted_id(
        db.execute(
            "INSERT INTO gitlab_project (namespace, path, name, description, visibility, forked_from_id,"
            " created_at, last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (namespace, path, name, description, visibility, forked_from, stamp, stamp),
        )
    )
    db.execute("INSERT INTO gitlab_member VALUES (?, ?, 50, ?)", (pid, current_user()["id"], stamp))
    return pid


def _fill_repository(pid: int, files: dict[str, str], message: str) -> None:
    """A new project's ``main`` branch, default labels and (with files) its first commit."""
    db, me = get_db(), current_user()
    db.execute("INSERT INTO gitlab_branch VALUES (?, 'main')", (pid,))
    for path, content in files.items():
        db.execute("INSERT INTO gitlab_file VALUES (?, ?, ?)", (pid, path, content))
    if files:
        db.execute(
            "INSERT INTO gitlab_commit (project_id, sha, author_name, author_email, message, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (pid, f"{pid:040x}", me["name"], me["email"], message, now()),
        )
    for lname, color, ldesc in LABELS:
        db.execute(
            "INSERT INTO gitlab_label (project_id, name, color, description) VALUES (?, ?, ?, ?)",
            (pid, lname, color, ldesc),
        )


def _copy_repository(source: int, fork: int) -> None:
    """A fork starts with the source's branches, files, commits and labels (not its issues or members)."""
    db = get_db()
    db.execute("INSERT INTO gitlab_branch SELECT ?, name FROM gitlab_branch WHERE project_id = ?", (fork, source))
    db.execute("INSERT INTO gitlab_file SELECT ?, path, content FROM gitlab_file WHERE project_id = ?", (fork, source))
    db.execute(
        "INSERT INTO gitlab_commit (project_id, sha, author_name, author_email, message, created_at)"
        " SELECT ?, sha, author_name, author_email, message, created_at FROM gitlab_commit WHERE project_id = ?"
        " ORDER BY id",
        (fork, source),
    )
    db.execute(
        "INSERT INTO gitlab_label (project_id, name, color, description)"
        " SELECT ?, name, color, description FROM gitlab_label WHERE project_id = ?",
        (fork, source),
    )


def _own_namespaces() -> list[str]:
    """Where the account may create projects: its own namespace and the groups it maintains or owns."""
    me = current_user()
    groups = get_db().execute(
        "SELECT gr.path FROM gitlab_group gr JOIN gitlab_group_member gm ON gm.group_id = gr.id"
        " WHERE gm.user_id = ? AND gm.access_level >= 40 ORDER BY gr.path",
        (me["id"],),
    )
    return [me["username"], *(r[0] for r in groups)]


def invite(table: str, column: str, owner_id: int, my_level: int) -> str | None:
    """Invite the form's user with the form's role to a project (``gitlab_member``) or a group
    (``gitlab_group_member``), through GitLab's one Invite members form; the error to show, if any."""
    db = get_db()
    user = db.execute("SELECT * FROM gitlab_user WHERE username = ?", (request.form.get("username", ""),)).fetchone()
    level = request.form.get("access_level", type=int)
    if user is None:
        return "Select a user to invite."
    if level not in ROLES or (level == 50 and my_level < 50):
        return "Select a valid role."
    if db.execute(f"SELECT 1 FROM {table} WHERE {column} = ? AND user_id = ?", (owner_id, user["id"])).fetchone():
        return f"{user['name']} is already a member of this {'project' if table == 'gitlab_member' else 'group'}."
    row = (owner_id, user["id"], level, now()) if table == "gitlab_member" else (owner_id, user["id"], level)
    db.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)
    db.commit()
    flash(f"{user['name']} was invited as {ROLES[level]}.")
    return None


def invite_candidates(member_ids: set[int]) -> list[sqlite3.Row]:
    return [u for u in get_db().execute("SELECT * FROM gitlab_user ORDER BY name") if u["id"] not in member_ids]


def register(app: Flask) -> None:
    """Add these routes to the site's app."""

    @app.route("/projects/new", methods=["GET", "POST"])
    def new_project() -> Any:
        """Blank project, or (``template_name``) one of GitLab's built-in templates; the list of templates
        is the page's "Create from template" tab."""
        key = request.values.get("template_name", "")
        template = PROJECT_TEMPLATES.get(key)
        if key and template is None:
            abort(404)
        errors: dict[str, str] = {}
        if request.method == "POST":
            form = request.form
            name, namespace = form.get("name", "").strip(), current_user()["username"]
            path, visibility = form.get("path", "").strip() or _slugify(name), form.get("visibility", "private")
            errors = _project_errors(namespace, name, path, visibility)
            if not errors:
                description = form.get("description", "").strip() or (template.description if template else "")
                pid = _insert_project(namespace, path, name, description, visibility)
                if template:
                    _fill_repository(pid, dict(template.files), template.commit_message)
                else:
                    _fill_repository(pid, {"README.md": f"# {name}\n"} if form.get("readme") else {}, "Initial commit")
                get_db().commit()
                flash(f"Project '{name}' was successfully created.")
                return redirect(f"/{namespace}/{path}")
        return render_template(
            "project_new.html",
            errors=errors,
            values=request.form,
            template=template,
            templates=PROJECT_TEMPLATES.values() if request.args.get("tab") == "create_from_template" else None,
        ), (400 if errors else 200)

    @app.route("/<namespace>/<project>/-/forks/new", methods=["GET", "POST"])
    def new_fork(namespace: str, project: str) -> Any:
        source = get_project(namespace, project)
        set_nav("information")
        choices = _own_namespaces()
        values: Any = {key: source[key] for key in ("name", "path", "description", "visibility")}
        errors: dict[str, str] = {}
        if request.method == "POST":
            values = request.form
            target = values.get("namespace", "")
            name, path = values.get("name", "").strip(), values.get("path", "").strip()
            errors = _project_errors(target, name, path, values.get("visibility", ""))
            if target not in choices:
                errors["namespace"] = "Select a namespace."
            if not errors:
                pid = _insert_project(
                    target, path, name, values.get("description", "").strip(), values["visibility"], source["id"]
                )
                _copy_repository(source["id"], pid)
                get_db().commit()
                flash("The project was successfully forked.")
                return redirect(f"/{target}/{path}")
        return render_template("fork_new.html", values=values, errors=errors, namespaces=choices), (
            400 if errors else 200
        )

    @app.route("/groups/new", methods=["GET", "POST"])
    def new_group() -> Any:
        errors: dict[str, str] = {}
        values = request.form
        if request.method == "POST":
            db = get_db()
            name = values.get("name", "").strip()
            path = values.get("path", "").strip() or _slugify(name)
            visibility = values.get("visibility", "private")
            if not name:
                errors["name"] = "Group name can't be blank."
            elif not _SLUG.fullmatch(path) or path in ("new", "explore", "dashboard", "projects", "users"):
                errors["path"] = "Group URL can contain only letters, digits, '_', '-' and '.'."
            elif db.execute(
                "SELECT 1 FROM gitlab_group WHERE path = ? UNION SELECT 1 FROM gitlab_user WHERE username = ?",
                (path, path),
            ).fetchone():
                errors["path"] = "Group URL has already been taken."
            if visibility not in VISIBILITIES:
                errors["visibility"] = "Choose a visibility level."
            if not errors:
                gid = inserted_id(
                    db.execute(
                        "INSERT INTO gitlab_group (path, name, description, visibility) VALUES (?, ?, ?, ?)",
                        (path, name, values.get("description", "").strip(), visibility),
                    )
                )
                db.execute("INSERT INTO gitlab_group_member VALUES (?, ?, 50)", (gid, current_user()["id"]))
                db.commit()
                flash(f"Group '{name}' was successfully created.")
                return redirect(f"/groups/{path}")
        return render_template("group_new.html", values=values, errors=errors), (400 if errors else 200)

    @app.post("/groups/<group>/-/group_members")
    def invite_group_member(group: str) -> Any:
        row = get_group(group)
        my_level = group_level(row["id"])
        if my_level < 40:
            abort(403)
        error = invite("gitlab_group_member", "group_id", row["id"], my_level)
        if error:
            flash(error, "error")
        return redirect(request.path)
