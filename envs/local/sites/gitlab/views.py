"""HTTP views of the GitLab-like code host.

Paths mirror GitLab's (``/<namespace>/<project>/-/issues/<iid>``, ``/dashboard/merge_requests?
reviewer_username=``, ``/-/profile``) and the markup keeps the hooks WebArena's checks use
(``.cover-status``, ``[data-qa-selector="title_content"]``, ``.detail-page-description`` ...).
Issues and merge requests share one set of views: they differ only in the reviewer field and branches.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import zlib
from datetime import datetime
from typing import Any

from flask import Flask, abort, flash, g, redirect, render_template, request, session, url_for
from markdown_it import MarkdownIt
from markupsafe import Markup

from webarena_gym.envs.local.framework import SiteContext, get_db, inserted_id, int_arg, make_app, same_site_path

from . import creation, workflow
from .common import (
    PROJECT_SELECT,
    access_level,
    current_user,
    get_group,
    get_project,
    group_level,
    header_counts,
    list_members,
    long_date,
    now,
    require_level,
    set_nav,
    site_host,
    time_ago,
    visible_clause,
)
from .creation import invite, invite_candidates
from .data import ROLES, hash_password
from .workflow import follow_counts

PER_PAGE = 20
# The SSH clone address GitLab shows: a fixed host name (not the HTTP port, which changes per instance), so
# "the command to clone ... with SSH" has one right answer.
SSH_HOST = "gitlab.localhost:2222"
KINDS = {"issues": "issue", "merge_requests": "merge_request"}
_ISSUABLE_SORTS = {
    "created_date": "i.created_at DESC, i.id DESC",
    "created_asc": "i.created_at ASC, i.id ASC",
    "updated_desc": "i.updated_at DESC, i.id DESC",
    "due_date": "i.due_date IS NULL, i.due_date, i.id",
    "title_asc": "i.title COLLATE NOCASE, i.id",
}
_PROJECT_SORTS = {
    "latest_activity_desc": "p.last_activity_at DESC",
    "name_asc": "p.name COLLATE NOCASE ASC",
    "name_desc": "p.name COLLATE NOCASE DESC",
    "created_desc": "p.created_at DESC",
    "stars_desc": "stars DESC, p.name",
}
_MARKDOWN = MarkdownIt("commonmark", {"html": False})  # README rendering; raw HTML in a README stays text


def _project_list(where: str, params: tuple[Any, ...]) -> dict[str, Any]:
    vis, vparams = visible_clause()
    sort = request.args.get("sort", "latest_activity_desc")
    order = _PROJECT_SORTS.get(sort, _PROJECT_SORTS["latest_activity_desc"])
    name = request.args.get("name", "").strip()
    clauses, args = [where, vis], [*params, *vparams]
    if name:
        clauses.append("(p.name LIKE ? OR p.namespace || '/' || p.path LIKE ?)")
        args += [f"%{name}%", f"%{name}%"]
    rows = get_db().execute(f"{PROJECT_SELECT} WHERE {' AND '.join(clauses)} ORDER BY {order}", args).fetchall()
    return {"projects": rows, "sort": sort, "name": name, "sorts": _PROJECT_SORTS}


def _decorate(rows: list[sqlite3.Row]) -> list[dict[str, Any]]:
    """Attach labels, assignees and reviewers to issuable rows in three queries."""
    items = [dict(r) for r in rows]
    if not items:
        return items
    ids = [i["id"] for i in items]
    marks = ",".join("?" * len(ids))
    db = get_db()
    by_id = {i["id"]: i | {"labels": [], "assignees": [], "reviewers": []} for i in items}
    for r in db.execute(
        f"SELECT il.issuable_id, l.name, l.color FROM gitlab_issuable_label il JOIN gitlab_label l"
        f" ON l.id = il.label_id WHERE il.issuable_id IN ({marks}) ORDER BY l.name",
        ids,
    ):
        by_id[r["issuable_id"]]["labels"].append(r)
    for r in db.execute(
        f"SELECT iu.issuable_id, iu.role, u.username, u.name FROM gitlab_issuable_user iu JOIN"
        f" gitlab_user u ON u.id = iu.user_id WHERE iu.issuable_id IN ({marks}) ORDER BY u.name",
        ids,
    ):
        by_id[r["issuable_id"]][f"{r['role']}s"].append(r)
    return list(by_id.values())


def _issuable_query(kind: str, base: list[str], params: list[Any]) -> dict[str, Any]:
    """Filter, count per state, sort and page issuables; shared by project lists and the dashboard."""
    args = request.args
    clauses, values = [*base, "i.kind = ?"], [*params, kind]
    search = args.get("search", "").strip()
    if search:
        clauses.append("(i.title LIKE ? OR i.description LIKE ?)")
        values += [f"%{search}%", f"%{search}%"]
    for label in [v for v in args.getlist("label_name[]") if v]:
        if label == "None":  # GitLab's filter for issues without any label
            clauses.append("NOT EXISTS (SELECT 1 FROM gitlab_issuable_label il WHERE il.issuable_id = i.id)")
            continue
        clauses.append(
            "EXISTS (SELECT 1 FROM gitlab_issuable_label il JOIN gitlab_label l ON l.id = il.label_id"
            " WHERE il.issuable_id = i.id AND l.name = ?)"
        )
        values.append(label)
    for role in ("assignee", "reviewer"):
        who = args.get(f"{role}_username", "")
        if who:
            clauses.append(
                "EXISTS (SELECT 1 FROM gitlab_issuable_user iu JOIN gitlab_user u ON u.id = iu.user_id"
                " WHERE iu.issuable_id = i.id AND iu.role = ? AND u.username = ?)"
            )
            values += [role, who]
    if args.get("author_username"):
        clauses.append("a.username = ?")
        values.append(args["author_username"])
    if args.get("milestone_title"):
        clauses.append("ms.title = ?")
        values.append(args["milestone_title"])
    frm = (
        "FROM gitlab_issuable i JOIN gitlab_project p ON p.id = i.project_id JOIN gitlab_user a"
        " ON a.id = i.author_id LEFT JOIN gitlab_milestone ms ON ms.id = i.milestone_id"
    )
    where = " AND ".join(clauses)
    db = get_db()
    counts = {
        r["state"]: r["n"]
        for r in db.execute(f"SELECT i.state, COUNT(*) AS n {frm} WHERE {where} GROUP BY i.state", values)
    }
    counts["all"] = sum(counts.values())
    state = args.get("state", "opened")
    if state in ("opened", "closed", "merged"):
        where += " AND i.state = ?"
        values.append(state)
    sort = args.get("sort", "created_date")
    page = int_arg("page", 1)
    rows = db.execute(
        f"SELECT i.*, a.username AS author_username, a.name AS author_name, ms.title AS milestone,"
        f" (SELECT COUNT(*) FROM gitlab_note n WHERE n.issuable_id = i.id) AS n_notes,"
        f" p.namespace || '/' || p.path AS full_path {frm} WHERE {where}"
        f" ORDER BY {_ISSUABLE_SORTS.get(sort, _ISSUABLE_SORTS['created_date'])} LIMIT ? OFFSET ?",
        (*values, PER_PAGE, (page - 1) * PER_PAGE),
    ).fetchall()
    total = counts.get(state, 0) if state in ("opened", "closed", "merged") else counts["all"]
    return {
        "items": _decorate(rows),
        "counts": counts,
        "state": state,
        "sort": sort,
        "search": search,
        "page": page,
        "pages": max(1, -(-total // PER_PAGE)),
        "has_next": page * PER_PAGE < total,
        "kind": kind,
        "sorts": _ISSUABLE_SORTS,
    }


def _issuable(project: sqlite3.Row, kind: str, iid: int) -> dict[str, Any]:
    row = (
        get_db()
        .execute(
            "SELECT i.*, a.username AS author_username, a.name AS author_name, ms.title AS milestone"
            " FROM gitlab_issuable i JOIN gitlab_user a ON a.id = i.author_id"
            " LEFT JOIN gitlab_milestone ms ON ms.id = i.milestone_id"
            " WHERE i.project_id = ? AND i.kind = ? AND i.iid = ?",
            (project["id"], kind, iid),
        )
        .fetchone()
    )
    if row is None:
        abort(404)
    return _decorate([row])[0]


def _user_by_username(username: str, project_id: int) -> int | None:
    """A member's id, or None: only project members can be assigned or asked to review."""
    row = (
        get_db()
        .execute(
            "SELECT u.id FROM gitlab_user u JOIN gitlab_member m ON m.user_id = u.id"
            " WHERE u.username = ? AND m.project_id = ?",
            (username, project_id),
        )
        .fetchone()
    )
    return row["id"] if row else None


