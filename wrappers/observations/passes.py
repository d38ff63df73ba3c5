"""The AgentOccam observation passes, one function per named, switchable step (docs/methods/agentoccam.md).

Every pass edits a :class:`PassState` in place: it hides nodes, rewrites names, or (tables,
headings) restructures. Passes that embed other elements in a name (options, description-list
details, table cells) store both renderings, with ids for the current step and without ids for
history, so neither view has to be re-derived from text. Passes visit only the roles they concern
(:meth:`PassState.of`): the observation of a 2,000-node page must take a few milliseconds.

Where we depart from AgentOccam's reference rules, and why, next to the code concerned:
* names (step 1): the reference deletes every symbol outside a short list, which merges numbers
  (``1–17`` became ``117``) and turns ``15%`` or ``$5`` into a bare count. Dashes become ``-``, a
  symbol deleted between two word characters leaves a space, and currency, percent and degree signs stay.
* redundant text (steps 3 and 8): the reference hides a text found in its parent's or in *any*
  sibling's name. With layout nodes spliced away, parents are whole lists, articles or the page and
  siblings are every text of them, so it hid "by" in "opened 3 days ago by <author>", a rating equal
  to another product's review count, an article's subject because the heading names it. A text is
  hidden only when it repeats its own element's label: a part of the label of an element named
  from its content (a link, button, heading, cell, option ...; not the page), or the whole label of
  any other parent (a group's legend, a titled box); or when it is the whole label of the widget
  right before or after it (``text 'Email'`` beside ``textbox 'Email'``). On WebArena-sized pages of
  every site type (``benchmarks.support.pages``) the reference rules kept 92-99.9 % of the visible words
  in order; these keep at least 99.5 % (docs/benchmarks.md, "wrappers").
* duplicates (step 5): the reference hides *both* members of an adjacent identical pair; we keep
  the first and hide the rest, recording ``duplicate_of[hidden_id] = kept_id``. Form fields are
  never hidden as duplicates: two unlabelled textboxes look alike but hold different input.
* option ids in history: the reference keeps ``[id]`` inside folded names in the id-free view; we
  drop them there (history must not offer stale ids), keeping them only in the current view.
* folding needs every option to be a leaf (text children aside), so a submenu is never swallowed,
  and a folded option shows ``[selected: True]`` but not ``[selected: False]`` (:func:`_option_item`).
* table cells: the reference appends the renderings of all descendants to the cell name joined by
  TAB (``View OrderReorder\\tlink [1] 'View Order'...``). We join with spaces, give plain text for
  descendants that show no id and full ``role [id] 'name'`` renderings for those that do, and drop
  the cell's own name when it only concatenates its descendants' texts. Today's Chromium no longer
  emits ``LayoutTable*`` roles (layout tables arrive as ``table``/``row``/``cell``), so the
  reference's separate LayoutTable branch becomes the same Markdown conversion: ``| a | b |`` rows,
  with a header and ``| --- |`` separator only where the table has column headers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from webarena_gym.wrappers.observations.axtree import (
    DROPDOWN_ROLES,
    IMAGE_ROLES,
    INTERACTIVE_ROLES,
    STATIC_ROLES,
    TEXT_ROLES,
    Node,
)

NOISE_PROPS = ("focused", "autocomplete", "hasPopup", "expanded", "multiselectable", "orientation", "controls")
FORM_FIELDS = frozenset(
    {"textbox", "searchbox", "spinbutton", "combobox", "checkbox", "radio", "switch", "slider", "listbox"}
)
CELL_ROLES = frozenset({"gridcell", "cell", "columnheader", "rowheader", "LayoutTableCell"})
ROW_ROLES = frozenset({"row", "LayoutTableRow"})
TABLE_ROLES = frozenset({"table", "grid", "treegrid", "LayoutTable"})
TERM_ROLES = frozenset({"DescriptionListTerm", "term"})
DETAIL_ROLES = frozenset({"DescriptionListDetail", "definition"})

# Roles whose name is computed from their content: a text inside one of them is a piece of its label.
NAME_FROM_CONTENT = frozenset(
    {
        "link",
        "button",
        "heading",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "tab",
        "treeitem",
        "cell",
        "gridcell",
        "columnheader",
        "rowheader",
        "row",
        "checkbox",
        "radio",
        "switch",
        "tooltip",
    }
)
# Parents whose folded items are chosen with select_option (a menu's items are clicked instead).
_SELECTS = frozenset({"combobox", "listbox"})
# Kept in names: word characters, spaces, plain punctuation (AgentOccam's list), currency, percent, degree.
_KEPT = "\\w\\s,.!?;:\\-'\"()&/\u2019@%$\u20ac\u00a3\u00a5\u20b9\u00a2\u00b0"
_UNWANTED = re.compile(f"[^{_KEPT}]")
_UNWANTED_BETWEEN_WORDS = re.compile(f"(?<=\\w)[^{_KEPT}]+(?=\\w)")
_NEEDS_CLEANING = re.compile(f"[^{_KEPT}]|[^\\S ]|  |^ | $")  # a symbol, or whitespace to normalise
_DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d", "-"))
_SPACES = re.compile(r"\s+")


@dataclass(eq=False)
class PassState:
    """The tree under processing plus what passes record for the wrapper's users."""

    root: Node
    hide_static_ids: bool = True
    option_parent: dict[str, str] = field(default_factory=dict)
    duplicate_of: dict[str, str] = field(default_factory=dict)
    duplicate_names: Counter[str] = field(default_factory=Counter)
    _order: list[Node] | None = field(default=None, repr=False)
    _by_role: dict[str, list[Node]] = field(default_factory=dict, repr=False)
    _of: dict[tuple[str, ...], list[Node]] = field(default_factory=dict, repr=False)
    _position: dict[Node, int] = field(default_factory=dict, repr=False)

    def shows_id(self, node: Node) -> bool:
        """AgentOccam's rule: every element shows its id but those of :data:`STATIC_ROLES`."""
        if node.bid is None or node.hide_id:
            return False
        return not self.hide_static_ids or node.role not in STATIC_ROLES

    def line(self, node: Node, ids: bool) -> str:
        return node.line(ids, show_id=ids and self.shows_id(node))

    def nodes(self) -> list[Node]:
        """Pre-order list of all nodes, computed once: passes only restructure at the very end
        (tables append rows the later passes need not see; headings are the last pass)."""
        if self._order is None:
            self._order = list(self.root.walk())
            for i, n in enumerate(self._order):
                self._by_role.setdefault(n.role, []).append(n)
                self._position[n] = i
        return self._order

    def of(self, *roles: str) -> list[Node]:
        """The nodes whose role *was* one of ``roles`` when the passes started, in page order."""
        self.nodes()
        if len(roles) == 1:
            return self._by_role.get(roles[0], [])
        if roles not in self._of:
            found = [n for r in roles for n in self._by_role.get(r, ())]
            self._of[roles] = sorted(found, key=self._position.__getitem__)
        return self._of[roles]


