"""The `webarena-gym` command: compare policies, rebuild reports, serve the local sites, run the demo,
generate Plan-and-Act training data (`synth`), export studies as training sets (`dataset`) and check
the LLM methods against the reference solutions (`conformance`)."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import signal
import sys
import threading
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

MODEL_ENV_VAR = "WEBARENA_GYM_MODEL"
BASELINE_LABELS = {
    "reference": "reference solutions (non-LLM upper bound)",
    "random": "random actions (non-LLM floor)",
}
DEMO_RANDOM_STEPS = 10  # the floor needs no 30-step budget to show it fails; keeps `make demo` short
DEMO_TASKS = "local:sample"  # every site and eval type in a few minutes; `--tasks local` runs all 586
DEMO_STEPS = 5  # the LLM methods' step budget in the demo: enough to see each work, short enough for every method
# Seconds per step of an LLM policy's demo budget, at least: CoAct's agents, Devil's Advocate's reflections
# and Plan-MCTS's search make several LLM calls per step, which a hosted model needs more than 30 s for.
DEMO_STEP_TIMEOUT_S = 120.0
EXIT_USAGE = 2  # options the harness cannot run with (argparse's code for a bad command line)
# Options a label leaves out: the model and budget it shows already, and where and how the model is
# reached (which does not make another policy). Every other option is in the label, so two --policy
# variants of one method never share a label (a study refuses that: reports could not tell them apart).
LABEL_HIDDEN_OPTIONS = frozenset(
    {"model", "max_steps", "max_actions", "api_base", "timeout", "retries", "backoff_s", "cache_dir"}
)
EXIT_STOPPED = 3  # the study stopped at a configuration error (missing key, unknown model, context too small)


class UsageError(ValueError):
    """A command line the harness cannot run; the message says what to change."""


def _policy_spec(text: str, model: str | None, defaults: dict | None = None):
    """`name` or `name:key=value,key=value` -> PolicySpec; LLM policies get the study's model (and,
    from the demo, the ``defaults`` of its budget, under the options written in ``text``). ``label=...``
    names the configuration in reports."""
    from webarena_gym.experiments.compare import PolicySpec

    name, _, rest = text.partition(":")
    config: dict = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not key.strip() or not eq:
            raise UsageError(f"--policy {text!r}: options are written name:key=value,key=value (got {item!r})")
        try:
            config[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            config[key.strip()] = value
    own_label = config.pop("label", None)  # the report's name for this configuration, not an option
    if name in BASELINE_LABELS:
        label = BASELINE_LABELS[name]
        if "max_steps" in config:
            label = label.replace("(", f"({config['max_steps']} steps, ", 1)
        return PolicySpec(name, config, str(own_label or label + _shown_options(config)))
    config = {**(defaults or {}), **config}
    model = config.setdefault("model", model)
    if not model:
        raise UsageError(f"policy {name!r} needs a model: pass --model or set {MODEL_ENV_VAR}")
    step_option = STEP_OPTIONS.get(_method(name), "max_steps")
    steps = f" ({config[step_option]} steps)" if step_option in config else ""
    return PolicySpec(name, config, str(own_label or f"{name} [{model}]{steps}{_shown_options(config)}"))


def _shown_options(config: dict) -> str:
    """The options a label shows (all but :data:`LABEL_HIDDEN_OPTIONS`), as `` key=value,...``."""
    shown = {k: v for k, v in config.items() if k not in LABEL_HIDDEN_OPTIONS}
    return " " + ",".join(f"{k}={v}" for k, v in sorted(shown.items())) if shown else ""


# The option that holds a method's step budget where it is not ``max_steps`` (Devil's Advocate caps the
# actions of all its trials together).
STEP_OPTIONS = {"devils_advocate": "max_actions"}
# What else keeps a method's demo episodes short: fewer trials, fewer search iterations.
DEMO_EXTRA_BUDGET: dict[str, dict] = {"devils_advocate": {"max_trials": 2}, "plan_mcts": {"iterations": 3}}


def _method(name: str) -> str:
    """The method a registered policy name belongs to (``plan_mcts_reflection`` -> ``plan_mcts``)."""
    from webarena_gym.policies.base import policy_class

    try:
        return policy_class(name).name
    except KeyError:
        return name


def demo_methods() -> list[str]:
    """Every LLM method once, under its own name (its ablation and variant names left out)."""
    from webarena_gym.policies.base import available_policies, policy_class

    return [n for n in available_policies() if policy_class(n).uses_llm and policy_class(n).name == n]


def demo_budget(name: str, steps: int | None = None) -> dict:
    """The options that keep one LLM policy's demo episodes short: the one place the demo's budgets are
    set (an LLM call, token or cost cap per episode belongs here too). ``steps``: ``--max-steps``."""
    method = _method(name)
    return {STEP_OPTIONS.get(method, "max_steps"): steps or DEMO_STEPS, **DEMO_EXTRA_BUDGET.get(method, {})}


def _env_kwargs(args: argparse.Namespace) -> dict:
    kwargs = {}
    if getattr(args, "judge_model", None):
        kwargs["judge_model"] = args.judge_model
    if getattr(args, "evaluator", None):
        kwargs["evaluator"] = args.evaluator
    if getattr(args, "record_network", False):
        kwargs["record_network"] = True
    return kwargs


def _llm_budget(args: argparse.Namespace) -> dict[str, float]:
    """The LLM budget flags as the policies' options (``--max-tokens`` is ``max_llm_tokens``)."""
    flags = {"max_llm_calls": args.max_llm_calls, "max_llm_tokens": args.max_tokens, "max_llm_cost": args.max_cost}
    return {k: v for k, v in flags.items() if v is not None}


