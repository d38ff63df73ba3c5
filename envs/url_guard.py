"""Keeps an episode's browser on the task's sites, so an agent cannot look answers up elsewhere.

One guard per episode context. Navigations (of any frame) to origins outside the task's sites are
cancelled in the driver and remembered, so the action that caused them reports the attempt in
``last_action_error``. Sub-resources from other origins pass: the real map site loads tiles and routes
from servers on other ports.
"""

from __future__ import annotations

import re

import playwright.sync_api

_ERROR_PAGE = "chrome-error://"


class UrlGuard:
    """Blocks and records navigations outside ``allowed_origins`` in one browser context."""

    def __init__(self, allowed_origins: tuple[str, ...]) -> None:
        self.allowed_origins = allowed_origins
        self.blocked: list[str] = []  # navigations blocked during the current action
        self.blocked_popups = 0  # new tabs whose first navigation was blocked, still to be closed

    def install(self, context: playwright.sync_api.BrowserContext) -> None:
        """Route the context's requests to URLs outside the allowed origins through :meth:`_guard`.

        Only those URLs reach Python (the pattern is matched by the driver), so pages on the task's
        sites pay nothing.
        """
        allowed = "|".join(re.escape(origin) for origin in self.allowed_origins) or "(?!)"
        outside = re.compile(rf"^(?!(?:{allowed})(?:[/?#]|$))(?:https?|wss?|ftp|file):", re.IGNORECASE)
        context.route(outside, self._guard)

    def begin_action(self) -> None:
        self.blocked.clear()

    def error(self) -> str | None:
        """The ``last_action_error`` for the current action, if it tried to leave the sites."""
        if not self.blocked:
            return None
        return (
            f"Blocked navigation to {self.blocked[0]}: only the task's sites are allowed "
            f"({', '.join(self.allowed_origins)})."
        )

    def close_blocked_tabs(self, context: playwright.sync_api.BrowserContext, wait: bool = False) -> bool:
        """Close the tabs that a blocked new-tab navigation left on Chromium's error page; True if any.

        Playwright reports such a tab only once its error page commits, so an action that opened
        one waits (briefly) for it, and later observations close any that arrive late.
        """
        if wait and not any(page.url.startswith(_ERROR_PAGE) for page in context.pages):
            try:
                context.wait_for_event("page", timeout=1_000)
            except playwright.sync_api.TimeoutError:
                pass
        closed = False
        for page in list(context.pages):
            if page.url.startswith(_ERROR_PAGE) and len(context.pages) > 1:
                page.close()
                self.blocked_popups = max(0, self.blocked_popups - 1)
                closed = True
        return closed

    def _guard(self, route: playwright.sync_api.Route, request: playwright.sync_api.Request) -> None:
        if not request.is_navigation_request():
            route.continue_()
            return
        self.blocked.append(request.url)
        try:
            _ = request.frame  # raises while a new tab has no frame yet
        except playwright.sync_api.Error:
            # A new tab's first navigation: abort it, so the tab commits an error page, gets reported
            # to us and is closed after the action.
            self.blocked_popups += 1
            route.abort("blockedbyclient")
            return
        # "204 No Content" cancels a navigation and leaves the page where it was (an abort would
        # leave Chromium's error page in its place).
        route.fulfill(status=204, body="")
