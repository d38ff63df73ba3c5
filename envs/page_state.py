"""The state a page holds that neither the site data nor a reload brings back, and a check of a restore.

A user's unsubmitted work lives in the page: text typed into a field, boxes ticked, options chosen,
how far the page and its scrolled panes are scrolled, which element has the focus. :func:`capture`
reads it from a tab's main frame in one evaluation, and from each child frame (an ``iframe``, same
origin or not) in one more; :func:`apply` writes it back into the reloaded page. A child frame is found
again by its place in the frame tree and must show the same URL (else it is reported, not written). A
control is found again by its DOM path (its id when that is unique), else by its BrowserGym ``bid``, and
must still be the same kind of element. Only values that differ are written, each
followed by the events the user's own input had left behind: ``input`` for typed text (plus ``change``
unless the field still has the focus, since a browser sends ``change`` when the user leaves the field),
``input`` and ``change`` for boxes and options, so the page's own scripts agree with what it shows.

:func:`fingerprint_items` reads what an observation shows of a page's state, the AX tree's (role,
name, value, checked, selected, expanded, pressed, focused) of each node; a restore compares the
restored observation's items with the snapshot's (:func:`differences`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

import playwright.sync_api
from browsergym.core.constants import BROWSERGYM_ID_ATTRIBUTE

from .playwright_patches import BrowserCallTimeout

# AX properties that are page state (the rest describe the element, which the name and role cover).
_STATE_PROPERTIES = ("checked", "selected", "expanded", "pressed", "focused")
MAX_DIFFERENCES = 10  # differing items listed in a restore's info; the rest are counted

_LOCATOR_JS = """
const pathOf = (el) => {
  if (el.id && document.querySelectorAll('#' + CSS.escape(el.id)).length === 1) return '#' + CSS.escape(el.id);
  const parts = [];
  for (let node = el; node && node !== document.documentElement; node = node.parentElement) {
    let index = 1;
    for (let sib = node.previousElementSibling; sib; sib = sib.previousElementSibling) {
      if (sib.tagName === node.tagName) index++;
    }
    parts.unshift(node.tagName.toLowerCase() + ':nth-of-type(' + index + ')');
  }
  return ['html', ...parts].join(' > ');
};
const locator = (el) => ({path: pathOf(el), bid: el.getAttribute(attr), tag: el.tagName.toLowerCase()});
"""

_CAPTURE_JS = (
    "(attr) => {"
    + _LOCATOR_JS
    + """
  const skipped = new Set(['hidden', 'file', 'submit', 'button', 'reset', 'image']);
  const controls = [];
  for (const el of document.querySelectorAll('input, textarea, select, [contenteditable]')) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'input' && skipped.has(el.type)) continue;
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      controls.push({...locator(el), kind: 'checked', checked: el.checked});
    } else if (tag === 'input' || tag === 'textarea') {
      controls.push({...locator(el), kind: 'value', value: el.value});
    } else if (tag === 'select') {
      const chosen = [];
      Array.from(el.options).forEach((option, i) => { if (option.selected) chosen.push(i); });
      controls.push({...locator(el), kind: 'selected', selected: chosen});
    } else if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) {
      controls.push({...locator(el), kind: 'html', html: el.innerHTML});
    }
  }
  const scrolled = [];
  for (const el of document.body ? document.body.querySelectorAll('*') : []) {
    if (el.scrollTop || el.scrollLeft) scrolled.push({...locator(el), top: el.scrollTop, left: el.scrollLeft});
  }
  let focus = null;
  const active = document.activeElement;
  if (active && active !== document.body && active !== document.documentElement) {
    focus = locator(active);
    try {
      if (typeof active.selectionStart === 'number') focus.selection = [active.selectionStart, active.selectionEnd];
    } catch (e) {}
  }
  return {controls, scrolled, scroll: [window.scrollX, window.scrollY], focus};
}"""
)

_APPLY_JS = (
    "([state, attr]) => {"
    + _LOCATOR_JS
    + """
  const missed = [];
  const find = (entry) => {
    let el = null;
    try { el = document.querySelector(entry.path); } catch (e) {}
    if ((!el || el.tagName.toLowerCase() !== entry.tag) && entry.bid) {
      el = document.querySelector('[' + attr + '="' + CSS.escape(entry.bid) + '"]');
    }
    return el && el.tagName.toLowerCase() === entry.tag ? el : null;
  };
  const fire = (el, names) => { for (const name of names) el.dispatchEvent(new Event(name, {bubbles: true})); };
  const focusPath = state.focus ? state.focus.path : null;
  for (const c of state.controls) {
    const el = find(c);
    if (!el) { missed.push('no ' + c.tag + ' at ' + c.path); continue; }
    if (c.kind === 'checked') {
      if (el.checked !== c.checked) { el.checked = c.checked; fire(el, ['input', 'change']); }
    } else if (c.kind === 'value') {
      if (el.value !== c.value) {
        el.value = c.value;
        fire(el, c.path === focusPath ? ['input'] : ['input', 'change']);
      }
    } else if (c.kind === 'selected') {
      const options = Array.from(el.options);
      if (options.some((option, i) => option.selected !== c.selected.includes(i))) {
        options.forEach((option, i) => { option.selected = c.selected.includes(i); });
        fire(el, ['input', 'change']);
      }
    } else if (c.kind === 'html' && el.innerHTML !== c.html) {
      el.innerHTML = c.html;
      fire(el, ['input']);
    }
  }
  for (const s of state.scrolled) {
    const el = find(s);
    if (!el) { missed.push('no scrolled ' + s.tag + ' at ' + s.path); continue; }
    el.scrollTop = s.top;
    el.scrollLeft = s.left;
    if (Math.abs(el.scrollTop - s.top) > 1 || Math.abs(el.scrollLeft - s.left) > 1) {
      missed.push(s.tag + ' at ' + s.path + ' scrolls to ' + el.scrollLeft + ',' + el.scrollTop);
    }
  }
  window.scrollTo(state.scroll[0], state.scroll[1]);
  if (Math.abs(window.scrollX - state.scroll[0]) > 1 || Math.abs(window.scrollY - state.scroll[1]) > 1) {
    missed.push('the page scrolls to ' + window.scrollX + ',' + window.scrollY);
  }
  if (state.focus) {
    const el = find(state.focus);
    if (el) {
      el.focus({preventScroll: true});
      if (state.focus.selection) { try { el.setSelectionRange(...state.focus.selection); } catch (e) {} }
    }
    if (!el || document.activeElement !== el) {
      missed.push('cannot focus ' + state.focus.tag + ' at ' + state.focus.path);
    }
  }
  return missed;
}"""
)


def capture(page: playwright.sync_api.Page) -> dict[str, Any] | None:
    """The page state of ``page``'s main frame, its child frames' under ``"frames"``; None when the page
    cannot run scripts (a crashed tab) or its own scripts broke the reading (a child frame that breaks it
    is left out). A browser that stopped answering is not caught."""
    state = _evaluate(page.main_frame, _CAPTURE_JS, BROWSERGYM_ID_ATTRIBUTE)
    if not isinstance(state, dict):
        return None
    frames: list[dict[str, Any]] = []
    by_path: dict[tuple[int, ...], dict[str, Any]] = {(): state}
    for path, frame in _child_frames(page.main_frame):
        inner = _evaluate(frame, _CAPTURE_JS, BROWSERGYM_ID_ATTRIBUTE)
        if not isinstance(inner, dict):
            continue
        parent = by_path.get(tuple(path[:-1])) or {}
        if parent.get("focus") and parent["focus"].get("bid") == _frame_bid(frame):
            if inner["focus"] is not None:
                parent["focus"] = None  # focusing the element inside focuses the frame too
        else:
            inner["focus"] = None  # a frame without the focus still names its last focused element
        by_path[tuple(path)] = inner
        frames.append({"path": path, "url": frame.url, "state": inner})
    state["frames"] = frames
    return state


def apply(page: playwright.sync_api.Page, state: dict[str, Any]) -> list[str]:
    """Write ``state`` (from :func:`capture`) back into ``page``; what could not be restored (the page's
    own scripts may interfere: whatever comes back is read as text, and bounded). Child frames come after
    their parent, so that focus moves into the frame that had it; they are written once the page has
    loaded (its ``load`` event waits for its frames)."""
    missed = _write(page.main_frame, state)
    if state.get("frames"):
        try:
            page.wait_for_load_state("load")
        except BrowserCallTimeout:
            raise
        except playwright.sync_api.Error:
            pass  # a frame that did not load is reported below
    frames = {tuple(path): frame for path, frame in _child_frames(page.main_frame)}
    for entry in state.get("frames") or ():
        where = "/".join(map(str, entry["path"]))
        frame = frames.get(tuple(entry["path"]))
        if frame is None or frame.url != entry["url"]:
            missed.append(f"frame {where} no longer shows {entry['url'][:100]}")
            continue
        missed += [f"frame {where}: {line}" for line in _write(frame, entry["state"])]
    return [str(line)[:200] for line in missed[:MAX_DIFFERENCES]]


def _write(frame: playwright.sync_api.Frame, state: dict[str, Any]) -> list[Any]:
    try:
        missed = frame.evaluate(_APPLY_JS, [state, BROWSERGYM_ID_ATTRIBUTE])
    except BrowserCallTimeout:
        raise
    except playwright.sync_api.Error as exc:
        return [f"the page state could not be written: {str(exc)[:200]}"]
    if not isinstance(missed, list):
        return ["the page state could not be checked: the page answered in another form"]
    return missed


def _evaluate(frame: playwright.sync_api.Frame, script: str, arg: Any) -> Any:
    try:
        return frame.evaluate(script, arg)
    except BrowserCallTimeout:
        raise
    except playwright.sync_api.Error:
        return None


def _frame_bid(frame: playwright.sync_api.Frame) -> str | None:
    """The ``bid`` of the element (``iframe``) that holds ``frame``."""
    try:
        return frame.frame_element().get_attribute(BROWSERGYM_ID_ATTRIBUTE)
    except BrowserCallTimeout:
        raise
    except playwright.sync_api.Error:
        return None


def _child_frames(frame: playwright.sync_api.Frame, path: tuple[int, ...] = ()) -> list[tuple[list[int], Any]]:
    """Every frame below ``frame`` with its place in the frame tree (child indices from the top)."""
    found: list[tuple[list[int], Any]] = []
    attached = [child for child in frame.child_frames if not child.is_detached()]
    for index, child in enumerate(attached):
        found.append(([*path, index], child))
        found += _child_frames(child, (*path, index))
    return found


def fingerprint_items(axtree_object: dict[str, Any]) -> tuple[tuple[str, ...], ...]:
    """What the AX tree shows of the page's state: one (role, name, value, states) item per node that is
    not ignored. Element ids are left out: they are labels of the observation, not page state."""
    items = []
    for node in axtree_object.get("nodes") or ():
        if node.get("ignored"):
            continue
        states = {
            prop.get("name"): (prop.get("value") or {}).get("value")
            for prop in node.get("properties") or ()
            if prop.get("name") in _STATE_PROPERTIES
        }
        items.append(
            (
                str((node.get("role") or {}).get("value", "")),
                str((node.get("name") or {}).get("value", "")),
                str((node.get("value") or {}).get("value", "")),
                ",".join(f"{name}={states[name]}" for name in _STATE_PROPERTIES if name in states),
            )
        )
    return tuple(items)


def fingerprint(axtree_object: dict[str, Any]) -> str:
    """A short hash of :func:`fingerprint_items`: equal for pages that show the same state."""
    return hashlib.sha1(repr(fingerprint_items(axtree_object)).encode()).hexdigest()[:16]


def differences(
    expected: tuple[tuple[str, ...], ...], found: tuple[tuple[str, ...], ...], limit: int = MAX_DIFFERENCES
) -> list[str]:
    """Items of ``expected`` missing from ``found`` and the reverse, as readable lines (at most ``limit``,
    then a count of the rest)."""
    want, have = Counter(expected), Counter(found)
    lines = [f"missing: {_describe(item)}" for item in (want - have).elements()]
    lines += [f"unexpected: {_describe(item)}" for item in (have - want).elements()]
    if len(lines) > limit:
        lines = [*lines[:limit], f"... and {len(lines) - limit} more"]
    return lines


def _describe(item: tuple[str, ...]) -> str:
    role, name, value, states = (text[:80] for text in item)
    text = f"{role} {name!r}"
    if value:
        text += f" value={value!r}"
    return text + (f" [{states}]" if states else "")
