"""Policy comparison studies: policies x tasks x seeds, one model, one store.

Fairness is the point: every policy meets the same tasks, environment, alignment wrappers (its own
preset), evaluator and model, and every episode goes through the one rollout loop. Results are appended
as episodes end; ``resume=True`` runs only what is missing or errored (errored ones up to
``max_attempts``), never an episode twice.
"""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from experiments import tasksets
from experiments.executors import make_executor
from experiments.store import EpisodeResult, StudyStore, episode_key
from experiments.tasksets import TaskInfo

if TYPE_CHECKING:
    from policies.base import Policy

DEFAULT_STEP_TIMEOUT_S = 30.0  # per step of budget; an episode's deadline is max_steps times this


@dataclass(frozen=True)
class PolicySpec:
    """A policy as a study names it: registry name, constructor config, and the label reports show."""

    name: str
    config: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    def display(self) -> str:
        return self.label or self.name


@dataclass
class EpisodeJob:
    policy: PolicySpec
    task: TaskInfo
    seed: int
    attempt: int
    out_dir: str  # absolute path of this attempt's episode directory
    study_dir: str
    max_steps: int | None
    env_kwargs: dict[str, Any]
    max_interactions: int | None = None
    screenshots: bool = False

    @property
    def key(self) -> str:
        return episode_key(self.policy.display(), self.task.env_id, self.seed)


def _result_base(job: EpisodeJob, status: str, **kw: Any) -> EpisodeResult:
    return EpisodeResult(
        policy=job.policy.display(),
        env_id=job.task.env_id,
        task_id=job.task.task_id,
        site_group=job.task.site_group,
        template_id=job.task.template_id,
        seed=job.seed,
        status=status,
        attempt=job.attempt,
        **kw,
    )


def run_job(job: EpisodeJob, build_policy: Callable[[EpisodeJob], Policy] | None = None) -> EpisodeResult:
    """Run one episode in this process (the worker side of every executor).

    ``build_policy`` replaces the registry lookup of ``job.policy`` (benchmarks use it to attach a
    scripted LLM that needs the task); bind it with :func:`functools.partial` to make a ``runner``.
    """
    from experiments.rollout import run_episode
    from policies import make_policy

    started = time.monotonic()
    policy = build_policy(job) if build_policy is not None else make_policy(job.policy.name, **job.policy.config)
    traj = run_episode(
        job.task.env_id,
        policy,
        seed=job.seed,
        max_steps=job.max_steps,
        max_interactions=job.max_interactions,
        env_kwargs=job.env_kwargs,
        out_dir=job.out_dir,
        screenshots=job.screenshots,
    )
    stats = traj.stats()
    return _result_base(
        job,
        # An episode that could not start (no sites, dead browser at reset) is an error; a policy that
        # crashed mid-episode still produced a scored episode, which is the policy's failure.
        status="error" if traj.error_source == "env" and not traj.steps else "done",
        reward=float(traj.reward),
        n_steps=len(traj.steps),
        llm_calls=int(stats["cum_llm_calls"]),
        prompt_tokens=int(stats["cum_prompt_tokens"]),
        completion_tokens=int(stats["cum_completion_tokens"]),
        cost=float(stats["cum_cost"]),
        cost_known=not stats["cost_unknown_calls"],
        wall_time_s=time.monotonic() - started,
        terminated=traj.terminated,
        truncated=traj.truncated,
        interactions=traj.counters["interactions"],
        restores=traj.counters["restores"],
        budget_exhausted=traj.budget_exhausted,
        oracle_assisted=traj.oracle_assisted,
        trial_scores=[t["score"] for t in traj.trials],
        trial_actions=trial_actions(traj.trials),
        role_calls=traj.role_stats(),
        action_counts=traj.command_counts(),
        commands=list(traj.task.get("commands") or ()),
        observation_tokens=sum(traj.observation_tokens()),
        policy_counters=_policy_counters(traj.final_policy_state),
        **_search_figures(traj.tree, traj.counters["interactions"]),
        err_msg=traj.err_msg,
        trajectory=os.path.relpath(job.out_dir, job.study_dir),
    )


def trial_actions(trials: list[dict[str, Any]]) -> list[int]:
    """Actions per trial: the policy's own count where its trial notes give one (``actions``: it may count
    actions that never reach the browser, such as notes), else the interactions the trial used."""
    counts, before = [], 0
    for trial in trials:
        used = int(trial.get("interactions") or 0)
        own = (trial.get("notes") or {}).get("actions")
        counts.append(own if isinstance(own, int) else used - before)
        before = used
    return counts