def _api_base(args: argparse.Namespace) -> str | None:
    from webarena_gym.llm import API_BASE_ENV_VAR

    return getattr(args, "api_base", None) or os.environ.get(API_BASE_ENV_VAR) or None


def _judge_with_the_model(args: argparse.Namespace, model: str | None, why: str) -> None:
    """Judge with the policies' model unless a judge model is given (flag or variable)."""
    from webarena_gym.envs.evaluation.judge import JUDGE_MODEL_ENV_VAR

    if model and not (args.judge_model or os.environ.get(JUDGE_MODEL_ENV_VAR)):
        args.judge_model = model
        print(f"Evaluator judge: {model} ({why}; --judge-model or ${JUDGE_MODEL_ENV_VAR} picks another)")


def _study_policies(args: argparse.Namespace) -> list:
    """The ``--policy`` specs, then the rows of the ``--ablation`` ladder (which also picks the evaluator
    its paper scored with unless ``--evaluator`` names one)."""
    from webarena_gym.experiments.ablations import EVALUATORS, ladder

    policies = [_policy_spec(p, args.model) for p in args.policy or ()]
    ablation = getattr(args, "ablation", None)
    if ablation:
        if not args.model:
            raise UsageError(f"--ablation {ablation} needs a model: pass --model or set {MODEL_ENV_VAR}")
        policies += ladder(ablation, args.model)
        if not args.evaluator and ablation in EVALUATORS:
            args.evaluator = EVALUATORS[ablation]
            print(f"Evaluator: {args.evaluator} (the one the {ablation} paper scored its ablation with)")
    if not policies:
        raise UsageError("name at least one --policy or an --ablation")
    return policies


def _check_tasks(spec: str) -> None:
    """An unknown task id or task-set filter is a usage error, said before anything starts."""
    from webarena_gym.experiments.tasksets import resolve

    try:
        resolve(spec)
    except ValueError as exc:
        raise UsageError(f"--tasks {spec!r}: {exc}") from None


def cmd_compare(args: argparse.Namespace, policies: list | None = None) -> int:
    from webarena_gym.experiments.compare import StudyConfigError, StudyStopped, compare
    from webarena_gym.experiments.report import build_report
    from webarena_gym.llm.redaction import redact

    _check_tasks(args.tasks)
    api_base = _api_base(args)
    if api_base:  # WebArena's hosted judge is not on the user's server
        _judge_with_the_model(args, args.model, "the policies' model on --api-base")
    if policies is None:
        policies = _study_policies(args)
    try:
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
            llm_budget=_llm_budget(args),
            episode_timeout_s=args.episode_timeout,
            env_kwargs=_env_kwargs(args),
            resume=args.resume,
            max_attempts=args.max_attempts,
            progress=not args.no_progress,
            screenshots=args.screenshots,
            api_base=api_base,
            llm_timeout_s=args.llm_timeout,
            step_timeout_s=args.step_timeout,
        )
    except (StudyConfigError, FileExistsError, FileNotFoundError) as exc:  # FileExists: --resume missing
        raise UsageError(str(exc)) from None
    except StudyStopped as exc:
        report = build_report(args.out)
        print(f"report: {report / 'index.html'}")
        print(f"\n{redact(str(exc))}", file=sys.stderr)
        return EXIT_STOPPED
    _print_summary(build_report(study))
    return 0


