"""Ablation ladders: a paper's sequence of configurations, each adding one change to the one before, run
as one study (``webarena-gym compare --ablation agentoccam``).

AgentOccam's ladder (its Table 2 ablation rows; docs/methods/agentoccam.md) starts from WebArena's
chain-of-thought agent and adds, one at a time, the reduced action set, the whole page instead of the
viewport, the aligned observation, the interaction history, and planning. Each rung is a policy
configuration whose preset (``wrappers.presets``) and switches change only what that row of the paper
changes; the rows before "history" show the model no history at all, as in AgentOccam's configurations.
The paper scored every row with its rectified evaluator, which the ladder therefore selects unless the
study names another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webarena_gym.experiments.compare import PolicySpec


@dataclass(frozen=True)
class Rung:
    """One row of a ladder: the paper's name for it, the policy and its configuration, what it adds."""

    label: str
    policy: str
    config: dict[str, Any] = field(default_factory=dict)
    adds: str = ""


_FLAT = {"planning": False, "history": False}

LADDERS: dict[str, tuple[Rung, ...]] = {
    "agentoccam": (
        Rung("Vanilla", "react", {}, "WebArena's chain-of-thought agent: its actions, the viewport, 30 steps"),
        Rung(
            "↓ Actions",
            "agentoccam",
            {**_FLAT, "preset": "reduced_actions"},
            "AgentOccam's prompt and fields, click/type/scroll/stop/note/go_back/go_home only; the viewport",
        ),
        Rung("Above + X Scrolling", "agentoccam", {**_FLAT, "preset": "no_scroll"}, "no scroll: the whole page"),
        Rung(
            "Above + Obs Opt.",
            "agentoccam",
            {**_FLAT, "preset": "simplified_obs"},
            "the aligned observation (every pass of the observation wrapper)",
        ),
        Rung(
            "Above + History",
            "agentoccam",
            {"planning": False, "history": True, "preset": "history"},
            "the interaction history with pivotal-node replay",
        ),
        Rung("AgentOccam", "agentoccam", {}, "branch/prune planning"),
    ),
}

# The evaluator each ladder's paper scored with (envs: ``evaluator=``).
EVALUATORS: dict[str, str] = {"agentoccam": "agentoccam"}


def ladder(name: str, model: str | None = None, **config: Any) -> list[PolicySpec]:
    """The ladder's rows as policies of one study, labelled with the paper's row names (and ``model``);
    ``config`` is added to every row (e.g. the LLM options, a scripted LLM in tests)."""
    if name not in LADDERS:
        raise KeyError(f"unknown ablation {name!r}; known: {', '.join(LADDERS)}")
    specs = []
    for rung in LADDERS[name]:
        options = {**rung.config, **config}
        if model is not None:
            options.setdefault("model", model)
        label = f"{rung.label} [{options['model']}]" if options.get("model") else rung.label
        specs.append(PolicySpec(rung.policy, options, label))
    return specs
