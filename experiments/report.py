"""Reports rebuilt from a study's store: tables, plots and an HTML report with a trajectory viewer.

The success table follows the layout of AgentOccam's Table 2 (one row per policy; overall and per-site
columns, each headed with its task count), with a standard error next to every rate. Beside it stand
what papers rarely print: steps, LLM calls and prompt tokens per step, cost and wall time per task.

A second table groups the results by WebArena intent template: local tasks count under the WebArena
template they instantiate, real tasks under their own, so a policy's local and real results on one
template stand side by side.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
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


def _rate(results: list[EpisodeResult]) -> Rate:
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


def summarize(study: str | os.PathLike) -> dict[str, Any]:
    """Everything the tables and plots show, as plain data (also written as summary.json)."""
    store = StudyStore(study)
    manifest = store.read_manifest()
    latest = list(store.latest().values())
    labels = [p["label"] for p in manifest["policies"]]
    sites = [s for s in SITE_ORDER if any(r.site_group == s for r in latest)]
    rows = []
    for label in labels:
        mine = [r for r in latest if r.policy == label]
        steps = sum(r.n_steps for r in mine)
        n = len(mine)
        rows.append(
            {
                "policy": label,
                "episodes": n,
                "errors": sum(1 for r in mine if r.status == "error"),
                "success": {"all": _rate(mine).__dict__}
                | {s: _rate([r for r in mine if r.site_group == s]).__dict__ for s in sites},
                "avg_steps": steps / n if n else 0.0,
                "llm_calls_per_step": sum(r.llm_calls for r in mine) / steps if steps else 0.0,
                "prompt_tokens_per_step": sum(r.prompt_tokens for r in mine) / steps if steps else 0.0,
                "cost_per_task": sum(r.cost for r in mine) / n if n else 0.0,
                "cost_known": all(r.cost_known for r in mine),
                "wall_time_per_task_s": sum(r.wall_time_s for r in mine) / n if n else 0.0,
            }
        )
    counts = {s: len({r.env_id for r in latest if r.site_group == s}) for s in sites}
    counts["all"] = len({r.env_id for r in latest})
    return {
        "study": str(store.root),
        "manifest": manifest,
        "sites": sites,
        "task_counts": counts,
        "rows": rows,
        "by_template": template_rows(latest, labels),
    }


LOCAL_PREFIX = "webarena/local."


def _webarena_template(r: EpisodeResult) -> tuple[str, int | None]:
    """("local" | "webarena", the WebArena intent template the episode's task instantiates)."""
    from envs.local import registry

    if not r.env_id.startswith(LOCAL_PREFIX):
        return "webarena", r.template_id
    try:
        return "local", registry.webarena_template_id(registry.get_task(int(r.env_id[len(LOCAL_PREFIX) :])))
    except (KeyError, ValueError):  # a task the suite no longer has
        return "local", None


def template_rows(latest: list[EpisodeResult], labels: list[str]) -> list[dict[str, Any]]:
    """One row per WebArena intent template the study touched: its text, and per policy the local and the
    real success rate (local-only tasks, which instantiate no WebArena template, are left out)."""
    from envs.local.registry import webarena_templates

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
                label: {suite: _rate(groups[template].get((label, suite), [])).__dict__ for suite in TEMPLATE_SUITES}
                for label in labels
            },
        }
        for template in sorted(groups)
    ]


TEMPLATE_SUITES = ("local", "webarena")


def _template_header(summary: dict[str, Any]) -> list[str]:
    labels = [p["label"] for p in summary["manifest"]["policies"]]
    return ["Template", "Intent template"] + [f"{label} ({suite})" for label in labels for suite in TEMPLATE_SUITES]


def _template_cells(row: dict[str, Any], summary: dict[str, Any]) -> list[str]:
    labels = [p["label"] for p in summary["manifest"]["policies"]]
    rates = [Rate(**row["results"][label][suite]) for label in labels for suite in TEMPLATE_SUITES]
    return [str(row["template"]), row["intent_template"]] + [f"{r.cell()} (n={r.n_tasks})" for r in rates]


def template_markdown(summary: dict[str, Any]) -> str:
    header = _template_header(summary)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += [
        "| " + " | ".join(c.replace("|", "\\|") for c in _template_cells(r, summary)) + " |"
        for r in summary["by_template"]
    ]
    note = (
        "Success rate in % ± standard error over the template's tasks (n), local tasks under the WebArena "
        "template they instantiate; local-only tasks are not listed."
    )
    return "\n".join(lines) + "\n\n" + note + "\n"


