"""Stage 4, targeted augmentation (the paper's Sec. 4.3, App. A.7, A.8).

1. **Failure analysis.** Every failed episode of a validation study (the policy under test run on the
   held-out validation tasks, ``splits.json``) is classified into its site's failure classes by the
   ``failure_classifier`` role, from the task, the plans the policy wrote, its actions and its answer. The
   paper did this by hand; the classes default to the ones it found (``failure_classes.json``, in our
   words) and can be replaced (``failure_classes``). The study must not contain evaluated tasks.
2. **Training points.** Every planner training point (Stage 2 plans, Stage 3 pairs) of a site with
   observed failures is classified by the ``classifier`` role (A.7) into the classes that occurred there
   (all of the site's classes with ``all_failure_classes``); points labelled Other are not used.
3. **Generation.** One new similar pair per kept point (A.8), cycling over the kept points until
   ``n_targeted`` pairs exist [P: 5,000]. A pair keeps its seed's initial page; a copy of the seed's
   query is refused and asked again.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from webarena_gym.experiments.store import EpisodeResult, StudyStore
from webarena_gym.experiments.synth import prompts
from webarena_gym.experiments.synth.context import Run
from webarena_gym.experiments.synth.parsing import parse_classification, parse_targeted
from webarena_gym.experiments.synth.splits import task_config
from webarena_gym.experiments.synth.synthetic_cot import reason_pairs
from webarena_gym.experiments.synth.teacher import TeacherGaveUp
from webarena_gym.experiments.synth.work import derive_seed, run_items
from webarena_gym.experiments.trajectory import Trajectory

DEFAULT_CLASSES = Path(__file__).resolve().parent / "failure_classes.json"


def failure_classes(path: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """Per-site failure classes: ``{site: [{"label", "name", "description", "needs", "examples"}]}``."""
    data = json.loads(Path(path or DEFAULT_CLASSES).read_text())
    classes = {site: list(v) for site, v in data.items() if not site.startswith("_")}
    for site, items in classes.items():
        labels = [c.get("label") for c in items]
        if any(not isinstance(x, str) or len(x) != 1 or not x.isupper() for x in labels) or len(set(labels)) != len(
            labels
        ):
            raise ValueError(f"failure classes of {site}: labels must be distinct single capital letters, got {labels}")
        for c in items:
            missing = {"name", "description", "needs"} - set(c)
            if missing:
                raise ValueError(f"failure class {site}/{c['label']} lacks {sorted(missing)}")
    return classes


def _labels(classes: list[dict[str, Any]]) -> tuple[str, ...]:
    return (*(c["label"] for c in classes), "Other")


def _classify(
    run: Run, role: str, key: str, messages: list[dict[str, Any]], site_classes: list[dict[str, Any]]
) -> tuple[str, str, dict[str, Any]] | None:
    """The teacher's class for one item (label, reasoning, provenance); None once it gave up, which is
    recorded as a rejection so that ``--resume`` does not ask again."""
    prov = run.teacher.provenance(role, derive_seed(run.cfg.seed, key))
    try:
        (label, reasoning), _ = run.teacher.ask(
            role, messages, lambda t: parse_classification(t, _labels(site_classes))
        )
    except TeacherGaveUp as gave_up:
        run.reject(4, key, gave_up, prov)
        return None
    return label, reasoning, prov


def check_study(run: Run, study: Path) -> list[EpisodeResult]:
    """The validation study's finished episodes, after checking it ran no evaluated task."""
    manifest = StudyStore(study).read_manifest()
    ids = [e for e in manifest.get("tasks", []) if not e.startswith("miniwob/")]
    run.exclusion.check(
        ((e.split("#")[0], task_config(e.split("#")[0])["intent"]) for e in ids), f"the study {study.name}"
    )
    return [r for r in StudyStore(study).latest().values() if r.status == "done"]


def _episode_view(traj: Trajectory) -> tuple[list[str], list[str], str]:
    """(plans the policy wrote, its actions, its answer) as the failure classifier reads them."""
    plans: list[str] = []
    for step in traj.steps:
        plan = step.parsed.get("plan") if isinstance(step.parsed, dict) else None
        text = plan.get("text") if isinstance(plan, dict) else None
        if isinstance(text, str) and text not in plans:
            plans.append(text)
    actions = [s.action for s in traj.steps if s.action]
    return plans[-3:], actions, str((traj.evaluation or {}).get("answer") or "")


def classify_failures(run: Run, classes: dict[str, list[dict[str, Any]]]) -> None:
    cfg, teacher = run.cfg, run.teacher
    study = Path(cfg.validation_study or "")
    store = run.store("failures")
    done = {r["key"] for r in store.load()} | {r["key"] for r in run.rejected(4).load()}
    failed = [r for r in check_study(run, study) if r.reward < 1.0 and f"{study.name}|{r.key}" not in done]

    def classify(result: EpisodeResult) -> None:
        key = f"{study.name}|{result.key}"
        traj = Trajectory.load(study / str(result.trajectory))
        site_classes = classes.get(result.site_group, [])
        base = {"key": key, "study": study.name, "env_id": result.env_id, "site": result.site_group}
        intent = str(traj.task.get("goal") or "")
        if not site_classes:  # a site without classes: nothing to aim at, no call
            store.append([{**base, "intent": intent, "label": "Other", "reasoning": "", "teacher": None}])
            return
        plans, actions, answer = _episode_view(traj)
        messages = prompts.episode_classifier_messages(result.site_group, site_classes, intent, plans, actions, answer)
        verdict = _classify(run, "failure_classifier", key, messages, site_classes)
        if verdict is not None:
            label, reasoning, prov = verdict
            store.append([{**base, "intent": intent, "label": label, "reasoning": reasoning, "teacher": prov}])

    with_classes = [r for r in failed if classes.get(r.site_group)]
    sample = [prompts.episode_classifier_messages("site", classes.get("gitlab", []), "t", ["p"], ["a"] * 10, "")]
    run.costs.estimate("stage 4: failure analysis", [teacher.estimate("failure_classifier", sample, len(with_classes))])
    run_items(failed, classify, **run.run_opts("stage 4 failures"))


