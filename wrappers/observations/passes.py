"""The AgentOccam observation passes (card §4.3), one function per named, switchable step.

Every pass edits a :class:`PassState` in place: it hides nodes, rewrites names, or (tables,
headings) restructures. Passes that embed other elements in a name (options, description-list
details, table cells) store both renderings, with ids for the current step and without ids for
history, so neither view has to be re-derived from text.

Decisions on the card's §12 quirks and gaps, next to the code they concern:
* duplicates (step 5): the reference hides *both* members of an adjacent identical pair; we keep
  the first and hide the rest, recording ``duplicate_of[hidden_id] = kept_id`` so the dropped id is
  an explicit, documented exception to "every interactive element stays reachable". Form fields
  are never hidden as duplicates: two unlabelled textboxes look alike but hold different input.
* redundant text (step 3): the reference hides a text that is a substring of *any* sibling's
  name. WebArena's tree splices list items, so siblings are often unrelated texts: the reference
  then drops the second ``(67)`` of a category list, or ``in`` because a sibling says "reading".
  We compare a text only with its labelled siblings (not other texts, not images, which the next
  pass removes), as whole words; repeated adjacent texts are left to the duplicates pass.
* option ids in history: the reference keeps ``[id]`` inside folded names in the id-free view; we
  drop them there (history must not offer stale ids), keeping them only in the current view.
* folding needs every option to be a leaf (text children aside), so a submenu is never swallowed.
* table cells: the card appends the renderings of all descendants to the cell name joined by TAB
  (``View OrderReorder\\tlink [1] 'View Order'...``). We join with spaces, give plain text for
  non-interactive descendants, full ``role [id] 'name'`` renderings only for interactive ones, and
  drop the cell's own name when it only concatenates its descendants' texts. Today's Chromium
  no longer emits ``LayoutTable*`` roles (layout tables arrive as ``table``/``row``/``cell``), so
  the card's separate LayoutTable branch becomes the same Markdown conversion: ``| a | b |`` rows,
  with a header and ``| --- |`` separator only where the table has column headers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from wrappers.observations.axtree import DROPDOWN_ROLES, IMAGE_ROLES, TEXT_ROLES, Node

NOISE_PROPS = ("focused", "autocomplete", "hasPopup", "expanded", "multiselectable", "orientation", "controls")
FORM_FIELDS = frozenset(
    {"textbox", "searchbox", "spinbutton", "combobox", "checkbox", "radio", "switch", "slider", "listbox"}
)
CELL_ROLES = frozenset({"gridcell", "cell", "columnheader", "rowheader", "LayoutTableCell"})
ROW_ROLES = frozenset({"row", "LayoutTableRow"})
TABLE_ROLES = frozenset({"table", "grid", "treegrid", "LayoutTable"})
TERM_ROLES = frozenset({"DescriptionListTerm", "term"})
DETAIL_ROLES = frozenset({"DescriptionListDetail", "definition"})

# Parents whose folded items are chosen with select_option (a menu's items are clicked instead).
_SELECTS = frozenset({"combobox", "listbox"})
_UNWANTED_CHARS = re.compile(r"[^\w\s,.!?;:\-'\"()&/’@]")
_SPACES = re.compile(r"\s+")


@dataclass(eq=False)
class PassState:
    """The tree under processing plus what passes record for the wrapper's users."""

    root: Node
    only_interactive_ids: bool = True
    option_parent: dict[str, str] = field(default_factory=dict)
    duplicate_of: dict[str, str] = field(default_factory=dict)
    duplicate_names: Counter[str] = field(default_factory=Counter)
    _order: list[Node] | None = field(default=None, repr=False)

    def shows_id(self, node: Node) -> bool:
        if node.bid is None or node.hide_id:
            return False
        return node.interactive or not self.only_interactive_ids

    def line(self, node: Node, ids: bool) -> str:
        return node.line(ids, show_id=ids and self.shows_id(node))

    def nodes(self) -> list[Node]:
        """Pre-order list of all nodes, computed once: passes only restructure at the very end
        (tables append rows the later passes need not see; headings are the last pass)."""
        if self._order is None:
            self._order = list(self.root.walk())
        return self._order