def _save_issuable_fields(project: sqlite3.Row, issuable_id: int, kind: str, form: Any) -> None:
    """Apply the sidebar form: assignee, reviewer, labels, milestone, due date."""
    db = get_db()
    roles = ("assignee", "reviewer") if kind == "merge_request" else ("assignee",)
    for role in roles:
        db.execute("DELETE FROM gitlab_issuable_user WHERE issuable_id = ? AND role = ?", (issuable_id, role))
        uid = _user_by_username(form.get(role, ""), project["id"])
        if uid is not None:
            db.execute("INSERT INTO gitlab_issuable_user VALUES (?, ?, ?)", (issuable_id, uid, role))
    db.execute("DELETE FROM gitlab_issuable_label WHERE issuable_id = ?", (issuable_id,))
    for name in form.getlist("labels"):
        label = db.execute(
            "SELECT id FROM gitlab_label WHERE project_id = ? AND name = ?", (project["id"], name)
        ).fetchone()
        if label:
            db.execute("INSERT INTO gitlab_issuable_label VALUES (?, ?)", (issuable_id, label["id"]))
    milestone = db.execute(
        "SELECT id FROM gitlab_milestone WHERE project_id = ? AND title = ?", (project["id"], form.get("milestone", ""))
    ).fetchone()
    due = form.get("due_date", "").strip() or None
    db.execute(
        "UPDATE gitlab_issuable SET milestone_id = ?, due_date = ?, updated_at = ? WHERE id = ?",
        (milestone["id"] if milestone else None, due, now(), issuable_id),
    )


