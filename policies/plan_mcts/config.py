"""Plan-MCTS's search parameters: the paper's values where it reports them (N=10, d=5, k=3), the card's
recommended defaults where it does not (plan_mcts.md §5, §11), and the switches of its ablations and
baselines (§8.3, §8.4). Every field is a ``make_policy`` option of the same name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# §11: the status -> score mapping of the macro check (the paper gives only the codes A-E).
STATUS_SCORES = {"A": 1.0, "B": 0.75, "C": 0.5, "D": 0.25, "E": 0.0}
UNCLEAR_STATUS = "D"  # a macro sample that stays unreadable after the re-asks ("no confidence that the step helped")

_CHOICES = {
    "search": ("mcts", "beam"),
    "granularity": ("plan", "action"),
    "reward": ("dual", "micro", "macro"),
    "refinement": ("structural", "reflection", "none"),
    "refine_from": ("failure", "parent"),
    "context": ("semantic", "raw"),
    "final_select": ("max_q", "max_visits", "best_macro"),
}


@dataclass(frozen=True)
class SearchConfig:
    """What the search does; see docs/methods/plan_mcts.md for each field's source.

    ``iterations`` is the budget N: MCTS iterations (selection to backpropagation), or subplan
    executions for beam search. Exploration also spends the episode's interaction budget
    (``handle.step``); whichever runs out first ends the search with the best path's answer.
    """

    iterations: int = 10  # PAPER: N
    max_depth: int = 5  # PAPER: d; nodes at this depth are not expanded
    width: int = 3  # PAPER: k candidate subplans per expansion (Standard, Granular, Alternative)
    c: float = 1.0  # UNSPECIFIED -> 1.0 (UCT exploration constant)
    macro_samples: int = 3  # UNSPECIFIED -> 3 independent macro checks, averaged
    status_scores: dict[str, float] = field(default_factory=lambda: dict(STATUS_SCORES))
    operator_steps: int = 5  # UNSPECIFIED -> 5 atomic actions per subplan
    refinements: int = 1  # UNSPECIFIED -> 1 repair per failed simulation
    refine_from: str = "failure"  # UNSPECIFIED -> the post-failure state ("parent": restore it first)
    expand_after_failure: bool = False  # §11 option: a failed subplan's state becomes a node too
    early_stop: bool = True  # stop at the first success candidate
    final_select: str = "max_q"  # UNSPECIFIED -> follow the highest Q from the root
    search: str = "mcts"  # "beam": Plan Search / Action Search (Table 2)
    beam_width: int = 2  # UNSPECIFIED in the paper (beam baselines only)
    granularity: str = "plan"  # "action": edges are single atomic actions (Action MCTS / Action Search)
    reward: str = "dual"  # "micro" / "macro": the reward ablations of Table 3
    refinement: str = "structural"  # "reflection": feedback only (Table 3); "none": no refinement
    context: str = "semantic"  # "raw": every model sees the full atomic history instead of H_P (Fig. 5)
    max_reasks: int = 2  # re-asks after an unusable model answer, per call

    def __post_init__(self) -> None:
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        for name in ("iterations", "max_depth", "width", "macro_samples", "operator_steps", "beam_width"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)!r}")
        if self.refinements < 0 or self.max_reasks < 0 or self.c < 0:
            raise ValueError("refinements, max_reasks and c must not be negative")
        missing = set(STATUS_SCORES) - set(self.status_scores)
        if missing:
            raise ValueError(f"status_scores needs a score for every status code; missing {sorted(missing)}")

    @property
    def refines(self) -> int:
        """Structural repairs allowed per failed simulation (0 unless refinement is structural)."""
        return self.refinements if self.refinement == "structural" else 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
