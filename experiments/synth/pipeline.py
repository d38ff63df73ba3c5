"""Running the pipeline: the seed splits, the run directory's manifest, the stages in order, the summary.

``run(cfg, stages)`` checks the run directory (a new run refuses a directory that holds one; a resumed
run must keep the options that decide which items exist, ``FIXED_ON_RESUME``), computes the seed pool
and the held-out validation tasks (``splits.json``), then runs the chosen stages. Every stage first
checks what it learns from against the evaluation exclusion, prints its cost estimate, skips what is
already done, and prints what it spent; the run ends with the counts per stage and per site.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webarena_gym.experiments.synth import stage1, stage2, stage3, stage4, summary
from webarena_gym.experiments.synth.context import FIXED_ON_RESUME, Run, SynthConfig
from webarena_gym.experiments.synth.splits import Exclusion, SeedLeakError, Splits, seed_tasks, split
from webarena_gym.experiments.synth.teacher import Teacher
from webarena_gym.llm.redaction import write_text

if TYPE_CHECKING:
    from webarena_gym.experiments.compare import EpisodeJob
    from webarena_gym.llm import Script
    from webarena_gym.policies.base import Policy

STAGES = (1, 2, 3, 4)
MANIFEST = "synth.json"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _write_manifest(run: Run, splits: Splits, resume: bool) -> None:
    path = run.dir / MANIFEST
    options = run.cfg.manifest()
    created = _now()
    if path.exists():
        if not resume:
            raise FileExistsError(f"{run.dir} already holds a synthetic-data run; pass --resume to continue it")
        previous = json.loads(path.read_text())
        changed = [k for k in FIXED_ON_RESUME if previous.get("options", {}).get(k) != options[k]]
        if changed:
            raise ValueError(
                f"a resumed run must keep {', '.join(changed)} (they decide which items exist); "
                "start a new run directory to change them"
            )
        created = previous.get("created", created)
    run.dir.mkdir(parents=True, exist_ok=True)
    splits_data = splits.to_dict(run.cfg.validation_fraction, run.cfg.split_seed)
    write_text(run.dir / "splits.json", json.dumps(splits_data, indent=1))
    manifest: dict[str, Any] = {
        "created": created,
        "options": options,
        "evaluated_task_sets": list(run.exclusion.specs),
        "evaluated_tasks": len(run.exclusion.env_ids),
        "seed_pool": len(splits.train),
        "validation_tasks": len(splits.validation),
        "excluded_seed_tasks": len(splits.excluded),
    }
    if resume:
        manifest["resumed"] = _now()
    write_text(run.dir / MANIFEST, json.dumps(manifest, indent=1))


def run(
    cfg: SynthConfig,
    stages: Sequence[int] = STAGES,
    *,
    resume: bool = False,
    teacher: Teacher | None = None,
    script: Script | None = None,
    build_policy: Callable[[EpisodeJob], Policy] | None = None,
    echo: Callable[[str], None] = print,
) -> str:
    """Run ``stages`` of the pipeline into ``cfg.out``; returns the summary table (Markdown)."""
    unknown = sorted(set(stages) - set(STAGES))
    if unknown:
        raise ValueError(f"unknown stages {unknown}; the stages are 1, 2, 3 and 4")
    teacher = teacher or Teacher(
        cfg.teacher_model,
        cfg.roles,
        api_base=cfg.teacher_api_base,
        cache_dir=cfg.cache_dir,
        script=script,
        max_retries=cfg.max_retries,
    )
    exclusion = Exclusion.of(cfg.eval_tasks)
    current = Run(cfg, teacher, exclusion=exclusion, build_policy=build_policy, echo=echo)
    splits = split(seed_tasks(cfg.seeds), exclusion, cfg.validation_fraction, cfg.split_seed)
    if splits.excluded:  # the seed set and the evaluation sets overlap: say so, the pool is smaller than asked
        echo(
            f"warning: {len(splits.excluded)} tasks of the seed set {cfg.seeds} are evaluation tasks "
            f"({', '.join(exclusion.specs)}) and are left out of the seed pool; see splits.json"
        )
    if 1 in stages and not splits.train:
        raise SeedLeakError(
            f"the seed pool is empty: every task of {cfg.seeds} is evaluated ({', '.join(exclusion.specs)}); "
            "name the tasks you will evaluate on with --eval-tasks (e.g. local:site=reddit) or other --seeds"
        )
    _write_manifest(current, splits, resume)
    echo(
        f"seed pool: {len(splits.train)} tasks of {cfg.seeds} ({len(splits.validation)} held out for validation, "
        f"{len(splits.excluded)} excluded as evaluated by {', '.join(exclusion.specs)})"
    )
    if splits.validation and cfg.validation_study is None:  # what Stage 4 will need, said early
        echo(
            "validation study for Stage 4: webarena-gym compare --policy <the policy under test> --tasks "
            + ",".join(t.env_id for t in splits.validation)
            + f" --out {Path(cfg.out).name}-validation"
        )
    if 1 in stages:
        stage1.run_stage(current, splits.train)
    if 2 in stages:
        stage2.run_stage(current)
    if 3 in stages:
        stage3.run_stage(current)
    if 4 in stages:
        stage4.run_stage(current)
    return summary.write(cfg.out)