def hide_subtree(node: Node) -> None:
    for n in node.walk():
        n.visible = False


def clean_name(text: str) -> str:
    """Keep word characters, spaces, plain punctuation, currency, percent and degree signs; dashes become ``-``;
    a symbol deleted between two word characters leaves a space (``1–17`` -> ``1-17``, ``a|b`` ->
    ``a b``, ``Order #42`` -> ``Order 42``); whitespace collapses."""
    if _NEEDS_CLEANING.search(text) is None:
        return text
    if _UNWANTED.search(text) is not None:
        text = _UNWANTED.sub("", _UNWANTED_BETWEEN_WORDS.sub(" ", text.translate(_DASHES)))
    return _SPACES.sub(" ", text).strip()


def clean_names(st: PassState) -> None:
    """Step 1: :func:`clean_name` on every name (a page repeats many: each is cleaned once)."""
    cleaned: dict[str, str] = {}
    for n in st.nodes():
        if n.name:
            name = cleaned.get(n.name)
            if name is None:
                name = cleaned[n.name] = clean_name(n.name)
            n.name = name


def drop_noise_properties(st: PassState) -> None:
    """Step 2: drop widget-state noise, and ``required: False`` on table cells."""
    for n in st.nodes():
        if not n.props:
            continue
        for key in NOISE_PROPS:
            n.props.pop(key, None)
        if n.props.get("required") is False and n.parent is not None and n.parent.role == "row":
            del n.props["required"]


