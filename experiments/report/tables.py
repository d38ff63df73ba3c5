"""The report's tables, as cell lists: ``summary.md``, the CSV files and the HTML page show the same cells.

The success table follows the layout of AgentOccam's Table 2 (one row per policy; overall and per-site
columns, each headed with its task count), with a standard error next to every rate. Beside it stand
what papers rarely print: steps, LLM calls and prompt tokens per step, cost and wall time per task.
Further tables appear when a study has something to show in them: the budgets (interactions, restores,
episodes a budget ended), the calls per role, and the success after each trial of multi-trial methods.
A new table is one function added to :data:`TABLES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from experiments.report.summary import SITE_TITLES, Rate

ORACLE_MARK = " †"


def columns(summary: dict[str, Any]) -> list[str]:
    return [*summary["sites"], "all"]


def header(summary: dict[str, Any]) -> list[str]:
    counts = summary["task_counts"]
    return (
        ["Policy"]
        + [f"{SITE_TITLES[s]} ({counts[s]})" for s in columns(summary)]
        + ["Steps", "LLM calls/step", "Prompt tok/step", "Cost/task ($)", "Time/task (s)", "Errors"]
    )


def cost_cell(cost: float, status: str) -> str:
    """A cost as the report shows it: ``unknown`` when no price is known, ``*`` marks a lower bound."""
    if status == "unknown":
        return "unknown"
    return f"{cost:.4f}" + ("*" if status == "partly unknown" else "")


def errors_cell(row: dict[str, Any]) -> str:
    kinds = row.get("error_kinds") or {}
    if not row["errors"] or not kinds:
        return str(row["errors"])
    return f"{row['errors']} ({', '.join(f'{kind} {n}' for kind, n in kinds.items())})"


def row_cost_status(row: dict[str, Any]) -> str:
    """A summary row's cost status (summaries written before it existed had only ``cost_known``)."""
    return row.get("cost_status") or ("known" if row["cost_known"] else "partly unknown")


def cells(row: dict[str, Any], summary: dict[str, Any]) -> list[str]:
    cost = cost_cell(row["cost_per_task"], row_cost_status(row))
    return (
        [row["policy"] + (ORACLE_MARK if row.get("oracle_assisted") else "")]
        + [Rate(**row["success"][s]).cell() for s in columns(summary)]
        + [
            f"{row['avg_steps']:.1f}",
            f"{row['llm_calls_per_step']:.2f}",
            f"{row['prompt_tokens_per_step']:.0f}",
            cost,
            f"{row['wall_time_per_task_s']:.1f}",
            errors_cell(row),
        ]
    )


@dataclass
class Table:
    """One table of the report: ``name`` is its file stem (``<name>.csv``)."""

    name: str
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", "| " + " | ".join(self.header) + " |"]
        lines.append("|" + "|".join("---" for _ in self.header) + "|")
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in self.rows]
        return "\n".join(lines) + "\n\n" + "".join(f"{note}\n" for note in self.notes)


def success_table(summary: dict[str, Any]) -> Table:
    if summary.get("errors_as_failures"):
        errors = "episodes that ended in an error (Errors column) count as failures."
    else:
        errors = (
            "episodes that ended in an error are left out (Errors column: the model provider or its configuration, "
            "the browser, the sites, the judge or a timeout failed, not the policy; `webarena-gym report "
            "--errors-as-failures` counts them as failures)."
        )
    notes = [f"Success rate in % ± standard error over tasks (seeds averaged per task); {errors}"]
    statuses = {row_cost_status(r) for r in summary["rows"]}
    if "partly unknown" in statuses:
        notes.append(
            "* cost partly unknown: a lower bound, counting only the calls whose price litellm knows "
            "(tokens are always counted)."
        )
    if "unknown" in statuses:
        notes.append(
            "unknown: no price is known for this model (e.g. a model on your own server) or the episodes ended "
            "before reporting; tokens are still counted."
        )
    if any(r.get("oracle_assisted") for r in summary["rows"]):
        notes.append(
            f"{ORACLE_MARK.strip()} oracle-assisted: the policy was allowed to ask the evaluator during its episodes "
            "(look-ahead evaluation); not comparable with honest runs."
        )
    notes.append(f"Ordering: {summary['manifest'].get('ordering', '')}")
    rows = [cells(r, summary) for r in summary["rows"]]
    return Table("summary", "Success by site", header(summary), rows, notes)


def budget_table(summary: dict[str, Any]) -> Table | None:
    """Decisions, interactions and restores per task, and how many episodes a budget ended."""
    rows = summary["rows"]
    if not any(r.get("interactions_per_task") or r.get("restores_per_task") for r in rows):
        return None
    body = [
        [
            r["policy"],
            f"{r['avg_steps']:.1f}",
            f"{r['interactions_per_task']:.1f}",
            f"{r['restores_per_task']:.1f}",
            str(r["budget_exhausted"]["decisions"]),
            str(r["budget_exhausted"]["interactions"]),
        ]
        for r in rows
    ]
    header_ = [
        "Policy",
        "Decisions/task",
        "Interactions/task",
        "Restores/task",
        "Ended by decisions",
        "Ended by interactions",
    ]
    note = (
        "Decisions: steps of the executed path (the decision budget). Interactions: every env action the policy "
        "caused, explored and undone ones included (the interaction budget)."
    )
    return Table("budgets", "Budgets", header_, body, [note])


def role_table(summary: dict[str, Any]) -> Table | None:
    """LLM calls, tokens and cost per task, for each call role of each policy."""
    body = [
        [
            r["policy"],
            role,
            f"{s.get('calls', 0.0):.1f}",
            f"{s.get('prompt_tokens', 0.0):.0f}",
            f"{s.get('completion_tokens', 0.0):.0f}",
            cost_cell(s.get("cost", 0.0), row_cost_status(r)),
        ]
        for r in summary["rows"]
        for role, s in sorted(r.get("roles", {}).items())
    ]
    if not body:
        return None
    header_ = ["Policy", "Role", "Calls/task", "Prompt tok/task", "Completion tok/task", "Cost/task ($)"]
    return Table("roles", "LLM calls per role", header_, body)


def trial_table(summary: dict[str, Any]) -> Table | None:
    """Success after each trial of multi-trial methods (the loop's report-only verdicts)."""
    curves = {r["policy"]: r["success_after_trial"] for r in summary["rows"] if r.get("success_after_trial")}
    if not curves:
        return None
    longest = max(len(c) for c in curves.values())
    body = [[p] + [f"{100 * c[min(k, len(c) - 1)]:.1f}" for k in range(longest)] for p, c in curves.items()]
    header_ = ["Policy"] + [f"after trial {k + 1}" for k in range(longest)]
    note = (
        "Success in % of episodes solved within the first k trials, each trial's answer scored by the evaluator "
        "for this table only (the policy never saw these verdicts unless it is marked oracle-assisted)."
    )
    return Table("trials", "Success after each trial", header_, body, [note])


TABLES: list[Callable[[dict[str, Any]], Table | None]] = [success_table, budget_table, role_table, trial_table]


def all_tables(summary: dict[str, Any]) -> list[Table]:
    """The tables this study has something to show in, success first."""
    return [table for make in TABLES if (table := make(summary)) is not None]


def markdown_report(summary: dict[str, Any]) -> str:
    return "\n".join(table.markdown() for table in all_tables(summary))
