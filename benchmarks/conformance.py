"""The conformance matrix in full: every covered LLM method over every local task with the conformance
model (``experiments/conformance/``), then the same matrix with one answer in five replaced by a
plausible wrong one (``--faults 0.2``).

A task conforms when the method, driven by a model that knows the task's reference solution and reads
ids and progress only off its prompts, solves it. Figures: each method's share of conforming tasks
(target: at least 97 %, the reference solutions' own rate being 98.6 %) and its misses by cause; under
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

from webarena_gym.experiments.conformance.matrix import METHODS, cause, markdown, run_matrix, sample, summarize
from webarena_gym.experiments.conformance.model import HARNESS_BUG
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
    """Per method: the conforming share against the target, and the misses by cause."""
    results = list(StudyStore(study).latest().values())
    rows = []
    for method in METHODS:
        mine = [r for r in results if r.policy == method]
        if not mine:
            continue
        causes = Counter(cause(r) for r in mine)
        conforming = causes.pop(None, 0)
        misses = "; ".join(f"{why} {n}" for why, n in causes.most_common()) or "none"
        rows.append(
            {
                "name": f"{method}: conforming tasks{suffix}",
                "value": round(100 * conforming / len(mine), 1),
                "unit": "%",
                "target": f">= {TARGET_SHARE:.0%}" if not suffix else f"no {HARNESS_BUG}",
                "note": f"{conforming}/{len(mine)}; misses: {misses}",
            }
        )
    return rows
