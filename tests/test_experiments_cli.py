"""The `webarena-gym` command as a user runs it: a subprocess, real sites, real browser."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from study_support import gated_server, model_options, stop_after_first_episode

from webarena_gym.experiments.cli import UsageError, _policy_spec


def cli(*args: str, env_extra: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "WEBARENA_GYM_MODEL"} | (env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "webarena_gym.experiments.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def test_policy_specs_label_baselines_and_models():
    assert _policy_spec("reference", None).label == "reference solutions (non-LLM upper bound)"
    assert _policy_spec("random:max_steps=10,seed=2", None).config == {"max_steps": 10, "seed": 2}
    assert _policy_spec("react", "gpt-4o").label == "react [gpt-4o]"
    with pytest.raises(UsageError, match="needs a model"):
        _policy_spec("agentoccam", None)


def test_tasks_lists_a_task_set():
    out = cli("tasks", "webarena:site=map")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # WebArena's 109 map-only tasks plus the multi-site tasks that include the map
    assert len(lines) == 128 and all("map" in line.split("\t")[1] for line in lines)


def test_commands_with_their_own_parser_get_every_argument_options_first_too(tmp_path):
    shown = cli("dataset", "--help")
    assert shown.returncode == 0 and "--min-reward" in shown.stdout and "study" in shown.stdout
    missing = cli("dataset", "--out", str(tmp_path / "out"), str(tmp_path / "no-study"))
    assert missing.returncode != 0 and "no-study" in missing.stderr  # the study, not the option, was read
    assert "--expand" in cli("synth", "run", "--help").stdout
    not_a_run = cli("synth", "export", str(tmp_path), "--out", str(tmp_path / "train"))
    assert not_a_run.returncode == 1 and "not a run of the pipeline" in not_a_run.stderr


@pytest.mark.browser
@pytest.mark.slow
def test_demo_without_a_model_runs_labelled_baselines_and_says_how_to_add_one(tmp_path):
    study = tmp_path / "demo"
    # 403 picks a <select> option by its value ("walking"), which the page labels "Walking"
    out = cli(
        "demo",
        "--tasks",
        "webarena/local.121,webarena/local.403",
        "--out",
        str(study),
        "--workers",
        "1",
        "--no-progress",
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "No model configured" in out.stdout and "WEBARENA_GYM_MODEL" in out.stdout
    assert "reference solutions (non-LLM upper bound)" in out.stdout
    assert "random actions (10 steps, non-LLM floor)" in out.stdout
    assert (study / "report" / "index.html").exists()
    rows = json.loads((study / "report" / "summary.json").read_text())["rows"]
    assert rows[0]["success"]["all"]["mean"] == 1.0  # the reference solutions solve both tasks
    assert all("scripted" not in r["policy"] and "[" not in r["policy"] for r in rows)  # no model claimed

    (study / "report" / "index.html").unlink()
    again = cli("report", str(study))
    assert again.returncode == 0 and (study / "report" / "index.html").exists()


def test_demo_with_a_model_judges_with_it_unless_told_otherwise(monkeypatch):
    import argparse

    from webarena_gym.experiments import cli as cli_module

    seen = []
    monkeypatch.setattr(cli_module, "cmd_compare", lambda args, policies: seen.append(args.judge_model) or 0)
    monkeypatch.delenv("WEBARENA_GYM_JUDGE_MODEL", raising=False)

    def demo(judge):
        options = {
            "out": "x",
            "tasks": "local",
            "policy": None,
            "max_steps": None,
            "step_timeout": None,
            "llm_timeout": None,
        }
        cli_module.cmd_demo(argparse.Namespace(model="ollama/llama3.1", judge_model=judge, **options))

    for judge in (None, "gpt-4o"):
        demo(judge)
    monkeypatch.setenv("WEBARENA_GYM_JUDGE_MODEL", "claude-3-5-sonnet")
    demo(None)
    assert seen == ["ollama/llama3.1", "gpt-4o", None]  # None: the evaluator reads the variable


@pytest.mark.browser
@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_resume_finishes_without_repeats(tmp_path):
    study = tmp_path / "s"
    tasks = "webarena/local.500,webarena/local.501,webarena/local.502,webarena/local.503"
    server, gate = gated_server()  # the second episode's model call is held: Ctrl-C finds the study running
    try:
        base = ["compare", *model_options(server), "--tasks", tasks, "--out", str(study), "--workers", "1"]
        base.append("--no-progress")
        env = {k: v for k, v in os.environ.items() if k != "WEBARENA_GYM_MODEL"}
        results = study / "results.jsonl"
        command = [sys.executable, "-m", "webarena_gym.experiments.cli", *base]
        code, err = stop_after_first_episode(command, env, results)
        assert code == 130 and "--resume" in err, err[-3000:]
        done_before = results.read_text().count("\n")
        assert 1 <= done_before < 4
        gate.open()
        out = cli(*base, "--resume", env_extra={"OPENAI_API_KEY": "local-dummy"})
    finally:
        server.close()
    assert out.returncode == 0, out.stderr[-3000:]
    keys = [(r["env_id"], r["attempt"]) for r in map(json.loads, results.read_text().splitlines())]
    assert sorted(k for k, _ in keys) == sorted(tasks.split(","))  # every task once: none lost, none twice
