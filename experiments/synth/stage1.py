"""Stage 1, action trajectories (the paper's Sec. 4.1): queries from seed tasks, a feasibility filter,
demonstrator rollouts and an outcome filter.

1. **Queries.** Each call shows the teacher ``n_seed`` seed tasks of one site (sites taken round-robin,
   seeds drawn with the item's sampling seed) and asks for ``n_new`` new ones, each starting on one
   example's start page [P: 5 -> 10]. A second call judges each query feasible or not [P: an LLM filter].
   Queries that repeat an evaluated task's intent, or a seed's, are dropped.
2. **Rollouts.** Every kept query becomes a synthetic task: its example's task config (sites, start
   page, login) with the new intent and no evaluator (env option ``task_overrides``), named
   ``<example env id>#<query key>``. The demonstrator (any policy of the project, any model) runs them,
   and with ``seed_rollouts`` also the seed tasks themselves, as one study in ``stage1/study`` (worker
   processes, per-episode trajectories, resumable, readable by ``webarena-gym report``).
3. **Outcomes.** A seed task is scored by its own evaluator; a synthetic task by the outcome reward model
   (the ``orm`` role) from the query, the actions, the final message and the last page [P: ORM-Llama-3.1-8B].
   ``outcome="orm"`` judges seed tasks by the ORM too. Episodes that ended without an answer of the
   policy's own (a spent budget, an early stop, an error) are not kept and cost no call.

Successful episodes of other studies can join (``import_studies``): scored by their evaluator, checked
against the evaluation exclusion. ``stage1/trajectories.jsonl`` then holds every finished episode, its
outcome and whether it is kept, with its pages in the page store: later stages never read the study.
"""

from __future__ import annotations

import functools
import random
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from webarena_gym.experiments.compare import EpisodeJob, compare, run_job
from webarena_gym.experiments.store import EpisodeResult, StudyStore, episode_key
from webarena_gym.experiments.synth import prompts
from webarena_gym.experiments.synth.context import STUDY_DIR, Run
from webarena_gym.experiments.synth.costs import demonstrator_estimate
from webarena_gym.experiments.synth.parsing import normalize, parse_feasibility, parse_queries, parse_verdict
from webarena_gym.experiments.synth.splits import SeedTask
from webarena_gym.experiments.synth.teacher import TeacherGaveUp
from webarena_gym.experiments.synth.work import derive_seed, fill, run_items
from webarena_gym.experiments.tasksets import TaskInfo
from webarena_gym.experiments.trajectory import Trajectory
from webarena_gym.wrappers.observations.html import strip_ids
from webarena_gym.wrappers.presets import PRESETS

DEMO_CALLS_PER_STEP = 2  # [I] for the cost estimate: a planner or replanner call and an executor call


@dataclass(frozen=True)
class SyntheticTask(TaskInfo):
    """A generated query as a study task: the example task's env (``base_env_id``) with another intent."""

    base_env_id: str = ""
    intent: str = ""


def run_synthetic_job(job: EpisodeJob, build_policy: Any = None) -> EpisodeResult:
    """The study's runner: a synthetic task runs as its example's env with the query as intent and no
    evaluator of its own; its result keeps the synthetic id, so the study resumes by it."""
    task = job.task
    if not isinstance(task, SyntheticTask):
        return run_job(job, build_policy)
    base = TaskInfo(task.base_env_id, task.task_id, task.sites, task.template_id, (), (), task.max_steps)
    overrides = {"intent": task.intent, "eval": {"eval_types": []}}
    inner = replace(job, task=base, env_kwargs={**job.env_kwargs, "task_overrides": overrides})
    return replace(run_job(inner, build_policy), env_id=task.env_id)


def _start_page(url: str) -> str:
    return re.sub(r"__[A-Z_]+__", "", url.split(" |AND| ")[0]) or "/"


# -- 1. queries ----------------------------------------------------------------------------------------


