"""The `webarena-gym` command: compare policies, rebuild reports, serve the local sites, run the demo."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

MODEL_ENV_VAR = "WEBARENA_GYM_MODEL"
BASELINE_LABELS = {
    "reference": "reference solutions (non-LLM upper bound)",
    "random": "random actions (non-LLM floor)",
}
DEMO_RANDOM_STEPS = 10  # the floor needs no 30-step budget to show it fails; keeps `make demo` short
DEMO_LLM_POLICIES = ("react", "agentoccam")


def _policy_spec(text: str, model: str | None):
    """`name` or `name:key=value,key=value` -> PolicySpec; LLM policies get the study's model."""
    from experiments.compare import PolicySpec

    name, _, rest = text.partition(":")
    config: dict = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        try:
            config[key] = json.loads(value)
        except json.JSONDecodeError:
            config[key] = value
    if name in BASELINE_LABELS:
        label = BASELINE_LABELS[name]
        if "max_steps" in config:
            label = label.replace("(", f"({config['max_steps']} steps, ", 1)
        return PolicySpec(name, config, label)
    model = config.setdefault("model", model)
    if not model:
        raise SystemExit(f"policy {name!r} needs a model: pass --model or set {MODEL_ENV_VAR}")
    return PolicySpec(name, config, f"{name} [{model}]")


def _env_kwargs(args: argparse.Namespace) -> dict:
    kwargs = {}
    if getattr(args, "judge_model", None):
        kwargs["judge_model"] = args.judge_model
    if getattr(args, "evaluator", None):
        kwargs["evaluator"] = args.evaluator
    return kwargs


def _study_policies(args: argparse.Namespace) -> list:
    """The ``--policy`` specs, then the rows of the ``--ablation`` ladder (which also picks the evaluator
    its paper scored with unless ``--evaluator`` names one)."""
    from experiments.ablations import EVALUATORS, ladder

    policies = [_policy_spec(p, args.model) for p in args.policy or ()]
    ablation = getattr(args, "ablation", None)
    if ablation:
        if not args.model:
            raise SystemExit(f"--ablation {ablation} needs a model: pass --model or set {MODEL_ENV_VAR}")
        policies += ladder(ablation, args.model)
        if not args.evaluator and ablation in EVALUATORS:
            args.evaluator = EVALUATORS[ablation]
            print(f"Evaluator: {args.evaluator} (the one the {ablation} paper scored its ablation with)")
    if not policies:
        raise SystemExit("name at least one --policy or an --ablation")
    return policies


