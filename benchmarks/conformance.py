"""The conformance matrix in full: every covered LLM method over every local task with the conformance
model (``experiments/conformance/``), then the same matrix with one answer in five replaced by a
plausible wrong one (``--faults 0.2``).

A task conforms when the method, driven by a model that knows the task's reference solution and reads
ids and progress only off its prompts, solves it (a judged answer passes only as the reference's own
answer). Figures: each method's share of conforming tasks
(target: at least 97 %, the reference solutions' own rate being 98.6 %) with each site's count; its share
of the tasks within its reach (every task but the misses that are the method's own limits as its paper
has it, ``experiments.conformance.limits``, and those that need a URL no page shows); and a row per cause
of its misses naming the tasks (with what was said, for method logic and harness bugs not among its
limits); under noise, the conforming share (no reach: a limit may be what a wrong answer ran into), with
every episode ending in a recorded outcome (target: none filed as a harness bug). The method x site
table and every miss are written beside the studies, in ``conformance.md``.

The studies live in ``studies/conformance-bench-<revision>`` (``-faults`` for the noisy one) and
resume: the full run takes hours on a 2-core machine (about 5,300 episodes each), so a run stopped
part-way continues where it stopped when started again on the same revision. ``--quick``: the first
task of every site per method, no noisy run. ``CONFORMANCE_REVISION=<revision>`` reports that
revision's studies as they stand and runs nothing, e.g. to read a finished run with a newer report.
Run: ``python -m webarena_gym.benchmarks --only conformance``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from webarena_gym.experiments.conformance.matrix import METHODS, markdown, run_matrix, sample, summarize
from webarena_gym.experiments.conformance.model import HARNESS_BUG, METHOD_LOGIC, NEEDS_URL
from webarena_gym.experiments.reproducibility import machine_record
from webarena_gym.experiments.tasksets import resolve

TARGET_SHARE = 0.97
FAULT_RATE = 0.2
WORKERS = 2
STUDIES = Path("studies")


def run(quick: bool = False) -> list[dict[str, Any]]:
    tasks = resolve("local")
    if quick:
        tasks = sample(tasks, 1)
    earlier = os.environ.get("CONFORMANCE_REVISION")  # report that revision's studies, run nothing
    revision = earlier or machine_record()["code_revision"] or "unversioned"
    label = f"conformance-bench-{revision}{'-quick' if quick else ''}"
    rows = _rows(_matrix(STUDIES / label, tasks, 0.0, run=not earlier), "")
    if not quick:
        noisy = _matrix(STUDIES / f"{label}-faults", tasks, FAULT_RATE, run=not earlier)
        rows += _rows(noisy, f", {FAULT_RATE:.0%} wrong answers")
    return rows


def _matrix(out: Path, tasks: list, faults: float, run: bool) -> dict[str, Any]:
    """Run (or finish) one matrix study unless ``run`` is off, write its table beside it and return its
    summary."""
    if run:
        out = run_matrix(list(METHODS), tasks, out, n_workers=WORKERS, resume=out.exists(), faults=faults)
    summary = summarize(out)
    (out / "conformance.md").write_text(markdown(summary) + "\n")
    return summary


def _rows(summary: dict[str, Any], suffix: str) -> list[dict[str, Any]]:
    """Per method: the conforming share against the target with each site's count; the share of the tasks
    within the method's reach (all but its own limits' and those needing a URL no page shows); then one row
    per cause of its misses, and per own limit, naming the tasks (each one's detail is in the study's
    ``conformance.md``; the row says it for method logic and harness bugs that are no limit)."""
    rows = []
    for method in METHODS:
        cells = {site: cell for (name, site), cell in summary["cells"].items() if name == method}
        if not cells:
            continue
        tasks = sum(cell.tasks for cell in cells.values())
        conforming = sum(cell.conforming for cell in cells.values())
        by_cause: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
        for miss in summary["failures"]:
            if miss["method"] == method:
                by_cause.setdefault((miss["cause"], miss["limit"]), []).append(miss)
        beyond = sum(len(misses) for (why, limit), misses in by_cause.items() if limit or why == NEEDS_URL)
        per_site = ", ".join(f"{site} {cell.conforming}/{cell.tasks}" for site, cell in sorted(cells.items()))
        rows.append(
            {
                "name": f"{method}: conforming tasks{suffix}",
                "value": round(100 * conforming / tasks, 1),
                "unit": "%",
                "target": f">= {TARGET_SHARE:.0%}" if not suffix else f"no {HARNESS_BUG}",
                "note": f"{conforming}/{tasks}: {per_site}",
            }
        )
        reach = tasks - beyond
        if not suffix:  # under noise a limit may be what a wrong answer ran into: no reach to speak of
            rows.append(
                {
                    "name": f"  {method}: conforming within its reach",
                    "value": round(100 * conforming / reach, 1) if reach else 0.0,
                    "unit": "%",
                    "note": f"{conforming}/{reach}: {beyond} tasks out, by its own limits or a URL no page shows",
                }
            )
        for (why, limit), misses in sorted(by_cause.items(), key=lambda item: (-len(item[1]), str(item[0]))):
            if why in (METHOD_LOGIC, HARNESS_BUG) and limit is None:  # what was said, for a reader to check
                note = "; ".join(f"{m['task_id']}: {str(m['detail'])[:90]}" for m in misses)
            else:
                note = _ids([m["task_id"] for m in misses])
            name = f"  {method}: {why}" + (f" ({limit})" if limit else "")
            rows.append({"name": name, "value": len(misses), "unit": "tasks", "note": note})
    return rows


def _ids(ids: list[int]) -> str:
    """Task ids with runs of consecutive ones written as ranges: ``20, 22, 93-97``."""
    runs: list[list[int]] = []
    for i in sorted(ids):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
