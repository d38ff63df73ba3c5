"""What an episode's state is made of, and the parts of bringing it back (see ``WebArenaEnv.restore``).

A snapshot holds the site data (a token of the site host, when it can snapshot), the browser context's
cookies and storage, the open tabs, the step counter, the recorded moves and the chat log. Restoring is
exact when the snapshot has site data (the local suite), else reset + replay of the recorded moves with
a URL checkpoint after each (real sites, whose data the harness cannot snapshot).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import playwright.sync_api


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
