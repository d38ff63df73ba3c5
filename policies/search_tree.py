"""The search tree a search method builds, in the form trajectories store and the viewer draws.

A node is a state the search reached (its handle snapshot token and URL); the edge into it carries
what was tried (a subplan or an action), the actions executed for it and the reward it got; value and
visit count are the search's statistics (``Q``, ``N``). ``final_path`` lists the node ids of the path
whose answer the episode delivered.

Example::

    tree = SearchTree.rooted(state=handle.snapshot(), url=obs["url"])
    child = tree.add(tree.root, label="open the orders page", state=token, url=url, actions=["click [12]"])
    child.visits, child.value = 1, 0.5
    tree.final_path = tree.path_to(child.id)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TreeNode:
    id: int
    parent: int | None
    depth: int
    label: str = ""  # what the incoming edge tried (a subplan, an action)
    state: str | None = None  # the handle's snapshot token of this node
    url: str = ""
    actions: list[str] = field(default_factory=list)  # executed on the incoming edge
    reward: float | None = None  # of the incoming edge
    value: float = 0.0  # Q
    visits: int = 0  # N
    status: str = "open"  # open | expanded | failed | dead | terminal
    answer: str | None = None  # an answer the incoming edge produced (held back by the handle)
    llm_calls: int = 0  # calls made for this node
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass
class SearchTree:
    nodes: list[TreeNode] = field(default_factory=list)
    final_path: list[int] = field(default_factory=list)
    iterations: int = 0  # search iterations run (the report's budget use: iterations / iteration_budget)
    iteration_budget: int | None = None  # the method's iteration budget, when it has one

    @classmethod
    def rooted(cls, **root: Any) -> SearchTree:
        tree = cls()
        tree.nodes.append(TreeNode(id=0, parent=None, depth=0, **root))
        return tree

    @property
    def root(self) -> TreeNode:
        return self.nodes[0]

    def add(self, parent: TreeNode, **fields: Any) -> TreeNode:
        node = TreeNode(id=len(self.nodes), parent=parent.id, depth=parent.depth + 1, **fields)
        self.nodes.append(node)
        return node

    def children(self, node: TreeNode) -> list[TreeNode]:
        return [n for n in self.nodes if n.parent == node.id]

    def path_to(self, node_id: int) -> list[int]:
        path = []
        current: int | None = node_id
        while current is not None:
            path.append(current)
            current = self.nodes[current].parent
        return path[::-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": [asdict(n) for n in self.nodes],
            "final_path": list(self.final_path),
            "iterations": self.iterations,
            "iteration_budget": self.iteration_budget,
        }
