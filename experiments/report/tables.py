"""The report's tables, as cell lists: ``summary.md``, the CSV files and the HTML page show the same cells.

The success table follows the layout of AgentOccam's Table 2 (one row per policy; overall and per-site
columns, each headed with its task count), with a standard error next to every rate. Beside it stand
what papers rarely print: steps, LLM calls and prompt tokens per step, cost and wall time per task.
Further tables appear when a study has something to show in them: the budgets (interactions, restores,
episodes a budget ended), the calls per role, the success after each trial of multi-trial methods, and
AgentOccam's two ablation tables: how often each command was used (its Table 3) and the observation
tokens per step in GPT-2 tokens (its Table 4), and the success per WebArena intent template, local and real
side by side.
A new table is one function added to :data:`TABLES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webarena_gym.experiments.report.published import MINIWOB
from webarena_gym.experiments.report.summary import SITE_TITLES, TEMPLATE_SUITES, Rate

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


# A figure as the tables write one: "12", "0.0123*", "33.3 ± 4.1", "50.0 ± 0.0 (n=2)", "- (n=0)", a count with its
# breakdown "3 (provider 2, timeout 1)", "unknown" (a cost), "-" or "" (none).
_NUMBER = re.compile(r"^(-?[\d,]*\.?\d+\*?( ± \d+(\.\d+)?)?|-)( \(n=\d+\))?$|^\d+ \([^)]*\)$|^(unknown|)$")


@dataclass
class Table:
    """One table of the report: ``name`` is its file stem (``<name>.csv``); ``links`` maps a column's
    header to the page or anchor its non-zero cells link to on the HTML page."""

    name: str
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    links: dict[str, str] = field(default_factory=dict)

    def text_columns(self) -> set[int]:
        """Columns holding any cell that is not a number: the page aligns them left, numbers right."""
        return {i for i in range(len(self.header)) if any(not _NUMBER.match(row[i]) for row in self.rows)}

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
    links = {"Errors": "#errors"} if any(r["errors"] for r in summary["rows"]) else {}
    return Table("summary", "Success by site", header(summary), rows, notes, links)


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
    curves = {policy_label(r): r["success_after_trial"] for r in summary["rows"] if r.get("success_after_trial")}
    if not curves:
        return None
    longest = max(len(c) for c in curves.values())
    body = [[p] + [f"{100 * c[min(k, len(c) - 1)]:.1f}" for k in range(longest)] for p, c in curves.items()]
    header_ = ["Policy"] + [f"after trial {k + 1}" for k in range(longest)]
    note = (
        "Success in % of episodes whose latest trial up to k was a success (an episode that stopped earlier keeps "
        "its last verdict), each trial's end state and answer scored by the evaluator for this table only (the "
        "policy never saw these verdicts unless it is marked oracle-assisted)."
    )
    return Table("trials", "Success after each trial", header_, body, [note])


def policy_label(row: dict[str, Any]) -> str:
    """The policy's label, marked when it was oracle-assisted (every table that shows trials marks it)."""
    return row["policy"] + (ORACLE_MARK if row.get("oracle_assisted") else "")


RESTART_NOTE = (
    "A new trial restores the task's start state: on the local suite the site data is pristine again; on real "
    "WebArena only the browser starts over, and the sites keep what earlier trials changed on the server"
)


def trial_stats_table(summary: dict[str, Any]) -> Table | None:
    """Devil's Advocate's Table 1: actions in the first and in the last trial, and plan revisions, per task."""
    rows = [r for r in summary["rows"] if r.get("trial_stats")]
    if not rows:
        return None
    body = [
        [
            policy_label(r),
            f"{r['trial_stats']['actions_first_trial']:.2f}",
            f"{r['trial_stats']['actions_last_trial']:.2f}",
            f"{r['trial_stats']['plan_revisions']:.2f}",
            str(r["trial_stats"]["episodes"]),
        ]
        for r in rows
    ]
    header_ = ["Policy", "Actions in first trial", "Actions in last trial", "Plan revisions", "Episodes"]
    real = sum(r["trial_stats"].get("real_site_restarts", 0) for r in rows)
    notes = [
        "Means over the episodes that ran trials; plan revisions are the trials after the first.",
        RESTART_NOTE + (f" ({real} episode(s) of this study restarted trials on real WebArena)." if real else "."),
    ]
    if any(r.get("oracle_assisted") for r in rows):
        notes.append(f"{ORACLE_MARK.strip()} oracle-assisted: the evaluator decided when to start another trial.")
    return Table("trial_stats", "Trials: actions and plan revisions", header_, body, notes)


