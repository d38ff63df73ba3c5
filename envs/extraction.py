"""Page extraction for observations: element marking, the AX tree, the DOM snapshot, the focused element.

The observation space of the env (what :class:`PageExtractor` and the env's other fields produce) is
declared here too, next to what fills it.

Faster page marking and focus lookup than BrowserGym's:

BrowserGym gives every element a ``bid`` by running a marking script that also writes the bid into
each element's ``aria-roledescription``/``aria-description`` (so the AX tree carries it), and removes
those ARIA marks again after every observation. The costs, measured on a 1,100-node page:
- writing and removing attributes on every element invalidates Chromium's accessibility tree, so
  every AX-tree fetch recomputes it from scratch;
- the script waits for an IntersectionObserver to report each element's visibility, polling every
  40 ms, and hit-tests every element for set-of-marks (a forced layout), although both only feed
  ``extra_element_properties``.
Here the marks are *sticky*: a mark already in place is left alone and live input values are written
only when they changed, so between two steps only the elements that changed are touched;
:func:`unmark` removes the marks only when something reads the page's HTML (the evaluator). The
accessibility-tree-only mode skips visibility and set-of-marks; the full mode polls every 5 ms. The
script is BrowserGym's, edited at load time; if its text ever changes, it runs unchanged (and is
unmarked after every observation, as BrowserGym does).

For the env's ``fast_steps`` (an RL option), :meth:`PageExtractor.read` reads a page without frames with one
evaluation where the default path makes four: the marks, the focused element, the title and the task's
state (:attr:`envs.task.EnvTask.state_script`) come back together, then the AX tree is read. An in-page
reset's episode start brings that evaluation with it (:meth:`PageExtractor.evaluate_read`).
"""

from __future__ import annotations

import base64
import functools
import io
import logging
import pkgutil
from collections.abc import Callable
from typing import Any, Literal

import gymnasium as gym
import numpy as np
import PIL.Image
import playwright.sync_api
from browsergym.core.constants import BROWSERGYM_ID_ATTRIBUTE, EXTRACT_OBS_MAX_TRIES
from browsergym.core.observation import (
    MarkingError,
    extract_data_items_from_aria,
    extract_dom_extra_properties,
    extract_merged_axtree,
    pop_bids_from_attribute,
)
from browsergym.core.spaces import AnyBox, AnyDict, Float, Unicode

from webarena_gym.envs.bgym import remove_aria_marks
from webarena_gym.envs.navigation import LEAVING_READ

logger = logging.getLogger(__name__)

# Edits of BrowserGym's marking script: (original text, replacement, applies in full mode, in axtree mode).
_STICKY_PUSH_MARK = """
function push_bid_to_attribute(bid, elem, attr) {
    const mark = `browsergym_id_${bid} `;
    const current = elem.getAttribute(attr);
    if (current !== null && current.startsWith(mark)) return;
    elem.setAttribute(attr, mark + (current || "").replace(/^browsergym_id_\\S*\\s/, ""));
}
"""
_SCRIPT_EDITS: tuple[tuple[str, str, bool, bool], ...] = (
    # sticky marks: a later declaration of the mark writer replaces BrowserGym's
    ("function push_bid_to_attribute(bid, elem, attr){", "function push_bid_to_attribute_unused(bid, elem, attr){",
     True, True),
    # write an input's live value into the DOM only when it differs (each write dirties the AX node)
    ("if (typeof elem.value !== 'undefined') {",
     "if (typeof elem.value !== 'undefined' && elem.getAttribute('value') !== String(elem.value)) {", True, True),
    # full mode: poll the visibility observer every 5 ms instead of 40 ms
    ("async function until(f, timeout, interval=40)", "async function until(f, timeout, interval=5)", True, False),
    # axtree mode: no visibility ratios, no set-of-marks hit tests (both only feed extra_element_properties)
    ("elem.setAttribute('browsergym_visibility_ratio', 0);\n        elems_to_be_visited.add(elem);\n"
     "        intersection_observer.observe(elem);", "", False, True),
    ('elem.setAttribute("browsergym_set_of_marks", "0");', "", False, True),
    ('if (["self", "child"].includes(whoCapturesCenterClick(elem))) {', "if (false) {", False, True),
)  # fmt: skip

# One evaluate: the focused element (through shadow roots), its bid, and whether it is a frame.
_FOCUSED_SCRIPT = """(attr) => {
  let element = document.activeElement;
  while (element && element.shadowRoot && element.shadowRoot.activeElement) {
    element = element.shadowRoot.activeElement;
  }
  if (!element || element === document.body) return null;
  const tag = element.tagName.toLowerCase();
  return {bid: element.getAttribute(attr), frame: tag === "iframe" || tag === "frame"};
}"""


