"""Policy comparison studies: policies x tasks x seeds, one model, one store.

Fairness is the point: every policy meets the same tasks, environment, alignment wrappers (its own
preset), evaluator and model, and every episode goes through the one rollout loop. Results are appended
as episodes end; ``resume=True`` runs only what is missing or errored (errored ones up to
``max_attempts``), never an episode twice.

An episode the infrastructure failed (the model provider or its configuration, the browser, the sites,
the judge, a timeout) is recorded as an error, not as a failure of the policy, and ``resume`` retries it.
A configuration error (a missing or rejected key, an unknown model, a prompt over the server's context)
would fail every episode alike: the study stops at the first one with :class:`StudyStopped`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webarena_gym.experiments import tasksets
from webarena_gym.experiments.executors import make_executor
from webarena_gym.experiments.reproducibility import machine_record
from webarena_gym.experiments.store import RESULTS_FILE, EpisodeResult, StudyStore, episode_key, trajectory_intact
from webarena_gym.experiments.tasksets import TaskInfo

if TYPE_CHECKING:
    from webarena_gym.policies.base import Policy

DEFAULT_STEP_TIMEOUT_S = 30.0  # per step of budget; an episode's deadline is max_steps times this
STEP_TIMEOUT_MARGIN_S = 30.0  # browser and evaluation time per step beyond one LLM call's timeout
LOCK_FILE = "study.lock"
STORAGE_FAILURE = "the episode's trajectory could not be written (disk full?); --resume runs it again"


class StudyConfigError(ValueError):
    """The study cannot start as configured (e.g. a policy option no policy accepts)."""


class StudyBusyError(StudyConfigError):
    """Another run holds the study directory."""


class StudyStopped(RuntimeError):
    """The study stopped at an episode whose error every other episode would repeat (a configuration
    error); ``result`` is that episode. Fix the configuration and continue with ``resume=True``."""

    def __init__(self, message: str, result: EpisodeResult) -> None:
        super().__init__(message)
        self.result = result


def step_timeout(step_timeout_s: float | None, llm_timeout_s: float | None) -> float:
    """Seconds allowed per step of an episode's budget: as given, else room for one LLM call of
    ``llm_timeout_s`` plus the browser's work, else :data:`DEFAULT_STEP_TIMEOUT_S`."""
    if step_timeout_s:
        return float(step_timeout_s)
    if llm_timeout_s:
        return max(DEFAULT_STEP_TIMEOUT_S, float(llm_timeout_s) + STEP_TIMEOUT_MARGIN_S)
    return DEFAULT_STEP_TIMEOUT_S


@dataclass(frozen=True)
class PolicySpec:
    """A policy as a study names it: registry name, constructor config, and the label reports show."""

    name: str
    config: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    def display(self) -> str:
        return self.label or self.name

    def key(self) -> str:
        """A short stable hash of the name and every option (sorted): what tells two configurations
        apart in episode keys and folder names, whatever their labels say."""
        blob = json.dumps({"name": self.name, "config": self.config}, sort_keys=True, default=_option_text)
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _option_text(value: Any) -> str:
    """An option JSON cannot hold (a scripted LLM, an LLM object) by its type: a repr would carry a
    memory address, which changes from run to run."""
    return f"<{type(value).__qualname__}>"


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
    policy_key: str = ""  # PolicySpec.key, or the label when resuming a study written before keys existed

    @property
    def key(self) -> str:
        return episode_key(self.policy_key or self.policy.key(), self.task.env_id, self.seed)


def _uses_llm(spec: PolicySpec) -> bool:
    from webarena_gym.policies.base import policy_class

    try:
        return policy_class(spec.name).uses_llm
    except KeyError:
        return True


def _failed_result(job: EpisodeJob, kind: str, message: str) -> EpisodeResult:
    """The result of an attempt that produced no trajectory (timed out, worker died, policy not built):
    an error whose cost is unknown when the policy calls a model."""
    return _result_base(job, "error", error_kind=kind, err_msg=message, cost_known=not _uses_llm(job.policy))


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
        policy_key=job.policy_key or job.policy.key(),
        **kw,
    )


