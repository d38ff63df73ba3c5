"""The conformance matrix: every covered method over local tasks with the conformance model, run as a
study (:func:`experiments.compare.compare`, its executors and store), summed up as a method x site table.

A task conforms when the method reaches the reference solution's own result (the task solved) by the
reference's answer: the matrix's judge mock passes only that answer (:mod:`.judge`), and a success that
rests on one of the model's own answers all the same (its "cannot continue", or under noise its premature
answer, where the page state met the checks) does not count. Every other task
is filed under a cause: the model's finding (the prompt lacked the element, the grammar lacked the
command), ``harness bug`` for an episode the harness errored on, and ``method logic`` when the model
answered every call yet the task was not solved. A miss that is one of the method's own limits, as its
paper has the method (:mod:`.limits`), is named so beside its cause.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webarena_gym.experiments.ablations import LADDERS, Rung
from webarena_gym.experiments.compare import EpisodeJob, PolicySpec, compare, run_job
from webarena_gym.experiments.conformance.faults import PREMATURE_ANSWER
from webarena_gym.experiments.conformance.formats import FAMILIES, VARIANT_FAMILIES
from webarena_gym.experiments.conformance.judge import REFERENCE_JUDGE, ReferenceJudge
from webarena_gym.experiments.conformance.limits import own_limit
from webarena_gym.experiments.conformance.model import GIVE_UP, HARNESS_BUG, METHOD_LOGIC, ConformanceModel, Finding
from webarena_gym.experiments.store import EpisodeResult, StudyStore
from webarena_gym.experiments.tasksets import TaskInfo

if TYPE_CHECKING:
    from webarena_gym.policies.base import Policy

METHODS = tuple(FAMILIES)  # the methods the conformance model answers for (what runs by default)
# AgentOccam's ablation ladder rows between its two ends (WebArena's agent, AgentOccam: both methods
# above), each named after its preset: ``agentoccam_reduced_actions`` ... ``agentoccam_history``.
LADDER_ROWS: dict[str, Rung] = {
    f"agentoccam_{rung.config['preset']}": rung
    for rung in LADDERS["agentoccam"]
    if rung.policy == "agentoccam" and "preset" in rung.config
}
VARIANTS = (*VARIANT_FAMILIES, *LADDER_ROWS)  # the ablation presets, run on request
FINDING_KEY = "conformance"  # where an episode's finding is kept in its result's ``extra``
FAULTS_KEY = "faults"  # the wrong answers injected into an episode, by kind
UNEARNED_KEY = "unearned"  # True when a success rested on the model's own answer (:func:`unearned`)


def method_of(name: str) -> str:
    """The method a covered name (a method or one of its ablation presets) belongs to."""
    from webarena_gym.policies.base import policy_class

    return LADDER_ROWS[name].policy if name in LADDER_ROWS else policy_class(name).name


def ablations(methods: Sequence[str]) -> list[str]:
    """Every ablation preset of the methods ``methods`` belong to."""
    chosen = {method_of(m) for m in methods}
    return [v for v in VARIANTS if method_of(v) in chosen]


def policy_spec(name: str) -> PolicySpec:
    """The study's policy for a covered name: a ladder row is AgentOccam with that row's options."""
    row = LADDER_ROWS.get(name)
    return PolicySpec(row.policy, dict(row.config), label=name) if row else PolicySpec(name, label=name)


def build_policy(job: EpisodeJob, model: ConformanceModel) -> Policy:
    """The job's policy with the conformance model as its LLM for every role."""
    from webarena_gym.policies import make_policy

    return make_policy(job.policy.name, **job.policy.config, script=model.script())


def run_conformance(job: EpisodeJob, faults: float = 0.0) -> EpisodeResult:
    """One episode with the conformance model and the judge mock of its task (a study ``runner``), its
    finding kept, and with ``faults`` the wrong answers it was given (by kind)."""
    model = ConformanceModel(job.task.task_id, job.policy.name, job.task.sites, faults=faults)
    judge = ReferenceJudge.of_task(job.task.task_id)
    job = dataclasses.replace(job, env_kwargs={**job.env_kwargs, "judge_mock": judge})
    result = run_job(job, build_policy=lambda j: build_policy(j, model))
    if (limit := method_limit(result)) is not None:
        model.record(limit)
    finding = model.finding
    result.extra[FINDING_KEY] = {"cause": finding.cause, "detail": finding.detail} if finding else None
    if result.success and unearned(Path(job.out_dir)):
        result.extra[UNEARNED_KEY] = True
    if faults:
        result.extra[FAULTS_KEY] = dict(model.faults.injected)
    return result


def unearned(episode_dir: Path) -> bool:
    """Whether the episode stored in ``episode_dir`` ended with the model's "cannot continue", or with its
    premature answer (a fault) that a judge passed (a study run before the judge mock read the reference)."""
    from webarena_gym.experiments.trajectory import Trajectory

    try:
        evaluation = Trajectory.load(episode_dir).evaluation or {}
    except (OSError, ValueError, TypeError):  # no trajectory written, or not one
        return False
    answer = str(evaluation.get("answer") or "")
    checks = ((evaluation.get("details") or {}).get("string_match") or {}).get("checks") or []
    return answer.startswith(GIVE_UP) or (answer == PREMATURE_ANSWER and any(c.get("judge") for c in checks))