# One evaluate for a page without frames: the marking script (its text, a function, then the declarations
# it uses, all hoisted into this body), the focused element, the title and the task's state.
_PAGE_READ_SCRIPT = """async ([markArgs, attr]) => {
  const markFrame = %s
  const warnings = await markFrame(markArgs);
  const focused = (%s)(attr);
  const leaving = LEAVING_READ;
  return {warnings, focused, title: document.title, state: (%s)(), leaving};
}""".replace("LEAVING_READ", LEAVING_READ)

# One evaluate: a page function, then the page read above in the same task of the page (before its next frame).
_THEN_READ_SCRIPT = """async ([args, readArgs]) => {
  const result = await (%s)(args);
  const read = %s;
  return [result, await read(readArgs)];
}"""


@functools.lru_cache(maxsize=2)
def marking_script(with_visibility: bool) -> tuple[str, bool]:
    """(script, sticky): BrowserGym's marking script with the edits above for this mode."""
    shipped = pkgutil.get_data("browsergym.core", "javascript/frame_mark_elements.js")
    if shipped is None:
        raise RuntimeError("browsergym.core ships no javascript/frame_mark_elements.js")
    original = shipped.decode("utf-8")
    edits = [(old, new) for old, new, full, axtree in _SCRIPT_EDITS if (full if with_visibility else axtree)]
    if any(old not in original for old, _ in edits):
        logger.warning("BrowserGym's marking script changed; using it unmodified (slower)")
        return original, False
    script = original
    for old, new in edits:
        script = script.replace(old, new)
    return script + _STICKY_PUSH_MARK, True


@functools.lru_cache(maxsize=8)
def page_read_script(with_visibility: bool, state_script: str) -> tuple[str, bool]:
    """(script, sticky): :data:`_PAGE_READ_SCRIPT` with this mode's marking script and ``state_script``."""
    marking, sticky = marking_script(with_visibility)
    return _PAGE_READ_SCRIPT % (marking, _FOCUSED_SCRIPT, state_script), sticky


@functools.lru_cache(maxsize=8)
def then_read_script(with_visibility: bool, state_script: str, script: str) -> str:
    """:data:`_THEN_READ_SCRIPT` with ``script`` and this mode's :func:`page_read_script`."""
    return _THEN_READ_SCRIPT % (script, page_read_script(with_visibility, state_script)[0])


def mark_elements(
    page: playwright.sync_api.Page,
    tags_to_mark: Literal["all", "standard_html"] = "standard_html",
    *,
    with_visibility: bool = True,
    lenient: bool = False,
) -> bool:
    """Give every element of the page and of its (script-enabled) frames a BrowserGym ``bid``.

    Returns whether the marks are sticky; if not, call :func:`unmark` after reading the AX tree.
    """
    script, sticky = marking_script(with_visibility)

    def mark(frame: playwright.sync_api.Frame, frame_bid: str) -> None:
        for message in frame.evaluate(script, [frame_bid, BROWSERGYM_ID_ATTRIBUTE, tags_to_mark]):
            logger.warning(message)
        for child in frame.child_frames:
            if child.is_detached():
                continue
            element = child.frame_element()
            if element.content_frame() != child:  # e.g. a PDF viewer inside <embed>
                continue
            sandbox = element.get_attribute("sandbox")
            if sandbox is not None and "allow-scripts" not in sandbox.split():
                continue
            child_bid = element.get_attribute(BROWSERGYM_ID_ATTRIBUTE)
            if child_bid is None:
                if lenient:
                    continue
                raise MarkingError("Cannot mark a child frame without a bid.")
            mark(child, child_bid)

    mark(page.main_frame, "")
    return sticky


def unmark(page: playwright.sync_api.Page) -> None:
    """Remove the ARIA marks (bids stay in their own attribute), as BrowserGym does after each observation."""
    remove_aria_marks(page)


def focused_element_bid(page: playwright.sync_api.Page) -> str:
    """The bid of the focused element, following focus into iframes; "" if none."""
    frame: playwright.sync_api.Frame | None = page.main_frame
    bid = ""
    while frame is not None:
        found = frame.evaluate(_FOCUSED_SCRIPT, BROWSERGYM_ID_ATTRIBUTE)
        if not found:
            break
        bid = found["bid"] or ""
        if not found["frame"]:
            break
        frame = _focused_child(frame)
    return bid


