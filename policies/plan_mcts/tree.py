"""The plan tree Plan-MCTS searches (docs/methods/plan_mcts.md): nodes are verified states, edges subplans.

Pure data and arithmetic, no environment and no model, so selection, backpropagation and the final
choice are unit-tested on their own. Each node and edge keeps a view in the episode's
:class:`~policies.search_tree.SearchTree` (what the trajectory stores and the viewer draws): a view is
the tree node an edge leads to, so ``value``/``visits`` there are the edge's ``Q``/``N``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webarena_gym.envs.page_state import fingerprint
from webarena_gym.llm.messages import png_bytes
from webarena_gym.policies.search_tree import TreeNode


@dataclass
class Page:
    """What the models see of one state: the URL, the aligned text, the marked screenshot (PNG, made on
    first use and kept: one encoding per observation however many prompts show it) and the last
    action's error; and the page's fingerprint (:func:`envs.page_state.fingerprint` of its AX tree, else
    a hash of URL and text), which tells whether the environment still shows this page."""

    url: str
    text: str
    error: str = ""
    screenshot: Any = None  # RGB array with the marks, or None (text-only observation)
    fingerprint: str = ""
    _png: bytes | None = field(default=None, repr=False)

    @classmethod
    def of(cls, obs: dict[str, Any]) -> Page:
        shot = obs.get("som_screenshot")
        if shot is None or getattr(shot, "ndim", 0) != 3 or shot.shape[0] < 2:
            shot = None
        url, text = str(obs.get("url") or ""), str(obs.get("text") or "")
        tree = obs.get("axtree_object")
        return cls(
            url=url,
            text=text,
            error=str(obs.get("last_action_error") or ""),
            screenshot=shot,
            fingerprint=fingerprint(tree) if tree else hashlib.sha1(f"{url}\n{text}".encode()).hexdigest()[:16],
        )

    def png(self) -> bytes | None:
        if self._png is None and self.screenshot is not None:
            self._png = png_bytes(self.screenshot)
        return self._png


@dataclass
class Step:
    """One atomic action run for a subplan (an entry of the local history h_loc)."""

    action: str
    error: str = ""
    url: str = ""  # the page the action led to
    answer: str | None = None  # an answer the action gave (held back by the handle)

    def line(self) -> str:
        text = self.action + (f" -> {self.url}" if self.url else "")
        return text + (f" (error: {self.error})" if self.error else "")


@dataclass
class HistoryItem:
    """One executed subplan of the Abstracted Semantic History H_P (Fig. 9: text, completion status,
    status code, score and notes)."""

    subplan: str
    completed: bool
    status: str | None = None  # macro status code A-E (majority), None when no macro check ran
    score: float | None = None  # r_macro
    notes: str = ""


@dataclass
class Edge:
    """A subplan p out of a node s, with its statistics Q(s,p), N(s,p)."""

    subplan: str
    thought: str
    kind: str
    view: TreeNode
    N: int = 0
    Q: float = 0.0
    child: Node | None = None  # set once executed and verified
    dead: bool = False  # executed, failed verification even after refinement; never re-executed
    last_R: float = 0.0
    steps: list[Step] = field(default_factory=list)  # everything executed for it, repairs included

    @property
    def executed(self) -> bool:
        return self.dead or self.child is not None


@dataclass
class Node:
    """A verified state s: how to get back to it, what it looked like, and H_P on the way to it."""

    token: str
    page: Page
    history: list[HistoryItem]
    depth: int
    view: TreeNode
    path_steps: list[Step] = field(default_factory=list)  # every action from the root (raw-history context)
    edges: list[Edge] = field(default_factory=list)
    terminal: bool = False  # the incoming subplan ended with an answer and was verified
    success: bool = False  # terminal and judged a success (early-stop candidate)
    answer: str | None = None
    macro: float = 0.0  # r_macro of the incoming subplan
    failed: bool = False  # reached by a subplan that failed (``expand_after_failure`` only)


def uct_score(edge: Edge, parent_visits: int, c: float) -> float:
    """Eq. 2: Q(s,p) + c * sqrt(ln N(s) / N(s,p)); an unvisited edge scores infinity."""
    if edge.N == 0:
        return math.inf
    return edge.Q + c * math.sqrt(math.log(max(parent_visits, 1)) / edge.N)


def uct_select(edges: list[Edge], c: float) -> Edge:
    """The edge maximising :func:`uct_score` with N(s) the sum of the edges' visits; ties go to
    the earlier edge (the Planner's order)."""
    if not edges:
        raise ValueError("no edges to select from")
    total = sum(e.N for e in edges)
    best, best_score = edges[0], -math.inf
    for edge in edges:
        score = uct_score(edge, total, c)
        if score > best_score:
            best, best_score = edge, score
    return best


def backpropagate(path: list[Edge], reward: float) -> None:
    """Eqs. 6-7 on every edge of the selected path: N += 1, Q += (R - Q) / N (an incremental mean,
    no discount); the views follow."""
    for edge in path:
        edge.N += 1
        edge.Q += (reward - edge.Q) / edge.N
        edge.view.visits, edge.view.value = edge.N, edge.Q


def descend(root: Node, key: Callable[[Edge], float]) -> list[Edge]:
    """From the root, repeatedly take the verified edge with the largest ``key`` (ties: Planner order)
    until a node has none; the edges taken. A failed subplan's state (``expand_after_failure``) is
    never taken."""
    path: list[Edge] = []
    node = root
    while True:
        verified = [e for e in node.edges if e.child is not None and not e.child.failed]
        if not verified:
            return path
        best = verified[0]
        for edge in verified[1:]:
            if key(edge) > key(best):
                best = edge
        path.append(best)
        node = best.child  # type: ignore[assignment]


def nodes_of(root: Node) -> list[Node]:
    """Every node of the tree, parents before children."""
    out, stack = [], [root]
    while stack:
        node = stack.pop(0)
        out.append(node)
        stack.extend(e.child for e in node.edges if e.child is not None)
    return out


def path_to(root: Node, target: Node) -> list[Edge]:
    """The edges from the root to ``target``."""

    def walk(node: Node) -> list[Edge] | None:
        if node is target:
            return []
        for edge in node.edges:
            if edge.child is not None and (rest := walk(edge.child)) is not None:
                return [edge, *rest]
        return None

    found = walk(root)
    if found is None:
        raise ValueError("target is not in this tree")
    return found