def miniwob_table(summary: dict[str, Any]) -> Table | None:
    """The study's MiniWoB++ success beside published MiniWoB++ results (see :mod:`.published`)."""
    if "miniwob" not in summary["sites"]:
        return None
    n_tasks = summary["task_counts"]["miniwob"]
    body = [
        [r["policy"], Rate(**r["success"]["miniwob"]).cell(), f"this study ({n_tasks} tasks)"] for r in summary["rows"]
    ]
    body += [[p.agent, f"{p.success:.1f} ± {p.stderr:.1f}", p.source] for p in MINIWOB]
    note = (
        "Published rows are other agents (their own prompts, observations and action sets) on all 125 tasks; "
        "compare a policy with them only on the same task set, model and seeds-per-task."
    )
    return Table("miniwob", "MiniWoB++ beside published results", ["Policy", "Success (%)", "Source"], body, [note])


TABLES: list[Callable[[dict[str, Any]], Table | None]] = [success_table, budget_table, role_table, trial_table]
TABLES.append(trial_stats_table)
TABLES.append(miniwob_table)


def counter_table(summary: dict[str, Any]) -> Table | None:
    """The counters policies report about their own reasoning (CoAct: exchanges between its agents, local
    revisions, global re-plans, force stops ...), per task; one row per policy that reports any."""
    rows = [r for r in summary["rows"] if r.get("policy_counters")]
    if not rows:
        return None
    keys = list(dict.fromkeys(k for r in rows for k in r["policy_counters"]))
    body = [[r["policy"]] + [_count(r["policy_counters"].get(k)) for k in keys] for r in rows]
    header_ = ["Policy"] + [k.replace("_", " ").capitalize() + "/task" for k in keys]
    note = "Counters the policies keep in their reasoning state (their own definitions, see docs/methods/), per task."
    return Table("policy_counters", "Policy counters", header_, body, [note])