def _policy_counters(state: Any) -> dict[str, float]:
    """The numeric counters a policy reports in its final ``state()["counters"]`` (CoAct's exchanges,
    re-plans ...), for the report's counter table; anything else there is left out."""
    counters = state.get("counters") if isinstance(state, dict) else None
    if not isinstance(counters, dict):
        return {}
    return {str(k): float(v) for k, v in counters.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def _search_figures(tree: dict[str, Any] | None, interactions: int) -> dict[str, Any]:
    """Path length and iteration use (Plan-MCTS's Table 3 and Fig. 3). A search's path is the actions of
    its final path's edges; without a tree every action the policy ran is on its path."""
    if not tree or "nodes" not in tree:
        return {"path_length": interactions}
    nodes = tree["nodes"]
    final = [i for i in tree.get("final_path") or () if isinstance(i, int) and 0 <= i < len(nodes)]
    return {
        "path_length": sum(len(nodes[i].get("actions") or ()) for i in final) if final else None,
        "search_iterations": tree.get("iterations"),
        "search_budget": tree.get("iteration_budget"),
    }


def _git_revision() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _ordering(tasks: Sequence[TaskInfo], n_groups: int) -> tuple[dict[str, set[str]], str]:
    """Dependencies between tasks of one (policy, seed) group, and the note the study records."""
    chosen = {t.env_id for t in tasks}
    deps = {t.env_id: {d for d in t.depends_on if d in chosen} for t in tasks}
    constrained = sum(1 for d in deps.values() if d)
    if not constrained:
        return deps, "no ordering constraints (local tasks run on their own site instance, reset per episode)"
    note = (
        f"real WebArena: {constrained} tasks wait for the tasks BrowserGym's metadata says they depend on "
        "(state-changing tasks are ordered per site)"
    )
    if n_groups > 1:
        note += (
            "; policy/seed groups run one after another because the shared real sites are not reset between "
            "them (reset the instance between studies, as WebArena requires)"
        )
    return deps, note


def compare(
    policies: Sequence[PolicySpec],
    tasks: str | Sequence[TaskInfo],
    out: str | os.PathLike,
    *,
    seeds: Iterable[int] = (0,),
    model: str | None = None,
    executor: str = "process",
    n_workers: int = 1,
    ray_address: str | None = None,
    max_steps: int | None = None,
    max_interactions: int | None = None,
    episode_timeout_s: float | None = None,
    env_kwargs: dict[str, Any] | None = None,
    resume: bool = False,
    max_attempts: int = 2,
    progress: bool = True,
    screenshots: bool = False,
    runner: Callable[[EpisodeJob], EpisodeResult] | None = None,
) -> Path:
    """Run (or continue) a study and return its directory. Ctrl-C stops it cleanly; resume later.

    ``screenshots`` saves a PNG per step next to each trajectory (the HTML report shows them).
    ``runner`` replaces the per-episode function (default :func:`run_job`); it must be picklable.
    """
    task_list = tasksets.resolve(tasks) if isinstance(tasks, str) else list(tasks)
    seeds = list(seeds)
    store = StudyStore(out)
    groups = [(p, s) for p in policies for s in seeds]
    deps, ordering_note = _ordering(task_list, len(groups))
    manifest = {
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "policies": [asdict(p) | {"label": p.display()} for p in policies],
        "tasks": [t.env_id for t in task_list],
        "task_set": tasks if isinstance(tasks, str) else None,
        "seeds": seeds,
        "model": model,
        "executor": executor,
        "n_workers": n_workers,
        "max_steps": max_steps,
        "max_interactions": max_interactions,
        "env_kwargs": dict(env_kwargs or {}),  # the evaluator and its judge, among others
        "ordering": ordering_note,
        "code_revision": _git_revision(),
    }
    if resume:
        previous = store.read_manifest()
        manifest["created"] = previous.get("created", manifest["created"])
        manifest["resumed"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    elif (Path(out) / "results.jsonl").exists():
        raise FileExistsError(f"{out} already holds a study; pass resume=True (--resume) to continue it")
    store.write_manifest(manifest)

    latest = store.latest()
    counts = store.attempt_counts()
    jobs: list[EpisodeJob] = []
    finished_keys: set[str] = set()
    for policy, seed in groups:
        for task in task_list:
            key = episode_key(policy.display(), task.env_id, seed)
            prev = latest.get(key)
            if prev and (prev.status == "done" or counts[key] >= max_attempts):
                finished_keys.add(key)
                continue
            attempt = counts.get(key, 0) + 1
            jobs.append(
                EpisodeJob(
                    policy=policy,
                    task=task,
                    seed=seed,
                    attempt=attempt,
                    out_dir=str(store.episode_dir(key, attempt).resolve()),
                    study_dir=str(store.root.resolve()),
                    max_steps=max_steps if max_steps is not None else task.max_steps,
                    max_interactions=max_interactions,
                    env_kwargs=dict(env_kwargs or {}),
                    screenshots=screenshots,
                )
            )

    def ready(job: EpisodeJob, group_index: dict[tuple[str, int], int]) -> bool:
        mine = group_index[(job.policy.display(), job.seed)]
        if any(episode_key(job.policy.display(), d, job.seed) not in finished_keys for d in deps[job.task.env_id]):
            return False
        if ordering_note.startswith("real") and mine > 0:
            p, s = groups[mine - 1]
            return all(episode_key(p.display(), t.env_id, s) in finished_keys for t in task_list)
        return True

    group_index = {(p.display(), s): i for i, (p, s) in enumerate(groups)}
    timeout = episode_timeout_s or (max_steps or 30) * DEFAULT_STEP_TIMEOUT_S
    _run_jobs(
        store,
        jobs,
        lambda j: ready(j, group_index),
        finished_keys,
        executor,
        n_workers,
        ray_address,
        timeout,
        progress,
        len(groups) * len(task_list),
        runner or run_job,
    )
    return store.root


class _Progress:
    """A progress bar that shows success, tokens and cost so far; silent when disabled."""

    def __init__(self, enabled: bool, total: int, done: int):
        self.ok = self.n = self.tokens = 0
        self.cost = 0.0
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="ep", dynamic_ncols=True)

    def update(self, r: EpisodeResult) -> None:
        self.n += 1
        self.ok += int(r.success)
        self.tokens += r.prompt_tokens + r.completion_tokens
        self.cost += r.cost
        if self.bar is not None:
            self.bar.set_postfix_str(
                f"success {self.ok}/{self.n} tokens {self.tokens:,} cost ${self.cost:.2f}", refresh=False
            )
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _run_jobs(
    store, jobs, is_ready, finished_keys, executor_name, n_workers, ray_address, timeout, progress, total, runner
) -> None:
    pending = list(jobs)
    if not pending:
        return
    bar = _Progress(progress, total, total - len(pending))
    n_workers = max(1, min(n_workers, len(pending)))
    executor = make_executor(executor_name, n_workers, runner, ray_address)
    running: dict[int, tuple[EpisodeJob, float]] = {}
    # A worker keeps its last sites running (and logged in): hand it tasks on those sites while any
    # are ready, so workers do not each start and log into every site of the study.
    warm_sites: dict[int, tuple[str, ...]] = {}

    def next_job(slot: int) -> EpisodeJob | None:
        ready = (j for j in pending if is_ready(j))
        first = next(ready, None)
        if first is None or first.task.sites == warm_sites.get(slot):
            return first
        return next((j for j in ready if j.task.sites == warm_sites.get(slot)), first)

    def record(job: EpisodeJob, result: EpisodeResult) -> None:
        store.append(result)
        finished_keys.add(job.key)
        bar.update(result)

    try:
        while pending or running:
            for slot in range(executor.n_slots):
                if slot in running:
                    continue
                job = next_job(slot)
                if job is None:
                    break
                pending.remove(job)
                warm_sites[slot] = job.task.sites
                Path(job.out_dir).mkdir(parents=True, exist_ok=True)
                executor.submit(slot, job)
                running[slot] = (job, time.monotonic() + timeout)
            if not running and pending:
                raise RuntimeError("study deadlock: remaining tasks wait on tasks that are not in the study")
            for slot, fin in executor.poll(timeout=0.5):
                job, _ = running.pop(slot)
                record(job, fin.result or _result_base(job, "error", err_msg=fin.error))
            now = time.monotonic()
            for slot, (job, deadline) in list(running.items()):
                if now > deadline:
                    executor.kill(slot)
                    running.pop(slot)
                    record(job, _result_base(job, "error", err_msg=f"episode timed out after {timeout:.0f} s"))
    except KeyboardInterrupt:
        print(f"\nstopped: {len(running)} episode(s) in flight were dropped; continue with --resume", file=sys.stderr)
        raise
    finally:
        executor.close()
        bar.close()
