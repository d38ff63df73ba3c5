"""The conformance matrix in full: every covered LLM method over every local task with the conformance
model (``experiments/conformance/``), then the same matrix with one answer in five replaced by a
plausible wrong one (``--faults 0.2``).

A task conforms when the method, driven by a model that knows the task's reference solution and reads
ids and progress only off its prompts, solves it (a judged answer passes only as the reference's own
answer). Figures: each method's share of conforming tasks
(target: at least 97 %, the reference solutions' own rate being 98.6 %) with each site's count, and a row
per cause of its misses naming the tasks (with what was said, for method logic and harness bugs); under
noise, the same share, with every episode ending in a recorded outcome (target: none filed as a harness
bug). The method x site table and every miss are written beside the studies, in ``conformance.md``.

The studies live in ``studies/conformance-bench-<revision>`` (``-faults`` for the noisy one) and
resume: the full run takes hours on a 2-core machine (about 5,300 episodes each), so a run stopped
part-way continues where it stopped when started again on the same revision. ``--quick``: the first
task of every site per method, no noisy run.
Run: ``python -m webarena_gym.benchmarks --only conformance``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from webarena_gym.experiments.conformance.matrix import (
    FINDING_KEY,
    METHODS,
    cause,
    markdown,
    run_matrix,
    sample,
    summarize,
)
from webarena_gym.experiments.conformance.model import HARNESS_BUG, METHOD_LOGIC
from webarena_gym.experiments.reproducibility import machine_record
from webarena_gym.experiments.store import StudyStore
from webarena_gym.experiments.tasksets import resolve

TARGET_SHARE = 0.97
FAULT_RATE = 0.2
WORKERS = 2
STUDIES = Path("studies")


def run(quick: bool = False) -> list[dict[str, Any]]:
    tasks = resolve("local")
    if quick:
        tasks = sample(tasks, 1)
    revision = machine_record()["code_revision"] or "unversioned"
    label = f"conformance-bench-{revision}{'-quick' if quick else ''}"
    rows = _rows(_matrix(STUDIES / label, tasks, 0.0), "")
    if not quick:
        rows += _rows(_matrix(STUDIES / f"{label}-faults", tasks, FAULT_RATE), f", {FAULT_RATE:.0%} wrong answers")
    return rows


def _matrix(out: Path, tasks: list, faults: float) -> Path:
    """Run (or finish) one matrix study and write its table beside it."""
    study = run_matrix(list(METHODS), tasks, out, n_workers=WORKERS, resume=out.exists(), faults=faults)
    (study / "conformance.md").write_text(markdown(summarize(study)) + "\n")
    return study


def _rows(study: Path, suffix: str) -> list[dict[str, Any]]:
    """Per method: the conforming share against the target with each site's count, then one row per cause
    of its misses naming the tasks (each one's detail is in the study's ``conformance.md``)."""
    results = list(StudyStore(study).latest().values())
    rows = []
    for method in METHODS:
        mine = [r for r in results if r.policy == method]
        if not mine:
            continue
        by_cause: dict[str | None, list[int]] = {}
        details: dict[int, str] = {}  # what the model or the method said, for the causes a reader must check
        for result in mine:
            why = cause(result)
            by_cause.setdefault(why, []).append(result.task_id)
            if why in (METHOD_LOGIC, HARNESS_BUG):
                finding = result.extra.get(FINDING_KEY) or {}
                details[result.task_id] = str(finding.get("detail") or result.err_msg or f"reward {result.reward}")
        conforming = len(by_cause.pop(None, []))
        sites = Counter(r.site_group for r in mine)
        solved = Counter(r.site_group for r in mine if cause(r) is None)
        per_site = ", ".join(f"{site} {solved[site]}/{n}" for site, n in sorted(sites.items()))
        rows.append(
            {
                "name": f"{method}: conforming tasks{suffix}",
                "value": round(100 * conforming / len(mine), 1),
                "unit": "%",
                "target": f">= {TARGET_SHARE:.0%}" if not suffix else f"no {HARNESS_BUG}",
                "note": f"{conforming}/{len(mine)}: {per_site}",
            }
        )
        for why, ids in sorted(by_cause.items(), key=lambda item: (-len(item[1]), str(item[0]))):
            note = "; ".join(f"{i}: {details[i][:90]}" for i in sorted(ids)) if ids[0] in details else _ids(ids)
            rows.append({"name": f"  {method}: {why}", "value": len(ids), "unit": "tasks", "note": note})
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