def method_limit(result: EpisodeResult) -> Finding | None:
    """What the method itself ended a failed episode by, the model having answered every call: its early
    stop (an action repeated as often as it allows), its budget, or a search's iterations, spent before
    the reference's end."""
    if result.success:
        return None
    if result.policy_counters.get("early_stops"):
        return Finding(METHOD_LOGIC, "the method's early stop: an action repeated as often as it allows")
    if result.budget_exhausted:
        spent = f"{result.budget_exhausted} budget after {result.n_steps} steps"
        return Finding(METHOD_LOGIC, f"the method's {spent} ran out before the reference's end")
    if result.search_budget and (result.search_iterations or 0) >= result.search_budget:
        spent = f"search spent its {result.search_budget} iterations"
        return Finding(METHOD_LOGIC, f"the method's {spent} before a path reached the reference's end")
    return None


def run_matrix(
    methods: Sequence[str],
    tasks: Sequence[TaskInfo],
    out: str | Path,
    *,
    n_workers: int = 1,
    resume: bool = False,
    faults: float = 0.0,
) -> Path:
    """Run the matrix into the study directory ``out`` (``resume`` continues it); with ``faults`` > 0 the
    model gives about that share of wrong answers (:mod:`.faults`)."""
    unknown = [m for m in methods if m not in (*METHODS, *VARIANTS)]
    if unknown:
        covered = ", ".join((*METHODS, *VARIANTS))
        raise ValueError(f"no conformance model for {', '.join(unknown)} yet; covered: {covered}")
    return compare(
        [policy_spec(m) for m in methods],
        list(tasks),
        out,
        n_workers=n_workers,
        resume=resume,
        progress=False,
        env_kwargs={"judge_mock": REFERENCE_JUDGE},  # each episode's runner makes it its task's ReferenceJudge
        runner=functools.partial(run_conformance, faults=faults) if faults else run_conformance,
    )


def cause(result: EpisodeResult) -> str | None:
    """Why an episode did not conform (None when it did)."""
    if result.status == "error":
        return HARNESS_BUG
    if result.success and not result.extra.get(UNEARNED_KEY):
        return None
    finding = result.extra.get(FINDING_KEY)
    return str(finding["cause"]) if finding else METHOD_LOGIC


@dataclass
class Cell:
    tasks: int = 0
    conforming: int = 0
    steps: int = 0
    role_calls: dict[str, int] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)  # wrong answers injected, by kind (noisy runs)


def summarize(study: str | Path) -> dict[str, Any]:
    """The method x site table and every non-conforming episode with its cause."""
    cells: dict[tuple[str, str], Cell] = {}
    failures = []
    for result in StudyStore(study).latest().values():
        cell = cells.setdefault((result.policy, result.site_group), Cell())
        cell.tasks += 1
        cell.steps += result.n_steps
        for role, stats in (result.role_calls or {}).items():
            calls = stats.get("calls", 0) if isinstance(stats, dict) else stats
            cell.role_calls[role] = cell.role_calls.get(role, 0) + int(calls)
        for kind, n in (result.extra.get(FAULTS_KEY) or {}).items():
            cell.faults[kind] = cell.faults.get(kind, 0) + int(n)
        why = cause(result)
        if why is None:
            cell.conforming += 1
        else:
            finding = result.extra.get(FINDING_KEY) or {}
            own = "scored on the model's own answer"
            detail = finding.get("detail") or result.err_msg or (own if result.extra.get(UNEARNED_KEY) else None)
            detail = detail or f"reward {result.reward}"
            limit = own_limit(method_of(result.policy), why, str(detail))
            failures.append(
                {"method": result.policy, "task_id": result.task_id, "cause": why, "detail": detail, "limit": limit}
            )
    return {"cells": cells, "failures": sorted(failures, key=lambda f: (f["method"], f["task_id"]))}


def markdown(summary: dict[str, Any]) -> str:
    """The table and the failures, as Markdown."""
    noisy = any(cell.faults for cell in summary["cells"].values())
    head = "| method | site | conforming | steps | LLM calls by role |" + (" wrong answers given |" if noisy else "")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for (method, site), cell in sorted(summary["cells"].items()):
        calls = ", ".join(f"{role} {n}" for role, n in sorted(cell.role_calls.items()))
        row = f"| {method} | {site} | {cell.conforming}/{cell.tasks} | {cell.steps} | {calls} |"
        if noisy:
            row += " " + (", ".join(f"{kind} {n}" for kind, n in sorted(cell.faults.items())) or "none") + " |"
        lines.append(row)
    if summary["failures"]:
        counts = Counter((f["method"], f["cause"], f["limit"] or "-") for f in summary["failures"])
        lines += ["", "| method | cause | the method's own limit | tasks |", "|---|---|---|---|"]
        lines += [f"| {method} | {why} | {limit} | {n} |" for (method, why, limit), n in sorted(counts.items())]
        lines += ["", "| method | task | cause | the method's own limit | detail |", "|---|---|---|---|---|"]
        for f in summary["failures"]:
            detail = str(f["detail"]).replace("|", "\\|").replace("\n", " ")[:160]
            lines.append(f"| {f['method']} | {f['task_id']} | {f['cause']} | {f['limit'] or '-'} | {detail} |")
    return "\n".join(lines)


def sample(tasks: Sequence[TaskInfo], per_site: int = 1) -> list[TaskInfo]:
    """The first ``per_site`` tasks of each site group (what CI runs)."""
    chosen: dict[str, list[TaskInfo]] = {}
    for task in tasks:
        group = chosen.setdefault(task.site_group, [])
        if len(group) < per_site:
            group.append(task)
    return [t for group in chosen.values() for t in group]
