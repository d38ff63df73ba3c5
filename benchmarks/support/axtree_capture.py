"""Capture BrowserGym's ``axtree_object`` from a live Playwright page, outside a BrowserEnv.

Golden fixtures, property tests and the wrapper benchmark need the exact structure BrowserEnv
hands to the observation wrapper, on pages that are not behind an environment. BrowserEnv builds
it in three steps (mark elements with ``browsergym_id``, read the merged CDP tree, unmark); this
module runs the same BrowserGym functions in the same order so fixtures cannot drift from the
real observation.
"""

from __future__ import annotations

from typing import Any

from browsergym.core.observation import (
    _post_extract,
    _pre_extract,
    extract_dom_extra_properties,
    extract_dom_snapshot,
    extract_merged_axtree,
)


def capture_axtree(page: Any, *, extra_properties: bool = False) -> dict[str, Any]:
    """Return ``{"axtree_object": ..., "extra_element_properties": ...}`` for ``page``.

    ``extra_element_properties`` is ``{}`` unless requested (BrowserEnv's ``obs_mode="axtree"``
    also leaves it empty), because the DOM snapshot it needs costs more than the tree itself.
    """
    _pre_extract(page, lenient=True)
    try:
        extra: dict[str, Any] = {}
        if extra_properties:
            dom = extract_dom_snapshot(page)
            extra = extract_dom_extra_properties(dom, scale_factor=getattr(page, "_bgym_scale_factor", 1.0))
        axtree = extract_merged_axtree(page)
    finally:
        _post_extract(page)
    return {"axtree_object": axtree, "extra_element_properties": extra}
