"""A study's results as plain data: success rates with standard errors per policy and site, and
per-policy steps, calls, tokens, cost and time (what every table and plot of the report shows).

Episodes the infrastructure failed (``status == "error"``: the model provider or its configuration,
the browser, the sites, the judge, a timeout) are left out of the success rates by default and
counted apart (``errors``, ``error_kinds``; every errored episode with its message in ``summary["errors"]``);
``errors_as_failures=True`` counts them as failures.
Cost is ``"known"``, ``"partly unknown"`` (a lower bound) or ``"unknown"`` (litellm has no price for
the model, or the episode ended without reporting): an unknown cost is never shown as $0.

Results are also grouped by WebArena intent template: a local task counts under the WebArena template it
instantiates, a real task under its own, so a policy's local and real results on one template stand side
by side (local-only tasks, which instantiate none, are left out of that grouping).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any

from webarena_gym.envs.registration import is_local
from webarena_gym.experiments.report.agreement import agreement
from webarena_gym.experiments.reproducibility import record_groups
from webarena_gym.experiments.rescore import load_rescored
from webarena_gym.experiments.store import EpisodeResult, StudyStore
from webarena_gym.llm.budget import LLM_BUDGETS

SITE_ORDER = ("shopping", "shopping_admin", "gitlab", "map", "reddit", "wikipedia", "multisite", "miniwob")
SITE_TITLES = {
    "shopping": "Shopping",
    "shopping_admin": "Shopping Admin",
    "gitlab": "GitLab",
    "map": "Map",
    "reddit": "Reddit",
    "wikipedia": "Wikipedia",
    "multisite": "Multisite",
    "miniwob": "MiniWoB++",
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


_BUDGETS = ("decisions", "interactions", *LLM_BUDGETS)


def _llm_limits(policy: dict[str, Any]) -> dict[str, float]:
    """The LLM budget a study's policy ran under (its ``max_llm_*`` options), by budget name."""
    config = policy.get("config") or {}
    return {b: config[f"max_{b}"] for b in LLM_BUDGETS if config.get(f"max_{b}") is not None}


def _by_seed(mine: list[EpisodeResult], judged: list[EpisodeResult]) -> list[dict[str, Any]]:
    """Per seed: the success rate and what a task cost (tokens, USD, wall time), for plots of success
    against spend that show the spread over seeds; ``cost`` is None when any of the seed's costs is unknown."""
    out = []
    for seed in sorted({r.seed for r in mine}):
        ran = [r for r in mine if r.seed == seed]
        n = len(ran)
        out.append(
            {
                "seed": seed,
                "success": rate([r for r in judged if r.seed == seed]).mean,
                "tokens_per_task": sum(r.prompt_tokens + r.completion_tokens for r in ran) / n,
                "cost_per_task": sum(r.cost for r in ran) / n if all(r.cost_known for r in ran) else None,
                "wall_time_per_task_s": sum(r.wall_time_s for r in ran) / n,
            }
        )
    return out


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


def _policy_counters(results: list[EpisodeResult]) -> dict[str, float]:
    """Each counter the policy reports (``EpisodeResult.policy_counters``), per task."""
    totals: dict[str, float] = {}
    for r in results:
        for key, value in r.policy_counters.items():
            totals[key] = totals.get(key, 0.0) + value
    n = len(results) or 1
    return {key: value / n for key, value in totals.items()}


def _success_after_trial(results: list[EpisodeResult]) -> list[float]:
    """Success rate after k trials (k = 1, 2, ...): the share of episodes whose latest trial up to k was
    scored a success by the loop's report-only verdicts (an episode that ended earlier keeps its last
    verdict); [] for single-trial methods. Not best-of-k: a later trial can undo an earlier success (a
    state-changing task the agent judged unfinished, then restarted), so the curve may drop, as the
    paper's curves do (Devil's Advocate, Fig. 6), and its last point is the episodes' final verdict."""
    if not any(r.trial_scores for r in results):
        return []
    longest = max(len(r.trial_scores) for r in results)
    curve = []
    for k in range(1, longest + 1):
        solved = sum(1 for r in results if r.trial_scores and (r.trial_scores[:k][-1] or 0.0) >= 1.0)
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


def _action_counts(results: list[EpisodeResult]) -> dict[str, Any]:
    """Commands decided on over all episodes, and the commands the episodes offered."""
    counts: dict[str, int] = {}
    offered: set[str] = set()
    for r in results:
        offered.update(r.commands)
        for name, n in r.action_counts.items():
            counts[name] = counts.get(name, 0) + n
    return {"counts": counts, "offered": sorted(offered)}


def _tokens_per_step(results: list[EpisodeResult]) -> float | None:
    steps = sum(r.n_steps for r in results)
    return sum(r.observation_tokens for r in results) / steps if steps else None


def _steps_by_outcome(results: list[EpisodeResult]) -> dict[str, float | None]:
    """Mean steps over all, successful and failed episodes (Plan-and-Act's A.11 breakdown); None when none."""

    def mean(group: list[EpisodeResult]) -> float | None:
        return sum(r.n_steps for r in group) / len(group) if group else None

    done = [r for r in results if r.status == "done"]
    return {
        "all": mean(done),
        "success": mean([r for r in done if r.success]),
        "failure": mean([r for r in done if not r.success]),
    }


def _trial_stats(results: list[EpisodeResult]) -> dict[str, float]:
    """Devil's Advocate's Table 1 over the episodes that ran trials: mean actions in the first and in the
    last trial, mean plan revisions (trials after the first), and how many episodes restarted a trial on
    real WebArena (where a restart cannot undo what earlier trials changed on the sites); {} for none."""
    tried = [r for r in results if r.trial_actions]
    if not tried:
        return {}
    n = len(tried)
    return {
        "episodes": n,
        "actions_first_trial": sum(r.trial_actions[0] for r in tried) / n,
        "actions_last_trial": sum(r.trial_actions[-1] for r in tried) / n,
        "plan_revisions": sum(len(r.trial_actions) - 1 for r in tried) / n,
        "real_site_restarts": sum(1 for r in tried if len(r.trial_actions) > 1 and not is_local(r.env_id)),
    }