def run_job(job: EpisodeJob, build_policy: Callable[[EpisodeJob], Policy] | None = None) -> EpisodeResult:
    """Run one episode in this process (the worker side of every executor).

    ``build_policy`` replaces the registry lookup of ``job.policy`` (benchmarks use it to attach a
    scripted LLM that needs the task); bind it with :func:`functools.partial` to make a ``runner``.
    """
    from webarena_gym.experiments.rollout import run_episode
    from webarena_gym.policies import make_policy

    started = time.monotonic()
    try:
        policy = build_policy(job) if build_policy is not None else make_policy(job.policy.name, **job.policy.config)
    except Exception as exc:  # noqa: BLE001 - options no policy accepts: every episode would fail alike
        return _failed_result(job, "configuration", f"policy {job.policy.name!r} could not be built: {exc}")
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
    error = traj.infrastructure_error
    stored = trajectory_intact(Path(job.out_dir))
    return _result_base(
        job,
        # An outage (model provider, browser, sites, judge) is an error; a policy that crashed or gave
        # up mid-episode still produced a scored episode, which is the policy's failure. An episode whose
        # trajectory could not be written (a full disk) is an error too: nothing shows what it did.
        status="error" if error or not stored else "done",
        error_kind=(traj.error_kind or traj.error_source) if error else (None if stored else "storage"),
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
        err_msg=traj.err_msg if stored else STORAGE_FAILURE,
        trajectory=os.path.relpath(job.out_dir, job.study_dir),
        extra={"reproducibility": _episode_record(job, traj.reset_info)},
    )


def _episode_record(job: EpisodeJob, reset_info: dict[str, Any]) -> dict[str, Any]:
    from webarena_gym.experiments.reproducibility import episode_record

    evaluator = str(reset_info.get("evaluator") or job.env_kwargs.get("evaluator") or "webarena")
    return episode_record(job.policy.name, evaluator, reset_info.get("browser_version"))


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