def _focused_child(frame: playwright.sync_api.Frame) -> playwright.sync_api.Frame | None:
    handle = frame.evaluate_handle("() => document.activeElement").as_element()
    return handle.content_frame() if handle is not None else None


class PageSessions:
    """One CDP session per page, kept for the page's life and shared by the readers below.

    Opening a session per read (as BrowserGym does) costs a round trip to the browser each time and,
    for the AX tree, turns Chromium's accessibility mode off and on again, so every read rebuilds the
    whole tree; a kept session lets Chromium update it incrementally. Emulation a session sets lasts
    as long as the session, so :meth:`send` says when a dead session had to be replaced.
    """

    def __init__(self) -> None:
        self._sessions: dict[playwright.sync_api.Page, playwright.sync_api.CDPSession] = {}

    def send(self, page: playwright.sync_api.Page, method: str, params: dict | None = None) -> dict:
        try:
            return self.get(page).send(method, params)
        except playwright.sync_api.Error:
            if page.is_closed():
                raise
            self._sessions.pop(page, None)  # the session died (e.g. a renderer swap): open a new one
            return self.get(page).send(method, params)

    def get(self, page: playwright.sync_api.Page) -> playwright.sync_api.CDPSession:
        for closed in [known for known in self._sessions if known.is_closed()]:
            del self._sessions[closed]
        if page not in self._sessions:
            self._sessions[page] = page.context.new_cdp_session(page)
        return self._sessions[page]

    def forget(self) -> None:
        """Drop the sessions (their context is closing)."""
        self._sessions.clear()


class AXTreeReader:
    """The AX tree with ``browsergym_id`` on each marked node, as BrowserGym's ``extract_merged_axtree``.

    Reads go through the page's kept session (:class:`PageSessions`). Pages with frames go through
    BrowserGym's reader, which merges the frames' trees.
    """

    def __init__(self, sessions: PageSessions) -> None:
        self._sessions = sessions

    def read(self, page: playwright.sync_api.Page) -> dict:
        if len(page.frames) > 1:
            return extract_merged_axtree(page)
        tree = self._sessions.send(page, "Accessibility.getFullAXTree")
        for node in tree["nodes"]:
            _take_bid(node)
        return {"nodes": tree["nodes"]}