def _search_use(results: list[EpisodeResult]) -> dict[str, Any]:
    """Plan-MCTS's efficiency columns: the share of the iteration budget used (Table 3's "Budget Util",
    episodes of search methods only), atomic actions on the delivered path ("Step Len" / "Path Length")
    and tokens per task (Fig. 4's compute axis); None where no episode has the figure."""

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    used = [
        r.search_iterations / r.search_budget for r in results if r.search_budget and r.search_iterations is not None
    ]
    return {
        "budget_util": mean(used),
        "path_length": mean([float(r.path_length) for r in results if r.path_length is not None]),
        "tokens_per_task": mean([float(r.prompt_tokens + r.completion_tokens) for r in results]),
    }


def summarize(study: str | os.PathLike, *, errors_as_failures: bool = False) -> dict[str, Any]:
    """Everything the tables and plots show, as plain data (also written as summary.json)."""
    store = StudyStore(study)
    manifest = store.read_manifest()
    latest = list(store.latest().values())
    labels = [p["label"] for p in manifest["policies"]]
    sites = [s for s in SITE_ORDER if any(r.site_group == s for r in latest)]
    rows = []
    for policy, label in zip(manifest["policies"], labels, strict=True):
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
                "llm_limits": _llm_limits(policy),
                "llm_calls_per_task": sum(r.llm_calls for r in mine) / n if n else 0.0,
                "llm_tokens_per_task": sum(r.prompt_tokens + r.completion_tokens for r in mine) / n if n else 0.0,
                "by_seed": _by_seed(mine, judged),
                "oracle_assisted": sum(1 for r in mine if r.oracle_assisted),
                "roles": _roles(mine),
                "success_after_trial": _success_after_trial(judged),
                "actions": _action_counts(mine),
                "observation_tokens_per_step": {"all": _tokens_per_step(mine)}
                | {s: _tokens_per_step([r for r in mine if r.site_group == s]) for s in sites},
                "trial_stats": _trial_stats(mine),
                "policy_counters": _policy_counters(mine),
                "steps_by_outcome": {"all": _steps_by_outcome(mine)}
                | {s: _steps_by_outcome([r for r in mine if r.site_group == s]) for s in sites},
                **_search_use(mine),
            }
        )
    counts = {s: len({r.env_id for r in latest if r.site_group == s}) for s in sites}
    counts["all"] = len({r.env_id for r in latest})
    order = {label: i for i, label in enumerate(labels)}
    judged_all = latest if errors_as_failures else [r for r in latest if r.status != "error"]
    return {
        "study": str(store.root),
        "manifest": manifest,
        "sites": sites,
        "task_counts": counts,
        "errors_as_failures": errors_as_failures,
        "rows": rows,
        "by_template": by_template(judged_all, labels),
        "agreement": {evaluator: agreement(rows) for evaluator, rows in load_rescored(study).items()},
        "reproducibility": {
            "study": manifest.get("reproducibility"),
            "episodes": record_groups([r.extra["reproducibility"] for r in latest if r.extra.get("reproducibility")]),
        },
        "errors": [
            {
                "key": r.key,
                "policy": r.policy,
                "env_id": r.env_id,
                "seed": r.seed,
                "kind": r.error_kind or "unknown",
                "message": r.err_msg or "",
            }
            for r in sorted(latest, key=lambda r: (order.get(r.policy, len(order)), r.task_id, r.seed))
            if r.status == "error"
        ],
    }


LOCAL_PREFIX = "webarena/local."
# WebArena's own tasks (WebArena-Lite and WebArena-Verified keep their template ids)
REAL_PREFIXES = ("webarena/", "webarena-lite/", "webarena-verified/")
TEMPLATE_SUITES = ("local", "webarena")


def _webarena_template(r: EpisodeResult) -> tuple[str, int | None]:
    """("local" | "webarena", the WebArena intent template the episode's task instantiates).

    A local episode is looked up in the suite's task files (its recorded template id may predate the link
    to WebArena's ids); a task the suite no longer has, or one of another suite (MiniWoB++), counts under
    none.
    """
    from webarena_gym.envs.local import registry

    if not r.env_id.startswith(LOCAL_PREFIX):
        return "webarena", r.template_id if r.env_id.startswith(REAL_PREFIXES) else None
    try:
        return "local", registry.webarena_template_id(registry.get_task(int(r.env_id[len(LOCAL_PREFIX) :])))
    except (KeyError, ValueError):
        return "local", None


def by_template(latest: list[EpisodeResult], labels: list[str]) -> list[dict[str, Any]]:
    """One row per WebArena intent template the study touched: its text and, per policy, the success rate
    on the local tasks and on the real tasks of that template."""
    from webarena_gym.envs.local.registry import webarena_templates

    groups: dict[int, dict[tuple[str, str], list[EpisodeResult]]] = {}
    for r in latest:
        suite, template = _webarena_template(r)
        if template is not None:
            groups.setdefault(template, {}).setdefault((r.policy, suite), []).append(r)
    texts = webarena_templates()
    return [
        {
            "template": template,
            "intent_template": texts.get(template, ("",))[0],
            "results": {
                label: {suite: rate(groups[template].get((label, suite), [])).__dict__ for suite in TEMPLATE_SUITES}
                for label in labels
            },
        }
        for template in sorted(groups)
    ]
