"""A study's results as plain data: success rates with standard errors per policy and site, and
per-policy steps, calls, tokens, cost and time (what every table and plot of the report shows).

Episodes the infrastructure failed (``status == "error"``: the model provider or its configuration,
the browser, the sites, the judge, a timeout) are left out of the success rates by default and
counted apart (``errors``, ``error_kinds``); ``errors_as_failures=True`` counts them as failures.
Cost is ``"known"``, ``"partly unknown"`` (a lower bound) or ``"unknown"`` (litellm has no price for
the model, or the episode ended without reporting): an unknown cost is never shown as $0.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any

from experiments.store import EpisodeResult, StudyStore

SITE_ORDER = ("shopping", "shopping_admin", "gitlab", "map", "reddit", "wikipedia", "multisite")
SITE_TITLES = {
    "shopping": "Shopping",
    "shopping_admin": "Shopping Admin",
    "gitlab": "GitLab",
    "map": "Map",
    "reddit": "Reddit",
    "wikipedia": "Wikipedia",
    "multisite": "Multisite",
    "all": "All",
}


@dataclass
class Rate:
    """A success rate over tasks (seeds averaged per task first) with its standard error."""

    mean: float
    stderr: float
    n_tasks: int

    def cell(self) -> str:
        if not self.n_tasks:
            return "-"
        return f"{100 * self.mean:.1f} ± {100 * self.stderr:.1f}"


def rate(results: list[EpisodeResult]) -> Rate:
    per_task: dict[str, list[float]] = {}
    for r in results:
        per_task.setdefault(r.env_id, []).append(1.0 if r.success else 0.0)
    scores = [sum(v) / len(v) for v in per_task.values()]
    n = len(scores)
    if n == 0:
        return Rate(0.0, 0.0, 0)
    mean = sum(scores) / n
    var = sum((s - mean) ** 2 for s in scores) / (n - 1) if n > 1 else 0.0
    return Rate(mean, math.sqrt(var / n), n)


_BUDGETS = ("decisions", "interactions")


def _roles(results: list[EpisodeResult]) -> dict[str, dict[str, float]]:
    """Per call role, per task: calls, prompt and completion tokens, cost."""
    totals: dict[str, dict[str, float]] = {}
    for r in results:
        for role, stats in r.role_calls.items():
            row = totals.setdefault(role, dict.fromkeys(stats, 0.0))
            for key, value in stats.items():
                row[key] = row.get(key, 0.0) + value
    n = len(results) or 1
    return {role: {key: value / n for key, value in stats.items()} for role, stats in totals.items()}


def _success_after_trial(results: list[EpisodeResult]) -> list[float]:
    """Success rate after k trials (k = 1, 2, ...): the share of episodes solved in one of their first k
    trials, by the loop's report-only verdicts (Devil's Advocate's Fig. 6); [] for single-trial methods."""
    if not any(r.trial_scores for r in results):
        return []
    longest = max(len(r.trial_scores) for r in results)
    curve = []
    for k in range(1, longest + 1):
        solved = sum(1 for r in results if any((s or 0.0) >= 1.0 for s in r.trial_scores[:k]))
        curve.append(solved / len(results))
    return curve


def cost_status(results: list[EpisodeResult]) -> str:
    """``"known"``, ``"partly unknown"`` or ``"unknown"`` for the cost of these episodes.

    An episode that spent nothing (no LLM call, cost known) says nothing either way.
    """
    spending = [r for r in results if not (r.cost_known and r.llm_calls == 0 and r.cost == 0)]
    if all(r.cost_known for r in spending):
        return "known"
    if all(not r.cost_known and r.cost == 0 for r in spending):
        return "unknown"
    return "partly unknown"


def summarize(study: str | os.PathLike, *, errors_as_failures: bool = False) -> dict[str, Any]:
    """Everything the tables and plots show, as plain data (also written as summary.json)."""
    store = StudyStore(study)
    manifest = store.read_manifest()
    latest = list(store.latest().values())
    labels = [p["label"] for p in manifest["policies"]]
    sites = [s for s in SITE_ORDER if any(r.site_group == s for r in latest)]
    rows = []
    for label in labels:
        mine = [r for r in latest if r.policy == label]
        errored = [r for r in mine if r.status == "error"]
        judged = mine if errors_as_failures else [r for r in mine if r.status != "error"]
        steps = sum(r.n_steps for r in mine)
        n = len(mine)
        rows.append(
            {
                "policy": label,
                "episodes": n,
                "errors": len(errored),
                "error_kinds": dict(Counter(r.error_kind or "unknown" for r in errored).most_common()),
                "success": {"all": rate(judged).__dict__}
                | {s: rate([r for r in judged if r.site_group == s]).__dict__ for s in sites},
                "avg_steps": steps / n if n else 0.0,
                "llm_calls_per_step": sum(r.llm_calls for r in mine) / steps if steps else 0.0,
                "prompt_tokens_per_step": sum(r.prompt_tokens for r in mine) / steps if steps else 0.0,
                "cost_per_task": sum(r.cost for r in mine) / n if n else 0.0,
                "cost_known": all(r.cost_known for r in mine),
                "cost_status": cost_status(mine),
                "wall_time_per_task_s": sum(r.wall_time_s for r in mine) / n if n else 0.0,
                "interactions_per_task": sum(r.interactions for r in mine) / n if n else 0.0,
                "restores_per_task": sum(r.restores for r in mine) / n if n else 0.0,
                "budget_exhausted": {b: sum(1 for r in mine if r.budget_exhausted == b) for b in _BUDGETS},
                "oracle_assisted": sum(1 for r in mine if r.oracle_assisted),
                "roles": _roles(mine),
                "success_after_trial": _success_after_trial(mine),
            }
        )
    counts = {s: len({r.env_id for r in latest if r.site_group == s}) for s in sites}
    counts["all"] = len({r.env_id for r in latest})
    return {
        "study": str(store.root),
        "manifest": manifest,
        "sites": sites,
        "task_counts": counts,
        "errors_as_failures": errors_as_failures,
        "rows": rows,
    }
