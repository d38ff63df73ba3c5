"""A new user's first run: the demo's sample of the local suite, every LLM method on a short budget, the
errors' messages on the console as they happen, and the one-screen summary the commands end with.

The episodes here are a small picklable runner (no browser): what is under test is what the user is
told; the report's layout in a real browser is in test_report_layout.py.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from webarena_gym.experiments import cli, tasksets
from webarena_gym.experiments.compare import PolicySpec, _result_base, compare
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.report.console import console_summary
from webarena_gym.experiments.store import EpisodeResult, StudyStore
from webarena_gym.policies import make_policy

MODEL = "openai/test-model"
LONG_MESSAGE = "litellm.APIConnectionError: Connection refused at http://127.0.0.1:9/v1 " + "x" * 400


# -- the demo's task set -----------------------------------------------------------------------------------


def test_the_sample_covers_every_site_and_eval_type_of_the_local_suite_in_about_30_tasks():
    everything = tasksets.resolve("local")
    sample = tasksets.resolve("local:sample")
    pairs = {(t.site_group, tuple(sorted(t.eval_types))) for t in everything}
    assert len(everything) == 586 and len(sample) == tasksets.SAMPLE_SIZE == 30
    assert {(t.site_group, tuple(sorted(t.eval_types))) for t in sample} == pairs
    assert [t.env_id for t in sample] == [t.env_id for t in tasksets.resolve("local:sample")]  # fixed seed
    assert [t.task_id for t in sample] == sorted(t.task_id for t in sample)
    per_site = Counter(t.site_group for t in sample)
    assert set(per_site) == {t.site_group for t in everything} and max(per_site.values()) <= 6
    seven = tasksets.resolve("local:sample=7")  # a shorter run still spreads over the sites
    assert len({t.site_group for t in seven}) == 7 and {t.env_id for t in seven} <= {t.env_id for t in sample}
    with pytest.raises(ValueError, match="sample= takes a number of tasks"):
        tasksets.resolve("local:sample=few")


def demo(monkeypatch, *argv: str) -> tuple[argparse.Namespace, list[PolicySpec]]:
    seen = []
    monkeypatch.setattr(cli, "cmd_compare", lambda args, policies: seen.append((args, policies)) or 0)
    monkeypatch.delenv("WEBARENA_GYM_JUDGE_MODEL", raising=False)
    monkeypatch.delenv(cli.MODEL_ENV_VAR, raising=False)
    args = cli.build_parser().parse_args(["demo", *argv])
    assert args.func(args) == 0
    return seen[0]


def test_the_demo_runs_the_sample_unless_told_to_run_everything(monkeypatch, capsys):
    args, policies = demo(monkeypatch)
    assert args.tasks == "local:sample" and [p.name for p in policies] == ["reference", "random"]
    assert "30 tasks (local:sample) (--tasks local runs all of the local suite) x 2 policies" in capsys.readouterr().out
    args, _ = demo(monkeypatch, "--tasks", "local")
    assert args.tasks == "local" and "586 tasks (local) x 2 policies" in capsys.readouterr().out


def test_a_task_set_the_demo_cannot_run_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["demo", "--tasks", "local:sample=few", "--out", str(tmp_path / "d")]) == cli.EXIT_USAGE
    assert "sample= takes a number of tasks" in capsys.readouterr().err and not (tmp_path / "d").exists()


def test_with_a_model_the_demo_runs_every_llm_method_on_a_short_budget(monkeypatch):
    args, policies = demo(monkeypatch, "--model", MODEL)
    assert args.step_timeout == cli.DEMO_STEP_TIMEOUT_S  # room for the methods that call the model several times a step
    by_name = {p.name: p for p in policies}
    methods = {"react", "agentoccam", "coact", "plan_and_act", "devils_advocate", "plan_mcts"}
    assert set(by_name) == methods | {"reference", "random"}
    extra = {"devils_advocate": " max_trials=2", "plan_mcts": " iterations=3"}  # a label shows what sets it apart
    for name in methods:
        steps = by_name[name].config.get("max_steps", by_name[name].config.get("max_actions"))
        assert steps == cli.DEMO_STEPS
        assert by_name[name].label == f"{name} [{MODEL}] ({cli.DEMO_STEPS} steps){extra.get(name, '')}"
    assert by_name["devils_advocate"].config["max_trials"] == 2 and by_name["plan_mcts"].config["iterations"] == 3
    for spec in policies:  # every method accepts its demo budget
        assert make_policy(spec.name, **spec.config).name == spec.name
    args, policies = demo(
        monkeypatch,
        "--model",
        MODEL,
        "--max-steps",
        "3",
        "--policy",
        "devils_advocate:max_trials=4",
        "--llm-timeout",
        "300",
    )
    assert args.step_timeout == 330  # a slower call timeout keeps its own margin
    assert [(p.name, p.config) for p in policies][0] == (
        "devils_advocate",
        {"max_actions": 3, "max_trials": 4, "model": MODEL},  # the user's options win over the demo's budget
    )


# -- errors the user can read --------------------------------------------------------------------------------


def provider_error_on_odd_tasks(job) -> EpisodeResult:
    if job.task.task_id % 2:
        return _result_base(job, "error", error_kind="provider", err_msg=f"{LONG_MESSAGE} task {job.task.task_id}")
    if job.task.task_id == 2:
        return _result_base(job, "error", error_kind="timeout", err_msg="episode timed out after 90 s")
    return _result_base(job, "done", reward=1.0, n_steps=2)


def test_the_first_error_of_each_kind_is_printed_with_its_message_as_it_happens(tmp_path, capsys):
    tasks = [tasksets.TaskInfo(f"webarena/local.{i}", i, ("shopping",), 1, ("string_match",)) for i in range(5)]
    policy = PolicySpec("reference", label="ref")
    study = compare([policy], tasks, tmp_path / "s", runner=provider_error_on_odd_tasks, progress=False)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("first ")]
    assert len(lines) == 2, err  # one line per kind, not one per errored episode
    assert lines[0].startswith("first provider error: ref on webarena/local.1: litellm.APIConnectionError")
    assert "Connection refused" in lines[0] and len(lines[0]) < 450  # the message, cut to a line
    assert lines[1].startswith("first timeout error: ref on webarena/local.2: episode timed out after 90 s")

    report = build_report(study)
    summary = json.loads((report / "summary.json").read_text())
    screen = console_summary(summary)
    assert "| ref | 100.0 ± 0.0 | 100.0 ± 0.0 | 3 (provider 2, timeout 1) |" in screen
    assert "provider error: ref on webarena/local.1: litellm.APIConnectionError" in screen and "(+1 more)" in screen
    assert len(screen.splitlines()) < 25
    html = (report / "index.html").read_text()
    assert '<a href="#errors">3 (provider 2, timeout 1)</a>' in html and 'id="errors"' in html
    assert f"{LONG_MESSAGE} task 3" in html  # the errors section has every message whole


def test_the_demo_ends_with_a_one_screen_summary_and_the_reports_path(tmp_path, capsys):
    tasks = [tasksets.TaskInfo(f"webarena/local.{i}", i, ("shopping",), 1, ("string_match",)) for i in range(3)]
    study = compare([PolicySpec("reference", label="ref")], tasks, tmp_path / "s", runner=provider_error_on_odd_tasks)
    capsys.readouterr()
    assert cli.main(["report", str(study)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Success by site") and out[-1] == f"report: {study / 'report' / 'index.html'}"
    assert any(line.startswith("  provider error: ref on webarena/local.1") for line in out)
    assert len(out) < 25


def test_the_cost_plot_is_left_out_with_its_reason_when_no_cost_is_known(tmp_path):
    tasks = [tasksets.TaskInfo(f"webarena/local.{i}", i, ("shopping",), 1, ("string_match",)) for i in range(2)]
    study = compare([PolicySpec("reference", label="ref")], tasks, tmp_path / "s", runner=provider_error_on_odd_tasks)
    report = build_report(study)
    html = (report / "index.html").read_text()
    assert not (report / "success_vs_cost.png").exists() and "success_vs_cost.png" not in html
    assert "Success against cost: not drawn, no policy has a known cost above $0 (1 at $0)." in html
    assert (report / "success_by_site.png").stat().st_size > 0 and 'src="success_by_site.png"' in html


# -- the demo with a model, end to end ------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.slow
def test_the_demo_with_a_model_server_runs_every_method_to_a_judged_end(tmp_path):
    """Every method against one OpenAI-compatible server on 127.0.0.1 that always gives the same ReAct-style
    answer: the methods that cannot use it fail as policies (judged), none errors, and the run finishes."""
    from model_server import ModelServer

    server = ModelServer(lambda request: "In summary, the next action I will perform is ```stop [1796]```")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("WEBARENA_GYM_", "OPENAI_"))}
    try:
        out = subprocess.run(
            [sys.executable, "-m", "webarena_gym.experiments.cli", "demo", "--tasks", "webarena/local.500"]
            + ["--model", "openai/fake", "--api-base", server.url, "--out", str(tmp_path / "demo"), "--no-progress"],
            capture_output=True, text=True, env={**base, "OPENAI_API_KEY": "sk-local-dummy-000"}, timeout=1200,
        )  # fmt: skip
    finally:
        server.close()
    assert out.returncode == 0, out.stderr[-3000:]
    results = {r.policy: r for r in StudyStore(tmp_path / "demo").latest().values()}
    methods = {"react", "agentoccam", "coact", "plan_and_act", "devils_advocate", "plan_mcts"}
    assert {p.split(" ")[0] for p in results} == methods | {"reference", "random"}
    assert all(r.status == "done" for r in results.values()), {p: r.err_msg for p, r in results.items()}
    assert results["react [openai/fake] (5 steps)"].reward == 1.0  # the one the answer fits solves the task
    assert "1 tasks (webarena/local.500) x 8 policies" in out.stdout and "Success by site" in out.stdout
