"""The accessibility tree the AgentOccam passes work on, built straight from BrowserGym's ``axtree_object``.

``build_tree`` reads the CDP nodes (``nodeId``, ``childIds``, ``role``, ``name``, ``properties``,
``ignored``, ``browsergym_id``) and applies only the normalisations every text view of the page
needs (the card's §4.1 "source observation"); the optional AgentOccam passes live in
``wrappers.observations.passes``. Build-time decisions, each adapting the card's 2023-era WebArena tree to
the Chromium BrowserGym drives today:

* ignored nodes are spliced out (their non-ignored children move up), ``InlineTextBox``,
  ``ListMarker`` and ``LineBreak`` are dropped (they only repeat layout), and a ``<select>``'s
  ``MenuListPopup`` is spliced so its options are the dropdown's own children as in the card;
* WebArena's filter: an unnamed node without properties whose role is a layout role (generic,
  paragraph, list, listitem, strong, banner, navigation, ...) is spliced out;
* WebArena's ignored properties (focusable, editable, readonly, level, settable, multiline,
  invalid) are dropped, and so are relation properties (no scalar value) and ``url``, which
  today's Chromium attaches to every link and image but the card's tree never showed;
* a text field's inner editor subtree (StaticText copies of what was typed) is replaced by a
  ``value`` property, so typed text can never be mistaken for a label by the lifting pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

TEXT_ROLES = frozenset({"StaticText", "LabelText", "caption", "text"})
IMAGE_ROLES = frozenset({"img", "image"})
# Roles whose elements an agent acts on; only these show their id (card: "ids only on interactive").
INTERACTIVE_ROLES = frozenset(
    {
        "link",
        "button",
        "textbox",
        "searchbox",
        "combobox",
        "listbox",
        "option",
        "menu",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "checkbox",
        "radio",
        "switch",
        "slider",
        "spinbutton",
        "tab",
        "treeitem",
        "DisclosureTriangle",
        "ColorWell",
        "Date",
        "DateTime",
        "InputTime",
        "PopUpButton",
        "ToggleButton",
    }
)
DROPDOWN_ROLES = frozenset({"menu", "combobox", "listbox"})

_DROPPED_ROLES = frozenset({"InlineTextBox", "ListMarker", "LineBreak"})
_SPLICED_ROLES = frozenset({"MenuListPopup", "none"})
# WebArena drops these when they have neither a name nor properties (Chromium renamed img/Section).
_LAYOUT_ROLES = frozenset(
    {
        "generic",
        "img",
        "image",
        "list",
        "strong",
        "paragraph",
        "banner",
        "navigation",
        "Section",
        "section",
        "LabelText",
        "Legend",
        "listitem",
        "presentation",
    }
)
_IGNORED_PROPS = frozenset(
    {
        "focusable",
        "editable",
        "readonly",
        "level",
        "settable",
        "multiline",
        "invalid",
        "url",
    }
)
_TEXT_FIELDS = frozenset({"textbox", "searchbox", "spinbutton", "combobox"})


@dataclass(eq=False, slots=True)
class Node:
    """One accessibility node; passes change ``visible``, names and structure in place.

    ``plain`` is the id-free name when a pass embedded other elements' renderings (folded options,
    table cells); ``embedded`` lists the ids shown inside the name.
    """

    role: str
    name: str
    bid: str | None
    props: dict[str, Any]
    children: list[Node] = field(default_factory=list, repr=False)
    parent: Node | None = field(default=None, repr=False)
    visible: bool = True
    plain: str | None = None
    embedded: tuple[str, ...] = ()
    hide_id: bool = False

    @property
    def interactive(self) -> bool:
        return self.role in INTERACTIVE_ROLES

    def visible_children(self) -> list[Node]:
        return [c for c in self.children if c.visible]

    def is_leaf(self) -> bool:
        return not any(c.visible for c in self.children)

    def label(self, ids: bool) -> str:
        return self.name if ids or self.plain is None else self.plain

    def line(self, ids: bool, show_id: bool = True) -> str:
        """``role [id] 'name' [prop: value]`` (the card's concise format)."""
        parts = [self.role]
        if ids and show_id and self.bid is not None and not self.hide_id:
            parts.append(f"[{self.bid}]")
        name = self.label(ids)
        if name:
            parts.append(repr(name))
        parts.extend(self.props_text())
        return " ".join(parts)

    def props_text(self) -> list[str]:
        return [f"[{k}: {v}]" for k, v in self.props.items()]

    def walk(self) -> Iterator[Node]:
        """Pre-order over the whole subtree, hidden nodes included."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


def _scalar_props(raw: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for prop in raw.get("properties") or ():
        name = prop.get("name") if isinstance(prop, dict) else None
        if not isinstance(name, str) or name in _IGNORED_PROPS:
            continue
        value = _field(prop, "value")
        if value is None or isinstance(value, (list, dict)):
            continue
        props[name] = value
    return props


def build_tree(axtree_object: dict[str, Any]) -> Node:
    """Build the normalised tree (module docstring) rooted at the page's ``RootWebArea``."""
    raw_nodes = axtree_object.get("nodes") or []
    if not raw_nodes:
        return Node("RootWebArea", "", None, {})
    raw_nodes = [n for n in raw_nodes if isinstance(n, dict)]
    if not raw_nodes:
        return Node("RootWebArea", "", None, {})
    by_id = {n.get("nodeId"): n for n in raw_nodes}

    seen: set[Any] = set()
    roots: list[Node] = []
    # Iterative post-order (no recursion limit on deep pages): a node is visited once to queue its
    # children, and finished after them, when its converted children are known.
    stack: list[tuple[dict[str, Any], str, list[Node], list[Node] | None]] = [
        (raw_nodes[0], _role(raw_nodes[0]), roots, None)
    ]
    while stack:
        raw, role, out, kids = stack.pop()
        if kids is not None:
            _finish(raw, role, out, kids)
            continue
        node_id = raw.get("nodeId")
        if node_id in seen:  # CDP trees are trees, but a corrupt merge must not loop forever
            continue
        seen.add(node_id)
        kids = []
        stack.append((raw, role, out, kids))
        text_field = role in _TEXT_FIELDS
        queued = []
        for child_id in raw.get("childIds") or ():
            child = by_id.get(child_id) if isinstance(child_id, (str, int)) else None
            if child is None:
                continue
            child_role = _role(child)
            if child_role in _DROPPED_ROLES or (text_field and _is_editor(child, child_role)):
                continue
            # A StaticText's children are only InlineTextBoxes: finish it without visiting them.
            queued.append((child, child_role, kids, [] if child_role == "StaticText" else None))
        stack.extend(reversed(queued))
    if len(roots) == 1 and roots[0].role == "RootWebArea":
        return roots[0]
    root = Node("RootWebArea", "", None, {}, roots)
    for kid in roots:
        kid.parent = root
    return root


def _finish(raw: dict[str, Any], role: str, out: list[Node], kids: list[Node]) -> None:
    """Append ``raw``'s node to ``out``, or splice its children there (module docstring)."""
    if raw.get("ignored") or role in _SPLICED_ROLES:
        out.extend(kids)
        return
    name = _field(raw, "name") or ""
    props = _scalar_props(raw) if "properties" in raw else {}
    if not name and not props and role in _LAYOUT_ROLES:
        out.extend(kids)
        return
    if role in _TEXT_FIELDS:
        value = str(_field(raw, "value") or "")
        if value and value != name and value != str(props.get("valuetext", "")):
            if role != "combobox" or _has_prop(raw, "editable"):
                props = {"value": value, **props}
    node = Node(role, str(name), raw.get("browsergym_id"), props, kids)
    for kid in kids:
        kid.parent = node
    out.append(node)


def _field(raw: dict[str, Any], key: str) -> Any:
    """CDP wraps values as ``{"type": ..., "value": ...}``; anything else reads as missing."""
    wrapped = raw.get(key)
    return wrapped.get("value") if isinstance(wrapped, dict) else None


def _role(raw: dict[str, Any]) -> str:
    return str(_field(raw, "role") or "")


def _has_prop(raw: dict[str, Any], name: str) -> bool:
    return any(isinstance(p, dict) and p.get("name") == name for p in raw.get("properties") or ())


def _is_editor(raw: dict[str, Any], role: str) -> bool:
    """The inner editor of a text field: an ignored wrapper or an editable generic/text node.

    A real widget inside a field (ARIA 1.1 combobox wrapping a textbox) is kept.
    """
    if raw.get("ignored"):
        return True
    return role in ("generic", "StaticText") and _has_prop(raw, "editable")
