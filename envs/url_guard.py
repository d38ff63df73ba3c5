"""Keeps an episode's browser on the task's sites, so an agent cannot look answers up elsewhere.

One guard per episode context. A URL is a *site URL* when it is ``http(s)`` on one of the task's
origins; every other destination (another origin, ``data:``, ``about:blank``, ``javascript:``,
``file:``, ``view-source:`` ...) is off the sites. Four layers, because Chromium offers no single
hook that sees every navigation:

1. :meth:`UrlGuard.check` -- the env refuses a ``goto`` (the agent's action, or a policy's handle
   call) to a URL off the sites before it starts;
2. a request route -- network navigations (links, forms, scripts, new tabs) to other origins are
   cancelled in the driver: a tab stays where it was (``204 No Content``), a new tab's first
   navigation is aborted and the tab closed. Sub-resource requests to other origins (images, scripts,
   styles, fonts, ``fetch``/XHR, ``sendBeacon``, prefetches, frames) are aborted too, so a page of the
   sites (an agent-edited README with an image, say) cannot send data elsewhere; only
   ``resource_origins`` (the real map's tile and routing servers) may serve sub-resources besides the
   sites. Only URLs off the sites reach Python (the driver matches the pattern), so pages on the
   task's sites pay nothing. WebSockets do not pass through routes: the document-start script refuses
   a ``WebSocket`` to another origin;
3. a document-start script -- a top-level document off the sites (or a frame from another origin)
   is stopped before any of its scripts run; this covers what the route cannot see: redirects
   (Playwright routes only a redirect chain's first URL) and non-network documents;
4. a navigation watch -- a tab whose main frame committed a document off the sites is recorded and
   :meth:`bring_back` returns it to the last site page it showed (a tab that never showed one is
   closed).

Every blocked attempt is remembered, so the action that caused it reports it in ``last_action_error``.

A navigation that fails (a redirect to a closed or forbidden port, a dropped connection) leaves
Chromium's error page (``chrome-error://``) in the tab, on which some browser calls never return. It
is the agent's doing, not the harness's: the watch treats that page like one off the sites (reported
as a failed navigation, the tab brought back), so the episode goes on instead of ending in a hang.

The one exception is a tab's *initial* empty document: ``new_tab`` opens a blank tab by design, and a
page's ``window.open()`` shows one until it loads something. Such a tab shows nothing from elsewhere
and can only be left for a site page. Navigating any tab *to* ``about:blank`` (a ``goto``, a link, a
script) is blocked like every other destination off the sites.
"""

from __future__ import annotations

import json
import logging
import re
from urllib.parse import urlsplit

import playwright.sync_api

from webarena_gym.envs.sites import origin

logger = logging.getLogger(__name__)

_ERROR_PAGE = "chrome-error://"
_SITE_SCHEMES = ("http", "https")
BLANK = "about:blank"

# Runs at the start of every document of the context (frames too), before the page's own scripts:
# stops a document off the sites, refuses WebSockets to other origins (routes do not see them) and
# cancels following a ``javascript:`` link or form (no request, so neither route nor watch sees it).
_REPORT_BINDING = "webarena_gym_blocked"
_STOP_SCRIPT = """(() => {
  const allowed = %s;
  const NativeSocket = window.WebSocket;
  if (NativeSocket) {
    const Guarded = function WebSocket(url, protocols) {
      const target = new URL(url, location.href);
      const web = target.protocol === "ws:" ? "http:" : target.protocol === "wss:" ? "https:" : target.protocol;
      if (!allowed.includes(web + "//" + target.host)) {
        throw new DOMException("WebSocket to " + target.host + " blocked: not a task site", "SecurityError");
      }
      return new NativeSocket(url, protocols);
    };
    Guarded.prototype = NativeSocket.prototype;
    Object.assign(Guarded, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
    window.WebSocket = Guarded;
  }
  const refuse = (event, url) => {
    event.preventDefault();
    event.stopImmediatePropagation();
    if (window.%s) window.%s(String(url));
  };
  const followed = (event) => {
    const link = event.target instanceof Element ? event.target.closest("a[href], area[href]") : null;
    if (link && link.protocol === "javascript:") refuse(event, link.href);
  };
  window.addEventListener("click", followed, true);
  window.addEventListener("auxclick", followed, true);
  window.addEventListener("submit", (event) => {
    const submitter = event.submitter;  // its formAction is the page's URL when it names none
    const action = submitter && submitter.hasAttribute("formaction") ? submitter.formAction : event.target.action;
    if (new URL(action, location.href).protocol === "javascript:") refuse(event, action);
  }, true);
  const web = location.protocol === "http:" || location.protocol === "https:";
  if (web && allowed.includes(location.origin)) return;
  const top = window === window.top;
  if (top ? location.href !== "about:blank" : web) window.stop();
})();"""


