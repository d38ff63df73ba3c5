"""The report's tables, as Markdown and as cell lists (the CSV and the HTML page use the same cells).

The success table follows the layout of AgentOccam's Table 2 (one row per policy; overall and per-site
columns, each headed with its task count), with a standard error next to every rate. Beside it stand
what papers rarely print: steps, LLM calls and prompt tokens per step, cost and wall time per task.
"""

from __future__ import annotations

from typing import Any

from experiments.report.summary import SITE_TITLES, Rate


def columns(summary: dict[str, Any]) -> list[str]:
    return [*summary["sites"], "all"]


def header(summary: dict[str, Any]) -> list[str]:
    counts = summary["task_counts"]
    return (
        ["Policy"]
        + [f"{SITE_TITLES[s]} ({counts[s]})" for s in columns(summary)]
        + ["Steps", "LLM calls/step", "Prompt tok/step", "Cost/task ($)", "Time/task (s)", "Errors"]
    )


def cells(row: dict[str, Any], summary: dict[str, Any]) -> list[str]:
    cost = f"{row['cost_per_task']:.4f}" + ("" if row["cost_known"] else "*")
    return (
        [row["policy"]]
        + [Rate(**row["success"][s]).cell() for s in columns(summary)]
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
    names = header(summary)
    lines = ["| " + " | ".join(names) + " |", "|" + "|".join("---" for _ in names) + "|"]
    lines += ["| " + " | ".join(cells(r, summary)) + " |" for r in summary["rows"]]
    notes = [
        "Success rate in % ± standard error over tasks (seeds averaged per task); errored episodes count as failures.",
    ]
    if any(not r["cost_known"] for r in summary["rows"]):
        notes.append(
            "* cost partly unknown for this model: tokens are counted, cost only where litellm knows the price."
        )
    notes.append(f"Ordering: {summary['manifest'].get('ordering', '')}")
    return "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"
