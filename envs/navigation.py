"""Tabs whose main frame is navigating: an action whose effect is a navigation completes as one.

A select whose change submits its form, or a click whose handler navigates a moment later, starts the
navigation after Playwright's action has returned; on a busy machine the next page then commits while
the observation reads the old one (a stale observation, or "Execution context was destroyed"). The env
waits for the navigations this watch reports as in flight before it reads a page, and reads again
when one started while it was reading. An action that started and committed none (:meth:`NavigationWatch.mark`,
:meth:`NavigationWatch.quiet_since`) needs no wait at all, which the env's ``fast_steps`` relies on.
"""

from __future__ import annotations

import logging

import playwright.sync_api

logger = logging.getLogger(__name__)

# A page keeps here (:data:`LEAVING_SCRIPT`) the Navigation API's ``navigate`` event of a cross-document
# navigation it asks for: the event fires as a link is followed or a location assigned, before the browser
# sends the request this watch waits for. A click that does not wait for the navigations it starts (the
# env's forced point click) may return, and the page be read, before that request is seen; the env's fast
# read takes the note (and clears it) with the page. A note counts only for a navigation that will send a
# request: not a download, not one the page's own handlers cancelled (the kept event says so after its
# dispatch) or intercepted (a transition runs until its success or error event clears the note); a page
# restored from the back-forward cache starts without one. ``LEAVING_READ`` is the read's expression.
LEAVING_FLAG = "__webarenaGymLeaving"
LEAVING_SCRIPT = (
    "(() => { if (!window.navigation) return;"
    " const clear = () => { window.LEAVING = null; };"
    " navigation.addEventListener('navigate', (event) => {"
    " if (!event.destination.sameDocument && !event.downloadRequest) window.LEAVING = event; });"
    " navigation.addEventListener('navigatesuccess', clear);"
    " navigation.addEventListener('navigateerror', clear);"
    " window.addEventListener('pageshow', (event) => { if (event.persisted) clear(); });"
    " })();"
).replace("LEAVING", LEAVING_FLAG)
LEAVING_READ = (
    "((note) => { window.LEAVING = null;"
    " return !!note && !note.defaultPrevented && !(window.navigation && navigation.transition); })(window.LEAVING)"
).replace("LEAVING", LEAVING_FLAG)
# A navigation request answered with these commits no new document: the tab stays where it was.
_NO_DOCUMENT_STATUSES = (204, 205)


class NavigationWatch:
    """Main-frame navigation requests of one browser context that have not committed yet."""

    def __init__(self) -> None:
        self.started = 0  # main-frame navigations seen so far (a change means one began)
        self.committed = 0  # main-frame commits seen so far, same-document ones (history, #hash) included
        self._pending: dict[playwright.sync_api.Page, playwright.sync_api.Request] = {}

    def install(self, context: playwright.sync_api.BrowserContext) -> None:
        context.on("request", self._request)
        context.on("requestfinished", self._finished)
        context.on("requestfailed", self._settled)
        context.on("page", lambda page: page.on("framenavigated", lambda frame: self._committed(page, frame)))

    def wait(self, pages: list[playwright.sync_api.Page]) -> None:
        """Wait (up to the context's default timeout each) until every in-flight navigation of ``pages``
        has committed, failed or been answered without a document."""
        for page in pages:
            if page in self._pending and not page.is_closed():
                try:
                    page.wait_for_event("framenavigated", lambda frame: frame.parent_frame is None)
                except playwright.sync_api.Error as exc:  # slow, closed or crashed: the caller reads what is there
                    logger.debug("waiting for a navigation of %s: %s", page.url, exc)
                self._pending.pop(page, None)

    def mark(self) -> tuple[int, int]:
        """Where the watch stands now, for :meth:`quiet_since`."""
        return self.started, self.committed

    def quiet_since(self, mark: tuple[int, int]) -> bool:
        """Whether no main-frame navigation began or committed since ``mark`` and none is in flight."""
        return self.mark() == mark and not self._pending

    def await_start(self, page: playwright.sync_api.Page, mark: tuple[int, int], timeout_ms: float) -> None:
        """Wait (up to ``timeout_ms``) for ``page``'s main-frame navigation request, which its page asked for
        (:data:`LEAVING_FLAG`), unless a navigation began or committed since ``mark`` already."""
        if self.mark() != mark:
            return
        try:
            page.wait_for_event(
                "request",
                lambda request: request.is_navigation_request() and request.frame == page.main_frame,
                timeout=timeout_ms,
            )
        except playwright.sync_api.Error as exc:  # no request came (a cancelled navigation): read what is there
            logger.debug("waiting for the navigation %s asked for: %s", page.url, exc)

    def _request(self, request: playwright.sync_api.Request) -> None:
        if not request.is_navigation_request():
            return
        try:
            frame = request.frame
        except playwright.sync_api.Error:  # a new tab's first navigation: the tab is not ours to wait for yet
            return
        if frame.parent_frame is None:
            self.started += 1
            self._pending[frame.page] = request

    def _finished(self, request: playwright.sync_api.Request) -> None:
        response = request.response() if request in self._pending.values() else None
        if response is not None and (
            response.status in _NO_DOCUMENT_STATUSES
            or "attachment" in (response.headers.get("content-disposition") or "").lower()
        ):
            self._settled(request)

    def _settled(self, request: playwright.sync_api.Request) -> None:
        for page, pending in list(self._pending.items()):
            if pending == request:
                del self._pending[page]

    def _committed(self, page: playwright.sync_api.Page, frame: playwright.sync_api.Frame) -> None:
        if frame.parent_frame is None:
            self.committed += 1
            self._pending.pop(page, None)