def _count(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


TABLES.append(counter_table)


def outcome_steps_table(summary: dict[str, Any]) -> Table | None:
    """Steps of successful and failed episodes per site (Plan-and-Act's A.11 table), for studies with a
    planning policy (one whose calls include a planner or replanner role)."""
    rows = summary["rows"]
    if not any(role in r.get("roles", {}) for r in rows for role in ("planner", "replanner")):
        return None

    def steps(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    body = []
    for r in rows:
        for site in ["all", *summary["sites"]]:
            by = r.get("steps_by_outcome", {}).get(site) or {}
            rate_ = Rate(**r["success"][site])
            if not rate_.n_tasks:
                continue
            body.append(
                [
                    r["policy"],
                    SITE_TITLES[site],
                    str(rate_.n_tasks),
                    steps(by.get("all")),
                    steps(by.get("success")),
                    steps(by.get("failure")),
                    f"{100 * rate_.mean:.1f}",
                ]
            )
    header_ = ["Policy", "Website", "Tasks", "Avg. steps (all)", "Avg. steps (success)", "Avg. steps (fail)", "SR (%)"]
    note = "Steps per episode, errored episodes left out; Plan-and-Act reports this breakdown per site (its A.11)."
    return Table("outcome_steps", "Steps by outcome", header_, body, [note])


TABLES.append(outcome_steps_table)


# AgentOccam's action-frequency tables list these commands in this order (Tables 3, 11 and 14).
PAPER_COMMANDS = (
    "click", "hover", "type", "press", "scroll", "new_tab", "go_back", "goto", "note", "stop", "go_home", "branch",
    "prune",
)  # fmt: skip


def action_table(summary: dict[str, Any]) -> Table | None:
    """How often each policy decided on each command, over all its episodes (AgentOccam's Table 3)."""
    rows = [r for r in summary["rows"] if r.get("actions", {}).get("counts")]
    if not rows:
        return None
    seen = {name for r in rows for name in r["actions"]["counts"]}
    names = [c for c in PAPER_COMMANDS if c in seen or any(c in r["actions"]["offered"] for r in rows)]
    names += sorted(seen - set(names))

    def cell(r: dict[str, Any], name: str) -> str:
        count = r["actions"]["counts"].get(name, 0)
        return "-" if not count and name not in r["actions"]["offered"] else str(count)

    body = [[r["policy"], *(cell(r, n) for n in names)] for r in rows]
    note = (
        "Times each command was decided on, over all episodes (every command of a multi-command action counts); "
        "-: not offered to that policy. An episode the step budget ended adds no stop. "
        "AgentOccam's paper reports the same counts for its ablation rows (its Table 3)."
    )
    return Table("actions", "Action frequencies", ["Policy", *names], body, [note])


def observation_token_table(summary: dict[str, Any]) -> Table | None:
    """Mean GPT-2 tokens the policy was shown per step, by site (AgentOccam's Table 4)."""
    rows = [r for r in summary["rows"] if r.get("observation_tokens_per_step", {}).get("all") is not None]
    if not rows:
        return None
    counts = summary["task_counts"]
    head = ["Policy"] + [f"{SITE_TITLES[s]} ({counts[s]})" for s in columns(summary)]

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    body = [[r["policy"], *(cell(r["observation_tokens_per_step"].get(s)) for s in columns(summary))] for r in rows]
    note = (
        "GPT-2 tokens per step of what the model was shown: the user message of the step's first LLM call "
        "(objective, plans, history and page for AgentOccam; page, URL, objective and previous action for "
        "ReAct), or the observation when the step called no LLM. AgentOccam's Table 4 counts with GPT-2's "
        "tokenizer too."
    )
    return Table("observation_tokens", "Observation tokens per step (GPT-2)", head, body, [note])


TABLES.append(action_table)
TABLES.append(observation_token_table)


def search_table(summary: dict[str, Any]) -> Table | None:
    """Plan-MCTS's efficiency columns (its Table 3 and Figs. 3-4) for every policy, once a search method ran."""
    rows = summary["rows"]
    if not any(r.get("budget_util") is not None for r in rows):
        return None

    def cell(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    body = [
        [
            r["policy"],
            Rate(**r["success"]["all"]).cell(),
            cell(None if r.get("budget_util") is None else 100 * r["budget_util"], ".1f"),
            cell(r.get("path_length"), ".1f"),
            f"{r['interactions_per_task']:.1f}",
            cell(r.get("tokens_per_task"), ".0f"),
        ]
        for r in rows
    ]
    header_ = ["Policy", "SR", "Budget util (%)", "Path length", "Action interactions/task", "Tokens/task"]
    notes = [
        "Budget util: search iterations run in % of the iteration budget (search methods only). Path length: "
        "atomic actions on the delivered path (a search's final path; otherwise every action). Action "
        "interactions: every env action, explored ones included. Tokens: prompt + completion per task; per "
        "role in the calls-per-role table."
    ]
    return Table("search", "Search efficiency", header_, body, notes)


TABLES.append(search_table)


def template_table(summary: dict[str, Any]) -> Table | None:
    """Success per WebArena intent template: each policy's rate on the local tasks of the template next to
    its rate on the real ones, so a local result can be read against WebArena's template by template."""
    if not summary.get("by_template"):
        return None
    labels = [p["label"] for p in summary["manifest"]["policies"]]
    rows = summary["by_template"]
    # a suite the study did not run (no real task in a local study, say) would only add empty columns
    suites = [s for s in TEMPLATE_SUITES if any(r["results"][label][s]["n_tasks"] for r in rows for label in labels)]
    header_ = ["Template", "Intent template"] + [f"{label} ({suite})" for label in labels for suite in suites]
    body = []
    for row in rows:
        rates = [Rate(**row["results"][label][suite]) for label in labels for suite in suites]
        body.append([str(row["template"]), row["intent_template"]] + [f"{r.cell()} (n={r.n_tasks})" for r in rates])
    note = (
        "Success rate in % ± standard error over the template's tasks (n); local tasks count under the WebArena "
        "template they instantiate, local-only tasks are not listed."
    )
    return Table("by_template", "Success by WebArena template", header_, body, [note])


TABLES.append(template_table)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def agreement_table(summary: dict[str, Any]) -> Table | None:
    """Both evaluators' success rates per policy and per site, for every re-scoring of the study."""
    body = []
    for evaluator, a in (summary.get("agreement") or {}).items():
        original = "/".join(a["original_evaluators"])
        for scope in ("by_policy", "by_site"):
            for name, r in a[scope].items():
                kind = "policy" if scope == "by_policy" else "site"
                body.append([f"{original} vs {evaluator}", f"{kind}: {name}", str(r["n"]), _pct(r["original"]),
                             _pct(r["rescored"])])  # fmt: skip
    if not body:
        return None
    header_ = ["evaluators", "group", "n", "original success %", "re-scored success %"]
    note = "Episodes one evaluator could not score (errors, checks that need the live site) are left out (n)."
    return Table("agreement", "Evaluator agreement: success rates", header_, body, [note])


def confusion_table(summary: dict[str, Any]) -> Table | None:
    """The confusion matrix of the two verdicts and Cohen's kappa, per re-scoring."""
    body = []
    for evaluator, a in (summary.get("agreement") or {}).items():
        c = a["confusion"]
        kappa = "-" if a["kappa"] is None else f"{a['kappa']:.3f}"
        body.append([f"{'/'.join(a['original_evaluators'])} vs {evaluator}", str(c["both_pass"]),
                     str(c["original_only"]), str(c["rescored_only"]), str(c["both_fail"]), kappa,
                     str(len(a["unscored"]))])  # fmt: skip
    if not body:
        return None
    header_ = ["evaluators", "both pass", "original only", "re-scored only", "both fail", "Cohen's kappa", "unscored"]
    return Table("agreement_confusion", "Evaluator agreement: confusion matrix", header_, body)


def disagreement_table(summary: dict[str, Any]) -> Table | None:
    """The episodes the two evaluators disagree on, with both reasons and the episode's viewer page."""
    from webarena_gym.experiments.report.viewer import page_name

    body = [
        [
            evaluator,
            d["policy"],
            d["env_id"],
            str(d["seed"]),
            f"{d['original']:g}: {d['original_reason']}",
            f"{d['rescored']:g}: {d['reason']}",
            page_name(d["policy"], d["key"]),
        ]  # fmt: skip
        for evaluator, a in (summary.get("agreement") or {}).items()
        for d in a["disagreements"]
    ]
    if not body:
        return None
    header_ = ["re-scored by", "policy", "task", "seed", "original verdict", "re-scored verdict", "episode page"]
    return Table("disagreements", "Episodes the evaluators disagree on", header_, body)


def reproducibility_table(summary: dict[str, Any]) -> Table | None:
    """What decided the scores (code, libraries, browser, machine, evaluator), one row per distinct record
    of the study's episodes; more than one row is flagged."""
    groups = (summary.get("reproducibility") or {}).get("episodes") or []
    if not groups:
        return None
    body = []
    for g in groups:
        r, packages = g["record"], g["record"].get("packages") or {}
        dirty = " (uncommitted changes)" if r.get("uncommitted_changes") else ""
        evaluator = r.get("evaluator") or {}
        body.append([g["fingerprint"], str(g["episodes"]), f"{r.get('code_revision')}{dirty}",
                     *(str(packages.get(p)) for p in ("browsergym-core", "playwright", "litellm", "webarena-verified",
                                                      "gymnasium")),
                     str(r.get("chromium")), str(r.get("python")), str(r.get("os")), str(r.get("cpus")),
                     str(r.get("memory_gb")), " ".join(f"{v}" for v in evaluator.values())])  # fmt: skip
    header_ = ["record", "episodes", "code", "browsergym", "playwright", "litellm", "webarena-verified", "gymnasium",
               "Chromium", "Python", "OS", "CPUs", "memory GB", "evaluator"]  # fmt: skip
    notes = ["Prompt-template hashes per episode are in results.jsonl (extra.reproducibility)."]
    if len(groups) > 1:
        notes.insert(0, f"**Mixed records**: this study's episodes ran under {len(groups)} different records "
                        "(a study resumed after an upgrade?); compare their scores with care.")  # fmt: skip
    return Table("reproducibility", "Reproducibility record", header_, body, notes)


TABLES.extend([agreement_table, confusion_table, disagreement_table])
TABLES.append(reproducibility_table)


def llm_budget_table(summary: dict[str, Any]) -> Table | None:
    """The LLM budget each policy ran under, what a task spent of it, and how many episodes it ended;
    shown when a policy had one, so a budget-matched comparison reads its terms beside its results."""
    rows = summary["rows"]
    if not any(r.get("llm_limits") for r in rows):
        return None

    def limit(row: dict[str, Any], name: str, fmt: str) -> str:
        value = row["llm_limits"].get(name)
        return "-" if value is None else format(value, fmt)

    body = [
        [
            r["policy"],
            limit(r, "llm_calls", "d"),
            limit(r, "llm_tokens", "d"),
            limit(r, "llm_cost", ".4g"),
            f"{r['llm_calls_per_task']:.1f}",
            f"{r['llm_tokens_per_task']:.0f}",
            cost_cell(r["cost_per_task"], row_cost_status(r)),
            str(sum(r["budget_exhausted"].get(b, 0) for b in ("llm_calls", "llm_tokens", "llm_cost"))),
        ]
        for r in rows
    ]
    header_ = [
        "Policy",
        "Max LLM calls",
        "Max tokens",
        "Max cost ($)",
        "LLM calls/task",
        "Tokens/task",
        "Cost/task",
        "Ended by LLM budget",
    ]
    note = (
        "Per-episode LLM budgets over every role of a method (--max-llm-calls, --max-tokens, --max-cost): the call "
        "that would go over the call budget is not made; the call that crosses the token or cost budget completes."
    )
    return Table("llm_budget", "LLM budget", header_, body, [note])


TABLES.append(llm_budget_table)


def all_tables(summary: dict[str, Any]) -> list[Table]:
    """The tables this study has something to show in, success first."""
    return [table for make in TABLES if (table := make(summary)) is not None]


def markdown_report(summary: dict[str, Any]) -> str:
    return "\n".join(table.markdown() for table in all_tables(summary))