def _has_words(text: str, words: str) -> bool:
    """``words`` occurs in ``text`` with no word character right before or after it."""
    start = text.find(words)
    while start >= 0:
        end = start + len(words)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        start = text.find(words, start + 1)
    return False


def remove_redundant_text(st: PassState) -> None:
    """Steps 3 and 8: hide empty text, and text that repeats its own element's label or the label of
    the widget right next to it (module docstring)."""
    parents: dict[int, Node] = {}
    for n in st.of(*TEXT_ROLES):
        if n.visible and n.parent is not None and n.is_leaf():
            parents.setdefault(id(n.parent), n.parent)
    for parent in parents.values():
        own = parent.name if parent.role != "RootWebArea" else ""
        part_of_own = parent.role in NAME_FROM_CONTENT
        row = parent.visible_children()
        for i, n in enumerate(row):
            if n.role not in TEXT_ROLES or not n.is_leaf():
                continue
            if not n.name or n.name == own or (part_of_own and _has_words(own, n.name)):
                n.visible = False
                continue
            for j in (i - 1, i + 1):
                if 0 <= j < len(row) and row[j].role in INTERACTIVE_ROLES and row[j].name == n.name:
                    n.visible = False
                    break


def remove_images(st: PassState) -> None:
    """Steps 4 and 6: hide leaf images and leaves named ``Image`` (children first, so a link
    holding only an ``Image`` goes in the same pass)."""
    for n in reversed(st.nodes()):
        if (n.role in IMAGE_ROLES or n.name == "Image") and n.visible and n.is_leaf():
            n.visible = False


def _same_leaf(a: Node, b: Node) -> bool:
    return a.role == b.role and a.name == b.name and a.props == b.props and a.is_leaf() and b.is_leaf()


def remove_duplicates(st: PassState) -> None:
    """Step 5: hide a leaf identical to the adjacent visible sibling before it (not in rows)."""
    for parent in st.nodes():
        if parent.role in ROW_ROLES or len(parent.children) < 2:
            continue
        kept: Node | None = None
        for child in parent.children:
            if not child.visible:
                continue
            if kept is not None and child.role not in FORM_FIELDS and _same_leaf(kept, child):
                child.visible = False
                st.duplicate_names[child.name] += 1
                if child.bid is not None and kept.bid is not None:
                    st.duplicate_of[child.bid] = kept.bid
                continue
            kept = child


def _only_visible_child(parent: Node, child: Node) -> bool:
    for other in parent.children:
        if other.visible and other is not child:
            return False
    return True


def lift_text(st: PassState) -> None:
    """Step 7: an unnamed parent whose only visible child is a text leaf takes the text as name."""
    for n in st.of(*TEXT_ROLES):
        parent = n.parent
        if (
            n.visible
            and n.name
            and n.role in TEXT_ROLES
            and parent is not None
            and not parent.name
            and n.is_leaf()
            and _only_visible_child(parent, n)
        ):
            parent.name = n.name
            n.visible = False


def rename_roles(st: PassState) -> None:
    """Step 9: ``StaticText`` and ``LabelText`` both become ``text``."""
    for n in st.of("StaticText", "LabelText"):
        n.role = "text"


def _only_text_below(n: Node) -> bool:
    return all(d.role in TEXT_ROLES for d in n.walk() if d is not n and d.visible)


