"""What an episode's state is made of, and the parts of bringing it back (see ``WebArenaEnv.restore``).

A snapshot holds the site data (a token of the site host, when it can snapshot), the browser context's
cookies and storage, the open tabs with their page state (:mod:`envs.page_state`: typed text, ticked
boxes, chosen options, scroll positions, focus), the step counter, the recorded moves, the chat log and
what the last observation showed, against which the restored observation is checked. Restoring is
exact when the snapshot has site data (the local suite), else reset + replay of the recorded moves with
a URL checkpoint after each (real sites, whose data the harness cannot snapshot).

An exact restore brings the open context back to a new context's state plus the snapshot's cookies,
either by reloading the open tabs in place (:func:`reload_in_place`, when every tab can be reused) or by
replacing them with new ones (:func:`clean_context`); a reused tab keeps its renderer process, which
makes the restore several times cheaper than opening a tab.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import playwright.sync_api

from .sites import origin

if TYPE_CHECKING:
    from .extraction import PageSessions

# Leaving a page through a blank document the page itself navigates to: it inherits the page's origin,
# so the tab's sessionStorage of that origin can still be cleared there, after the page's own unload
# handlers (which may still write it) have run.
_LEAVE_FOR_BLANK = "() => { location.href = 'about:blank'; }"
_FORGET_TAB_STATE = "() => { try { sessionStorage.clear(); } catch (e) {} window.name = ''; }"
LEAVE_TIMEOUT_MS = 3_000  # a page that holds on (a beforeunload prompt) makes the restore open new tabs


@dataclass(frozen=True)
class HistoryEntry:
    """One recorded move: an agent ``step`` (counted) or a controlled ``goto`` (not counted).

    ``url`` is the active page's URL afterwards: the checkpoint a replay compares against and
    returns to when the replayed page drifted.
    """

    kind: Literal["step", "goto"]
    value: str
    url: str


@dataclass(frozen=True)
class EnvSnapshot:
    """Everything needed to bring an episode back (see :meth:`envs.env.WebArenaEnv.restore`)."""

    seed: int | None
    site_state: Any  # the site host's token; None when the site host cannot snapshot
    storage_state: dict
    tab_urls: tuple[str, ...]
    active_tab: int
    step_count: int
    history: tuple[HistoryEntry, ...]
    chat_messages: tuple[dict, ...]
    goal_object: tuple[dict, ...]
    # per tab, what a reload loses (envs.page_state.capture; None: not readable)
    page_states: tuple[dict | None, ...] = ()
    # what the last observation (the active tab) showed, for checking the restore (page_state.fingerprint_items)
    shown: tuple[tuple[str, ...], ...] = ()

    @property
    def url_checkpoints(self) -> tuple[str, ...]:
        return tuple(entry.url for entry in self.history)

    @property
    def exact(self) -> bool:
        """Whether restoring this snapshot is exact (it holds the site data)."""
        return self.site_state is not None

    @property
    def reusable_context(self) -> bool:
        """Whether an open context can be cleaned and reused for it (no localStorage to seed first)."""
        return not any(entry.get("localStorage") for entry in self.storage_state.get("origins", []))


def clean_context(
    context: playwright.sync_api.BrowserContext, origins: tuple[str, ...], cookies: list[dict]
) -> playwright.sync_api.Page:
    """Bring an open context back to a new context's state plus ``cookies``; return its one blank tab.

    Several times cheaper than a new context, whose first page load also refetches every resource.
    The old tabs are closed first (their session storage and back/forward history go with them, and
    none can write storage after the clean-up), then the task sites' stored data and all cookies are
    cleared. Snapshots holding localStorage take the new-context path instead, where Playwright seeds
    it before any page script runs.
    """
    first = context.new_page()
    for page in context.pages:
        if page != first:
            page.close()
    session = context.new_cdp_session(first)
    try:
        for origin in origins:
            session.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
    finally:
        session.detach()
    context.clear_cookies()
    if cookies:
        # Playwright 1.44 types the parameter with a TypedDict it does not export; these are the
        # cookies its own storage_state() returned.
        context.add_cookies(cookies)  # type: ignore[arg-type]
    return first


def open_tabs(
    context: playwright.sync_api.BrowserContext, first: playwright.sync_api.Page, urls: tuple[str, ...]
) -> None:
    """Load a snapshot's tabs: ``first`` gets the first URL, each further URL a new tab (in order)."""
    urls = urls or ("about:blank",)
    first.goto(urls[0])
    for url in urls[1:]:
        context.new_page().goto(url)


