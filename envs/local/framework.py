"""Shared plumbing for the local sites: app factory, per-request SQLite, pagination, sorting, login.

Every site is a plain Flask app built by :func:`make_app`. The database is opened per request (never
cached across requests) so that a restore done by the launcher is visible on the very next page load.
All sites share the host ``127.0.0.1`` and browsers do not isolate cookies by port, so each site gets
its own session-cookie name (:func:`session_cookie_name`).
"""

from __future__ import annotations

import functools
import math
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from flask import Flask, g, redirect, request, session, url_for
from jinja2 import ChoiceLoader, FileSystemLoader

LOCAL_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = LOCAL_DIR / "templates"
STATIC_DIR = LOCAL_DIR / "static"


@dataclass(frozen=True)
class SiteContext:
    """What a site needs to build its app: its name, the instance database and every site's URL."""

    site: str
    db_path: str
    urls: Mapping[str, str] = field(default_factory=dict)
    secret_key: str = "webarena-gym-local"


def session_cookie_name(site: str) -> str:
    """Name of the site's session cookie (distinct per site because cookies ignore ports)."""
    return f"{site}_session"


def connect(db_path: str) -> sqlite3.Connection:
    """Open the instance database the way every request does (rows addressable by column name)."""
    conn = sqlite3.connect(db_path, timeout=10, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = OFF")  # a throw-away per-instance file: no need to survive power loss
    return conn


def get_db() -> sqlite3.Connection:
    """The current request's connection, opened lazily and closed at teardown."""
    if "db" not in g:
        g.db = connect(g.site_ctx.db_path)
    return g.db


def query(sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[sqlite3.Row]:
    return get_db().execute(sql, params).fetchall()


def query_one(sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Row | None:
    return get_db().execute(sql, params).fetchone()


def query_row(sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Row:
    """The row a query always returns (an aggregate, or a row the caller knows exists)."""
    row = query_one(sql, params)
    if row is None:
        raise LookupError(f"no row for {sql!r}")
    return row


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The id of the row ``cur``'s INSERT added (sqlite3 leaves ``lastrowid`` None when none was)."""
    if cur.lastrowid is None:
        raise LookupError("the statement inserted no row")
    return cur.lastrowid


def execute(sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> int:
    """Run one write and commit it at once; returns ``lastrowid``."""
    db = get_db()
    cur = db.execute(sql, params)
    db.commit()
    return cur.lastrowid or 0


def make_app(ctx: SiteContext, import_name: str) -> Flask:
    """A Flask app wired to the site's templates, static files, database and sibling-site URLs."""
    static = STATIC_DIR / ctx.site
    app = Flask(
        import_name,
        template_folder=str(TEMPLATES_DIR / ctx.site),
        static_folder=str(static) if static.is_dir() else None,
        static_url_path="/static",
    )
    app.config.update(
        SECRET_KEY=f"{ctx.secret_key}:{ctx.site}",
        SESSION_COOKIE_NAME=session_cookie_name(ctx.site),
        TEMPLATES_AUTO_RELOAD=False,
        JSON_SORT_KEYS=False,
    )
    # Templates shared by all sites (e.g. pager.html) come after the site's own, which may override them.
    app.jinja_loader = ChoiceLoader(
        [FileSystemLoader(str(TEMPLATES_DIR / ctx.site)), FileSystemLoader(str(TEMPLATES_DIR / "common"))]
    )
    app.jinja_env.globals.update(site_url=functools.partial(site_url, ctx), page_url=page_url)

    @app.before_request
    def _bind_context() -> None:
        g.site_ctx = ctx

    @app.teardown_appcontext
    def _close_db(_exc: BaseException | None) -> None:
        db = g.pop("db", None)
        if db is not None:
            db.close()

    @app.get("/__health")
    def _health() -> dict[str, str]:
        return {"site": ctx.site, "status": "ok"}

    return app


def site_url(ctx: SiteContext, site: str, path: str = "/") -> str:
    """Absolute URL of ``path`` on another local site (``#`` when that site is not running)."""
    base = ctx.urls.get(site)
    if not base:
        return "#"
    return base + (path if path.startswith("/") else "/" + path)


def page_url(**changes: Any) -> str:
    """The current URL with some query arguments replaced (``None`` drops one): for pagers and sort links."""
    args = request.args.to_dict()
    for key, value in changes.items():
        if value is None:
            args.pop(key, None)
        else:
            args[key] = str(value)
    return request.path + ("?" + urlencode(args) if args else "")


@dataclass
class Page:
    """One page of a result list plus what a pager needs."""

    items: list[Any]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))

    @property
    def has_prev(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages

    @property
    def first_index(self) -> int:
        return 0 if self.total == 0 else (self.page - 1) * self.per_page + 1

    @property
    def last_index(self) -> int:
        return min(self.total, self.page * self.per_page)


def int_arg(name: str, default: int, lo: int = 1, hi: int = 10**9) -> int:
    """An integer query argument clamped to [lo, hi]; junk falls back to ``default``."""
    try:
        value = int(request.args.get(name, default))
    except (TypeError, ValueError):
        value = default
    return max(lo, min(hi, value))


def paginate(sql: str, params: Sequence[Any] = (), *, per_page: int = 20, page: int | None = None) -> Page:
    """Run ``sql`` for the page named by ``?page=`` (or ``page``); counts the full result for the pager."""
    per_page = int_arg("limit", per_page, 1, 200) if "limit" in request.args else per_page
    total = get_db().execute(f"SELECT COUNT(*) FROM ({sql})", params).fetchone()[0]
    pages = max(1, math.ceil(total / per_page))
    current = page if page is not None else int_arg("page", 1, 1, pages)
    current = min(max(1, current), pages)
    rows = get_db().execute(f"{sql} LIMIT ? OFFSET ?", (*params, per_page, (current - 1) * per_page)).fetchall()
    return Page(items=list(rows), page=current, per_page=per_page, total=total)


def sort_clause(allowed: Mapping[str, str], default: str, default_dir: str = "asc") -> tuple[str, str, str]:
    """``(ORDER BY clause, sort key, direction)`` from ``?sort=&dir=``, restricted to ``allowed`` columns.

    ``allowed`` maps the public sort key to its SQL expression, so user input never reaches SQL text.
    """
    key = request.args.get("sort", default)
    if key not in allowed:
        key = default
    direction = request.args.get("dir", default_dir).lower()
    if direction not in ("asc", "desc"):
        direction = default_dir
    return f"ORDER BY {allowed[key]} {direction.upper()}", key, direction


def current_user_id() -> int | None:
    return session.get("user_id")


def login_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Redirect anonymous visitors to the site's ``login`` endpoint, remembering where they were going."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if current_user_id() is None:
            return redirect(url_for("login", next=request.full_path.rstrip("?")))
        return view(*args, **kwargs)

    return wrapper


def safe_next(default: str = "/") -> str:
    """The ``next`` target after login, only when it is a path on this site (no open redirect)."""
    return same_site_path(request.values.get("next"), default)


def same_site_path(target: str | None, default: str = "/") -> str:
    """``target`` when it is a path on this site, else ``default``.

    Browsers drop tabs and newlines from a URL and read a backslash as a slash, so ``/<tab>/host`` and
    ``/<backslash>host`` reach another host just as ``//host`` does; a control character would also
    break the ``Location`` header (a 500). So: one leading slash, not followed by another, and no
    backslash or control character anywhere.
    """
    if not target or not target.startswith("/") or target.startswith("//"):
        return default
    if "\\" in target or any(ord(char) < 0x20 or ord(char) == 0x7F for char in target):
        return default
    return target


def create_schema(conn: sqlite3.Connection, schemas: Iterable[str]) -> None:
    for ddl in schemas:
        if ddl.strip():
            conn.executescript(ddl)


def form_login(page: Any, login_url: str, username_label: str, button: str, account: Mapping[str, str]) -> None:
    """Sign a Playwright page in through a site's own form; a rejected login raises instead of passing silently."""
    page.goto(login_url)
    page.get_by_label(username_label, exact=True).fill(account["username"])
    page.get_by_label("Password", exact=True).fill(account["password"])
    with page.expect_navigation():
        page.get_by_role("button", name=button).click()
    if page.url.split("?")[0] == login_url:
        raise RuntimeError(f"{login_url} rejected the login of {account['username']!r}")