def _option_item(opt: Node, ids: bool) -> str:
    """``[id] 'name' [props]``, without ``[selected: False]``: in a folded list the chosen option is the
    one marked ``[selected: True]``, and leaving the default out takes a fifth of the tokens off an
    address form with a 200-country select, which otherwise misses the 0.35x token target
    (docs/benchmarks.md, "wrappers")."""
    props = [f"[{k}: {v}]" for k, v in opt.props.items() if not (k == "selected" and v is False)]
    text = " ".join([repr(opt.name), *props])
    return f"[{opt.bid}] {text}" if ids and opt.bid is not None else text


def fold_options(st: PassState) -> None:
    """Step 10: options (or menu items) fold into their parent's line with their own ids."""
    parents: dict[int, Node] = {}
    for item in st.of("option", "menuitem"):
        if item.parent is not None:
            parents.setdefault(id(item.parent), item.parent)
    for parent in parents.values():
        if not parent.visible:
            continue
        kids = parent.visible_children()
        if not kids or {k.role for k in kids} not in ({"option"}, {"menuitem"}):
            continue
        if not all(_only_text_below(k) for k in kids):
            continue
        prefix = f"{parent.name}: " if parent.name else ""
        parent.name = prefix + "; ".join(_option_item(k, True) for k in kids)
        parent.plain = prefix + "; ".join(_option_item(k, False) for k in kids)
        parent.embedded = tuple(k.bid for k in kids if k.bid is not None)
        if parent.role in DROPDOWN_ROLES:
            parent.hide_id = True
        for k in kids:
            hide_subtree(k)
            if (k.role == "option" or parent.role in _SELECTS) and k.bid is not None and parent.bid is not None:
                st.option_parent[k.bid] = parent.bid


def description_lists(st: PassState) -> None:
    """Step 11: a detail takes its single child's rendering; a term absorbs the details after it."""
    for n in st.of(*DETAIL_ROLES):
        if n.visible and not n.name:
            kids = n.visible_children()
            if len(kids) == 1 and kids[0].is_leaf():
                kid = kids[0]
                n.name, n.plain = st.line(kid, True), st.line(kid, False)
                n.embedded = ((kid.bid,) if kid.bid is not None and st.shows_id(kid) else ()) + kid.embedded
                kid.visible = False
    parents: dict[int, Node] = {}
    for term in st.of(*TERM_ROLES):
        if term.parent is not None:
            parents.setdefault(id(term.parent), term.parent)
    for parent in parents.values():
        kids = parent.visible_children()
        for i, term in enumerate(kids):
            if term.role not in TERM_ROLES or not term.is_leaf() or not term.visible:
                continue
            details = []
            for d in kids[i + 1 :]:
                if d.role not in DETAIL_ROLES or not d.is_leaf():
                    break
                details.append(d)
            details = [d for d in details if d.name]
            if details:
                term.plain = f"{term.label(False)}: " + "; ".join(d.label(False) for d in details)
                term.name = f"{term.name}: " + "; ".join(d.label(True) for d in details)
                term.embedded += tuple(i for d in details for i in d.embedded)
                for d in details:
                    d.visible = False


def _cell_text(st: PassState, cell: Node) -> tuple[str, str, tuple[str, ...]]:
    """A cell's Markdown text: plain texts, plus full renderings of interactive descendants."""
    with_ids: list[str] = []
    plain: list[str] = []
    embedded: list[str] = []
    texts: list[str] = []
    for d in cell.walk():
        if d is cell or not d.visible:
            continue
        if st.shows_id(d):
            with_ids.append(st.line(d, True))
            plain.append(st.line(d, False))
            embedded.append(d.bid)  # type: ignore[arg-type]
            embedded.extend(d.embedded)
            texts.append(f"{d.name}{d.props.get('value', '')}")
        elif d.name:
            with_ids.append(d.label(True))
            plain.append(d.label(False))
            embedded.extend(d.embedded)
            texts.append(d.name)
    own = cell.name
    if own and own.replace(" ", "") not in "".join(texts).replace(" ", ""):
        with_ids.insert(0, cell.label(True))
        plain.insert(0, cell.label(False))
        embedded[:0] = cell.embedded
    return " ".join(with_ids), " ".join(plain), tuple(embedded)


