"""Reference-solution steps -> BrowserGym action strings, resolved against the live accessibility tree.

A step names its element by role and accessible name (``{"role": "link", "name": "Paris", "nth": 0}``)
rather than by a browsergym id, because ids change from page load to page load. The name matches
exactly after collapsing whitespace; when no element matches exactly, a case-insensitive substring
match is tried, and ``nth`` picks among equal candidates in document order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

PLACEHOLDERS: dict[str, str] = {
    "__SHOPPING__": "shopping",
    "__SHOPPING_ADMIN__": "shopping_admin",
    "__REDDIT__": "reddit",
    "__GITLAB__": "gitlab",
    "__WIKIPEDIA__": "wikipedia",
    "__MAP__": "map",
    "__HOMEPAGE__": "homepage",
}

ELEMENT_ACTIONS = {"click", "fill", "select_option", "press"}
# ``go_home`` opens the homepage that lists every site: AgentOccam's one way between the sites of a
# multi-site task, so the goto-free reference paths (``solutions/goto_free/``) may use it there.
ALL_ACTIONS = ELEMENT_ACTIONS | {"goto", "go_home", "go_back", "send_msg_to_user", "report_infeasible"}


class SolutionStepError(ValueError):
    """A step that cannot be turned into an action on the current page (unknown action, no such element)."""


def _value(node: dict[str, Any], key: str) -> str:
    field = node.get(key) or {}
    return " ".join(str(field.get("value", "")).split())


def find_bid(axtree: Mapping[str, Any], role: str, name: str, nth: int = 0) -> str:
    """The browsergym id of the ``nth`` element with this role and accessible name."""
    nodes = [
        node
        for node in axtree.get("nodes", [])
        if node.get("browsergym_id") and not node.get("ignored") and _value(node, "role") == role
    ]
    wanted = " ".join(name.split())
    exact = [node for node in nodes if _value(node, "name") == wanted]
    matches = exact or [node for node in nodes if wanted.lower() in _value(node, "name").lower()]
    if len(matches) <= nth:
        seen = sorted({_value(node, "name") for node in nodes})[:30]
        raise SolutionStepError(f"no {role} named {name!r} (#{nth}) on the page; {role} names present: {seen}")
    return str(matches[nth]["browsergym_id"])


def fill_placeholders(text: str, urls: Mapping[str, str]) -> str:
    """Replace ``__MAP__``-style placeholders by the running sites' base URLs."""
    for placeholder, site in PLACEHOLDERS.items():
        if placeholder in text and site in urls:
            text = text.replace(placeholder, urls[site])
    return text


def to_browsergym(step: Mapping[str, Any], obs: Mapping[str, Any], urls: Mapping[str, str] | None = None) -> str:
    """The BrowserGym action string for one solution step on the page ``obs`` shows.

    ``urls`` (site -> base URL) fills placeholders in ``goto`` URLs and in typed values (a post that links
    to a repository types its URL); a relative URL is resolved against the current page.
    """
    action = step.get("action")
    if action not in ALL_ACTIONS:
        raise SolutionStepError(f"unknown solution action {action!r}")
    if action in ELEMENT_ACTIONS:
        target = step.get("target") or {}
        bid = find_bid(obs["axtree_object"], target.get("role", ""), target.get("name", ""), int(target.get("nth", 0)))
        if action == "click":
            return f"click({bid!r})"
        return f"{action}({bid!r}, {fill_placeholders(str(step.get('value', '')), urls or {})!r})"
    if action == "goto":
        url = fill_placeholders(str(step.get("url", "")), urls or {})
        return f"goto({urljoin(str(obs.get('url', '')), url)!r})"
    if action == "go_home":
        return f"goto({(urls or {}).get('homepage', '')!r})"
    if action == "go_back":
        return "go_back()"
    return f"{action}({str(step.get('text', ''))!r})"
