"""The report's plots: success by site (small multiples, with standard errors), success against cost,
success after each trial, and success against what an episode spends (tokens, cost, or wall time
where the cost is unknown) with the spread over seeds.

Each plot is a function of the summary in :data:`PLOTS` that writes its PNG and returns a :class:`Plot`,
or says why it left the plot out (a plot that would carry nothing is not drawn), or returns None when
the study has nothing of its kind (no multi-trial method). A new plot is one function added there.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webarena_gym.experiments.report.summary import SITE_TITLES
from webarena_gym.experiments.report.tables import columns, policy_label, row_cost_status

DPI = 100
PANEL_COLUMNS = 4  # small multiples per row: four fit the report's width with readable labels
LABEL_CHARS = 28  # policy labels wrap here on the by-site panels' axis


@dataclass(frozen=True)
class Plot:
    """One figure of the report: its file name, or (``file`` None) the reason it was left out."""

    title: str
    file: str | None = None
    omitted: str = ""
    wide: bool = False  # shown across the page's width instead of beside another plot


def cost_points(summary: dict[str, Any]) -> tuple[list[tuple[float, float, str, bool]], list[str]]:
    """The success-against-cost plot's points (cost, success %, policy, cost is a lower bound), cheapest
    first, and the policies left off it: an unknown cost has no place on the cost axis (it is not $0)."""
    rows = summary["rows"]
    status = {r["policy"]: row_cost_status(r) for r in rows}
    points = sorted(
        (r["cost_per_task"], 100 * r["success"]["all"]["mean"], r["policy"], status[r["policy"]] == "partly unknown")
        for r in rows
        if status[r["policy"]] != "unknown"
    )
    return points, [r["policy"] for r in rows if status[r["policy"]] == "unknown"]


def plain(text: str) -> str:
    """``text`` as matplotlib shows it literally: a ``$`` would start a mathtext formula, which a label
    such as ``$a\\x$`` makes fail (and with it the whole report)."""
    return text.replace("$", r"\$")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path, name: str) -> str:
    fig.savefig(out / name, dpi=DPI)
    _pyplot().close(fig)
    return name


def by_site_plot(summary: dict[str, Any], out: Path) -> Plot:
    """One panel per site (and one for all tasks), a horizontal bar per policy: each panel keeps its
    own labels and values legible however many sites and policies the study has."""
    plt = _pyplot()
    panels = columns(summary)
    rows = summary["rows"]
    ncols = min(PANEL_COLUMNS, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    height = max(1.6, 0.42 * len(rows) + 0.9)
    fig, axes = plt.subplots(nrows, ncols, figsize=(12, height * nrows), sharey=True, squeeze=False)
    labels = [textwrap.fill(plain(policy_label(r)), LABEL_CHARS) for r in rows]
    ys = list(range(len(rows)))[::-1]  # the first policy on top, as in the tables
    for ax, site in zip(axes.flat, panels, strict=False):
        means = [100 * r["success"][site]["mean"] for r in rows]
        errs = [100 * r["success"][site]["stderr"] for r in rows]
        ax.barh(ys, means, xerr=errs, capsize=2, color=[f"C{i % 10}" for i in range(len(rows))])
        for y, m, e, r in zip(ys, means, errs, rows, strict=True):
            text = f"{m:.0f}" if r["success"][site]["n_tasks"] else "-"
            ax.text(min(m + e, 100) + 2, y, text, va="center", fontsize=9)  # beyond the error bar
        ax.set_xlim(0, 115)
        ax.set_xticks([0, 50, 100])
        ax.set_title(f"{SITE_TITLES[site]} ({summary['task_counts'][site]} tasks)", fontsize=10)
        ax.set_yticks(ys, labels, fontsize=9)
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("success rate (%)", fontsize=9)
    fig.tight_layout()
    return Plot("Success by site", _save(fig, out, "success_by_site.png"), wide=True)


def cost_plot(summary: dict[str, Any], out: Path) -> Plot:
    """Success against cost per task, with the Pareto frontier; left out when no policy has a known cost
    above $0 (every point would sit at $0 or be off the axis)."""
    title, name = "Success against cost", "success_vs_cost.png"
    points, unknown = cost_points(summary)
    if not any(cost > 0 for cost, _, _, _ in points):
        (out / name).unlink(missing_ok=True)  # a rebuilt report keeps no plot of an earlier state
        parts = [f"{len(points)} at $0"] * bool(points) + [f"{len(unknown)} of unknown price"] * bool(unknown)
        reason = "; ".join(parts)
        return Plot(title, omitted=f"{title}: not drawn, no policy has a known cost above $0 ({reason}).")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for cost, sr, label, bound in points:
        ax.scatter([cost], [sr], facecolors="none" if bound else None, edgecolors="C0" if bound else None)
        text = ("≥ " if bound else "") + plain(label)
        ax.annotate(text, (cost, sr), fontsize=8, xytext=(4, 4), textcoords="offset points")
    if unknown:
        fig.text(0.01, 0.01, "cost unknown (not plotted): " + plain("; ".join(unknown)), fontsize=7, color="grey")
    frontier, best = [], -1.0
    for cost, sr, _, _ in points:  # cheapest first: a point is on the frontier if it beats all cheaper ones
        if sr > best:
            frontier.append((cost, sr))
            best = sr
    if len(frontier) > 1:
        ax.plot(*zip(*frontier, strict=True), linestyle="--", linewidth=1, color="grey", label="Pareto frontier")
        ax.legend(fontsize=8)
    ax.set_xlabel("cost per task ($)")
    ax.set_ylabel("success rate (%)")
    ax.set_title(title)
    fig.tight_layout()
    return Plot(title, _save(fig, out, name))


def trial_plot(summary: dict[str, Any], out: Path) -> Plot | None:
    """Success after each trial, one line per multi-trial policy (Devil's Advocate's Fig. 6); None if none."""
    curves = [(policy_label(r), r["success_after_trial"]) for r in summary["rows"] if r.get("success_after_trial")]
    if not curves:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, curve in curves:
        ax.plot(range(1, len(curve) + 1), [100 * v for v in curve], marker="o", label=plain(label))
    ax.set_xlabel("trial")
    ax.set_ylabel("success rate (%)")
    ax.set_ylim(0, 105)
    ax.set_xticks(range(1, max(len(c) for _, c in curves) + 1))
    ax.legend(fontsize=8)
    ax.set_title("Success after each trial")
    fig.tight_layout()
    return Plot("Success after each trial", _save(fig, out, "success_after_trial.png"))


def spend_axes(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The spend axes of :func:`spend_plot` as (per-seed key, axis label): tokens always, then cost
    when every LLM policy's cost is known, else wall time (an unknown cost is no point on a cost axis)."""
    seeds = [s for r in summary["rows"] for s in r.get("by_seed", ())]
    axes = [("tokens_per_task", "LLM tokens per task")]
    if seeds and all(s["cost_per_task"] is not None for s in seeds):
        return [*axes, ("cost_per_task", "cost per task ($)")]
    return [*axes, ("wall_time_per_task_s", "wall time per task (s; cost unknown)")]


