"""The per-episode LLM budget: limits on calls, prompt+completion tokens and cost, for every role.

Why in the LLM layer: every role of every method (actors, planners, judges, reflectors, a multi-trial
method's later trials, a search's evaluators) calls through :class:`llm.client.LLM`, so one check here
bounds them all alike, which is what makes methods comparable at a matched budget.

A call is refused *before* it is sent once a limit is reached (:class:`LLMBudgetExhausted`), so the
number of calls never exceeds its limit; tokens and cost are known only after a call, so the call that
crosses those limits completes and the next one is refused. Cached replays count what the call cost
when it was made, so a replayed episode stops where the original did.
"""

from __future__ import annotations

from dataclasses import dataclass

from webarena_gym.llm.errors import LLMBudgetExhausted, LLMError
from webarena_gym.llm.tokens import price

# The budget names, as the trajectory's ``budget_exhausted`` and the policies' options spell them.
LLM_BUDGETS = ("llm_calls", "llm_tokens", "llm_cost")


@dataclass(frozen=True)
class LLMLimits:
    """Per-episode limits (None: no limit): LLM calls, prompt+completion tokens, USD."""

    llm_calls: int | None = None
    llm_tokens: int | None = None
    llm_cost: float | None = None

    def __post_init__(self) -> None:
        for name in LLM_BUDGETS:
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"max_{name} must be >= 0, got {value}")

    @property
    def any(self) -> bool:
        return any(getattr(self, name) is not None for name in LLM_BUDGETS)

    def to_dict(self) -> dict[str, float | int | None]:
        return {name: getattr(self, name) for name in LLM_BUDGETS}


@dataclass
class LLMSpent:
    """What an episode has used so far; ``cost_unknown``: a call had no price."""

    llm_calls: int = 0
    llm_tokens: int = 0
    llm_cost: float = 0.0
    cost_unknown: bool = False
    exhausted: str | None = None  # the budget that refused a call

    def to_dict(self) -> dict[str, float | int]:
        return {"llm_calls": self.llm_calls, "llm_tokens": self.llm_tokens, "llm_cost": self.llm_cost}


_UNITS = {"llm_calls": "calls", "llm_tokens": "tokens", "llm_cost": "USD"}


def check(limits: LLMLimits, spent: LLMSpent, model: str) -> None:
    """Raise :class:`LLMBudgetExhausted` when a limit is reached, and a configuration :class:`LLMError`
    when a cost limit is set for a model without a price: a limit that cannot be enforced must not
    pass silently (a local model has no price; its budget is calls or tokens)."""
    if limits.llm_cost is not None and (spent.cost_unknown or price(model, 1, 1) is None):
        raise LLMError(
            f"the cost budget (--max-cost / max_llm_cost) cannot be enforced: there is no price for model "
            f"{model!r}; budget it with --max-tokens (max_llm_tokens) or --max-llm-calls (max_llm_calls) instead",
            kind="configuration",
        )
    for name in LLM_BUDGETS:
        limit = getattr(limits, name)
        if limit is not None and getattr(spent, name) >= limit:
            what = name.removeprefix("llm_")
            raise LLMBudgetExhausted(name, f"the LLM {what} budget ({limit} {_UNITS[name]}) is spent")


def charge(spent: LLMSpent, prompt_tokens: int, completion_tokens: int, cost: float | None) -> None:
    spent.llm_tokens += prompt_tokens + completion_tokens
    if cost is None:
        spent.cost_unknown = True
    else:
        spent.llm_cost += cost