def _columns(summary: dict[str, Any]) -> list[str]:
    return [*summary["sites"], "all"]


def _header(summary: dict[str, Any]) -> list[str]:
    counts = summary["task_counts"]
    return (
        ["Policy"]
        + [f"{SITE_TITLES[s]} ({counts[s]})" for s in _columns(summary)]
        + ["Steps", "LLM calls/step", "Prompt tok/step", "Cost/task ($)", "Time/task (s)", "Errors"]
    )


def _cells(row: dict[str, Any], summary: dict[str, Any]) -> list[str]:
    cost = f"{row['cost_per_task']:.4f}" + ("" if row["cost_known"] else "*")
    return (
        [row["policy"]]
        + [Rate(**row["success"][s]).cell() for s in _columns(summary)]
        + [
            f"{row['avg_steps']:.1f}",
            f"{row['llm_calls_per_step']:.2f}",
            f"{row['prompt_tokens_per_step']:.0f}",
            cost,
            f"{row['wall_time_per_task_s']:.1f}",
            str(row["errors"]),
        ]
    )


def markdown_table(summary: dict[str, Any]) -> str:
    header = _header(summary)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cells(r, summary)) + " |" for r in summary["rows"]]
    notes = [
        "Success rate in % ± standard error over tasks (seeds averaged per task); errored episodes count as failures.",
    ]
    if any(not r["cost_known"] for r in summary["rows"]):
        notes.append(
            "* cost partly unknown for this model: tokens are counted, cost only where litellm knows the price."
        )
    notes.append(f"Ordering: {summary['manifest'].get('ordering', '')}")
    return "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"


def _plots(summary: dict[str, Any], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = _columns(summary)
    rows = summary["rows"]
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(cols)), 4))
    width = 0.8 / max(1, len(rows))
    for i, row in enumerate(rows):
        xs = [j + i * width for j in range(len(cols))]
        ys = [100 * row["success"][c]["mean"] for c in cols]
        errs = [100 * row["success"][c]["stderr"] for c in cols]
        ax.bar(xs, ys, width, yerr=errs, capsize=2, label=row["policy"])
    ax.set_xticks([j + width * (len(rows) - 1) / 2 for j in range(len(cols))])
    ax.set_xticklabels([SITE_TITLES[c] for c in cols], rotation=20)
    ax.set_ylabel("success rate (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    ax.set_title("Success by site")
    fig.tight_layout()
    fig.savefig(out / "success_by_site.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    points = sorted((r["cost_per_task"], 100 * r["success"]["all"]["mean"], r["policy"]) for r in rows)
    for cost, sr, label in points:
        ax.scatter([cost], [sr])
        ax.annotate(label, (cost, sr), fontsize=8, xytext=(4, 4), textcoords="offset points")
    frontier, best = [], -1.0
    for cost, sr, _ in points:  # cheapest first: a point is on the frontier if it beats all cheaper ones
        if sr > best:
            frontier.append((cost, sr))
            best = sr
    if len(frontier) > 1:
        ax.plot(*zip(*frontier, strict=True), linestyle="--", linewidth=1, color="grey", label="Pareto frontier")
        ax.legend(fontsize=8)
    ax.set_xlabel("cost per task ($)")
    ax.set_ylabel("success rate (%)")
    ax.set_title("Success against cost")
    fig.tight_layout()
    fig.savefig(out / "success_vs_cost.png", dpi=110)
    plt.close(fig)
    return ["success_by_site.png", "success_vs_cost.png"]


def build_report(study: str | os.PathLike) -> Path:
    """Write report/ (summary.md/.csv/.json, PNG plots, index.html + episode pages) and return its path."""
    from experiments.viewer import write_html

    summary = summarize(study)
    out = Path(study) / "report"
    out.mkdir(parents=True, exist_ok=True)
    md = markdown_table(summary)
    (out / "summary.md").write_text(md)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    with open(out / "summary.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(_header(summary))
        w.writerows(_cells(r, summary) for r in summary["rows"])
    (out / "by_template.md").write_text(template_markdown(summary))
    with open(out / "by_template.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(_template_header(summary))
        w.writerows(_template_cells(r, summary) for r in summary["by_template"])
    plots = _plots(summary, out)
    write_html(StudyStore(study), summary, plots, out)
    return out