def observed_classes(run: Run, classes: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Per site, the classes training points are sorted into: those the failures showed (or all)."""
    if run.cfg.all_failure_classes:
        return classes
    seen = Counter((r["site"], r["label"]) for r in run.store("failures").load() if r["label"] != "Other")
    return {site: [c for c in items if (site, c["label"]) in seen] for site, items in classes.items()}


def training_points(run: Run) -> list[dict[str, Any]]:
    """The planner's training points so far (Stage 2 plans and Stage 3 pairs), in a fixed order."""
    points = run.store("plans").load() + run.store("expansion").load()
    run.exclusion.check(((p["env_id"], p["intent"]) for p in points), "the planner's training points")
    return sorted(points, key=lambda p: p["key"])


def classify_points(run: Run, active: dict[str, list[dict[str, Any]]]) -> None:
    teacher = run.teacher
    store = run.store("classified")
    done = {r["key"] for r in store.load()} | {r["key"] for r in run.rejected(4).load()}
    todo = [p for p in training_points(run) if active.get(p["site"]) and f"c|{p['key']}" not in done]

    def classify(point: dict[str, Any]) -> None:
        key = f"c|{point['key']}"
        site_classes = active[point["site"]]
        messages = prompts.training_classifier_messages(point["site"], site_classes, point["intent"], point["plan"])
        verdict = _classify(run, "classifier", key, messages, site_classes)
        if verdict is not None:
            label, reasoning, prov = verdict
            record = {"key": key, "point": point["key"], "site": point["site"], "label": label, "reasoning": reasoning}
            store.append([{**record, "teacher": prov}])

    sample = [
        prompts.training_classifier_messages(p["site"], active[p["site"]], p["intent"], p["plan"]) for p in todo[:3]
    ]
    run.costs.estimate("stage 4: classification", [teacher.estimate("classifier", sample, len(todo))])
    run_items(todo, classify, **run.run_opts("stage 4 classification"))


def generate(run: Run) -> None:
    cfg, teacher = run.cfg, run.teacher
    points = {p["key"]: p for p in training_points(run)}
    kept = sorted(
        (r for r in run.store("classified").load() if r["label"] != "Other" and r["point"] in points),
        key=lambda r: r["point"],
    )
    store = run.store("targeted")
    done = {r["key"] for r in store.load()} | {r["key"] for r in run.rejected(4).load()}
    if not kept:
        run.echo("[stage 4] no training point falls into an observed failure class: nothing to generate")
        return
    todo = [i for i in range(cfg.n_targeted) if f"t:{i}" not in done]

    def make(i: int) -> None:
        label = kept[i % len(kept)]
        seed = points[label["point"]]
        key = f"t:{i}"
        prov = teacher.provenance("targeted", derive_seed(cfg.seed, key))
        messages = prompts.targeted_messages(seed["site"], seed["intent"], seed["plan"])
        try:
            pair, _ = teacher.ask("targeted", messages, lambda t: parse_targeted(t, seed["intent"]))
        except TeacherGaveUp as gave_up:
            run.reject(4, key, gave_up, prov)
            return
        leak = run.exclusion.reason(None, pair.query)
        if leak:
            run.rejected(4).append([{"key": key, "stage": 4, "error": leak, "answer": pair.query, "teacher": prov}])
            return
        record = {
            "key": key,
            "index": i,
            "seed": seed["key"],
            "label": label["label"],
            "site": seed["site"],
            "intent": pair.query,
            "env_id": seed["env_id"],
            "page": seed["page"],
            "steps": [{"number": s.number, "reasoning": s.reasoning, "step": s.step} for s in pair.steps],
            "plan": pair.plan,
            "teacher": prov,
        }
        store.append([record])

    sample = [
        prompts.targeted_messages(points[r["point"]]["site"], points[r["point"]]["intent"], points[r["point"]]["plan"])
        for r in kept[:3]
    ]
    run.costs.estimate("stage 4: generation", [teacher.estimate("targeted", sample, len(todo))])
    run_items(todo, make, **run.run_opts("stage 4 targeted"))


def run_stage(run: Run) -> None:
    if run.cfg.validation_study is None:
        run.echo(
            "[stage 4] skipped: it needs --validation-study, a study of the policy under test on the held-out "
            "validation tasks (splits.json lists them)"
        )
        return
    mark = run.teacher.mark()
    classes = failure_classes(run.cfg.failure_classes)
    classify_failures(run, classes)
    active = observed_classes(run, classes)
    counts = defaultdict(list)
    for site, items in active.items():
        counts[site] = [c["label"] for c in items]
    run.echo(f"[stage 4] classes the training points are sorted into: {dict(counts) or 'none'}")
    classify_points(run, active)
    generate(run)
    reason_pairs(run, "targeted", 4)
    run.costs.spent("stage 4", run.teacher.spent(mark))