def _web_origin(url: str) -> str | None:
    return origin(url) if url.startswith(("http:", "https:")) else None


class TabOrigins:
    """The web origins whose documents each tab of a context has shown (in any frame) since the tab was
    opened or last reloaded in place.

    sessionStorage belongs to a tab and an origin, and can be cleared only from a document of that
    origin in that tab; a tab that has shown no origin other than its current page's can therefore be
    reloaded in place without carrying any of it over.
    """

    def __init__(self) -> None:
        self._seen: dict[playwright.sync_api.Page, set[str]] = {}

    def watch(self, page: playwright.sync_api.Page) -> None:
        """Start recording ``page`` (call it from the context's ``page`` event, before it navigates)."""
        self._seen[page] = set()
        page.on("framenavigated", lambda frame: self._note(page, frame.url))
        page.on("close", self._forget)

    def reusable(self, page: playwright.sync_api.Page) -> bool:
        """Whether ``page`` can be reloaded in place: open, not a popup (its opener relation would stay),
        and it has shown no origin but its current page's."""
        seen = self._seen.get(page)
        if seen is None or page.is_closed() or page.opener() is not None:
            return False
        current = _web_origin(page.url)
        return seen <= ({current} if current else set())

    def restart(self, page: playwright.sync_api.Page) -> None:
        self._seen[page] = set()

    def _forget(self, page: playwright.sync_api.Page) -> None:
        self._seen.pop(page, None)

    def _note(self, page: playwright.sync_api.Page, url: str) -> None:
        web_origin = _web_origin(url)
        if web_origin is not None and page in self._seen:
            self._seen[page].add(web_origin)


def reload_in_place(
    context: playwright.sync_api.BrowserContext,
    urls: tuple[str, ...],
    origins: tuple[str, ...],
    cookies: list[dict],
    tabs: TabOrigins,
    sessions: PageSessions,
) -> playwright.sync_api.Page:
    """Bring the open context back to a new context's state plus ``cookies`` with ``urls`` loaded, reusing
    the open tabs (:meth:`TabOrigins.reusable`, checked by the caller for the first ``len(urls)``).

    Tabs beyond the snapshot's are closed. Each reused tab leaves its page for a blank document of the
    same origin (the page's unload handlers run first), forgets its sessionStorage and window name
    there, then, once every page script is gone and the task sites' stored data and the cookies are
    reset, gets a fresh history (the blank page, then the snapshot's page, as a new tab has) and loads
    its URL. Missing tabs are opened. Raises ``playwright.sync_api.Error`` when a tab will not leave its
    page; the caller then replaces the tabs instead.
    """
    urls = urls or ("about:blank",)
    pages = context.pages
    kept = pages[: len(urls)]
    for page in pages[len(urls) :]:
        page.close()
    for page in kept:
        if _web_origin(page.url) is not None:
            page.evaluate(_LEAVE_FOR_BLANK)
            page.wait_for_url("about:blank", wait_until="commit", timeout=LEAVE_TIMEOUT_MS)
        page.evaluate(_FORGET_TAB_STATE)
    for site_origin in origins:
        sessions.send(kept[0], "Storage.clearDataForOrigin", {"origin": site_origin, "storageTypes": "all"})
    context.clear_cookies()
    if cookies:
        context.add_cookies(cookies)  # type: ignore[arg-type]  # Playwright's own storage_state() cookies
    for page, url in zip(kept, urls, strict=False):
        sessions.send(page, "Page.resetNavigationHistory")
        tabs.restart(page)
        page.goto(url)
    for url in urls[len(kept) :]:
        context.new_page().goto(url)
    return kept[0]