def cmd_compare(args: argparse.Namespace) -> int:
    from experiments.compare import compare
    from experiments.report import build_report

    policies = _study_policies(args)
    study = compare(
        policies,
        args.tasks,
        args.out,
        seeds=args.seeds,
        model=args.model,
        executor=args.executor,
        n_workers=args.workers,
        ray_address=args.ray_address,
        max_steps=args.max_steps,
        max_interactions=args.max_interactions,
        episode_timeout_s=args.episode_timeout,
        env_kwargs=_env_kwargs(args),
        resume=args.resume,
        max_attempts=args.max_attempts,
        progress=not args.no_progress,
        screenshots=args.screenshots,
    )
    report = build_report(study)
    print((report / "summary.md").read_text())
    print(f"report: {report / 'index.html'}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from experiments.report import build_report

    report = build_report(args.study)
    print((report / "summary.md").read_text())
    print(f"report: {report / 'index.html'}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """The README's main command: a comparison on the local suite, with or without a model."""
    from envs.evaluation.judge import JUDGE_MODEL_ENV_VAR

    model = args.model or os.environ.get(MODEL_ENV_VAR)
    names = [*(DEMO_LLM_POLICIES if model else ()), "reference", f"random:max_steps={DEMO_RANDOM_STEPS}"]
    if not model:
        print(
            "No model configured: running the non-LLM reference baselines only (reference solutions = upper\n"
            "bound, random actions = floor). Answers that only an LLM judge can grade (fuzzy_match) score 0\n"
            "without a model, the reference solutions' too. To compare LLM policies, set a litellm model string\n"
            f"and its key, e.g.  {MODEL_ENV_VAR}=gpt-4o OPENAI_API_KEY=...  make demo\n"
            f"  or  {MODEL_ENV_VAR}=ollama/llama3.1  (a local server)  make demo\n"
        )
    elif not (args.judge_model or os.environ.get(JUDGE_MODEL_ENV_VAR)):
        # WebArena's judge (gpt-4-1106-preview) needs an OpenAI key the user may not have given.
        args.judge_model = model
        print(f"Evaluator judge: {model} (the policies' model; --judge-model or ${JUDGE_MODEL_ENV_VAR} picks another)")
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.out = args.out or str(Path("studies") / f"demo-{stamp}")
    args.policy = names
    args.ablation = None
    args.model = model
    args.seeds = [0]
    args.executor, args.ray_address, args.resume, args.max_attempts = "process", None, False, 2
    args.episode_timeout = None
    return cmd_compare(args)


def cmd_tasks(args: argparse.Namespace) -> int:
    from experiments.tasksets import resolve

    if args.coverage:
        from envs.local.registry import coverage

        header = ["site", "WebArena templates", "tasks", "local-only tasks", "eval types (tasks)"]
        print("| " + " | ".join([*header, "WebArena: templates (tasks)"]) + " |")
        print("|---|---|---|---|---|---|")
        for row in coverage():
            print(
                f"| {row['site']} | {row['templates']} | {row['linked_tasks']} | {row['local_only_tasks']} | "
                f"{', '.join(f'{e} {n}' for e, n in row['eval_type_tasks'].items())} | "
                f"{row['webarena_templates']} ({row['webarena_tasks']}) |"
            )
        return 0

    for t in resolve(args.tasks):
        webarena = "none" if t.webarena_template is None else t.webarena_template
        print(
            f"{t.env_id}\t{','.join(t.sites)}\ttemplate={t.template_id}\twebarena_template={webarena}"
            f"\t{'+'.join(t.eval_types)}"
        )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from envs.local.serve import main as serve_main

    return serve_main(args.rest)


def cmd_bench(args: argparse.Namespace) -> int:
    from benchmarks.run import main as bench_main

    return bench_main(args.rest)


def cmd_rl(args: argparse.Namespace) -> int:
    from experiments.rl import main as rl_main

    return rl_main(args.rest)


def _add_study_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model", default=os.environ.get(MODEL_ENV_VAR), help=f"litellm model string (default ${MODEL_ENV_VAR})"
    )
    p.add_argument("--judge-model", help="litellm model for fuzzy/N/A evaluation (default WebArena's)")
    p.add_argument(
        "--evaluator",
        choices=("webarena", "agentoccam"),
        default=None,
        help="WebArena's evaluator (default) or AgentOccam's rectified one (its corrected labels and fuzzy grader)",
    )
    p.add_argument("--workers", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    p.add_argument(
        "--max-steps", type=int, default=None, help="decision budget per episode (default: each policy's own)"
    )
    p.add_argument(
        "--max-interactions",
        type=int,
        default=None,
        help="interaction budget per episode: every env action, explored ones included (default: each policy's)",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--screenshots", action="store_true", help="save a screenshot per step for the HTML report")


def build_parser() -> argparse.ArgumentParser:
    from experiments.ablations import LADDERS as ABLATIONS

    parser = argparse.ArgumentParser(prog="webarena-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("compare", help="run policies x tasks x seeds into a study directory")
    p.add_argument("--policy", action="append", help="policy name[:key=value,...]; repeat for several")
    p.add_argument(
        "--ablation",
        choices=sorted(ABLATIONS),
        help="run a paper's ablation ladder as policies of this study (agentoccam: its Table 2 rows)",
    )
    p.add_argument(
        "--tasks",
        default="local",
        help="task set: local[:site=|template=|webarena_template=], webarena[:site=|template=|dev|lite], "
        "webarena-lite[:site=|template=], miniwob[:<task>,...], or env ids",
    )
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--out", required=True, help="study directory")
    p.add_argument(
        "--executor",
        "--backend",
        dest="executor",
        choices=("process", "ray"),
        default="process",
        help="where episodes run: local worker processes or Ray actors (--backend is the older name)",
    )
    p.add_argument("--ray-address", default=None, help="Ray cluster address (default: start a local Ray)")
    p.add_argument(
        "--episode-timeout", type=float, default=None, help="seconds per episode (default 30 s per step of budget)"
    )
    p.add_argument("--resume", action="store_true", help="continue the study in --out")
    p.add_argument("--max-attempts", type=int, default=2, help="attempts per episode when earlier ones errored")
    _add_study_options(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("report", help="rebuild a study's reports from its store")
    p.add_argument("study")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("demo", help="compare policies on the local suite (baselines only without a model)")
    p.add_argument("--out", default=None)
    p.add_argument("--tasks", default="local", help="task set (default: the whole local suite)")
    _add_study_options(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("tasks", help="list the tasks of a task set")
    p.add_argument("tasks", nargs="?", default="local")
    p.add_argument("--coverage", action="store_true", help="print the local suite's WebArena coverage table instead")
    p.set_defaults(func=cmd_tasks)

    for name, func, text in (
        ("serve", cmd_serve, "start local sites to click around (options: see `serve --help`)"),
        ("bench", cmd_bench, "run the benchmarks and write docs/benchmarks.md"),
        ("rl", cmd_rl, "train PPO (stable-baselines3) on MiniWoB++ or local tasks: python -m experiments.rl"),
    ):
        p = sub.add_parser(name, help=text, add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=func)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130  # what a shell reports for Ctrl-C; compare() has already said how to resume
    finally:
        import envs

        envs.shutdown()


if __name__ == "__main__":
    sys.exit(main())