def _validate_due_date(value: str) -> bool:
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        return False
    return True


def _tree_entries(project_id: int, folder: str) -> list[dict[str, Any]]:
    """Folders then files directly under ``folder``, each with the commit that last touched it.

    Files carry no history of their own, so the "last commit" of an entry is one of the project's commits
    picked by a checksum of its path: stable across loads, and different from entry to entry as on GitLab.
    """
    db = get_db()
    prefix = f"{folder}/" if folder else ""
    commits = db.execute(
        "SELECT sha, message, created_at FROM gitlab_commit WHERE project_id = ? ORDER BY created_at DESC, id DESC"
        " LIMIT 50",
        (project_id,),
    ).fetchall()
    dirs: dict[str, None] = {}
    files = []
    for (path,) in db.execute(
        "SELECT path FROM gitlab_file WHERE project_id = ? AND path LIKE ? ORDER BY path", (project_id, f"{prefix}%")
    ):
        rest = path[len(prefix) :]
        if "/" in rest:
            dirs[prefix + rest.split("/", 1)[0]] = None
        else:
            files.append(path)
    entries = [{"path": d, "is_dir": True} for d in dirs] + [{"path": f, "is_dir": False} for f in files]
    for entry in entries:
        entry["name"] = entry["path"].rsplit("/", 1)[-1]
        entry["commit"] = commits[zlib.crc32(entry["path"].encode()) % len(commits)] if commits else None
    return entries


def _project_context(project: sqlite3.Row) -> dict[str, Any]:
    db = get_db()
    pid = project["id"]
    return {
        "commit_count": db.execute("SELECT COUNT(*) FROM gitlab_commit WHERE project_id = ?", (pid,)).fetchone()[0],
        "last_commit": db.execute(
            "SELECT * FROM gitlab_commit WHERE project_id = ? ORDER BY created_at DESC, id DESC LIMIT 1", (pid,)
        ).fetchone(),
        "branches": [
            r[0]
            for r in db.execute(
                "SELECT name FROM gitlab_branch WHERE project_id = ? ORDER BY name != 'main', name", (pid,)
            )
        ],
        "starred": db.execute(
            "SELECT 1 FROM gitlab_star WHERE user_id = ? AND project_id = ?", (current_user()["id"], pid)
        ).fetchone()
        is not None,
        "level": access_level(pid),
        "ssh_url": f"ssh://git@{SSH_HOST}/{project['full_path']}.git",
    }