class ScreenshotTaker:
    """BrowserGym's screenshot (the viewport as an RGB array), taken over the page's kept session.

    BrowserGym opens a session per screenshot, overrides the device metrics with the viewport, captures
    and detaches, which drops the override and with it Playwright's own viewport emulation: from the
    first screenshot on, the headless browser laid pages out in its 800x600 window, except during each
    capture (two extra layouts per screenshot). Here the override mirrors Playwright's viewport
    emulation and stays for the session's life, so every observation of a page is laid out in the
    task's viewport, and a capture costs one call. The PNG is encoded with Chromium's faster (still
    lossless) setting; the pixels are the same.
    """

    def __init__(self, sessions: PageSessions) -> None:
        self._sessions = sessions
        self._emulated: dict[playwright.sync_api.CDPSession, dict] = {}

    def take(self, page: playwright.sync_api.Page) -> np.ndarray:
        scale = getattr(page, "_bgym_scale_factor", 1.0)
        metrics = self._metrics(page)
        session = self._sessions.get(page)
        if self._emulated.get(session) != metrics:
            self._sessions.send(page, "Emulation.setDeviceMetricsOverride", metrics)
            self._emulated = {self._sessions.get(page): metrics}  # a replaced session drops the old one
        if scale != 1.0:  # a higher resolution for this capture only, as BrowserGym does
            self._sessions.send(page, "Emulation.setDeviceMetricsOverride", {**metrics, "deviceScaleFactor": scale})
        try:
            shot = self._sessions.send(page, "Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
        finally:
            if scale != 1.0:
                self._sessions.send(page, "Emulation.setDeviceMetricsOverride", metrics)
        with io.BytesIO(base64.b64decode(shot["data"])) as png:
            return np.array(PIL.Image.open(png).convert(mode="RGB"))

    @staticmethod
    def _metrics(page: playwright.sync_api.Page) -> dict:
        """Playwright's viewport emulation (its screen defaults to the viewport), at scale 1."""
        viewport = page.viewport_size or page.evaluate("() => ({width: window.innerWidth, height: window.innerHeight})")
        width, height = viewport["width"], viewport["height"]
        return {
            "mobile": False, "width": width, "height": height, "screenWidth": width, "screenHeight": height,
            "deviceScaleFactor": 1, "screenOrientation": {"angle": 0, "type": "landscapePrimary"},
        }  # fmt: skip


def _take_bid(node: dict) -> None:
    """Move the bid a mark put in the node's role description (else description) to ``browsergym_id``."""
    bid = None
    for index, prop in enumerate(node.get("properties", [])):
        if prop["name"] == "roledescription":
            items, rest = extract_data_items_from_aria(prop["value"]["value"])
            prop["value"]["value"] = rest
            if not rest:
                del node["properties"][index]
            bid = items[0] if items else None
            break
    if "description" in node:
        items, rest = extract_data_items_from_aria(node["description"]["value"])
        node["description"]["value"] = rest
        if not rest:
            del node["description"]
        bid = bid or (items[0] if items else None)
    if bid:
        node["browsergym_id"] = bid


# Errors BrowserGym's extraction hits while a page is still changing; retried after the page settles.
_TRANSIENT_EXTRACTION_ERRORS = (
    "Frame was detached",
    "Frame with the given frameId is not found",
    "Execution context was destroyed",
    "Frame has been detached",
    "Cannot mark a child frame without a bid",
    "Cannot read properties of undefined",
)


def page_changed(exc: Exception) -> bool:
    """Whether ``exc`` says the page changed (navigated, lost a frame) while it was being read."""
    return any(text in str(exc) for text in _TRANSIENT_EXTRACTION_ERRORS)


ObsMode = Literal["full", "dom", "axtree"]
OBS_MODES: tuple[str, ...] = ("full", "dom", "axtree")


class PageExtractor:
    """Reads one page into the page part of an observation, in one of three modes.

    ``"full"``: BrowserGym's observation (AX tree, DOM snapshot with element properties, screenshot);
    ``"dom"``: the same without the screenshot (for observations that read element visibility or the
    HTML, not pixels); ``"axtree"``: the AX tree only (``dom_object`` and ``extra_element_properties``
    stay empty), which skips the costliest extractions. A skipped screenshot is a 1x1x3 zero image.
    """

    def __init__(self, mode: ObsMode, tags_to_mark: Literal["all", "standard_html"] = "standard_html") -> None:
        if mode not in OBS_MODES:
            raise ValueError(f"obs_mode must be one of {', '.join(map(repr, OBS_MODES))}, not {mode!r}")
        self.mode = mode
        self.tags_to_mark = tags_to_mark
        self.sessions = PageSessions()
        self._axtree = AXTreeReader(self.sessions)
        self._screenshots = ScreenshotTaker(self.sessions)

    def extract(self, page: playwright.sync_api.Page, wait_until_settled: Callable[[], None]) -> dict:
        """Mark elements with bids, then read the AX tree (and, unless in axtree mode, the DOM snapshot;
        in full mode the screenshot).

        A page that changes under the extraction is retried after ``wait_until_settled``.
        """
        for tries_left in reversed(range(EXTRACT_OBS_MAX_TRIES)):
            try:
                sticky = mark_elements(
                    page, self.tags_to_mark, with_visibility=self.mode != "axtree", lenient=tries_left == 0
                )
                extracted = self._read_marked(page, lambda: focused_element_bid(page))
                break
            except (playwright.sync_api.Error, MarkingError) as exc:
                if tries_left == 0 or not page_changed(exc):
                    raise
                logger.debug("page changed during extraction, retrying: %s", exc)
                unmark(page)
                wait_until_settled()
        return self._finish(page, extracted, sticky)

    def read(
        self, page: playwright.sync_api.Page, state_script: str, done: dict | None = None
    ) -> tuple[dict, str, Any, bool] | None:
        """:meth:`extract`, the page's title, the result of ``state_script`` (a page function) and whether the
        page asked for a navigation since the last read (:data:`envs.navigation.LEAVING_READ`), with the
        marks, the focused element, the title, the state and that note read in one evaluation (or taken from
        ``done``, what :meth:`evaluate_read` read just now); None (nothing read) for a page with frames,
        whose marks and trees :meth:`extract` merges. A page that changes under the read raises
        (:func:`page_changed` says so): the caller reads it the default way."""
        if len(page.frames) > 1:
            return None
        script, sticky = page_read_script(self.mode != "axtree", state_script)
        read = done or page.evaluate(script, self._read_args())
        for message in read["warnings"]:
            logger.warning(message)
        if len(page.frames) > 1:  # a frame appeared while the page was read: it has no marks
            return None
        extracted = self._read_marked(page, lambda: (read["focused"] or {}).get("bid") or "")
        return self._finish(page, extracted, sticky), read["title"], read["state"], read["leaving"]

    def _read_marked(self, page: playwright.sync_api.Page, focused_bid: Callable[[], str]) -> dict:
        """The AX tree, the focused element's bid and (unless in axtree mode) the DOM snapshot of a marked page."""
        extracted = {
            "axtree_object": self._axtree.read(page),
            "focused_element_bid": focused_bid(),
            "dom_object": {},
            "extra_element_properties": {},
        }
        if self.mode != "axtree":
            dom = self._dom_snapshot(page)
            extracted["dom_object"] = dom
            scale = getattr(page, "_bgym_scale_factor", 1.0)
            extracted["extra_element_properties"] = extract_dom_extra_properties(dom, scale_factor=scale)
        return extracted

    def _finish(self, page: playwright.sync_api.Page, extracted: dict, sticky: bool) -> dict:
        """The marks removed unless sticky, and the screenshot (full mode) added."""
        if not sticky:
            unmark(page)
        extracted["screenshot"] = self._screenshots.take(page) if self.mode == "full" else np.zeros((1, 1, 3), np.uint8)
        return extracted

    def evaluate_read(
        self, page: playwright.sync_api.Page, script: str, arg: Any, state_script: str
    ) -> tuple[Any, dict]:
        """``page.evaluate(script, arg)`` and the page's read (for :meth:`read`'s ``done``), its marks
        among it, in the same evaluation. Chromium builds the accessibility objects of the elements a
        script added at its next frame, and a text keeps the role it was built with: a label's text built
        before its label was marked stays out of the tree (ignored as presentational), where a fresh page,
        whose tree is built at the first read, after the marks, shows it. Marked in the script's own task,
        the new elements are built as a fresh page's are; the read comes with it for one round trip."""
        script = then_read_script(self.mode != "axtree", state_script, script)
        return page.evaluate(script, [arg, self._read_args()])

    def _read_args(self) -> list:
        """The page read's argument: the marking script's (the main frame, the bid attribute, which tags) and
        the attribute the focused element's bid is read from."""
        return [["", BROWSERGYM_ID_ATTRIBUTE, self.tags_to_mark], BROWSERGYM_ID_ATTRIBUTE]

    def mark(self, page: playwright.sync_api.Page) -> None:
        """Give the page's elements their bids without a full observation (replays need them)."""
        if not mark_elements(page, self.tags_to_mark, with_visibility=False, lenient=True):
            unmark(page)

    def forget(self) -> None:
        """Drop per-page state (the episode's context is closing)."""
        self.sessions.forget()

    def _dom_snapshot(self, page: playwright.sync_api.Page) -> dict:
        """BrowserGym's ``extract_dom_snapshot`` (same parameters and clean-up) over the kept session."""
        snapshot = self.sessions.send(
            page,
            "DOMSnapshot.captureSnapshot",
            {"computedStyles": [], "includeDOMRects": True, "includePaintOrder": True},
        )
        pop_bids_from_attribute(snapshot, "aria-roledescription")
        pop_bids_from_attribute(snapshot, "aria-description")
        return snapshot


def observation_space() -> gym.spaces.Dict:
    """BrowserGym's observation dict, with shapes that match what is actually returned."""
    return gym.spaces.Dict(
        {
            "chat_messages": gym.spaces.Sequence(
                gym.spaces.Dict({"role": Unicode(), "timestamp": Float(), "message": Unicode()})
            ),
            "goal": Unicode(),
            "goal_object": gym.spaces.Sequence(AnyDict()),
            "open_pages_urls": gym.spaces.Sequence(Unicode()),
            "open_pages_titles": gym.spaces.Sequence(Unicode()),
            "active_page_index": gym.spaces.Box(low=0, high=255, shape=(1,), dtype=np.int64),
            "url": Unicode(),
            "screenshot": AnyBox(low=0, high=255, shape=(-1, -1, 3), dtype=np.uint8),
            "dom_object": AnyDict(),
            "axtree_object": AnyDict(),
            "extra_element_properties": AnyDict(),
            "focused_element_bid": Unicode(),
            "last_action": Unicode(),
            "last_action_error": Unicode(),
            "dialogs": gym.spaces.Sequence(Unicode()),
            "elapsed_time": gym.spaces.Box(low=0, high=np.inf, shape=(1,), dtype=np.float64),
        }
    )
