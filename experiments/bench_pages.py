"""Benchmark of the local suite's page sizes against WebArena's real pages, per page type (issue 20).

For each page type agents spend most steps on, one local page is loaded in a real Chromium (logged in
like an agent), its full-page accessibility tree flattened with BrowserGym's ``flatten_axtree_to_str``
and counted in cl100k tokens. The ratio to the real WebArena page of that type uses the comparable
count: the same flattening without ``InlineTextBox`` nodes and ``url`` properties, which the published
real observations do not have (the Chromium and BrowserGym versions they were captured with emit
neither), so both sides count the same content. Each row says where its real figure comes from.
Target: 0.7-1.3x the real page. A type whose real figure has not been obtained yet says so instead of
a ratio. Reset and exact restore are measured with
the suite's current (larger) data by the local benchmark's own routine.
Run: ``python -m experiments.bench_pages [--quick]``.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

RATIO_TARGET = "0.7-1.3"
# What the published real observations lack, left out of the comparable count (see the module docstring).
VERSION_ONLY_ROLES = ["LineBreak", "InlineTextBox"]
VERSION_ONLY_PROPERTIES = ("editable", "readonly", "level", "settable", "multiline", "invalid", "focusable", "url")


@dataclass(frozen=True)
class RealFigure:
    tokens: int
    source: str


@dataclass(frozen=True)
class PageType:
    name: str
    site: str
    path: Callable[[sqlite3.Connection], str]  # the local page's path, chosen from the pristine data
    real: RealFigure | None
    hint: str = ""  # what is known about the real page when no figure could be counted


def _query(conn: sqlite3.Connection, sql: str) -> Any:
    return conn.execute(sql).fetchone()[0]


def _busiest_category(conn: sqlite3.Connection) -> str:
    path = _query(
        conn,
        "SELECT c.url_path FROM shop_category c JOIN shop_product p ON p.category_id = c.id "
        "GROUP BY c.id ORDER BY COUNT(*) DESC, c.id LIMIT 1",
    )
    return f"/{path}.html"


def _busiest_project(conn: sqlite3.Connection) -> str:
    return _query(
        conn,
        "SELECT p.namespace || '/' || p.path FROM gitlab_project p JOIN gitlab_issuable i ON i.project_id = p.id "
        "GROUP BY p.id ORDER BY COUNT(*) DESC, p.id LIMIT 1",
    )


def _busiest_forum(conn: sqlite3.Connection) -> str:
    return _query(
        conn,
        "SELECT f.name FROM reddit_forum f JOIN reddit_submission s ON s.forum_id = f.id "
        "GROUP BY f.id ORDER BY COUNT(*) DESC, f.id LIMIT 1",
    )


MAP_SEARCH = RealFigure(
    505,
    "WebArena's OpenStreetMap after searching 'Carnegie Art Museum' (/search?query=..., one Nominatim result, "
    "header, search form, results panel, map controls): a BrowserGym flattened-tree observation stored in the "
    "prompt examples of a public WebArena agent repository, re-counted here in cl100k tokens",
)
PAGE_TYPES = (
    PageType(
        "store category page",
        "shopping",
        _busiest_category,
        None,
        "issue 20 states ~20k tokens for a Magento category page (mega menu, filters, 24 products), "
        "measurement not given",
    ),
    PageType("store search page", "shopping", lambda c: "/catalogsearch/result/?q=cream", None),
    PageType("admin grid (orders)", "shopping_admin", lambda c: "/sales/order/", None),
    PageType("admin grid (products)", "shopping_admin", lambda c: "/catalog/product/", None),
    PageType("forum listing", "reddit", lambda c: f"/f/{_busiest_forum(c)}", None),
    PageType("issue list", "gitlab", lambda c: f"/{_busiest_project(c)}/-/issues", None),
    PageType("merge request list", "gitlab", lambda c: f"/{_busiest_project(c)}/-/merge_requests", None),
    PageType("repository page", "gitlab", lambda c: f"/{_busiest_project(c)}", None),
    PageType("map search (one result)", "map", lambda c: "/search?query=Quill+Bookshop", MAP_SEARCH),
    PageType("map search (ten results)", "map", lambda c: "/search?query=library", None),
)


def measure_pages() -> list[dict[str, Any]]:
    """Rows: local tokens per page type, with the real figure and the ratio where one is known."""
    from browsergym.utils.obs import flatten_axtree_to_str

    from envs.browser import acquire_playwright, release_playwright
    from envs.local.backend import LocalBackend
    from experiments.bench_wrappers import cl100k
    from wrappers.axtree_capture import capture_axtree

    enc = cl100k()
    sites = sorted({t.site for t in PAGE_TYPES})
    backend = LocalBackend(sites)
    pw = acquire_playwright()
    rows = []
    try:
        urls = backend.urls()
        conn = sqlite3.connect(backend.local.db_path)
        browser = pw.chromium.launch(headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            backend.login(context, sites)
            page = context.new_page()
            for kind in PAGE_TYPES:
                path = kind.path(conn)
                page.goto(urls[kind.site] + path, wait_until="load")
                tree = capture_axtree(page)["axtree_object"]
                full = len(enc.encode(flatten_axtree_to_str(tree)))
                comparable = flatten_axtree_to_str(
                    tree, ignored_roles=VERSION_ONLY_ROLES, ignored_properties=VERSION_ONLY_PROPERTIES
                )
                rows += _rows(kind, path, full, len(enc.encode(comparable)))
        finally:
            browser.close()
            conn.close()
    finally:
        backend.close()
        release_playwright()
    return rows


def _rows(kind: PageType, path: str, full: int, comparable: int) -> list[dict[str, Any]]:
    note = f"{path}; comparable count {comparable}"
    local = {"name": f"{kind.name}: local tokens", "value": full, "unit": "tokens", "target": "", "note": note}
    if kind.real is None:
        local["note"] += "; real WebArena figure not obtained yet (no public full-page observation found)"
        local["note"] += f"; {kind.hint}" if kind.hint else ""
        return [local]
    ratio = {
        "name": f"{kind.name}: local / real (comparable counts)",
        "value": round(comparable / kind.real.tokens, 2),
        "unit": "x",
        "target": RATIO_TARGET,
        "note": f"real {kind.real.tokens} tokens: {kind.real.source}",
    }
    return [local, ratio]


def run(quick: bool = False) -> list[dict[str, Any]]:
    from experiments.bench_local import reset_and_restore_rows

    return measure_pages() + reset_and_restore_rows(quick)


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv[1:]):
        print(f"{row['name']}: {row['value']} {row['unit']} (target {row['target']}) {row['note']}")