def spend_plot(summary: dict[str, Any], out: Path) -> Plot | None:
    """Success against tokens and against cost (or wall time) per policy, the budget-matched view of a
    comparison: each seed a faint point, the mean over seeds a marker with bars of one standard deviation
    over seeds on both axes. None when no policy called a model."""

    rows = [r for r in summary["rows"] if r.get("by_seed") and r.get("llm_tokens_per_task")]
    if not rows:
        return None
    plt = _pyplot()
    axes_ = spend_axes(summary)
    fig, axes = plt.subplots(1, len(axes_), figsize=(5.5 * len(axes_), 4), squeeze=False)
    for ax, (key, label) in zip(axes[0], axes_, strict=True):
        for i, row in enumerate(rows):
            seeds = [s for s in row["by_seed"] if s[key] is not None]
            if not seeds:
                continue
            xs, ys = [s[key] for s in seeds], [100 * s["success"] for s in seeds]
            color = f"C{i % 10}"
            ax.scatter(xs, ys, color=color, alpha=0.3, s=14)
            ax.errorbar(
                _mean(xs),
                _mean(ys),
                xerr=_std(xs),
                yerr=_std(ys),
                fmt="o",
                color=color,
                capsize=3,
                label=plain(policy_label(row)),
            )
        ax.set_xlabel(label)
        ax.set_ylabel("success rate (%)")
        ax.set_ylim(-5, 105)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Success against spend (mean over seeds ± one standard deviation; faint: each seed)", fontsize=9)
    fig.tight_layout()
    return Plot("Success against spend", _save(fig, out, "success_vs_spend.png"), wide=True)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _std(values: list[float]) -> float:
    mean = _mean(values)
    return (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else 0.0


PLOTS: list[Callable[[dict[str, Any], Path], Plot | None]] = [by_site_plot, cost_plot, trial_plot, spend_plot]


def write_plots(summary: dict[str, Any], out: Path) -> list[Plot]:
    """Every plot of :data:`PLOTS` the study has something for (drawn or left out with its reason)."""
    return [plot for make in PLOTS if (plot := make(summary, out)) is not None]
