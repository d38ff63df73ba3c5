"""The accessibility tree the AgentOccam passes work on, built straight from BrowserGym's ``axtree_object``.

``build_tree`` reads the CDP nodes (``nodeId``, ``childIds``, ``role``, ``name``, ``properties``,
``ignored``, ``browsergym_id``, ``value``) and applies only the normalisations every text view of
the page needs; the optional AgentOccam passes live in ``wrappers.observations.passes`` (see
docs/methods/agentoccam.md). Build-time decisions, each adapting the 2023 Chromium tree AgentOccam
read to the Chromium BrowserGym drives today:

* ignored nodes are spliced out (their non-ignored children move up), ``InlineTextBox``,
  ``ListMarker`` and ``LineBreak`` are dropped (they only repeat layout), and a ``<select>``'s
  ``MenuListPopup`` is spliced so its options are the dropdown's own children;
* WebArena's filter: an unnamed node without properties whose role is a layout role (generic,
  paragraph, list, listitem, strong, banner, navigation, ...) is spliced out;
* WebArena's ignored properties (focusable, editable, readonly, level, settable, multiline,
  invalid) are dropped, and so are relation properties (no scalar value), empty values and
  ``url``, which today's Chromium attaches to every link and image but WebArena's tree never had;
* a text field's inner editor subtree (StaticText copies of what was typed) is replaced by a
  ``value`` property, so typed text can never be mistaken for a label by the lifting pass;
* a date or time input keeps its parts but not their borrowed ids or doubled names
  (``_merge_composite``), and shows its ISO ``value``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

TEXT_ROLES = frozenset({"StaticText", "LabelText", "caption", "text"})
IMAGE_ROLES = frozenset({"img", "image"})
# Widget roles: what an agent acts on. The redundant-text and heading passes compare texts with these,
# and the retention checks require each of them to stay reachable.
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
# AgentOccam shows an element's id unless its role is one of these non-interactive ones (its list, plus
# the names today's Chromium uses for the same things: ``cell`` for table cells, ``term``/``definition``
# for description lists). Every other element keeps its id, so a
# clickable ``generic``, ``img``, ``group`` or ``menubar`` stays addressable; on WebArena-sized pages
# that costs 0.2-4 % more tokens than ids on widget roles only (docs/benchmarks.md, "wrappers").
STATIC_ROLES = frozenset(
    {
        "StaticText",
        "LabelText",
        "text",
        "main",
        "heading",
        "LayoutTable",
        "tabpanel",
        "LayoutTableRow",
        "LayoutTableCell",
        "time",
        "list",
        "contentinfo",
        "table",
        "row",
        "rowheader",
        "columnheader",
        "gridcell",
        "cell",
        "caption",
        "DescriptionList",
        "DescriptionListTerm",
        "DescriptionListDetail",
        "term",
        "definition",
        "RootWebArea",
        "rowgroup",
        "alert",
    }
)

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
# Date and time inputs: one element with shadow parts (see ``_merge_composite``); their value is the
# ISO string ``type`` must send.
COMPOSITE_INPUTS = frozenset({"Date", "DateTime", "InputTime"})
_VALUED_FIELDS = _TEXT_FIELDS | COMPOSITE_INPUTS


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
        for child in self.children:
            if child.visible:
                return False
        return True

    def label(self, ids: bool) -> str:
        return self.name if ids or self.plain is None else self.plain

    def line(self, ids: bool, show_id: bool = True) -> str:
        """``role [id] 'name' [prop: value]`` (AgentOccam's concise format)."""
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


def _scalar_props(raw_props: list[Any]) -> dict[str, Any]:
    """Named scalar properties, without the ignored ones, relations and empty values (``valuetext:
    ''`` carries nothing to read). A malformed entry is skipped (the ``try`` costs nothing otherwise)."""
    props: dict[str, Any] = {}
    for prop in raw_props:
        try:
            name = prop["name"]
            if name in _IGNORED_PROPS:
                continue
            value = prop["value"]["value"]
        except (KeyError, TypeError):
            continue
        if type(name) is str and value is not None and value != "" and type(value) not in (list, dict):
            props[name] = value
    return props


def build_tree(axtree_object: dict[str, Any]) -> Node:
    """Build the normalised tree (module docstring) rooted at the page's ``RootWebArea``.

    One depth-first walk over the CDP nodes with an explicit stack (deep pages must not hit the
    recursion limit); a text leaf (``StaticText``, whose children are only ``InlineTextBox`` es) is
    converted where it is met. Building is the costliest step of the observation on a 2,000-node
    page, so the per-node work is plain dict reads.
    """
    by_id: dict[Any, dict[str, Any]] = {}
    first = None
    for raw in axtree_object.get("nodes") or ():
        if type(raw) is dict:
            by_id[raw.get("nodeId")] = raw
            first = first if first is not None else raw
    if first is None:
        return Node("RootWebArea", "", None, {})
    roots: list[Node] = []
    composites: list[Node] = []
    seen = {first.get("nodeId")}  # CDP trees are trees, but a corrupt merge must not loop forever
    # Frames: raw node, its role, where its node goes, its converted children, its unvisited child ids,
    # whether it is a text field (whose editor subtree is skipped).
    stack = [(first, _role(first), roots, [], iter(first.get("childIds") or ()), False)]
    while stack:
        raw, role, out, kids, child_ids, in_field = stack[-1]
        for child_id in child_ids:
            child = by_id.get(child_id) if type(child_id) in (str, int) else None
            if child is None:
                continue
            wrapped = child.get("role")
            child_role = wrapped.get("value") if type(wrapped) is dict else None
            if child_role == "StaticText" and not child.get("ignored") and not in_field:
                # the most frequent node, finished here: its children are only InlineTextBoxes
                wrapped = child.get("name")
                name = wrapped.get("value") if type(wrapped) is dict else None
                raw_props = child.get("properties")
                kids.append(
                    Node(
                        "StaticText",
                        str(name or ""),
                        child.get("browsergym_id"),
                        _scalar_props(raw_props) if raw_props else {},
                    )
                )
                continue
            child_role = str(child_role or "")
            if child_role in _DROPPED_ROLES or child.get("nodeId") in seen:
                continue
            if in_field and _is_editor(child, child_role):
                continue
            seen.add(child.get("nodeId"))
            if child_role == "StaticText":
                _finish(child, child_role, kids, [], composites)
                continue
            stack.append((child, child_role, kids, [], iter(child.get("childIds") or ()), child_role in _TEXT_FIELDS))
            break
        else:
            stack.pop()
            _finish(raw, role, out, kids, composites)
    for composite in composites:
        _merge_composite(composite)
    if len(roots) == 1 and roots[0].role == "RootWebArea":
        return roots[0]
    root = Node("RootWebArea", "", None, {}, roots)
    for kid in roots:
        kid.parent = root
    return root


def _finish(raw: dict[str, Any], role: str, out: list[Node], kids: list[Node], composites: list[Node]) -> None:
    """Append ``raw``'s node to ``out``, or splice its children there (module docstring)."""
    if raw.get("ignored") or role in _SPLICED_ROLES:
        out.extend(kids)
        return
    wrapped = raw.get("name")
    name = (wrapped.get("value") or "") if type(wrapped) is dict else ""
    raw_props = raw.get("properties")
    props = _scalar_props(raw_props) if raw_props else {}
    if not name and not props and role in _LAYOUT_ROLES:
        out.extend(kids)
        return
    if role in _VALUED_FIELDS:
        value = str(_field(raw, "value") or "")
        if value and value != name and value != str(props.get("valuetext", "")):
            if role != "combobox" or _has_prop(raw, "editable"):
                props = {"value": value, **props}
    node = Node(role, str(name), raw.get("browsergym_id"), props, kids)
    for kid in kids:
        kid.parent = node
    if role in COMPOSITE_INPUTS:
        composites.append(node)
    out.append(node)


def _merge_composite(composite: Node) -> None:
    """A date/time input's parts (month, day, year spin buttons, the picker button) live in its shadow
    DOM: BrowserGym gives them the input's own id, and Chromium names each one twice ("Month Month").
    They keep their place and text but lose the borrowed id (the input's line carries it) and the
    doubled half of their name."""
    for part in composite.walk():
        if part is composite:
            continue
        if part.bid is not None and part.bid == composite.bid:
            part.bid = None
        half = len(part.name) // 2
        if part.name and part.name[half : half + 1] == " " and part.name[:half] == part.name[half + 1 :]:
            part.name = part.name[:half]


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
