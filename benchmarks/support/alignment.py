"""What an aligned observation must keep from the raw page: its words, in order, and its widgets.

Shared by the property tests and the wrapper benchmark, so both measure the same thing:

* :func:`word_retention`: the share of the raw tree's visible text words (the runs of word characters
  of every ``StaticText`` that is not ignored, so removed symbols never count as losses) that the
  aligned text still has, in page order. A lost word and a corrupted one (``1–17`` read as ``117``)
  both count as missing.
* :func:`unreachable`: the interactive elements of the raw tree whose id the aligned text does not
  offer, except where that is the point: an indistinguishable duplicate whose twin is offered, a
  dropdown or menu whose items carry the ids, a leaf named ``Image``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from webarena_gym.wrappers.observations.agentoccam import TextTree
from webarena_gym.wrappers.observations.axtree import INTERACTIVE_ROLES
from webarena_gym.wrappers.observations.passes import clean_name

_WORD = re.compile(r"\w+")
_TABLES = frozenset({"table", "grid", "treegrid"})
_ROLE = re.compile(r"^\t*\S+ ?", re.M)  # the role that starts every rendered line
_PROP_KEY = re.compile(r"\[\w+: ")


def raw_text_words(axtree_object: dict[str, Any]) -> list[str]:
    """The words of the page's visible texts in document order (pre-order from the root).

    A table whose rows all start with a row header is read column by column (headers first, then
    each column of values), the order in which the alignment deliberately transposes it.
    """
    nodes = [n for n in axtree_object.get("nodes") or () if isinstance(n, dict)]
    if not nodes:
        return []
    by_id = {n.get("nodeId"): n for n in nodes}
    seen: set[Any] = set()

    def kids(node: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for c in node.get("childIds") or ():
            if c in by_id and c not in seen:
                seen.add(c)
                out.append(by_id[c])
        return out

    def words(top: dict[str, Any]) -> list[str]:
        found: list[str] = []
        stack = [top]
        while stack:
            node = stack.pop()
            role = _role(node)
            if role == "StaticText" and not node.get("ignored"):
                found += _WORD.findall(str((node.get("name") or {}).get("value") or ""))
                continue
            children = kids(node)
            if role in _TABLES and _transposed(children):
                found += _columns(children)
                continue
            stack.extend(reversed(children))
        return found

    def _transposed(children: list[dict[str, Any]]) -> bool:
        rows = _rows(children)
        return bool(rows) and all(r and _role(r[0]) == "rowheader" for r in rows)

    def _rows(children: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        rows, stack = [], list(reversed(children))
        while stack:
            node = stack.pop()
            if _role(node) == "row":
                rows.append([c for c in (by_id.get(i) for i in node.get("childIds") or ()) if c is not None])
            elif _role(node) not in _TABLES:
                stack.extend(reversed([c for c in (by_id.get(i) for i in node.get("childIds") or ()) if c]))
        return rows

    def _columns(children: list[dict[str, Any]]) -> list[str]:
        rows = [[words(cell) for cell in row] for row in _rows(children)]
        width = max(len(r) for r in rows)
        return [w for j in range(width) for row in rows if j < len(row) for w in row[j]]

    seen.add(nodes[0].get("nodeId"))
    return words(nodes[0])


def _role(node: dict[str, Any]) -> str:
    return str((node.get("role") or {}).get("value") or "")


@dataclass
class Retention:
    total: int
    kept: int
    lost: list[str] = field(default_factory=list)  # every lost word
    missing: list[str] = field(default_factory=list)  # a few lost words with their neighbours

    @property
    def share(self) -> float:
        return self.kept / self.total if self.total else 1.0


def word_retention(axtree_object: dict[str, Any], aligned: str, examples: int = 5) -> Retention:
    """How many raw words (:func:`raw_text_words`) ``aligned`` keeps in order: the size of an
    in-order match of the two word sequences (difflib's matching blocks, without its heuristic that
    ignores frequent words). difflib anchors on the longest common run first, so what is not page
    text is left out of the aligned side: the root line (the page title, which the page's heading
    may repeat elsewhere), each line's role, property names. Else a role between every two names
    breaks the runs, and repeated names ("Settings", "Settings Boards") get matched out of place."""
    raw = raw_text_words(axtree_object)
    if aligned.startswith("RootWebArea"):
        aligned = aligned.partition("\n")[2]
    have = _WORD.findall(_PROP_KEY.sub("[", _ROLE.sub("", aligned)))
    blocks = SequenceMatcher(None, raw, have, autojunk=False).get_matching_blocks()
    matched = [False] * len(raw)
    for block in blocks:
        for i in range(block.a, block.a + block.size):
            matched[i] = True
    lost = [i for i, ok in enumerate(matched) if not ok]
    context = [" ".join(raw[max(0, i - 3) : i + 4]) + f"  <- {raw[i]!r}" for i in lost[:examples]]
    return Retention(len(raw), sum(matched), [raw[i] for i in lost], context)


def unreachable(axtree_object: dict[str, Any], tree: TextTree) -> list[str]:
    """Interactive elements of the raw tree whose id ``tree`` does not offer (module docstring)."""
    by_bid = {n.bid: n for n in tree.root.walk() if n.bid is not None}
    lost = []
    for raw in axtree_object.get("nodes") or ():
        role = (raw.get("role") or {}).get("value")
        bid = raw.get("browsergym_id")
        if raw.get("ignored") or role not in INTERACTIVE_ROLES or bid is None or bid in tree.ids:
            continue
        if tree.duplicate_of.get(bid) in tree.ids:
            continue
        node = by_bid.get(bid)
        if node is not None and (node.name == "Image" or (node.hide_id and set(node.embedded) <= tree.ids)):
            continue
        lost.append(f"{role} [{bid}] {clean_name(str((raw.get('name') or {}).get('value') or ''))!r}")
    return lost
