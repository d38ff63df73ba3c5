"""The report's plots: success by site (with standard errors) and success against cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from webarena_gym.experiments.report.summary import SITE_TITLES
from webarena_gym.experiments.report.tables import columns, policy_label, row_cost_status


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


def write_plots(summary: dict[str, Any], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = columns(summary)
    rows = summary["rows"]
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(cols)), 4))
    width = 0.8 / max(1, len(rows))
    for i, row in enumerate(rows):
        xs = [j + i * width for j in range(len(cols))]
        ys = [100 * row["success"][c]["mean"] for c in cols]
        errs = [100 * row["success"][c]["stderr"] for c in cols]
        ax.bar(xs, ys, width, yerr=errs, capsize=2, label=plain(row["policy"]))
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
    points, unknown = cost_points(summary)
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
    ax.set_title("Success against cost")
    fig.tight_layout()
    fig.savefig(out / "success_vs_cost.png", dpi=110)
    plt.close(fig)
    return ["success_by_site.png", "success_vs_cost.png", *write_trial_plot(summary, out)]


def write_trial_plot(summary: dict[str, Any], out: Path) -> list[str]:
    """Success after each trial, one line per multi-trial policy (Devil's Advocate's Fig. 6); [] if none."""
    import matplotlib.pyplot as plt

    curves = [(policy_label(r), r["success_after_trial"]) for r in summary["rows"] if r.get("success_after_trial")]
    if not curves:
        return []
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
    fig.savefig(out / "success_after_trial.png", dpi=110)
    plt.close(fig)
    return ["success_after_trial.png"]