class UrlGuard:
    """Blocks and records navigations off ``allowed_origins`` in one browser context."""

    def __init__(self, allowed_origins: tuple[str, ...], resource_origins: tuple[str, ...] = ()) -> None:
        self.allowed_origins = allowed_origins
        self.resource_origins = resource_origins  # may serve sub-resources, never be navigated to
        self.blocked_requests: list[str] = []  # sub-resource requests aborted during the current action
        self.blocked: list[str] = []  # navigations blocked during the current action
        self.failed = False  # the current action left a tab on Chromium's error page
        self._failures: dict[str, str] = {}  # URL -> Chromium's reason, of this action's failed navigations
        self._failed_tabs: list[playwright.sync_api.Page] = []  # tabs whose navigation failed in this action
        self.blocked_popups = 0  # new tabs whose first navigation was blocked, still to be closed
        self._last_site_url: dict[playwright.sync_api.Page, str] = {}
        self._strayed: list[playwright.sync_api.Page] = []  # tabs that committed a document off the sites
        self._opened: list[playwright.sync_api.Page] = []  # tabs opened during the current action
        self._returning = False

    def allows(self, url: str) -> bool:
        """Whether ``url`` is on the task's sites."""
        try:
            scheme = urlsplit(url).scheme.lower()
            return scheme in _SITE_SCHEMES and origin(url) in self.allowed_origins
        except ValueError:  # not a URL at all (e.g. an invalid port)
            return False

    def check(self, url: str) -> str | None:
        """The ``last_action_error`` for navigating to ``url``, or None when it is on the sites."""
        if self.allows(url):
            return None
        self.blocked.append(url)
        return self.error()

    def install(self, context: playwright.sync_api.BrowserContext) -> None:
        """Route, document-start script and navigation watch for ``context`` (see the module docstring)."""
        allowed = "|".join(re.escape(origin) for origin in self.allowed_origins) or "(?!)"
        outside = re.compile(rf"^(?!(?:{allowed})(?:[/?#]|$))(?:https?|wss?|ftp|file):", re.IGNORECASE)
        context.route(outside, self._guard)
        context.expose_binding(_REPORT_BINDING, lambda source, url: self.blocked.append(_clip(url)))
        context.add_init_script(
            _STOP_SCRIPT % (json.dumps(list(self.allowed_origins)), _REPORT_BINDING, _REPORT_BINDING)
        )
        context.on("page", self._watch)
        context.on("requestfailed", self._request_failed)

    def begin_action(self) -> None:
        self.blocked.clear()
        self.blocked_requests.clear()
        self.failed = False
        self._failures.clear()
        self._failed_tabs.clear()
        self._opened.clear()

    def await_new_tabs(self, timeout_ms: float = 2_000) -> None:
        """Give each tab the action opened time to commit its first document (a script's new tab
        loads after the action returns), so a tab sent off the sites (by a redirect, say) is caught
        and reported by this action, not the next one."""
        for page in self._opened:
            if not page.is_closed() and page.url == "" and not self.blocked:
                try:
                    page.wait_for_event("framenavigated", timeout=timeout_ms)
                except playwright.sync_api.TimeoutError:
                    pass
        self._opened.clear()

    def await_error_pages(self, timeout_ms: float = 2_000) -> None:
        """Give each tab whose navigation failed during the action time to commit Chromium's error page
        (it may commit after the failed call returned), so it is brought back after this action, and
        the next one never runs on it."""
        for page in dict.fromkeys(self._failed_tabs):
            if page.is_closed() or page.url.startswith(_ERROR_PAGE):
                continue
            try:
                page.wait_for_event("framenavigated", lambda frame: frame.parent_frame is None, timeout=timeout_ms)
            except playwright.sync_api.TimeoutError:
                pass
        self._failed_tabs.clear()

    def error(self) -> str | None:
        """The ``last_action_error`` for the current action, if it tried to leave the sites or ended on
        Chromium's error page."""
        if self.blocked:
            return (
                f"Blocked navigation to {_clip(self.blocked[0])}: only the task's sites are allowed "
                f"({', '.join(self.allowed_origins)})."
            )
        if self.failed:
            return (
                f"The page could not be loaded ({self._failure_note()}); the tab went back to the last page of the "
                "task's sites it showed."
            )
        return None

    def bring_back(self, context: playwright.sync_api.BrowserContext) -> bool:
        """Return every tab that committed a document off the sites to the last site page it showed;
        close one that never showed any (the only tab goes back to a blank page). True if a tab moved."""
        strayed, self._strayed = self._strayed, []
        moved = False
        self._returning = True
        try:
            for page in dict.fromkeys(strayed):
                if page.is_closed() or self.allows(page.url):
                    continue
                moved = True
                back = self._last_site_url.get(page)
                try:
                    if back is not None:
                        page.goto(back)
                    elif len(context.pages) > 1:
                        page.close()
                    else:
                        page.goto(BLANK)
                except playwright.sync_api.TimeoutError as exc:  # the site page is slow: it keeps loading
                    logger.debug("returning a tab to %s: %s", back, exc)
        finally:
            self._returning = False
        return moved

    def close_blocked_tabs(self, context: playwright.sync_api.BrowserContext, wait: bool = False) -> bool:
        """Close the tabs that a blocked new-tab navigation left behind (on Chromium's error page, or
        with no document at all when a script opened it); True if any.

        Playwright reports such a tab only once its error page commits, so an action that opened
        one waits (briefly) for it, and later observations close any that arrive late.
        """
        if wait and not any(_never_loaded(page) for page in context.pages):
            try:
                context.wait_for_event("page", timeout=1_000)
            except playwright.sync_api.TimeoutError:
                pass
        closed = False
        for page in list(context.pages):
            if _never_loaded(page) and len(context.pages) > 1:
                page.close()
                self.blocked_popups = max(0, self.blocked_popups - 1)
                closed = True
        return closed

    def _watch(self, page: playwright.sync_api.Page) -> None:
        self._last_site_url = {known: url for known, url in self._last_site_url.items() if not known.is_closed()}
        self._opened.append(page)
        page.on("framenavigated", lambda frame: self._navigated(page, frame))

    def _navigated(self, page: playwright.sync_api.Page, frame: playwright.sync_api.Frame) -> None:
        if frame.parent_frame is not None:  # frames: the route and the document-start script cover them
            return
        url = frame.url
        if self.allows(url):
            self._last_site_url[page] = url
        elif self._returning:
            return
        elif url.startswith(_ERROR_PAGE):
            # A new tab whose first navigation the route aborted is reported as blocked already.
            self.failed = self.failed or not self.blocked
            self._strayed.append(page)
        else:
            self.blocked.append(url)
            self._strayed.append(page)

    def _request_failed(self, request: playwright.sync_api.Request) -> None:
        # ERR_ABORTED: cancelled (by another navigation, a download, the route), no error page follows.
        if not request.is_navigation_request() or "ERR_ABORTED" in (request.failure or ""):
            return
        self._failures[_clip(request.url)] = request.failure or "failed"
        try:
            frame = request.frame
        except playwright.sync_api.Error:  # a new tab's first navigation: closed after the action
            return
        if frame.parent_frame is None:
            self._failed_tabs.append(frame.page)

    def _failure_note(self) -> str:
        """What failed, for the error message: the last failed navigation's URL and Chromium's reason."""
        if not self._failures:
            return "a navigation failed"
        url, reason = list(self._failures.items())[-1]
        return f"{url}: {reason}"

    def _guard(self, route: playwright.sync_api.Route, request: playwright.sync_api.Request) -> None:
        if not request.is_navigation_request():
            if self._may_serve(request.url):
                route.continue_()
            else:
                self.blocked_requests.append(_clip(request.url))
                route.abort("blockedbyclient")
            return
        self.blocked.append(request.url)
        try:
            _ = request.frame  # raises for a new tab's first navigation (no frame yet)
        except playwright.sync_api.Error:
            # A new tab's first navigation: abort it, so the tab commits an error page, gets reported
            # to us and is closed after the action.
            self.blocked_popups += 1
            route.abort("blockedbyclient")
            return
        # "204 No Content" cancels a navigation and leaves the page where it was (an abort would
        # leave Chromium's error page in its place).
        route.fulfill(status=204, body="")

    def _may_serve(self, url: str) -> bool:
        try:
            return origin(url) in self.resource_origins
        except ValueError:
            return False


def _never_loaded(page: playwright.sync_api.Page) -> bool:
    return page.url == "" or page.url.startswith(_ERROR_PAGE)


def _clip(url: str, limit: int = 200) -> str:
    """A URL short enough for an error message (a ``data:`` URL can carry a whole page)."""
    return url if len(url) <= limit else url[:limit] + "..."
