"""The env's BrowserGym action set and action space (BrowserGym's task / env / action-set split).

Actions are BrowserGym high-level action strings (function-call syntax, e.g. ``click('12')``). The env
parses an action once (:mod:`envs.action_parser`), checks those calls and hands this set only their
canonical re-serialisation; the set is strict as well, so text around a call is an error here too,
never skipped. The agent's text is never ``exec``'d: only re-serialised literal arguments run.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from types import CodeType
from typing import Any

from browsergym.core.action import get_global_demo_mode
from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.core.constants import BROWSERGYM_ID_ATTRIBUTE
from browsergym.core.spaces import Unicode

# Element actions wait this long for actionability and for the navigation they start. BrowserGym's
# 500 ms is shorter than one page load of a local site under CPU load; a missing element still fails
# within a few seconds (twice that with the forced retry).
DEFAULT_ACTION_TIMEOUT_MS = 3_000
_BGYM_ACTION_TIMEOUT = re.compile(r"\btimeout=500\b")
# How BrowserGym's element actions call Playwright: with actionability checks, forced on a timeout.
_BGYM_CHECKED_CALL = "call_fun(do, retry_with_force)"
# ``force``: a click on an element of the main document is a mouse click at the centre of its visible part,
# found and scrolled into view in one page evaluation, where a forced locator click takes several round
# trips (lookup, scroll, content quads) and waits for any navigation it starts (the env's navigation watch
# sees those). A fill of a text field (a text-like <input>, a <textarea>, a contenteditable element) selects
# its content and focuses it in one evaluation and inserts the text, as Playwright's fill does after its own
# lookup and checks (no scrolling, the same events). Anything else (a frame's element, modifiers, the demo
# mode's effects, the autocomplete menu's typing, an element the query cannot reach or with nothing visible,
# an input Playwright fills by setting its value or checks as a number, a label) is BrowserGym's forced
# action, renamed.
_BGYM_POINT_ACTIONS = ("click", "fill")
_POINT_ACTIONS = """

_CLICK_POINT = '''bid => {
  const element = document.querySelector(`[__ATTR__="${CSS.escape(bid)}"]`);
  if (!element) return null;
  element.scrollIntoView({block: 'nearest', inline: 'nearest'});
  const box = element.getBoundingClientRect();
  const left = Math.max(box.left, 0), right = Math.min(box.right, window.innerWidth);
  const top = Math.max(box.top, 0), bottom = Math.min(box.bottom, window.innerHeight);
  return right > left && bottom > top ? [(left + right) / 2, (top + bottom) / 2] : null;
}'''


def click(bid: str, button: Literal["left", "middle", "right"] = "left", modifiers: list = []):
    point = None
    if not modifiers and demo_mode == "off" and isinstance(bid, str) and bid.isdigit():
        point = page.evaluate(_CLICK_POINT, bid)
    if point is None:
        return _element_click(bid, button, modifiers)
    page.mouse.click(point[0], point[1], button=button)


_SELECT_FOR_TYPING = '''bid => {
  const element = document.querySelector(`[__ATTR__="${CSS.escape(bid)}"]`);
  if (element instanceof HTMLInputElement) {
    if (!['email', 'password', 'search', 'tel', 'text', 'url'].includes(element.type.toLowerCase())) return false;
    element.select();
  } else if (element instanceof HTMLTextAreaElement) {
    element.selectionStart = 0;
    element.selectionEnd = element.value.length;
  } else if (element && element.isContentEditable) {
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  } else {
    return false;
  }
  element.focus();
  return true;
}'''


def fill(bid: str, value: str, enable_autocomplete_menu: bool = False):
    selected = False
    plain = not enable_autocomplete_menu and demo_mode == "off" and isinstance(value, str)
    if plain and isinstance(bid, str) and bid.isdigit():
        selected = page.evaluate(_SELECT_FOR_TYPING, bid)
    if not selected:
        return _element_fill(bid, value, enable_autocomplete_menu)
    if value:
        page.keyboard.insert_text(value)
    else:
        page.keyboard.press("Delete")