def hide_subtree(node: Node) -> None:
    for n in node.walk():
        n.visible = False


def clean_name(text: str) -> str:
    """Keep word characters, spaces and plain punctuation; collapse whitespace (``$5`` -> ``5``)."""
    return _SPACES.sub(" ", _UNWANTED_CHARS.sub("", text)).strip()


def clean_names(st: PassState) -> None:
    """Step 1: :func:`clean_name` on every name."""
    for n in st.nodes():
        if n.name:
            n.name = clean_name(n.name)


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
    """Steps 3 and 8: hide empty text, and text its parent or a labelled sibling already says."""
    labels: dict[Node, str] = {}  # per parent: its labelled children's names (texts never change them)
    for n in st.nodes():
        if not (n.visible and n.role in TEXT_ROLES and n.is_leaf()):
            continue
        parent = n.parent
        if not n.name or (parent is not None and n.name in parent.name):
            n.visible = False
        elif parent is not None:
            if parent not in labels:
                labels[parent] = "\n".join(
                    s.name
                    for s in parent.children
                    if s.visible and s.name and s.role not in TEXT_ROLES and s.role not in IMAGE_ROLES
                )
            if _has_words(labels[parent], n.name):
                n.visible = False


def remove_images(st: PassState) -> None:
    """Steps 4 and 6: hide leaf images and leaves named ``Image`` (children first, so a link
    holding only an ``Image`` goes in the same pass)."""
    for n in reversed(st.nodes()):
        if n.visible and (n.role in IMAGE_ROLES or n.name == "Image") and n.is_leaf():
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


def lift_text(st: PassState) -> None:
    """Step 7: an unnamed parent whose only visible child is a text leaf takes the text as name."""
    for n in st.nodes():
        parent = n.parent
        if (
            n.visible
            and n.name
            and n.role in TEXT_ROLES
            and parent is not None
            and not parent.name
            and n.is_leaf()
            and parent.visible_children() == [n]
        ):
            parent.name = n.name
            n.visible = False


def rename_roles(st: PassState) -> None:
    """Step 9: ``StaticText`` and ``LabelText`` both become ``text``."""
    for n in st.nodes():
        if n.role in ("StaticText", "LabelText"):
            n.role = "text"


def _only_text_below(n: Node) -> bool:
    return all(d.role in TEXT_ROLES for d in n.walk() if d is not n and d.visible)


def _option_item(opt: Node, ids: bool) -> str:
    text = " ".join([repr(opt.name), *opt.props_text()])
    return f"[{opt.bid}] {text}" if ids and opt.bid is not None else text


def fold_options(st: PassState) -> None:
    """Step 10: options (or menu items) fold into their parent's line with their own ids."""
    for parent in st.nodes():
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
    nodes = st.nodes()
    for n in nodes:
        if n.visible and n.role in DETAIL_ROLES and not n.name:
            kids = n.visible_children()
            if len(kids) == 1 and kids[0].is_leaf():
                kid = kids[0]
                n.name, n.plain = st.line(kid, True), st.line(kid, False)
                n.embedded = ((kid.bid,) if st.shows_id(kid) else ()) + kid.embedded
                kid.visible = False
    for parent in nodes:
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
        if d.interactive and st.shows_id(d):
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
    for table in reversed(st.nodes()):
        if table.visible and table.role in TABLE_ROLES:
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
    for cells in lines:
        node = Node("row", _markdown([c[0] for c in cells]) if cells else "", None, {}, parent=table)
        node.plain = _markdown([c[1] for c in cells]) if cells else ""
        node.embedded = tuple(i for c in cells for i in c[2])
        table.children.append(node)


def merge_headings(st: PassState) -> None:
    """Step 13: a heading that only repeats the link/button around or inside it disappears."""
    for h in st.nodes():
        if not h.visible or h.role != "heading" or h.parent is None:
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

# The card's order (§4.3); a name may appear twice and one config flag switches both runs.
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