def _table_rows(table: Node) -> list[Node]:
    rows: list[Node] = []
    stack = list(reversed(table.visible_children()))
    while stack:
        n = stack.pop()
        if n.role in ROW_ROLES:
            rows.append(n)
        elif n.role not in TABLE_ROLES and n.role not in CELL_ROLES:
            stack.extend(reversed(n.visible_children()))
    return rows


def _markdown(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def tables_to_markdown(st: PassState) -> None:
    """Step 12: each table becomes Markdown ``row`` lines (inner tables first)."""
    for table in reversed(st.of(*TABLE_ROLES)):
        if table.visible:
            _convert_table(st, table)


def _convert_table(st: PassState, table: Node) -> None:
    rows = _table_rows(table)
    if not rows:
        return
    parsed = []  # (is_header, first_is_rowheader, [(ids, plain, embedded)])
    for row in rows:
        cells = row.visible_children()
        texts = [_cell_text(st, c) for c in cells]
        if any(t[0] for t in texts):
            roles = [c.role for c in cells]
            parsed.append(("columnheader" in roles, roles[0] == "rowheader", texts))
    lines: list[list[tuple[str, str, tuple[str, ...]]]] = []
    if parsed and not any(h for h, _, _ in parsed) and all(r for _, r, _ in parsed):
        width = max(len(t) for _, _, t in parsed)
        columns = [[t[j] if j < len(t) else ("", "", ()) for _, _, t in parsed] for j in range(width)]
        lines = [columns[0], [("---", "---", ())] * len(parsed), *columns[1:]]
    else:
        for i, (header, _, texts) in enumerate(parsed):
            if header and lines:
                lines.append([])
            lines.append(texts)
            if header and i + 1 < len(parsed):
                lines.append([("---", "---", ())] * len(texts))
    for row in rows:
        hide_subtree(row)
    for group in table.children:
        if group.role not in ROW_ROLES and not group.visible_children() and not group.name:
            group.visible = False
    for line in lines:
        node = Node("row", _markdown([c[0] for c in line]) if line else "", None, {}, parent=table)
        node.plain = _markdown([c[1] for c in line]) if line else ""
        node.embedded = tuple(i for c in line for i in c[2])
        table.children.append(node)


def merge_headings(st: PassState) -> None:
    """Step 13: a heading that only repeats the link/button around or inside it disappears."""
    for h in st.of("heading"):
        if not h.visible or h.parent is None:
            continue
        parent = h.parent
        if parent.interactive and parent.name == h.name and h.is_leaf():
            h.visible = False
            continue
        kids = h.visible_children()
        if len(kids) == 1 and kids[0].interactive and kids[0].name == h.name:
            kid = kids[0]
            parent.children[parent.children.index(h)] = kid
            kid.parent = parent


Pass = Callable[[PassState], None]

# AgentOccam's order; a name may appear twice and one config flag switches both runs.
PIPELINE: tuple[tuple[str, Pass], ...] = (
    ("clean_names", clean_names),
    ("drop_noise_properties", drop_noise_properties),
    ("remove_redundant_text", remove_redundant_text),
    ("remove_images", remove_images),
    ("remove_duplicates", remove_duplicates),
    ("remove_images", remove_images),
    ("lift_text", lift_text),
    ("remove_redundant_text", remove_redundant_text),
    ("rename_roles", rename_roles),
    ("fold_options", fold_options),
    ("description_lists", description_lists),
    ("tables_to_markdown", tables_to_markdown),
    ("merge_headings", merge_headings),
)