""".replace("__ATTR__", BROWSERGYM_ID_ATTRIBUTE)
# Safe, non-terminating actions for ``action_space.sample()`` (random exploration, env checkers).
_SAMPLE_ACTIONS = ("noop(0)", "scroll(0, 200)", "scroll(0, -200)", "go_back()", "go_forward()")


class BrowserActionSpace(Unicode):
    """Any BrowserGym action string; ``sample()`` draws a harmless navigation-free action."""

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return _SAMPLE_ACTIONS[int(self.np_random.integers(len(_SAMPLE_ACTIONS)))]

    def __repr__(self) -> str:
        return "BrowserActionSpace()"


@functools.cache
def default_action_set(
    action_timeout_ms: int = DEFAULT_ACTION_TIMEOUT_MS, multiaction: bool = False, force: bool = False
) -> HighLevelActionSet:
    """Chat, infeasible, element, navigation and tab actions; one action per step (WebArena's rule)
    unless ``multiaction``.

    Building an action set parses BrowserGym's examples (tens of ms), so sets are cached and shared:
    treat the result as read-only.

    BrowserGym's action functions give every element call (click, fill, press, hover, ...) a fixed
    500 ms timeout, and a click's timeout also covers the navigation it starts: on a busy machine a
    click that did navigate was reported as a timeout (and retried with force). The generated
    ``python_includes`` are BrowserGym's own function sources, so their literal timeout is rewritten
    here; the agent's action text never passes through this.

    ``force``: element actions skip Playwright's actionability waits (visible, stable, enabled, not
    covered) and act at once, as BrowserGym's retry does after a timeout; a click is a mouse click at the
    element's visible centre, which does not wait for a navigation it starts, and a fill of a text field
    selects and types in two round trips (:data:`_POINT_ACTIONS`).
    An RL speed option: an LLM agent relies on those checks, so it is never the default.
    """
    if action_timeout_ms < 1:
        raise ValueError("action_timeout_ms must be at least 1")
    actions = HighLevelActionSet(
        subsets=["chat", "infeas", "bid", "nav", "tab"], multiaction=multiaction, strict=True, retry_with_force=True
    )
    actions.python_includes = _BGYM_ACTION_TIMEOUT.sub(f"timeout={int(action_timeout_ms)}", actions.python_includes)
    if force:
        if _BGYM_CHECKED_CALL not in actions.python_includes:
            raise RuntimeError("this BrowserGym version's element actions cannot be forced (no checked call found)")
        forced = actions.python_includes.replace(_BGYM_CHECKED_CALL, "do(force=True)")
        for name in _BGYM_POINT_ACTIONS:
            if forced.count(f"def {name}(") != 1:
                raise RuntimeError(f"this BrowserGym version's {name} cannot be replaced (no single definition found)")
            forced = forced.replace(f"def {name}(", f"def _element_{name}(")
        actions.python_includes = forced + _POINT_ACTIONS
    return actions


@functools.lru_cache(maxsize=4096)
def compiled_action(mapping: Callable[[str], str], calls: str) -> tuple[CodeType, ...]:
    """The Python that runs ``calls`` (canonical BrowserGym calls) under ``mapping``, compiled once: code
    objects to run in order in one namespace (:func:`execute_compiled`).

    Mapping (a pyparsing parse) and compiling the action set's function sources cost more CPU than a
    click; an RL run repeats a few hundred distinct actions, so each is mapped once per process. The
    set's function definitions, the bulk of the text and the same for every action, are compiled once
    per set, so an action never seen before (the element ids of an in-page reset keep growing) compiles
    only its calls. Only for a mapping that is a pure function of its input (the env's default set).
    """
    code = mapping(calls)
    includes = getattr(getattr(mapping, "__self__", None), "python_includes", "")
    if includes and code.startswith(includes):
        return _compiled(includes), compile(code[len(includes) :], "<action>", "exec")
    return (compile(code, "<action>", "exec"),)


@functools.lru_cache(maxsize=16)
def _compiled(source: str) -> CodeType:
    return compile(source, "<action set>", "exec")


def execute_compiled(codes: tuple[CodeType, ...], page: Any, send_message_to_user: Any, report_infeasible: Any) -> None:
    """BrowserGym's ``execute_python_code`` for :func:`compiled_action`'s code objects: each runs in one
    namespace holding what BrowserGym's action functions read."""
    namespace = {
        "page": page,
        "send_message_to_user": send_message_to_user,
        "report_infeasible_instructions": report_infeasible,
        "DEMO_MODE": get_global_demo_mode(),
    }
    for code in codes:
        exec(code, namespace)  # the action set's own code and re-serialised literal calls
