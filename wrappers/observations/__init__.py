"""Observation wrappers: each adds the text a family of methods reads to BrowserGym's observation dict.

Every text observation starts with the JavaScript dialogs the last action raised (see
:func:`dialog_lines`), so no policy is blind to an alert or a confirmation the browser answered.
"""

from __future__ import annotations

from typing import Any


def dialog_lines(obs: dict[str, Any]) -> str:
    """One line per dialog of the last action (``[dialog] confirm 'Delete?' (dismissed)``), newline-ended."""
    return "".join(f"[dialog] {dialog}\n" for dialog in obs.get("dialogs") or ())