@contextmanager
def _study_lock(root: Path) -> Iterator[None]:
    """Hold the study directory for one run: a second ``compare`` (or a ``--resume``) on it while this
    one runs would run its episodes twice and interleave their records."""
    from filelock import FileLock, Timeout

    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(root / LOCK_FILE), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise StudyBusyError(f"{root} is in use by another run of this study; wait for it to end or stop it") from None
    try:
        yield
    finally:
        lock.release()


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
    llm_budget: dict[str, float] | None = None,
    episode_timeout_s: float | None = None,
    env_kwargs: dict[str, Any] | None = None,
    resume: bool = False,
    max_attempts: int = 2,
    progress: bool = True,
    screenshots: bool = False,
    runner: Callable[[EpisodeJob], EpisodeResult] | None = None,
    api_base: str | None = None,
    llm_timeout_s: float | None = None,
    step_timeout_s: float | None = None,
) -> Path:
    """Run (or continue) a study and return its directory. Ctrl-C stops it cleanly; resume later.

    ``screenshots`` saves a PNG per step next to each trajectory (the HTML report shows them).
    ``runner`` replaces the per-episode function (default :func:`run_job`); it must be picklable.
    ``api_base`` (an OpenAI-compatible server) and ``llm_timeout_s`` (per LLM call) reach every LLM
    policy (unless its own options set them) and the evaluator's judge. ``llm_budget`` (``max_llm_calls``,
    ``max_llm_tokens``, ``max_llm_cost``) is every LLM policy's per-episode LLM budget unless its own
    options set one. An episode's deadline is its
    decision budget times ``step_timeout_s`` (default: see :func:`step_timeout`), or
    ``episode_timeout_s``. Raises :class:`StudyConfigError` before anything runs when a policy cannot
    be built from its options, and :class:`StudyStopped` at the first configuration error.
    """
    task_list = tasksets.resolve(tasks) if isinstance(tasks, str) else list(tasks)
    seeds = list(seeds)
    store = StudyStore(out)
    if resume:
        store.read_manifest()  # no study there: say so before the lock creates the directory
    with _study_lock(store.root):
        previous = store.read_manifest() if resume else None
        keys = _policy_keys(policies, previous)
        policies = [_with_llm_options(p, api_base, llm_timeout_s, llm_budget or {}) for p in policies]
        if runner is None:
            _check_policies(policies)
        env_kwargs = dict(env_kwargs or {})
        judge_options = {k: v for k, v in (("api_base", api_base), ("timeout", llm_timeout_s)) if v is not None}
        if judge_options:
            env_kwargs["judge_options"] = {**judge_options, **env_kwargs.get("judge_options", {})}
        groups = [(p, k, s) for p, k in zip(policies, keys, strict=True) for s in seeds]
        deps, ordering_note = _ordering(task_list, len(groups))
        manifest = {
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "policies": [asdict(p) | {"label": p.display(), "key": k} for p, k in zip(policies, keys, strict=True)],
            "tasks": [t.env_id for t in task_list],
            "task_set": tasks if isinstance(tasks, str) else None,
            "seeds": seeds,
            "model": model,
            "executor": executor,
            "n_workers": n_workers,
            "max_steps": max_steps,
            "max_interactions": max_interactions,
            "llm_budget": dict(llm_budget or {}),
            "api_base": api_base,
            "llm_timeout_s": llm_timeout_s,
            "step_timeout_s": step_timeout(step_timeout_s, llm_timeout_s),
            "episode_timeout_s": episode_timeout_s,
            "env_kwargs": dict(env_kwargs or {}),  # the evaluator and its judge, among others
            "ordering": ordering_note,
            "code_revision": machine_record()["code_revision"],
            "reproducibility": machine_record(),
        }
        if previous is not None:
            manifest["created"] = previous.get("created", manifest["created"])
            manifest["resumed"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        elif (store.root / RESULTS_FILE).exists():
            raise FileExistsError(f"{out} already holds a study; pass resume=True (--resume) to continue it")
        store.write_manifest(manifest)

        latest = store.latest()
        made = store.attempt_counts()
        counted = store.attempt_counts(configuration_errors=False)
        jobs: list[EpisodeJob] = []
        finished_keys: set[str] = set()
        for policy, policy_key, seed in groups:
            for task in task_list:
                key = episode_key(policy_key, task.env_id, seed)
                prev = latest.get(key)
                if prev and prev.status == "done" and not _recorded(store, prev):
                    prev = None  # a torn trajectory (a study from before atomic writes): run the episode again
                if prev and (prev.status == "done" or counted.get(key, 0) >= max_attempts):
                    finished_keys.add(key)
                    continue
                attempt = made.get(key, 0) + 1
                jobs.append(
                    EpisodeJob(
                        policy=policy,
                        task=task,
                        seed=seed,
                        attempt=attempt,
                        out_dir=str(store.episode_dir(key, attempt, policy.display()).resolve()),
                        study_dir=str(store.root.resolve()),
                        max_steps=max_steps if max_steps is not None else task.max_steps,
                        max_interactions=max_interactions,
                        env_kwargs=dict(env_kwargs),
                        screenshots=screenshots,
                        policy_key=policy_key,
                    )
                )

        def ready(job: EpisodeJob, group_index: dict[tuple[str, int], int]) -> bool:
            mine = group_index[(job.policy_key, job.seed)]
            if any(episode_key(job.policy_key, d, job.seed) not in finished_keys for d in deps[job.task.env_id]):
                return False
            if ordering_note.startswith("real") and mine > 0:
                _, k, s = groups[mine - 1]
                return all(episode_key(k, t.env_id, s) in finished_keys for t in task_list)
            return True

        group_index = {(k, s): i for i, (_, k, s) in enumerate(groups)}
        per_step = step_timeout(step_timeout_s, llm_timeout_s)

        def deadline(job: EpisodeJob) -> float:
            if episode_timeout_s:
                return float(episode_timeout_s)
            budget = job.max_steps or job.policy.config.get("max_steps") or _default_budget(job.policy)
            return int(budget) * per_step

        _run_jobs(
            store,
            jobs,
            lambda j: ready(j, group_index),
            finished_keys,
            executor,
            n_workers,
            ray_address,
            deadline,
            progress,
            len(groups) * len(task_list),
            runner or run_job,
        )
        return store.root


def _recorded(store: StudyStore, result: EpisodeResult) -> bool:
    """Whether a finished episode's trajectory is whole on disk (a result without one has none to check)."""
    return not result.trajectory or trajectory_intact(store.root / result.trajectory)


def _policy_keys(policies: Sequence[PolicySpec], previous: dict[str, Any] | None) -> list[str]:
    """Each policy's key; refuses (:class:`StudyConfigError`) two policies the study could not tell apart.

    A study written before keys existed (its manifest's policies have no ``key``) goes on keying its
    episodes by label, so ``resume`` finds what it already ran.
    """
    legacy = previous is not None and any("key" not in p for p in previous.get("policies") or ())
    keys = [p.display() if legacy else p.key() for p in policies]
    labels: dict[str, str] = {}
    for spec, key in zip(policies, keys, strict=True):
        if keys.count(key) > 1:
            raise StudyConfigError(
                f"policy {spec.display()!r} is given twice with the same configuration; a study runs each once"
            )
        if labels.setdefault(spec.display(), key) != key:
            raise StudyConfigError(
                f"two different configurations share the label {spec.display()!r}; reports could not tell them "
                "apart: give each its own label (--policy name:label=...,key=value)"
            )
    return keys


def _default_budget(spec: PolicySpec) -> int:
    """The decision budget a policy has when the study sets none (its class's default)."""
    import inspect

    from webarena_gym.policies.base import DEFAULT_MAX_STEPS, policy_class

    try:
        default = inspect.signature(policy_class(spec.name)).parameters.get("max_steps")
    except KeyError:
        return DEFAULT_MAX_STEPS
    return int(default.default) if default is not None and isinstance(default.default, int) else DEFAULT_MAX_STEPS


def _with_llm_options(
    spec: PolicySpec, api_base: str | None, llm_timeout_s: float | None, llm_budget: dict[str, float]
) -> PolicySpec:
    """``spec`` with the study's API base, LLM timeout and LLM budget, for a policy that calls a model
    and does not set them itself."""
    study = {k: v for k, v in (("api_base", api_base), ("timeout", llm_timeout_s)) if v is not None}
    study.update(llm_budget)
    if not study or not _uses_llm(spec):
        return spec
    return PolicySpec(spec.name, {**study, **spec.config}, spec.label)


def _check_policies(policies: Sequence[PolicySpec]) -> None:
    """Build each policy once before any episode runs: options it does not accept stop the study here
    with the policy's own message, instead of failing every episode."""
    from webarena_gym.policies import make_policy

    for spec in policies:
        try:
            make_policy(spec.name, **spec.config)
        except Exception as exc:  # noqa: BLE001 - any construction failure is a configuration error
            raise StudyConfigError(f"policy {spec.display()!r} cannot be built from its options: {exc}") from exc


def progress_line(results: Sequence[EpisodeResult]) -> str:
    """The progress bar's figures so far: success over judged episodes, errors, tokens and cost (an
    unknown cost reads "unknown" and a partly unknown one "+?", never a bare $0)."""
    from webarena_gym.experiments.report.summary import cost_status

    errors = sum(1 for r in results if r.status == "error")
    ok = sum(1 for r in results if r.success)
    tokens = sum(r.prompt_tokens + r.completion_tokens for r in results)
    spent = f"${sum(r.cost for r in results):.2f}"
    cost = {"known": spent, "partly unknown": f"{spent}+?", "unknown": "unknown"}[cost_status(list(results))]
    errored = f" errors {errors}" if errors else ""
    return f"success {ok}/{len(results) - errors}{errored} tokens {tokens:,} cost {cost}"


class _Progress:
    """A progress bar that shows success, tokens and cost so far (silent when disabled), and the first
    error of each kind with its message as it happens, bar or not: a count alone says nothing of the
    cause, and the first of a kind is usually the one to fix."""

    def __init__(self, enabled: bool, total: int, done: int):
        self.results: list[EpisodeResult] = []
        self.error_kinds: set[str] = set()
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="ep", dynamic_ncols=True)

    def update(self, r: EpisodeResult) -> None:
        self.results.append(r)
        kind = r.error_kind or "unknown"
        # a configuration error stops the study, whose message then says it once (StudyStopped)
        if r.status == "error" and kind not in self.error_kinds and kind != "configuration":
            self.error_kinds.add(kind)
            self._say(_first_error_line(r))
        if self.bar is not None:
            self.bar.set_postfix_str(progress_line(self.results), refresh=False)
            self.bar.update(1)

    def _say(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=sys.stderr)  # above the bar, which redraws below it
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _run_jobs(
    store, jobs, is_ready, finished_keys, executor_name, n_workers, ray_address, deadline, progress, total, runner
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
        if result.status == "error" and result.error_kind == "configuration":
            raise StudyStopped(_stop_message(result), result)

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
                running[slot] = (job, time.monotonic() + deadline(job))
            if not running and pending:
                raise RuntimeError("study deadlock: remaining tasks wait on tasks that are not in the study")
            for slot, fin in executor.poll(timeout=0.5):
                job, _ = running.pop(slot)
                record(job, fin.result or _failed_result(job, "worker", _worker_failure(fin.error)))
            now = time.monotonic()
            for slot, (job, ends) in list(running.items()):
                if now > ends:
                    executor.kill(slot)
                    running.pop(slot)
                    message = (
                        f"episode timed out after {deadline(job):.0f} s (slow model? --llm-timeout, --step-timeout)"
                    )
                    record(job, _failed_result(job, "timeout", message))
    except KeyboardInterrupt:
        print(f"\nstopped: {len(running)} episode(s) in flight were dropped; continue with --resume", file=sys.stderr)
        raise
    finally:
        executor.close()
        bar.close()


def _first_error_line(r: EpisodeResult) -> str:
    from webarena_gym.experiments.report.console import error_line
    from webarena_gym.llm.redaction import redact

    line = error_line(r.error_kind or "unknown", r.policy, r.env_id, redact(r.err_msg or ""))
    return f"first {line} (every errored episode: the report's Errors section)"


def _worker_failure(error: str | None) -> str:
    """The last line of a worker's traceback (the exception), not the whole traceback."""
    lines = [line for line in (error or "").strip().splitlines() if line.strip()]
    return f"the episode's worker failed: {lines[-1].strip()}" if lines else "the episode's worker failed"


def _stop_message(result: EpisodeResult) -> str:
    return (
        f"study stopped: {result.policy} on {result.env_id} hit a configuration error that every episode would "
        f"repeat:\n  {result.err_msg}\nFix the model name, API key, --api-base or the server's context length, "
        "then continue the study with --resume."
    )
