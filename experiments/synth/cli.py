"""``webarena-gym synth run|export|summary``: the pipeline from the command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from webarena_gym.experiments.synth.context import SynthConfig
from webarena_gym.experiments.synth.pipeline import STAGES
from webarena_gym.experiments.synth.teacher import ROLE_DEFAULTS, RoleSettings
from webarena_gym.experiments.tasksets import DEFAULT_TASKS

MODEL_ENV_VAR = "WEBARENA_GYM_MODEL"


def _pairs(items: list[str], option: str) -> dict[str, str]:
    out = {}
    for item in items:
        role, sep, value = item.partition("=")
        if not sep or role not in ROLE_DEFAULTS:
            raise SystemExit(f"{option} takes ROLE=VALUE with a role of: {', '.join(ROLE_DEFAULTS)} (got {item!r})")
        out[role] = value
    return out


def _roles(args: argparse.Namespace) -> dict[str, RoleSettings]:
    roles: dict[str, RoleSettings] = {}
    cast: Callable[[str], Any]
    for option, field, cast in (
        ("role_model", "model", str),
        ("role_temperature", "temperature", float),
        ("role_max_tokens", "max_tokens", int),
    ):
        for role, value in _pairs(getattr(args, option), "--" + option.replace("_", "-")).items():
            setting: Any = cast(value)
            roles[role] = replace(roles.get(role, ROLE_DEFAULTS[role]), **{field: setting})
    return roles


def config_from(args: argparse.Namespace) -> SynthConfig:
    from webarena_gym.experiments.cli import _policy_spec

    if not args.teacher_model:
        raise SystemExit(f"the pipeline needs a teacher model: pass --teacher-model or set {MODEL_ENV_VAR}")
    demonstrator = None
    if args.demonstrator != "none":
        demonstrator = _policy_spec(args.demonstrator, args.demonstrator_model or args.teacher_model)
    return SynthConfig(
        out=Path(args.out),
        teacher_model=args.teacher_model,
        seeds=args.seeds,
        eval_tasks=tuple(args.eval_tasks or [DEFAULT_TASKS]),
        validation_fraction=args.validation_fraction,
        seed=args.seed,
        n_seed=args.n_seed,
        n_new=args.n_new,
        queries=args.queries,
        seed_rollouts=not args.no_seed_rollouts,
        demonstrator=demonstrator,
        outcome=args.outcome,
        workers=args.workers,
        max_steps=args.max_steps,
        import_studies=tuple(Path(p) for p in args.import_study),
        cot=not args.no_cot,
        n_expand=args.expand,
        n_targeted=args.targeted,
        validation_study=Path(args.validation_study) if args.validation_study else None,
        failure_classes=Path(args.failure_classes) if args.failure_classes else None,
        all_failure_classes=args.all_failure_classes,
        concurrency=args.concurrency,
        max_retries=args.max_retries,
        roles=_roles(args),
        teacher_api_base=args.teacher_api_base,
        cache_dir=args.cache_dir,
        progress=not args.no_progress,
    )


def cmd_run(args: argparse.Namespace) -> int:
    from webarena_gym.experiments.synth.pipeline import run
    from webarena_gym.experiments.synth.splits import SeedLeakError
    from webarena_gym.experiments.synth.work import StageAborted

    stages = [int(s) for s in args.stages.split(",") if s.strip()]
    try:
        print(run(config_from(args), stages, resume=args.resume))
    except (SeedLeakError, StageAborted, FileExistsError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _check_run(path: str) -> None:
    from webarena_gym.experiments.synth.pipeline import MANIFEST

    if not (Path(path) / MANIFEST).exists():
        raise SystemExit(f"error: {path} is not a run of the pipeline (it has no {MANIFEST})")


def cmd_export(args: argparse.Namespace) -> int:
    from webarena_gym.experiments.synth.training import export_training

    _check_run(args.run)
    counts = export_training(args.run, args.out, template=args.template, executor_plan=args.executor_plan)
    for path, n in counts.items():
        print(f"{n:>8}  {path}")
    print(f"written to {args.out} (load with datasets.load_dataset({str(args.out)!r}, '<config>'))")
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    from webarena_gym.experiments.synth.summary import write

    _check_run(args.run)
    print(write(args.run))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``synth`` and its subcommands to the ``webarena-gym`` parser."""
    synth = sub.add_parser("synth", help="Plan-and-Act's synthetic training-data pipeline (stages 1-4)")
    inner = synth.add_subparsers(dest="synth_command", required=True)

    p = inner.add_parser("run", help="run (or --resume) stages of the pipeline into a run directory")
    p.add_argument("--out", required=True, help="the run directory")
    p.add_argument("--stages", default=",".join(map(str, STAGES)), help="stages to run, e.g. 1,2 (default all)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out; nothing is generated twice")
    p.add_argument("--teacher-model", default=os.environ.get(MODEL_ENV_VAR), help="litellm model of every role")
    p.add_argument("--teacher-api-base", default=None, help="an OpenAI-compatible server for the teacher")
    p.add_argument("--role-model", action="append", default=[], metavar="ROLE=MODEL", help="one role's own model")
    p.add_argument("--role-temperature", action="append", default=[], metavar="ROLE=T")
    p.add_argument("--role-max-tokens", action="append", default=[], metavar="ROLE=N")
    p.add_argument(
        "--seeds", default="local", help="task set that seeds Stage 1, evaluation tasks left out (default: local)"
    )
    p.add_argument(
        "--eval-tasks",
        action="append",
        default=[],
        metavar="TASKSET",
        help=f"a task set you will evaluate on (repeatable; default: compare's default, {DEFAULT_TASKS}); "
        "its tasks never seed the pipeline, and WebArena-Lite's test set is always excluded",
    )
    p.add_argument("--validation-fraction", type=float, default=0.1, help="seed templates held out (seed 42)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed of the run")
    p.add_argument("--n-seed", type=int, default=5, help="seed examples per generation call (paper: 5)")
    p.add_argument("--n-new", type=int, default=10, help="new items per generation call (paper: 10)")
    p.add_argument("--queries", type=int, default=1000, help="Stage 1 queries to generate")
    p.add_argument("--no-seed-rollouts", action="store_true", help="do not roll out the seed tasks themselves")
    p.add_argument(
        "--demonstrator",
        default="plan_and_act_no_planner",
        help="policy[:key=value,...] that acts out the queries, or none (default: the WebRL executor alone)",
    )
    p.add_argument("--demonstrator-model", default=None, help="the demonstrator's model (default: the teacher's)")
    p.add_argument("--workers", type=int, default=1, help="demonstrator episodes at once")
    p.add_argument("--max-steps", type=int, default=None, help="demonstrator step budget (default: the policy's)")
    p.add_argument("--outcome", choices=("auto", "orm"), default="auto", help="auto: evaluator where there is one")
    p.add_argument("--import-study", action="append", default=[], help="a study whose successes join Stage 1")
    p.add_argument("--no-cot", action="store_true", help="no reasoning traces in Stage 2")
    p.add_argument("--expand", type=int, default=10_000, help="Stage 3 pairs (paper: 10,000)")
    p.add_argument("--targeted", type=int, default=5_000, help="Stage 4 pairs (paper: 5,000)")
    p.add_argument("--validation-study", default=None, help="Stage 4: a study on the held-out validation tasks")
    p.add_argument("--failure-classes", default=None, help="Stage 4: a JSON file of per-site failure classes")
    p.add_argument("--all-failure-classes", action="store_true", help="use every class, not only observed ones")
    p.add_argument("--concurrency", type=int, default=4, help="teacher calls at once")
    p.add_argument("--max-retries", type=int, default=3, help="re-asks after an unusable answer")
    p.add_argument("--cache-dir", default=None, help="cache teacher answers here (re-runs replay them)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_run)

    p = inner.add_parser("export", help="planner, replanner and executor training files from a run")
    p.add_argument("run", help="the run directory")
    p.add_argument("--out", required=True, help="directory for the training files")
    p.add_argument("--template", default="llama3", help="chat template: llama3, none, or a Jinja template file")
    p.add_argument("--executor-plan", choices=("dynamic", "static", "none"), default="dynamic")
    p.set_defaults(func=cmd_export)

    p = inner.add_parser("summary", help="counts per stage and per site")
    p.add_argument("run")
    p.set_defaults(func=cmd_summary)
