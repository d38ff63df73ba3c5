"""The Plan-MCTS policy class and its named variants (see the package docstring)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from webarena_gym.llm import CallSettings
from webarena_gym.policies.base import Decision, EnvHandle, Obs, Policy, TaskSpec, build_llm, register_policy
from webarena_gym.policies.plan_mcts.config import SearchConfig
from webarena_gym.policies.plan_mcts.prompts import Context, action_specs
from webarena_gym.policies.plan_mcts.search import PlanSearch, summary
from webarena_gym.policies.search_tree import SearchTree
from webarena_gym.wrappers.presets import PRESETS

SEARCH_OPTIONS = frozenset(f.name for f in fields(SearchConfig))
# Decoding per role (UNSPECIFIED in the paper; docs/methods/plan_mcts.md): diverse Planner candidates, a
# deterministic Operator, Micro check and Reflector, and Macro samples that can differ (they are
# averaged). Every role's reply is bounded.
ROLES = {
    "planner": CallSettings(temperature=0.7, max_tokens=1024),
    "operator": CallSettings(temperature=0.0, max_tokens=1024),
    "micro": CallSettings(temperature=0.0, max_tokens=512),
    "macro": CallSettings(temperature=0.7, max_tokens=512),
    "reflector": CallSettings(temperature=0.0, max_tokens=512),
}
ACTION_DEPTH = 10  # action-level edges: one action per level (the paper gives no depth); N=10 bounds it anyway


@register_policy("plan_mcts")
@register_policy("plan_mcts_micro_only", reward="micro")
@register_policy("plan_mcts_macro_only", reward="macro")
@register_policy("plan_mcts_no_refinement", refinement="none")
@register_policy("plan_mcts_reflection", refinement="reflection")
@register_policy("plan_mcts_raw_history", context="raw")
@register_policy("plan_search", search="beam")
@register_policy("action_mcts", granularity="action", refinement="none", max_depth=ACTION_DEPTH)
@register_policy("action_search", granularity="action", search="beam", refinement="none", max_depth=ACTION_DEPTH)
class PlanMCTSPolicy(Policy):
    """Plan-MCTS: the whole search runs inside the first ``act`` through the handle; the decision
    delivers the chosen path's answer (``stop [...]``). One decision, many interactions.

    Options: every :class:`SearchConfig` field (``iterations``, ``max_depth``, ``width``, ``c`` ...),
    ``screenshots`` (send the marked screenshots; off for text-only models), ``preset``,
    ``max_steps`` / ``max_interactions`` (the rollout budgets; no interaction cap by default: N
    iterations of at most ``operator_steps`` actions bound the exploration), and the LLM options of
    :func:`policies.base.build_llm` with the roles ``planner``, ``operator``, ``micro``, ``macro``,
    ``reflector`` (e.g. ``macro_model=...``, ``planner_temperature=1.0``).
    """

    preset = "set_of_marks"

    def __init__(
        self,
        *,
        screenshots: bool = True,
        preset: str = "set_of_marks",
        max_steps: int = 30,
        max_interactions: int | None = None,
        **options: Any,
    ) -> None:
        search = {k: options.pop(k) for k in list(options) if k in SEARCH_OPTIONS}
        self.search_config = SearchConfig(**search)
        self.screenshots = screenshots
        self.preset = preset
        self.max_steps = max_steps
        self.max_interactions = max_interactions
        self.llm = build_llm(ROLES, **options)
        self.task: TaskSpec | None = None
        self.search: PlanSearch | None = None
        self.answer: str | None = None

    def config(self) -> dict[str, Any]:
        return {
            "llm": self.llm.describe(),
            "search": self.search_config.to_dict(),
            "screenshots": self.screenshots,
            "max_steps": self.max_steps,
            "max_interactions": self.max_interactions,
        }

    def reset(self, task: TaskSpec) -> None:
        self.task = task
        self.search = None
        self.answer = None

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        assert self.task is not None, "reset() first"
        if self.answer is not None:  # asked again after the search (its answer was not taken): repeat it
            return Decision(action=stop(self.answer), thought="the search already answered")
        ctx = Context(
            goal=self.task.goal,
            commands=described_commands(self.task.commands or PRESETS[self.preset].actions),
            raw_history=self.search_config.context == "raw",
            images=self.screenshots,
        )
        self.search = PlanSearch(self.search_config, self.llm, ctx, handle)
        answer = self.search.run(obs)
        record = summary(self.search)
        if answer is None:  # the environment ended the episode under the search
            return Decision(action=None, thought=self.search.stopped, parsed=record, error=self.search.stopped)
        self.answer = answer
        thought = f"search stopped: {self.search.stopped}; {record['iterations']} iterations; answer {answer!r}"
        return Decision(action=stop(answer), thought=thought, parsed={**record, "answer": answer})

    def state(self) -> dict[str, Any]:
        return summary(self.search) if self.search is not None else {}

    def search_tree(self) -> SearchTree | None:
        return self.search.tree if self.search is not None else None


def described_commands(enabled: tuple[str, ...]) -> tuple[str, ...]:
    """The task's commands that the Operator's action list describes (the set_of_marks preset's five;
    another preset's extra commands, such as ``note``, are not offered), ``stop`` always included."""
    known = action_specs()
    return tuple(c for c in known if c in enabled or c == "stop")


def stop(answer: str) -> str:
    """The answer command (one line: the grammar reads commands line by line)."""
    return f"stop [{' '.join(answer.split())}]"