def create_app(ctx: SiteContext) -> Flask:
    app = make_app(ctx, __name__)

    app.jinja_env.filters.update(long_date=long_date, time_ago=time_ago, site_host=site_host)
    workflow.register(app)
    creation.register(app)

    @app.context_processor
    def _globals() -> dict[str, Any]:
        return {
            "me": current_user(),
            "roles": ROLES,
            "project": g.get("project"),
            "nav_section": g.get("nav_section"),
            "header_counts": header_counts(),
        }

    @app.before_request
    def _login_wall() -> Any:
        if request.endpoint not in ("sign_in", "static") and current_user() is None:
            return redirect(url_for("sign_in", redirect_to=request.full_path))
        return None

    @app.route("/users/sign_in", methods=["GET", "POST"])
    def sign_in() -> Any:
        error = None
        if request.method == "POST":
            login = request.form.get("username", "").strip()
            user = (
                get_db().execute("SELECT * FROM gitlab_user WHERE username = ? OR email = ?", (login, login)).fetchone()
            )
            if user and user["password_hash"] == hash_password(user["username"], request.form.get("password", "")):
                session.clear()
                session["user_id"] = user["id"]
                return redirect(same_site_path(request.args.get("redirect_to")))
            error = "Invalid login or password."
        return render_template("login.html", error=error), (401 if error else 200)

    @app.post("/users/sign_out")
    def sign_out() -> Any:
        session.clear()
        return redirect(url_for("sign_in"))

    @app.get("/")
    def root() -> Any:
        return redirect(url_for("projects", scope="yours"))

    @app.get("/dashboard/projects", defaults={"scope": "yours"})
    @app.get("/dashboard/projects/starred", defaults={"scope": "starred"})
    @app.get("/explore", defaults={"scope": "explore"})
    @app.get("/explore/projects", defaults={"scope": "explore"})
    def projects(scope: str) -> str:
        uid = current_user()["id"]
        where = {
            "yours": ("EXISTS (SELECT 1 FROM gitlab_member m WHERE m.project_id = p.id AND m.user_id = ?)", (uid,)),
            "starred": ("EXISTS (SELECT 1 FROM gitlab_star s WHERE s.project_id = p.id AND s.user_id = ?)", (uid,)),
            "explore": ("p.visibility != 'private'", ()),
        }[scope]
        return render_template("projects.html", scope=scope, **_project_list(*where))

    @app.get("/dashboard/<any(issues, merge_requests):kinds>")
    def dashboard_issuables(kinds: str) -> Any:
        filters = ("assignee_username", "reviewer_username", "author_username", "label_name[]", "search")
        if not any(request.args.get(f) for f in filters):
            return redirect(url_for("dashboard_issuables", kinds=kinds, assignee_username=current_user()["username"]))
        vis, params = visible_clause()
        data = _issuable_query(KINDS[kinds], [vis], list(params))
        return render_template("issuables.html", dashboard=True, kinds=kinds, **data)

    @app.get("/dashboard/groups", defaults={"scope": "yours"})
    @app.get("/explore/groups", defaults={"scope": "explore"})
    def groups(scope: str) -> str:
        sql = (
            "SELECT gr.*, (SELECT COUNT(*) FROM gitlab_project p WHERE p.namespace = gr.path) AS n_projects,"
            " (SELECT COUNT(*) FROM gitlab_group_member gm WHERE gm.group_id = gr.id) AS n_members FROM gitlab_group gr"
        )
        if scope == "yours":
            sql += " WHERE EXISTS (SELECT 1 FROM gitlab_group_member gm WHERE gm.group_id = gr.id AND gm.user_id = ?)"
        rows = (
            get_db().execute(sql + " ORDER BY gr.name", (current_user()["id"],) if scope == "yours" else ()).fetchall()
        )
        return render_template("groups.html", groups=rows, scope=scope)

    @app.get("/groups/<group>", defaults={"tab": "projects"})
    @app.get("/groups/<group>/-/group_members", defaults={"tab": "members"})
    def group(group: str, tab: str) -> str:
        row = get_group(group)
        members = (
            get_db()
            .execute(
                "SELECT u.*, gm.access_level FROM gitlab_group_member gm JOIN gitlab_user u"
                " ON u.id = gm.user_id WHERE gm.group_id = ? ORDER BY u.name",
                (row["id"],),
            )
            .fetchall()
        )
        return render_template(
            "group.html",
            group=row,
            tab=tab,
            members=members,
            candidates=invite_candidates({m["id"] for m in members}),
            level=group_level(row["id"]),
            **_project_list("p.namespace = ?", (group,)),
        )

    @app.get("/users/<username>/<any(starred, contributed):tab>")
    def user_projects(username: str, tab: str) -> str:
        """The profile's Starred projects, or its Contributed projects: those with commits the user authored."""
        user = get_db().execute("SELECT * FROM gitlab_user WHERE username = ?", (username,)).fetchone()
        if user is None:
            abort(404)
        where = {
            "starred": ("EXISTS (SELECT 1 FROM gitlab_star s WHERE s.project_id = p.id AND s.user_id = ?)", user["id"]),
            "contributed": (
                "EXISTS (SELECT 1 FROM gitlab_commit c WHERE c.project_id = p.id AND c.author_email = ?)",
                user["email"],
            ),
        }[tab]
        data = _project_list(where[0], (where[1],))
        return render_template("user.html", user=user, tab=tab, **data, **follow_counts(user["id"]))

    @app.route("/-/profile", methods=["GET", "POST"])
    def profile() -> Any:
        me = current_user()
        errors: dict[str, str] = {}
        values: Any = me
        if request.method == "POST":
            values = request.form
            if not values.get("name", "").strip():
                errors["name"] = "Full name can't be blank."
            if any(c.isspace() for c in values.get("website", "").strip()):
                errors["website"] = "Website url is not a valid URL."
            if len(values.get("bio", "")) > 255:
                errors["bio"] = "Bio is too long (maximum is 255 characters)."
            if not errors:
                get_db().execute(
                    "UPDATE gitlab_user SET name = ?, status_message = ?, busy = ?, bio = ?, website = ? WHERE id = ?",
                    (
                        values["name"].strip(),
                        values.get("status_message", "").strip(),
                        1 if values.get("busy") else 0,
                        values.get("bio", "").strip(),
                        values.get("website", "").strip(),
                        me["id"],
                    ),
                )
                get_db().commit()
                flash("Profile was successfully updated")
                return redirect(url_for("profile"))
        return render_template("profile_edit.html", values=values, errors=errors), (400 if errors else 200)

    @app.get("/-/profile/personal_access_tokens")
    def access_tokens() -> Any:
        return render_template("profile_tokens.html", user=current_user())

    @app.get("/<namespace>")
    def namespace_page(namespace: str) -> Any:
        db = get_db()
        if db.execute("SELECT 1 FROM gitlab_group WHERE path = ?", (namespace,)).fetchone():
            return group(namespace, "projects")
        user = db.execute("SELECT * FROM gitlab_user WHERE username = ?", (namespace,)).fetchone()
        if user is None:
            abort(404)
        data = _project_list("p.namespace = ?", (namespace,))
        contributed = db.execute(
            "SELECT COUNT(*) FROM gitlab_commit WHERE author_email = ?", (user["email"],)
        ).fetchone()[0]
        return render_template(
            "user.html", user=user, tab="overview", contributions=contributed, **data, **follow_counts(user["id"])
        )

    @app.get("/<namespace>/<project>")
    def project_home(namespace: str, project: str) -> str:
        row = get_project(namespace, project)
        set_nav("information")
        readme = (
            get_db()
            .execute("SELECT content FROM gitlab_file WHERE project_id = ? AND path = 'README.md'", (row["id"],))
            .fetchone()
        )
        return render_template(
            "project.html",
            entries=_tree_entries(row["id"], ""),
            folder="",
            host=request.host,
            readme=Markup(_MARKDOWN.render(readme["content"])) if readme else None,
            **_project_context(row),
        )

    @app.post("/<namespace>/<project>/-/star")
    def star(namespace: str, project: str) -> Any:
        row = get_project(namespace, project)
        db = get_db()
        if (
            db.execute(
                "DELETE FROM gitlab_star WHERE user_id = ? AND project_id = ?", (current_user()["id"], row["id"])
            ).rowcount
            == 0
        ):
            db.execute("INSERT INTO gitlab_star VALUES (?, ?)", (current_user()["id"], row["id"]))
        db.commit()
        return redirect(f"/{namespace}/{project}")

    @app.get("/<namespace>/<project>/-/tree/<ref>/", defaults={"folder": ""})
    @app.get("/<namespace>/<project>/-/tree/<ref>/<path:folder>")
    def tree(namespace: str, project: str, ref: str, folder: str) -> str:
        row = get_project(namespace, project)
        set_nav("repository")
        entries = _tree_entries(row["id"], folder.strip("/"))
        if not entries and folder:
            abort(404)
        return render_template(
            "project.html",
            entries=entries,
            folder=folder.strip("/"),
            readme=None,
            host=request.host,
            **_project_context(row),
        )

    @app.get("/<namespace>/<project>/-/<any(blob, raw):mode>/<ref>/<path:path>")
    def blob(namespace: str, project: str, mode: str, ref: str, path: str) -> Any:
        row = get_project(namespace, project)
        set_nav("repository")
        f = (
            get_db()
            .execute("SELECT * FROM gitlab_file WHERE project_id = ? AND path = ?", (row["id"], path))
            .fetchone()
        )
        if f is None:
            abort(404)
        if mode == "raw":
            return f["content"], 200, {"Content-Type": "text/plain; charset=utf-8"}
        return render_template("blob.html", file=f, lines=f["content"].splitlines(), ref=ref)

    @app.route("/<namespace>/<project>/-/new/<ref>", methods=["GET", "POST"], defaults={"path": ""})
    @app.route("/<namespace>/<project>/-/new/<ref>/", methods=["GET", "POST"], defaults={"path": ""})
    @app.route("/<namespace>/<project>/-/edit/<ref>/<path:path>", methods=["GET", "POST"])
    def edit_file(namespace: str, project: str, ref: str, path: str) -> Any:
        """Create a file (any folders in its path come with it) or change one, as one commit on the branch."""
        row = get_project(namespace, project)
        set_nav("repository")
        require_level(row["id"], 30)  # developers and up write to the repository
        db = get_db()
        current = db.execute(
            "SELECT * FROM gitlab_file WHERE project_id = ? AND path = ?", (row["id"], path)
        ).fetchone()
        if path and current is None:
            abort(404)
        values = {
            "file_path": path or request.args.get("file_name", ""),
            "content": current["content"] if current else "",
            "commit_message": "",
        }
        errors: dict[str, str] = {}
        if request.method == "POST":
            values = {key: request.form.get(key, "") for key in values} | ({"file_path": path} if path else {})
            target = values["file_path"].strip().strip("/")
            if not re.fullmatch(r"[\w.-]+(/[\w.-]+)*", target) or {".", ".."} & set(target.split("/")):
                errors["file_path"] = "File path can contain only letters, digits, '_', '-', '.' and '/'."
            elif (
                not path
                and db.execute(
                    "SELECT 1 FROM gitlab_file WHERE project_id = ? AND path = ?", (row["id"], target)
                ).fetchone()
            ):
                errors["file_path"] = "A file with this name already exists."
            if not errors:
                message = values["commit_message"].strip() or f"{'Update' if path else 'Add new file'} {target}"
                db.execute(
                    "INSERT INTO gitlab_file VALUES (?, ?, ?)"
                    " ON CONFLICT (project_id, path) DO UPDATE SET content = excluded.content",
                    (row["id"], target, values["content"].replace("\r\n", "\n")),
                )
                db.execute(
                    "INSERT INTO gitlab_commit (project_id, sha, author_name, author_email, message, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (row["id"], secrets.token_hex(20), current_user()["name"], current_user()["email"], message, now()),
                )
                db.execute("UPDATE gitlab_project SET last_activity_at = ? WHERE id = ?", (now(), row["id"]))
                db.commit()
                flash("Your changes have been committed successfully.")
                return redirect(f"/{namespace}/{project}/-/blob/{ref}/{target}")
        return render_template("file_edit.html", values=values, errors=errors, ref=ref, editing=bool(path)), (
            400 if errors else 200
        )

    @app.get("/<namespace>/<project>/-/commits", endpoint="commits_default", defaults={"ref": "main"})
    @app.get("/<namespace>/<project>/-/commits/<ref>")
    def commits(namespace: str, project: str, ref: str) -> str:
        row = get_project(namespace, project)
        set_nav("repository")
        author = request.args.get("author", "")
        where, params = "project_id = ?", [row["id"]]
        if author:
            where += " AND author_name = ?"
            params.append(author)
        page = int_arg("page", 1)
        rows = (
            get_db()
            .execute(
                f"SELECT * FROM gitlab_commit WHERE {where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                (*params, 40, (page - 1) * 40),
            )
            .fetchall()
        )
        days: dict[str, list[sqlite3.Row]] = {}
        for c in rows:
            days.setdefault(datetime.fromisoformat(c["created_at"]).strftime("%d %b, %Y"), []).append(c)
        total = get_db().execute(f"SELECT COUNT(*) FROM gitlab_commit WHERE {where}", params).fetchone()[0]
        return render_template(
            "commits.html",
            days=days,
            page=page,
            has_next=page * 40 < total,
            author=author,
            ref=ref,
            **_project_context(row),
        )

    @app.get("/<namespace>/<project>/-/graphs/<ref>")
    def contributors(namespace: str, project: str, ref: str) -> str:
        row = get_project(namespace, project)
        set_nav("repository")
        rows = (
            get_db()
            .execute(
                "SELECT author_name, author_email, COUNT(*) AS n FROM gitlab_commit WHERE project_id = ?"
                " GROUP BY author_name, author_email ORDER BY n DESC, author_name",
                (row["id"],),
            )
            .fetchall()
        )
        return render_template("contributors.html", contributors=rows, ref=ref, **_project_context(row))

    @app.get("/<namespace>/<project>/-/<any(issues, merge_requests):kinds>", strict_slashes=False)
    def issuables(namespace: str, project: str, kinds: str) -> str:
        row = get_project(namespace, project)
        set_nav(kinds)
        data = _issuable_query(KINDS[kinds], ["i.project_id = ?"], [row["id"]])
        db = get_db()
        return render_template(
            "issuables.html",
            dashboard=False,
            kinds=kinds,
            labels=db.execute("SELECT * FROM gitlab_label WHERE project_id = ? ORDER BY name", (row["id"],)).fetchall(),
            milestones=db.execute(
                "SELECT * FROM gitlab_milestone WHERE project_id = ? ORDER BY title", (row["id"],)
            ).fetchall(),
            **data,
        )

    @app.route("/<namespace>/<project>/-/<any(issues, merge_requests):kinds>/new", methods=["GET", "POST"])
    def new_issuable(namespace: str, project: str, kinds: str) -> Any:
        row = get_project(namespace, project)
        set_nav(kinds)
        kind = KINDS[kinds]
        db = get_db()
        errors: dict[str, str] = {}
        branches = [
            r[0] for r in db.execute("SELECT name FROM gitlab_branch WHERE project_id = ? ORDER BY name", (row["id"],))
        ]
        if request.method == "POST":
            form = request.form
            title = form.get("title", "").strip()
            if not title:
                errors["title"] = "Title can't be blank."
            if form.get("due_date") and not _validate_due_date(form["due_date"]):
                errors["due_date"] = "Due date must be a date (YYYY-MM-DD)."
            if kind == "merge_request":
                if form.get("source_branch") not in branches or form.get("target_branch") not in branches:
                    errors["source_branch"] = "Choose existing source and target branches."
                elif form["source_branch"] == form["target_branch"]:
                    errors["source_branch"] = "Source and target branch must be different."
            if not errors:
                iid = db.execute(
                    "SELECT COALESCE(MAX(iid), 0) + 1 FROM gitlab_issuable WHERE project_id = ? AND kind = ?",
                    (row["id"], kind),
                ).fetchone()[0]
                stamp = now()
                new_id = inserted_id(
                    db.execute(
                        "INSERT INTO gitlab_issuable (kind, project_id, iid, title, description, author_id, state,"
                        " source_branch, target_branch, created_at, updated_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, 'opened', ?, ?, ?, ?)",
                        (
                            kind,
                            row["id"],
                            iid,
                            title,
                            form.get("description", "").strip(),
                            current_user()["id"],
                            form.get("source_branch") if kind == "merge_request" else None,
                            form.get("target_branch") if kind == "merge_request" else None,
                            stamp,
                            stamp,
                        ),
                    )
                )
                _save_issuable_fields(row, new_id, kind, form)
                db.commit()
                return redirect(f"/{namespace}/{project}/-/{kinds}/{iid}")
        return render_template(
            "issuable_new.html",
            kinds=kinds,
            kind=kind,
            errors=errors,
            values=request.form if request.method == "POST" else request.args,
            branches=branches,
            members=list_members(row["id"]),
            labels=db.execute("SELECT * FROM gitlab_label WHERE project_id = ? ORDER BY name", (row["id"],)).fetchall(),
            milestones=db.execute(
                "SELECT * FROM gitlab_milestone WHERE project_id = ? AND state = 'active' ORDER BY title", (row["id"],)
            ).fetchall(),
        ), (400 if errors else 200)

    @app.get("/<namespace>/<project>/-/<any(issues, merge_requests):kinds>/<int:iid>")
    def issuable(namespace: str, project: str, kinds: str, iid: int) -> str:
        row = get_project(namespace, project)
        set_nav(kinds)
        item = _issuable(row, KINDS[kinds], iid)
        db = get_db()
        notes = db.execute(
            "SELECT n.*, u.username, u.name FROM gitlab_note n JOIN gitlab_user u ON u.id = n.author_id"
            " WHERE n.issuable_id = ? ORDER BY n.created_at, n.id",
            (item["id"],),
        ).fetchall()
        return render_template(
            "issuable.html",
            item=item,
            kinds=kinds,
            notes=notes,
            members=list_members(row["id"]),
            labels=db.execute("SELECT * FROM gitlab_label WHERE project_id = ? ORDER BY name", (row["id"],)).fetchall(),
            milestones=db.execute(
                "SELECT * FROM gitlab_milestone WHERE project_id = ? ORDER BY title", (row["id"],)
            ).fetchall(),
            item_labels={lb["name"] for lb in item["labels"]},
        )

    @app.post(
        "/<namespace>/<project>/-/<any(issues, merge_requests):kinds>/<int:iid>/<any(update, state, notes):action>"
    )
    def issuable_action(namespace: str, project: str, kinds: str, iid: int, action: str) -> Any:
        row = get_project(namespace, project)
        item = _issuable(row, KINDS[kinds], iid)
        db = get_db()
        if action == "update":
            if request.form.get("due_date") and not _validate_due_date(request.form["due_date"]):
                flash("Due date must be a date (YYYY-MM-DD).", "error")
            else:
                _save_issuable_fields(row, item["id"], item["kind"], request.form)
                flash("Changes saved.")
        elif action == "state":
            target = request.form.get("state", "")
            allowed = {"closed", "opened"} | ({"merged"} if item["kind"] == "merge_request" else set())
            if target not in allowed:
                abort(400)
            db.execute("UPDATE gitlab_issuable SET state = ?, updated_at = ? WHERE id = ?", (target, now(), item["id"]))
        else:
            body = request.form.get("note", "").strip()
            if not body:
                flash("Comment can't be blank.", "error")
            else:
                db.execute(
                    "INSERT INTO gitlab_note (issuable_id, author_id, body, created_at) VALUES (?, ?, ?, ?)",
                    (item["id"], current_user()["id"], body, now()),
                )
        db.commit()
        return redirect(f"/{namespace}/{project}/-/{kinds}/{iid}")

    @app.route("/<namespace>/<project>/-/project_members", methods=["GET", "POST"])
    def project_members(namespace: str, project: str) -> Any:
        row = get_project(namespace, project)
        set_nav("information")
        error = None
        if request.method == "POST":
            require_level(row["id"], 40)
            error = invite("gitlab_member", "project_id", row["id"], access_level(row["id"]))
            if error is None:
                return redirect(request.path)
        members = list_members(row["id"])
        return render_template(
            "members.html",
            members=members,
            candidates=invite_candidates({m["id"] for m in members}),
            error=error,
            level=access_level(row["id"]),
        ), (400 if error else 200)

    @app.get("/<namespace>/<project>/-/<any(milestones, labels):what>")
    def project_meta(namespace: str, project: str, what: str) -> str:
        row = get_project(namespace, project)
        set_nav("issues" if what == "milestones" else "information")
        table = "gitlab_milestone" if what == "milestones" else "gitlab_label"
        rows = (
            get_db()
            .execute(
                f"SELECT * FROM {table} WHERE project_id = ? ORDER BY {'title' if what == 'milestones' else 'name'}",
                (row["id"],),
            )
            .fetchall()
        )
        return render_template("project_meta.html", what=what, rows=rows)

    @app.route("/<namespace>/<project>/-/edit", methods=["GET", "POST"])
    def project_edit(namespace: str, project: str) -> Any:
        row = get_project(namespace, project)
        set_nav("settings")
        require_level(row["id"], 40)
        errors: dict[str, str] = {}
        if request.method == "POST":
            name = request.form.get("name", "").strip()
            visibility = request.form.get("visibility", "")
            if not name:
                errors["name"] = "Project name can't be blank."
            if visibility not in ("private", "internal", "public"):
                errors["visibility"] = "Choose a visibility level."
            if not errors:
                get_db().execute(
                    "UPDATE gitlab_project SET name = ?, description = ?, visibility = ?,"
                    " last_activity_at = ? WHERE id = ?",
                    (name, request.form.get("description", "").strip(), visibility, now(), row["id"]),
                )
                get_db().commit()
                flash(f"Project '{name}' was successfully updated.")
                return redirect(request.path)
        return render_template(
            "project_edit.html", errors=errors, values=request.form if errors else get_project(namespace, project)
        ), (400 if errors else 200)

    return app
