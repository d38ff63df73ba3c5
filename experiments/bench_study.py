"""Benchmark of study throughput: episodes per minute with 1 and 2 process workers, and memory per worker.

A study of the non-LLM ``reference`` policy (it replays each task's reference solution: real clicks and
typing, no model latency, so the figure is the harness's own cost) over local tasks of two sites, in an
order that alternates the sites, run through :func:`experiments.compare.compare` with the process
backend. Throughput is episodes over the study's whole wall time (worker start-up included). It is
measured with 1 and 2 workers with site-instance reuse on (the default), and with 1 worker and reuse
off (``WEBARENA_GYM_REUSE_SITES=0``: a server start and login per episode), which shows what reuse saves.

Memory per worker is the sum of PSS (``/proc/<pid>/smaps_rollup``) over a worker process and all its
descendants (browser, Playwright driver, site servers), in MB (10^6 bytes), sampled every 0.5 s while the study runs;
PSS splits shared pages between the processes sharing them, so the sums do not double count.
Targets (issue 6): 2 workers >= 1.6x the throughput of 1; each worker <= 400 MB PSS.
Run: ``python -m experiments.bench_study [--quick]``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from envs.local.launcher import REUSE_ENV_VAR
from experiments.procs import children_map, process_table

SITES = ("reddit", "wikipedia")
SAMPLE_EVERY_S = 0.5
PSS_TARGET_MB = 400


def study_tasks(per_site: int) -> list:
    """The first ``per_site`` single-site local tasks with a reference solution of each site, interleaved."""
    from envs.local import registry
    from experiments import tasksets

    solved = set(registry.load_solutions())
    by_site = [
        [t for t in tasksets.local_tasks() if t.sites == (site,) and t.task_id in solved][:per_site] for site in SITES
    ]
    return [task for group in zip(*by_site) for task in group]


# -- memory ----------------------------------------------------------------------------------------

def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _kind(cmdline: str) -> str:
    for needle, kind in (("chromium", "browser"), ("playwright", "driver"), ("envs.local.server", "site servers")):
        if needle in cmdline:
            return kind
    return "worker"


def worker_pss_mb() -> dict[int, dict[str, float]]:
    """PSS in MB of each study worker of this process and its descendants, by kind of process."""
    table = process_table()
    children = children_map(table)
    sums = {}
    for worker in children.get(os.getpid(), []):
        if "spawn_main" not in table[worker][2]:
            continue  # multiprocessing's resource tracker, not a worker
        kinds: dict[str, float] = {}
        stack = [worker]
        while stack:
            pid = stack.pop()
            kind = "worker" if pid == worker else _kind(table[pid][2])
            kinds[kind] = kinds.get(kind, 0.0) + _pss_kib(pid) * 1024 / 1e6
            stack.extend(children.get(pid, []))
        sums[worker] = kinds
    return sums


class MemorySampler:
    """Samples :func:`worker_pss_mb` in a thread; ``peak`` is the largest per-worker sum seen."""

    def __init__(self) -> None:
        self.peak = 0.0
        self.peak_kinds: dict[str, float] = {}
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            for kinds in worker_pss_mb().values():
                mb = sum(kinds.values())
                self.samples.append(mb)
                if mb > self.peak:
                    self.peak, self.peak_kinds = mb, kinds

    def __enter__(self) -> "MemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


# -- studies ---------------------------------------------------------------------------------------

@contextmanager
def _reuse(enabled: bool) -> Iterator[None]:
    """Set the reuse option for the workers a study spawns (they inherit this environment)."""
    previous = os.environ.get(REUSE_ENV_VAR)
    os.environ[REUSE_ENV_VAR] = "1" if enabled else "0"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(REUSE_ENV_VAR, None)
        else:
            os.environ[REUSE_ENV_VAR] = previous


def run_study(tasks: list, n_workers: int, reuse: bool) -> dict[str, Any]:
    """One study; its throughput, per-worker memory and success count."""
    from experiments.compare import PolicySpec, compare
    from experiments.store import StudyStore

    with tempfile.TemporaryDirectory(prefix="webarena-gym-bench-study-") as tmp, _reuse(reuse):
        with MemorySampler() as memory:
            started = time.perf_counter()
            out = compare([PolicySpec("reference")], tasks, Path(tmp) / "study", n_workers=n_workers,
                          progress=False, env_kwargs={"judge_mock": "correct"})
            wall_s = time.perf_counter() - started
        results = list(StudyStore(out).latest().values())
    return {
        "episodes_per_min": len(results) / wall_s * 60,
        "wall_s": wall_s,
        "done": sum(r.status == "done" for r in results),
        "success": sum(bool(r.success) for r in results),
        "n": len(results),
        "steps": sum(r.n_steps for r in results),
        "peak_pss_mb": memory.peak,
        "median_pss_mb": sorted(memory.samples)[len(memory.samples) // 2] if memory.samples else 0.0,
        "share_above_target": sum(m > PSS_TARGET_MB for m in memory.samples) / max(1, len(memory.samples)),
        "peak_kinds": ", ".join(f"{k} {v:.0f}" for k, v in sorted(memory.peak_kinds.items(), key=lambda kv: -kv[1])),
    }


def _memory_note(r: dict[str, Any]) -> str:
    return (f"median sample {r['median_pss_mb']:.0f} MB, {r['share_above_target']:.0%} of samples above "
            f"{PSS_TARGET_MB}; at the peak (MB): {r['peak_kinds']}")


def _note(r: dict[str, Any]) -> str:
    return (f"{r['n']} episodes ({r['steps']} steps, {r['success']} solved, {r['n'] - r['done']} errors) "
            f"in {r['wall_s']:.1f} s")


def run(quick: bool = False) -> list[dict[str, Any]]:
    tasks = study_tasks(4 if quick else 8)
    one = run_study(tasks, 1, reuse=True)
    two = run_study(tasks, 2, reuse=True)
    off = run_study(tasks, 1, reuse=False)
    label = f"reference policy, {len(tasks)} local tasks ({'/'.join(SITES)}), process backend"
    return [
        {"name": f"study throughput, 1 worker ({label})", "value": round(one["episodes_per_min"], 1),
         "unit": "episodes/min", "target": "", "note": _note(one)},
        {"name": "study throughput, 2 workers", "value": round(two["episodes_per_min"], 1),
         "unit": "episodes/min", "target": "", "note": _note(two)},
        {"name": "2-worker speed-up over 1 worker", "value": round(two["episodes_per_min"] / one["episodes_per_min"], 2),
         "unit": "x", "target": ">= 1.6", "note": f"{os.cpu_count()} cores"},
        {"name": f"study throughput, 1 worker, site reuse off ({REUSE_ENV_VAR}=0)",
         "value": round(off["episodes_per_min"], 1), "unit": "episodes/min", "target": "",
         "note": f"{_note(off)}; reuse on is {one['episodes_per_min'] / off['episodes_per_min']:.2f}x this"},
        {"name": "peak PSS per worker, 1 worker", "value": round(one["peak_pss_mb"]), "unit": "MB",
         "target": f"<= {PSS_TARGET_MB}", "note": _memory_note(one)},
        {"name": "peak PSS per worker, 2 workers", "value": round(two["peak_pss_mb"]), "unit": "MB",
         "target": f"<= {PSS_TARGET_MB}", "note": _memory_note(two)},
    ]


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv[1:]):
        print(f"{row['name']}: {row['value']} {row['unit']} (target {row['target']}) {row['note']}")
