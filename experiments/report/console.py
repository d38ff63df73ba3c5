"""The study's summary as a command prints it: one screen, the full tables stay in ``summary.md``.

Success per policy and site with the error counts, then the first error of each kind with its
message, so an outage reads as what it was without opening the report.
"""

from __future__ import annotations

from typing import Any

from webarena_gym.experiments.report.tables import columns, success_table

ERROR_TEXT_CHARS = 300  # one error's message on the console; the report's Errors section has it whole


def first_errors(errors: list[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], int]]:
    """Per error kind: its first errored episode and how many episodes ended with that kind."""
    first: dict[str, tuple[dict[str, Any], int]] = {}
    for e in errors:
        seen, n = first.get(e["kind"], (e, 0))
        first[e["kind"]] = (seen, n + 1)
    return first


def error_line(kind: str, policy: str, env_id: str, message: str) -> str:
    """One error as the console shows it (the study's progress and its summary use the same words)."""
    text = " ".join(message.split()) or "(no message)"
    if len(text) > ERROR_TEXT_CHARS:
        text = text[: ERROR_TEXT_CHARS - 1] + "…"
    return f"{kind} error: {policy} on {env_id}: {text}"


def console_summary(summary: dict[str, Any]) -> str:
    """Success by site (policy, site columns, errors), then the first error of each kind."""
    table = success_table(summary)
    keep = [0, *range(1, len(columns(summary)) + 1), table.header.index("Errors")]
    lines = ["Success by site (% ± standard error over tasks)", ""]
    lines.append("| " + " | ".join(table.header[i] for i in keep) + " |")
    lines.append("|" + "|".join("---" for _ in keep) + "|")
    lines += ["| " + " | ".join(row[i] for i in keep) + " |" for row in table.rows]
    kinds = first_errors(summary.get("errors", []))
    if kinds:
        lines += ["", "Errors, the first of each kind (every errored episode is in the report's Errors section):"]
        for kind, (e, n) in kinds.items():
            more = f" (+{n - 1} more)" if n > 1 else ""
            lines.append("  " + error_line(kind, e["policy"], e["env_id"], e["message"]) + more)
    return "\n".join(lines) + "\n"
