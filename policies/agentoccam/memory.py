"""AgentOccam's memory: the branch/prune plan tree, the per-step records, and the
interaction history rendered from them with pivotal-node replay."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from webarena_gym.policies.agentoccam.text import texts


class PlanError(ValueError):
    """A planning command names no visible plan."""


@dataclass
class PlanNode:
    id: int
    text: str
    level: int
    url: str
    step: int
    parent: int | None = None
    children: list[int] = field(default_factory=list)
    visible: bool = True
    notes: list[tuple[int, str]] = field(default_factory=list)  # (step index, text)
    resume_reasons: list[str] = field(default_factory=list)
    steps_taken: list[int] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"[{self.id}] {self.text}"


class PlanTree:
    """The plan tree: the objective as root plan; ``branch`` adds a subplan and makes it active, ``prune``
    returns to an earlier plan (whose steps then include what was tried beneath it)."""

    def __init__(self, objective: str, url: str):
        self.nodes: dict[int, PlanNode] = {0: PlanNode(0, f'Find the solution to "{objective}"', 0, url, 0)}
        self.active_id = 0

    @property
    def active(self) -> PlanNode:
        return self.nodes[self.active_id]

    def _visible(self, plan_id: str | int) -> PlanNode:
        node = self.nodes.get(int(plan_id))
        if node is None or not node.visible:
            raise PlanError(f"there is no plan [{plan_id}] in PREVIOUS PLANS")
        return node

    def branch(self, parent_id: str | int, intent: str, url: str, step: int) -> PlanNode:
        parent = self._visible(parent_id)
        node = PlanNode(max(self.nodes) + 1, intent.strip(), parent.level + 1, url, step, parent=parent.id)
        self.nodes[node.id] = node
        parent.children.append(node.id)
        self.active_id = node.id
        return node

    def prune(self, plan_id: str | int, reason: str) -> PlanNode:
        node = self._visible(plan_id)
        former = self._subtree(node.id)
        steps = {n.step for n in former} | {s for n in former for s in n.steps_taken}
        for other in former[1:]:
            other.visible = False
        if node.parent is not None:
            siblings = self.nodes[node.parent].children
            for later in siblings[siblings.index(node.id) + 1 :]:
                for hidden in self._subtree(later):
                    hidden.visible = False
        node.notes.clear()
        node.steps_taken = sorted(steps)
        node.resume_reasons.append(reason.strip())
        self.active_id = node.id
        return node

    def note(self, text: str, step: int) -> None:
        self.active.notes.append((step, text.strip()))

    def record(self, step: int) -> None:
        """A non-planning step belongs to the active plan's history."""
        self.active.steps_taken.append(step)

    def _subtree(self, plan_id: int) -> list[PlanNode]:
        out, stack = [], [plan_id]
        while stack:
            node = self.nodes[stack.pop()]
            out.append(node)
            stack.extend(reversed(node.children))
        return out

    def render(self) -> str:
        """PREVIOUS PLANS: visible plans in pre-order, one tab per level, notes under their plan."""
        lines: list[str] = []
        for node in self._subtree(0):
            if not node.visible:
                continue
            indent = "\t" * node.level
            line = f"{indent}[{node.id}] {'(Active Plan) ' if node.id == self.active_id else ''}{node.text}"
            if node.resume_reasons:
                reasons = " ".join(f"{i}. {r}" for i, r in enumerate(node.resume_reasons))
                line += f" # resumed {len(node.resume_reasons)} time(s); reasons: {reasons}"
            lines.append(line)
            lines += [f"{indent}Note {i} (step {step}): {text}" for i, (step, text) in enumerate(node.notes)]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"active": self.active_id, "nodes": [asdict(n) for n in self.nodes.values()]}


@dataclass
class StepRecord:
    """What one executed step leaves for the history (``page`` is the id-free page)."""

    url: str
    action: str
    reason: str
    description: str
    highlight: str
    plan: str
    plan_id: int
    page: str = field(default="", repr=False)

    def public(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "page"}


def replayed_observation(record: StepRecord, current_page: str, max_words: int) -> str:
    """A step's page in the history: a placeholder if the page is unchanged, else the pivotal highlight
    when short enough, else the model's own description of that page."""
    if record.page and record.page == current_page:
        return texts()["same_page"]
    if record.highlight and len(record.highlight.split()) < max_words:
        return record.highlight
    return record.description


def render_history(
    records: list[StepRecord], current_page: str, *, depth: int | None, max_words: int, show_plan: bool
) -> str:
    """The ``<step_k_interaction>`` blocks; only the last ``depth`` steps (None: all) replay pages."""
    blocks = []
    verbose_from = 0 if depth is None else len(records) - depth
    for k, rec in enumerate(records):
        observation = replayed_observation(rec, current_page, max_words) if k >= verbose_from else rec.description
        lines = [f"<step_{k}_interaction>", "OBSERVATION:", observation]
        if show_plan and rec.plan_id != 0:
            lines += ["ACTIVE PLAN:", rec.plan]
        lines += ["REASON FOR ACTION:", rec.reason, "ACTION:", rec.action, f"</step_{k}_interaction>"]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
