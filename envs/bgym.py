"""The BrowserGym internals this project relies on, in one place, each with the reason.

BrowserGym 0.14.3 (pinned) has no public route for these; if a release renames one, this module is
the only one to change.

- ``get_shared_playwright`` / ``set_shared_playwright``: BrowserGym keeps one sync Playwright per
  process in a module global (its envs and ours must share it: sync Playwright cannot start twice in
  a thread), reachable only through private names.
- ``legacy_goal``: the goal string BrowserGym's observation carries beside ``goal_object``; the
  conversion is its private helper, and matching it keeps our observations identical to its own.
- ``remove_aria_marks``: BrowserGym's post-extraction clean-up of the marks its marking script writes;
  the evaluator must read the page without them.
"""

from __future__ import annotations

from typing import Any

import browsergym.core as _core
from browsergym.core.env import _try_to_extract_legacy_goal
from browsergym.core.observation import _post_extract


def get_shared_playwright() -> Any:
    """The process's Playwright, started on first use (BrowserGym's global instance)."""
    return _core._get_global_playwright()


def current_shared_playwright() -> Any:
    """The process's Playwright if one is running, else None (does not start one)."""
    return _core._PLAYWRIGHT


def set_shared_playwright(playwright: Any) -> None:
    _core._set_global_playwright(playwright)


def legacy_goal(goal_object: Any) -> str:
    return _try_to_extract_legacy_goal(goal_object)


def remove_aria_marks(page: Any) -> None:
    _post_extract(page)