def generate_queries(run: Run, seeds: list[SeedTask]) -> None:
    cfg, teacher = run.cfg, run.teacher
    by_site: dict[str, list[SeedTask]] = defaultdict(list)
    for task in seeds:
        by_site[task.site].append(task)
    sites = sorted(by_site)
    seen = {normalize(t.intent): t.env_id for t in seeds}
    store, rejected = run.store("queries"), run.rejected(1)
    if not sites or cfg.queries <= 0:
        return

    def batch_messages(i: int) -> tuple[str, list[SeedTask], int, list]:
        site = sites[i % len(sites)]
        sample_seed = derive_seed(cfg.seed, "queries", i)
        examples = random.Random(sample_seed).sample(by_site[site], min(cfg.n_seed, len(by_site[site])))
        shown = [(f"{_start_page(e.start_url)} ({site})", e.intent) for e in examples]
        return site, examples, sample_seed, prompts.query_messages(site, shown, cfg.n_new)

    def run_batch(i: int) -> None:
        site, examples, sample_seed, messages = batch_messages(i)
        prov = teacher.provenance("query_generator", sample_seed)
        check = teacher.provenance("feasibility", sample_seed)
        try:
            queries, _ = teacher.ask("query_generator", messages, lambda t: parse_queries(t, cfg.n_new, len(examples)))
            check_msgs = prompts.feasibility_messages(site, [e.intent for e in examples], [q for q, _ in queries])
            verdicts, _ = teacher.ask("feasibility", check_msgs, lambda t: parse_feasibility(t, len(queries)))
        except TeacherGaveUp as gave_up:
            run.reject(1, f"q:{i}", gave_up, prov, batch=f"q:{i}")
            return
        records = []
        for j, ((query, index), (feasible, reason)) in enumerate(zip(queries, verdicts, strict=True)):
            copy = seen.get(normalize(query))
            dropped = run.exclusion.reason(None, query) or (f"a copy of the seed task {copy}" if copy else None)
            records.append(
                {
                    "key": f"q:{i}:{j}",
                    "batch": f"q:{i}",
                    "batch_size": len(queries),
                    "index": j,
                    "site": site,
                    "seeds": [e.env_id for e in examples],
                    "start_task": examples[index - 1].env_id,
                    "intent": query,
                    "feasible": feasible,
                    "reason": reason,
                    "dropped": dropped,
                    "teacher": prov,
                    "checker": check,
                }
            )
        store.append(records)

    def finished() -> set[int]:
        keys = {r["batch"] for r in store.load()} | {r["key"] for r in rejected.load()}
        return {int(k.split(":")[1]) for k in keys if k.startswith("q:")}

    missing = max(0, cfg.queries - len(store.load()))
    n_calls = -(-missing // cfg.n_new)
    samples = [batch_messages(i)[3] for i in range(min(n_calls, 3))]
    check = [prompts.feasibility_messages("site", ["a seed task"] * cfg.n_seed, ["a new task"] * cfg.n_new)]
    parts = [teacher.estimate("query_generator", samples, n_calls), teacher.estimate("feasibility", check, n_calls)]
    run.costs.estimate("stage 1: queries", parts)
    fill(cfg.queries, cfg.n_new, lambda: len(store.load()), finished, run_batch, **run.run_opts("stage 1 queries"))


def usable_queries(run: Run) -> list[dict[str, Any]]:
    return [q for q in run.store("queries").load() if q["feasible"] and not q["dropped"]]


# -- 2. rollouts ---------------------------------------------------------------------------------------


def study_tasks(run: Run, seeds: list[SeedTask]) -> list[TaskInfo]:
    """The demonstrator's tasks: one per usable query (and the seed tasks themselves)."""
    by_env = {t.env_id: t.info for t in seeds}
    tasks: list[TaskInfo] = []
    for q in usable_queries(run):
        base = by_env.get(q["start_task"])
        if base is None:  # the seed pool changed since the query was made; it cannot start anywhere
            continue
        tasks.append(
            SyntheticTask(
                env_id=f"{base.env_id}#{q['key']}",
                task_id=base.task_id,
                sites=base.sites,
                template_id=base.template_id,
                eval_types=(),
                max_steps=base.max_steps,
                base_env_id=base.env_id,
                intent=q["intent"],
            )
        )
    if run.cfg.seed_rollouts:
        tasks += [t.info for t in seeds]
    return tasks


def _study_totals(study: Path) -> tuple[int, float, int]:
    attempts = list(StudyStore(study).attempts())
    return len(attempts), sum(a.cost for a in attempts), sum(a.llm_calls for a in attempts)


def rollouts(run: Run, seeds: list[SeedTask]) -> dict[str, Any] | None:
    """Run (or continue) the demonstrator's study; the demonstrator's spending, or None without one."""
    cfg = run.cfg
    if cfg.demonstrator is None:
        run.echo("[stage 1] no demonstrator given: no episodes are run")
        return None
    tasks = study_tasks(run, seeds)
    study = run.dir / STUDY_DIR
    latest = StudyStore(study).latest()
    left = sum(
        1
        for t in tasks
        if (r := latest.get(episode_key(cfg.demonstrator.key(), t.env_id, cfg.seed))) is None or r.status != "done"
    )
    model = str(cfg.demonstrator.config.get("model") or "")
    run.costs.estimate("stage 1: rollouts", [demonstrator_estimate(model, left, DEMO_CALLS_PER_STEP)])
    before = _study_totals(study)
    runner = (
        functools.partial(run_synthetic_job, build_policy=run.build_policy) if run.build_policy else run_synthetic_job
    )
    compare(
        [cfg.demonstrator],
        tasks,
        study,
        seeds=(cfg.seed,),
        model=model or None,
        n_workers=cfg.workers,
        max_steps=cfg.max_steps,
        resume=(study / "study.json").exists(),
        progress=cfg.progress,
        runner=runner,
    )
    after = _study_totals(study)
    return {"episodes": after[0] - before[0], "cost": after[1] - before[1], "calls": after[2] - before[2]}


# -- 3. outcomes ---------------------------------------------------------------------------------------


def _answered(traj: Trajectory) -> bool:
    """The policy ended the episode with an answer of its own (not a budget, an early stop or an error)."""
    early = isinstance(traj.final_policy_state, dict) and traj.final_policy_state.get("early_stop")
    return traj.terminated and not traj.forced_stop and not traj.err_msg and not early and bool(traj.steps)


def trajectory_record(run: Run, key: str, source: str, study: str, result: EpisodeResult, traj: Trajectory) -> dict:
    """A finished episode as data: its pages go to the page store, the record refers to them."""
    preset = str(traj.policy.get("preset") or "")
    html = preset in PRESETS and PRESETS[preset].html is not None
    steps = []
    for rec in traj.steps:
        if not rec.action:
            continue
        executor = rec.parsed.get("executor") if isinstance(rec.parsed, dict) else None
        steps.append(
            {
                "index": rec.index,
                "url": rec.url,
                "page": run.pages.put(rec.observation),
                "action": rec.action,
                "snippet": executor.get("snippet") if isinstance(executor, dict) else None,
            }
        )
    llm = (traj.policy.get("config") or {}).get("llm") or {}
    synthetic = "#" in result.env_id
    return {
        "key": key,
        "source": source,
        "study": study,
        "episode": result.trajectory,
        "env_id": traj.env_id,
        "task_id": result.env_id,
        "site": result.site_group,
        "sites": list(traj.task.get("sites") or []),
        "intent": str(traj.task.get("goal") or ""),
        "policy": result.policy,
        "model": llm.get("model") if isinstance(llm, dict) else None,
        "page_format": "html" if html else "text",
        "commands": list(traj.task.get("commands") or []),
        "steps": steps,
        "answer": str((traj.evaluation or {}).get("answer") or ""),
        "reward": float(result.reward),
        "query": result.env_id.split("#", 1)[1] if synthetic else None,
    }


def page_text(run: Run, record: dict, index: int, ids: bool) -> str:
    """A step's page as stored; without ids for planners when the page is simplified HTML."""
    html = run.pages.get(record["steps"][index]["page"])
    return html if ids or record["page_format"] != "html" else strip_ids(html)


def judge(run: Run) -> None:
    """An outcome for every finished episode of the study that has none yet."""
    cfg, teacher = run.cfg, run.teacher
    study = run.dir / STUDY_DIR
    store, rejected = run.store("trajectories"), run.rejected(1)
    done = {r["key"] for r in store.load()} | {r["key"] for r in rejected.load()}
    pending = [r for r in StudyStore(study).latest().values() if r.status == "done" and f"stage1|{r.key}" not in done]

    def needs_orm(result: EpisodeResult) -> bool:
        return "#" in result.env_id or cfg.outcome == "orm"

    def judge_one(result: EpisodeResult) -> None:
        traj = Trajectory.load(study / str(result.trajectory))
        key = f"stage1|{result.key}"
        record = trajectory_record(run, key, "synthetic" if "#" in result.env_id else "seed", "stage1", result, traj)
        seed = derive_seed(cfg.seed, "orm", key)
        if not _answered(traj):
            outcome = {"method": "no_answer", "success": False, "score": 0.0, "reasoning": "", "teacher": None}
        elif not needs_orm(result):
            ok = result.reward >= 1.0
            outcome = {"method": "evaluator", "success": ok, "score": result.reward, "reasoning": "", "teacher": None}
        else:
            last = traj.steps[-1].observation
            page = strip_ids(last) if record["page_format"] == "html" else last
            messages = prompts.orm_messages(
                record["intent"], [s["action"] for s in record["steps"]], record["answer"], page[: cfg.orm_page_chars]
            )
            prov = teacher.provenance("orm", seed)
            try:
                (ok, reasoning), _ = teacher.ask("orm", messages, parse_verdict)
            except TeacherGaveUp as gave_up:
                run.reject(1, key, gave_up, prov)
                return
            outcome = {"method": "orm", "success": ok, "score": float(ok), "reasoning": reasoning, "teacher": prov}
        store.append([{**record, "outcome": outcome, "kept": bool(outcome["success"])}])

    with_orm = [r for r in pending if needs_orm(r)]
    sample = [prompts.orm_messages("task", ["do()"] * 8, "", "x" * min(cfg.orm_page_chars, 20_000))]
    run.costs.estimate("stage 1: outcomes", [teacher.estimate("orm", sample, len(with_orm))])
    run_items(pending, judge_one, **run.run_opts("stage 1 outcomes"))


def import_studies(run: Run) -> None:
    """Successful episodes of other studies join the trajectories (their evaluator is the outcome)."""
    store = run.store("trajectories")
    done = {r["key"] for r in store.load()}
    for path in run.cfg.import_studies:
        study = Path(path)
        name = study.name
        good = [r for r in StudyStore(study).latest().values() if r.status == "done" and r.reward >= 1.0]
        loaded = [(r, Trajectory.load(study / str(r.trajectory))) for r in good if f"{name}|{r.key}" not in done]
        run.exclusion.check(((t.env_id, str(t.task.get("goal") or "")) for _, t in loaded), f"the study {name}")
        records = []
        for result, traj in loaded:
            record = trajectory_record(run, f"{name}|{result.key}", "imported", name, result, traj)
            outcome = {"method": "evaluator", "success": True, "score": result.reward, "reasoning": "", "teacher": None}
            records.append({**record, "outcome": outcome, "kept": True})
        store.append(records)
        run.echo(f"[stage 1] imported {len(records)} successful episodes of {name}")


def run_stage(run: Run, seeds: list[SeedTask]) -> None:
    mark = run.teacher.mark()
    run.exclusion.check(((t.env_id, t.intent) for t in seeds), "the seed pool")
    generate_queries(run, seeds)
    demo = rollouts(run, seeds)
    judge(run)
    import_studies(run)
    run.costs.spent("stage 1", run.teacher.spent(mark), demo)