def _print_summary(report: Path) -> None:
    """One screen: success by site, errors, then where the full tables and the report are."""
    from webarena_gym.experiments.report.console import console_summary
    from webarena_gym.llm.redaction import redact

    summary = json.loads((report / "summary.json").read_text())
    print(redact(console_summary(summary)))
    print(f"all tables: {report / 'summary.md'}")
    print(f"report: {report / 'index.html'}")


def cmd_report(args: argparse.Namespace) -> int:
    from webarena_gym.experiments.report import build_report
    from webarena_gym.experiments.store import MANIFEST_FILE, RESULTS_FILE

    if not any((Path(args.study) / name).is_file() for name in (MANIFEST_FILE, RESULTS_FILE)):
        raise UsageError(f"{args.study} is not a study directory (no {MANIFEST_FILE}); pass a compare --out folder")
    _print_summary(build_report(args.study, errors_as_failures=args.errors_as_failures))
    return 0


def cmd_rescore(args: argparse.Namespace) -> int:
    """Score a finished study again with another evaluator, then rebuild its report (agreement tables)."""
    from webarena_gym.experiments.report import build_report
    from webarena_gym.experiments.rescore import rescore

    try:
        path = rescore(args.study, args.evaluator, judge_model=args.judge_model)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    report = build_report(args.study)
    print(f"re-scored with {args.evaluator}: {path}")
    print(f"report: {report / 'index.html'}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """The README's main command: a comparison on a sample of the local suite (:data:`DEMO_TASKS`), with
    or without a model; with one, every LLM method runs on a short budget (:func:`demo_budget`).

    ``--max-steps`` is the LLM policies' decision budget; the baselines keep theirs (the reference
    solutions need their whole length, the random floor its :data:`DEMO_RANDOM_STEPS`).
    """
    from webarena_gym.envs.evaluation.judge import NO_JUDGE
    from webarena_gym.experiments.compare import step_timeout
    from webarena_gym.experiments.tasksets import resolve

    model = args.model or os.environ.get(MODEL_ENV_VAR)
    if not model:
        print(
            "No model configured: running the non-LLM reference baselines only (reference solutions = upper\n"
            "bound, random actions = floor). Answers that only an LLM judge can grade (fuzzy_match) score 0\n"
            "without a model, the reference solutions' too. To compare LLM policies, set a litellm model string\n"
            f"and its key, e.g.  {MODEL_ENV_VAR}=gpt-4o OPENAI_API_KEY=...  make demo\n"
            '  or use a model on your own server (README: "Your own model server").\n'
        )
        if not args.judge_model:
            args.judge_model = NO_JUDGE
    else:
        # WebArena's judge (gpt-4-1106-preview) needs an OpenAI key the user may not have given.
        _judge_with_the_model(args, model, "the policies' model")
        if args.step_timeout is None:
            args.step_timeout = max(DEMO_STEP_TIMEOUT_S, step_timeout(None, args.llm_timeout))
    names = args.policy or demo_methods()
    llm = [_policy_spec(p, model, demo_budget(p.partition(":")[0], args.max_steps)) for p in names] if model else []
    baselines = [_policy_spec(p, None) for p in ("reference", f"random:max_steps={DEMO_RANDOM_STEPS}")]
    try:
        n_tasks = len(resolve(args.tasks))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    whole = " (--tasks local runs all of the local suite)" if args.tasks == DEMO_TASKS else ""
    print(f"{n_tasks} tasks ({args.tasks}){whole} x {len(llm + baselines)} policies\n")
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.out = args.out or str(Path("studies") / f"demo-{stamp}")
    args.model = model
    args.seeds = [0]
    args.max_steps = None  # in the LLM policies' own options (above): the baselines keep their budgets
    args.executor, args.ray_address, args.resume, args.max_attempts = "process", None, False, 2
    return cmd_compare(args, llm + baselines)


def cmd_conformance(args: argparse.Namespace) -> int:
    """Run the conformance matrix (the nine methods, or those named, with ``--ablations`` their ablation
    presets too, with the conformance model) and print its table."""
    from webarena_gym.experiments.conformance.matrix import (
        METHODS,
        VARIANTS,
        ablations,
        markdown,
        run_matrix,
        sample,
        summarize,
    )
    from webarena_gym.experiments.tasksets import resolve

    methods = args.policy or list(METHODS)
    unknown = [m for m in methods if m not in (*METHODS, *VARIANTS)]
    if unknown:
        covered = ", ".join((*METHODS, *VARIANTS))
        raise UsageError(f"--policy {', '.join(unknown)}: no conformance model yet; covered: {covered}")
    if args.ablations:
        methods += [v for v in ablations(methods) if v not in methods]
    _check_tasks(args.tasks)
    tasks = [t for t in resolve(args.tasks) if t.env_id.startswith("webarena/local.")]
    if not tasks:
        raise UsageError(f"--tasks {args.tasks!r}: the conformance model knows only the local suite's tasks")
    if args.per_site:
        tasks = sample(tasks, args.per_site)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    if not 0 <= args.faults < 1:
        raise UsageError(f"--faults {args.faults}: a share of the answers, at least 0 and below 1")
    out = run_matrix(
        methods,
        tasks,
        args.out or Path("studies") / f"conformance-{stamp}",
        n_workers=args.workers,
        resume=args.resume,
        faults=args.faults,
    )
    table = markdown(summarize(out))
    (out / "conformance.md").write_text(table + "\n")
    print(table)
    print(f"\nstudy: {out} (table in conformance.md)")
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    from webarena_gym.experiments.tasksets import resolve

    if args.coverage:
        from webarena_gym.envs.local.registry import coverage

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

    _check_tasks(args.tasks)
    for t in resolve(args.tasks):
        webarena = "none" if t.webarena_template is None else t.webarena_template
        print(
            f"{t.env_id}\t{','.join(t.sites)}\ttemplate={t.template_id}\twebarena_template={webarena}"
            f"\t{'+'.join(t.eval_types)}"
        )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from webarena_gym.envs.local.serve import main as serve_main

    return serve_main(args.rest)


def cmd_bench(args: argparse.Namespace) -> int:
    from webarena_gym.benchmarks.run import main as bench_main

    return bench_main(args.rest)


def cmd_rl(args: argparse.Namespace) -> int:
    from webarena_gym.experiments.rl import main as rl_main

    return rl_main(args.rest)


def cmd_dataset(args: argparse.Namespace) -> int:
    from webarena_gym.experiments.datasets import main as dataset_main

    return dataset_main(args.rest)


# Commands whose own parser reads the rest of the command line.
PASS_THROUGH = {
    "serve": (cmd_serve, "start local sites to click around (options: see `serve --help`)"),
    "dataset": (cmd_dataset, "export a study as a training set (options: see `dataset --help`)"),
    "bench": (cmd_bench, "run the benchmarks and write docs/benchmarks.md"),
    "rl": (cmd_rl, "train PPO (stable-baselines3) on MiniWoB++ or local tasks: python -m webarena_gym.experiments.rl"),
}


def _add_study_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model", default=os.environ.get(MODEL_ENV_VAR), help=f"litellm model string (default ${MODEL_ENV_VAR})"
    )
    p.add_argument(
        "--judge-model", help="litellm model for fuzzy/N/A evaluation (default WebArena's; 'none': no judge)"
    )
    p.add_argument(
        "--api-base",
        default=None,
        help="OpenAI-compatible server for every LLM role and the judge, e.g. http://127.0.0.1:8080/v1 "
        "with --model openai/<name> (default $WEBARENA_GYM_API_BASE)",
    )
    p.add_argument(
        "--llm-timeout", type=float, default=None, help="seconds per LLM call attempt (default 120; judge 60)"
    )
    p.add_argument(
        "--step-timeout",
        type=float,
        default=None,
        help="seconds per step of an episode's budget before the episode is stopped "
        "(default 30, or --llm-timeout + 30 when that is larger)",
    )
    p.add_argument("--episode-timeout", type=float, default=None, help="seconds per episode (overrides --step-timeout)")
    p.add_argument(
        "--evaluator",
        choices=("webarena", "agentoccam", "webarena-verified"),
        default=None,
        help="WebArena's evaluator (default; webarena-verified/<id> tasks: webarena-verified), AgentOccam's "
        "rectified one (its corrected labels and fuzzy grader) or WebArena-Verified's package",
    )
    p.add_argument(
        "--record-network",
        action="store_true",
        help="write every request of each episode to network.har beside its trajectory "
        "(always on for webarena-verified/<id> tasks)",
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
    p.add_argument(
        "--max-llm-calls",
        type=int,
        default=None,
        help="LLM calls per episode over every role of a method (policy option max_llm_calls; default: none)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="prompt + completion tokens per episode over every role (policy option max_llm_tokens; default: none)",
    )
    p.add_argument(
        "--max-cost",
        type=float,
        default=None,
        help="USD of LLM calls per episode (policy option max_llm_cost; a model without a price stops the study)",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--screenshots", action="store_true", help="save a screenshot per step for the HTML report")


def build_parser() -> argparse.ArgumentParser:
    from webarena_gym.experiments.ablations import LADDERS as ABLATIONS
    from webarena_gym.experiments.tasksets import DEFAULT_TASKS

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
        default=DEFAULT_TASKS,
        help="task set: local[:site=|template=|webarena_template=|sample], webarena[:site=|template=|dev|lite], "
        "webarena-lite[:site=|template=], webarena-verified[:hard|site=|template=], miniwob[:<task>,...], "
        "or env ids",
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
    p.add_argument("--resume", action="store_true", help="continue the study in --out")
    p.add_argument("--max-attempts", type=int, default=2, help="attempts per episode when earlier ones errored")
    _add_study_options(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("report", help="rebuild a study's reports from its store")
    p.add_argument("study")
    p.add_argument(
        "--errors-as-failures",
        action="store_true",
        help="count episodes that ended in an error (provider, browser, sites, judge) as failures "
        "instead of leaving them out of the success rates",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("rescore", help="score a finished study's episodes again with another evaluator")
    p.add_argument("study")
    p.add_argument(
        "--evaluator",
        required=True,
        choices=("webarena", "agentoccam", "webarena-verified"),
        help="the evaluator to score with (its verdicts go to <study>/rescored/<evaluator>.jsonl)",
    )
    p.add_argument("--judge-model", default=None, help="judge model for fuzzy_match references (webarena, agentoccam)")
    p.set_defaults(func=cmd_rescore)

    p = sub.add_parser("demo", help="compare policies on a sample of the local suite (baselines only without a model)")
    p.add_argument("--out", default=None)
    p.add_argument(
        "--tasks",
        default=DEMO_TASKS,
        help=f"task set (default {DEMO_TASKS}: ~30 tasks, every site and eval type; 'local': all 586)",
    )
    p.add_argument(
        "--policy",
        action="append",
        default=None,
        help="LLM policy name[:key=value,...] to run beside the baselines; repeat for several "
        f"(default: every LLM method, {DEMO_STEPS} steps each unless --max-steps)",
    )
    _add_study_options(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("tasks", help="list the tasks of a task set")
    p.add_argument("tasks", nargs="?", default="local", help=f"task set (default local; the demo's: {DEMO_TASKS})")
    p.add_argument("--coverage", action="store_true", help="print the local suite's WebArena coverage table instead")
    p.set_defaults(func=cmd_tasks)

    p = sub.add_parser(
        "conformance", help="run the LLM methods with a model that knows the reference solutions; method x site table"
    )
    from webarena_gym.experiments.conformance.matrix import LADDER_ROWS

    p.add_argument(
        "--policy",
        action="append",
        help="method or ablation preset to check; repeat for several (default: the nine methods). The presets: "
        "the registered variants (plan_mcts_macro_only, action_mcts, plan_and_act_no_planner, ...) and AgentOccam's "
        f"ladder rows {', '.join(LADDER_ROWS)}",
    )
    p.add_argument(
        "--ablations", action="store_true", help="add every ablation preset of the chosen methods (default: of all)"
    )
    p.add_argument("--tasks", default="local", help="local task set (default local: every local task)")
    p.add_argument("--per-site", type=int, default=0, help="only the first N tasks of each site (CI runs 1)")
    p.add_argument(
        "--faults", type=float, default=0.0, help="share of answers replaced by a plausible wrong one (e.g. 0.2)"
    )
    p.add_argument("--out", default=None, help="study directory (default studies/conformance-<time>)")
    p.add_argument("--workers", type=int, default=1, help="episodes run in parallel")
    p.add_argument("--resume", action="store_true", help="continue the study in --out")
    p.set_defaults(func=cmd_conformance)

    from webarena_gym.experiments.synth.cli import register as register_synth

    register_synth(sub)

    for name, (func, text) in PASS_THROUGH.items():
        p = sub.add_parser(name, help=text, add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=func)
    return parser


def main(argv: list[str] | None = None) -> int:
    from webarena_gym.llm.redaction import install_log_redaction, redact

    install_log_redaction()
    # A command started in the background by a script (``cmd &``) inherits SIGINT ignored, and Python
    # then installs no KeyboardInterrupt for it: `kill -INT` would not stop a study. Ctrl-C is how a study
    # stops cleanly, so it is always Python's KeyboardInterrupt here.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in PASS_THROUGH:  # its own parser gets every argument, `--help` and options first too
        args = argparse.Namespace(func=PASS_THROUGH[argv[0]][0], command=argv[0], rest=argv[1:])
    else:
        args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"webarena-gym {args.command}: error: {redact(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130  # what a shell reports for Ctrl-C; compare() has already said how to resume
    finally:
        from webarena_gym import envs

        envs.shutdown()


if __name__ == "__main__":
    sys.exit(main())
