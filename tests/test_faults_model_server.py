"""A model on the user's own OpenAI-compatible server, as the README's "Your own model server" section
runs it: litellm's real ``openai/<name>`` path against a server this test starts on 127.0.0.1.

What must hold: one option (``--api-base`` / ``$WEBARENA_GYM_API_BASE``, or a policy's ``api_base``)
points every role and the judge at the server; every role has a bounded output and an abandoned call
is cancelled at the server; a rejected key or a context too small stops the study after one episode
with one message; bad options exit non-zero; an unknown cost reads "unknown", never $0; the demo takes
the same options as ``compare`` and its ``--max-steps`` leaves the baselines' budgets alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from env_support import task_config
from model_server import ModelServer

from webarena_gym.experiments import cli
from webarena_gym.experiments.store import StudyStore
from webarena_gym.llm import LLM, LLMError
from webarena_gym.policies.base import available_policies, make_policy, policy_class

MODEL = "openai/fake"
DUMMY_KEY = "sk-local-dummy-000"  # local servers take any key; litellm's OpenAI client needs one
FUZZY_TASK = "webarena/local.69"  # "Tell me when I last ordered my comforter?" (fuzzy_match: February 26, 2023)
EXACT_TASK = "webarena/local.500"  # "In which year was Ilse Prescott born?" (exact_match: 1796)


def say(action: str) -> str:
    return f"The answer is on the page. In summary, the next action I will perform is ```{action}```"


def answers(actor: str, judge: str = "The dates agree.\nVerdict: correct"):
    return lambda request: judge if request.is_judge else actor


@pytest.fixture
def server():
    srv = ModelServer(answers(say("stop [Feb 26, 2023]")))
    yield srv
    srv.close()


def wait_for(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("WEBARENA_GYM_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "webarena_gym.experiments.cli", *args],
        capture_output=True,
        text=True,
        env={**base, "OPENAI_API_KEY": DUMMY_KEY, **(env or {})},
        timeout=timeout,
    )


def study_args(out: Path, tasks: str, *extra: str) -> list[str]:
    return ["compare", "--tasks", tasks, "--out", str(out), "--workers", "1", "--no-progress", *extra]


# -- the LLM layer on the real HTTP path -------------------------------------------------------------


# Each method's output bound per role: the paper's or its code's value where one is published (ReAct's
# WebArena runner, CoAct, Devil's Advocate, Plan-and-Act), else the policy's own documented choice.
BOUNDS = {
    "react": {"actor": 384},
    "agentoccam": {"actor": 1024},
    "agentoccam_judge": {"actor": 1024, "judge": 1024},
    "coact": {"global_planner": 1024, "local_agent": 384},
    "devils_advocate": dict.fromkeys(
        ("plan", "action", "remedy", "align", "task_check", "subtask_check", "element_map", "answer", "summarize"), 512
    ),
    "plan_and_act": {"planner": 4096, "replanner": 4096, "executor": 1024},
    "plan_and_act_dynamic": {"planner": 4096, "replanner": 4096, "executor": 512},  # without CoT
    "plan_mcts": {"planner": 1024, "operator": 1024, "micro": 512, "macro": 512, "reflector": 512},
}


SEARCH_BASELINES = ("plan_search", "action_mcts", "action_search")  # Plan-MCTS's roles, other searches


def family(name: str) -> str:
    """The entry of BOUNDS a registered variant shares its roles and bounds with (a policy added
    without an entry fails the test below)."""
    if name in BOUNDS:
        return name
    if name in SEARCH_BASELINES:
        return "plan_mcts"
    if name.startswith("plan_and_act"):
        return "plan_and_act_dynamic"  # the other variants run without CoT
    return next(f for f in BOUNDS if name.startswith(f))


def test_every_role_of_every_policy_has_its_own_bounded_output(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    names = [name for name in available_policies() if policy_class(name).uses_llm]
    assert set(BOUNDS) <= set(names)
    for name in names:
        policy = make_policy(name, model=MODEL, script={})
        roles = {role: s.max_tokens for llm in policy.llms() for role, s in llm.roles.items()}
        assert roles == BOUNDS[family(name)], name  # set per role, not left to the client's fallback
    # and the bound is what reaches the server (AgentOccam's card sets none: 1024 here)
    occam = make_policy("agentoccam", model=MODEL, api_base=server.url, retries=0)
    occam.llm.complete("actor", [{"role": "user", "content": "hello"}])
    assert server.requests[-1].body["max_tokens"] == 1024 and server.requests[-1].body["model"] == "fake"


def test_an_abandoned_call_is_cancelled_at_the_server(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    server.delay_s = 10
    llm = LLM(MODEL, api_base=server.url, retries=0, timeout=1)
    with pytest.raises(LLMError) as failure:
        llm.complete("actor", [{"role": "user", "content": "write forever"}])
    assert failure.value.kind == "provider" and "Timeout" in str(failure.value)
    assert wait_for(lambda: len(server.hung_up) == 1)  # the server saw the client leave and stopped
    assert len(server.requests) == 1  # one attempt, no hidden retries of the OpenAI client


# -- whole studies through the command line ----------------------------------------------------------


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("how", ["flag", "variable"])
def test_api_base_points_every_role_and_the_judge_at_the_server(server, tmp_path, how):
    point = ["--api-base", server.url] if how == "flag" else []
    env = {"WEBARENA_GYM_API_BASE": server.url} if how == "variable" else {}
    out = run_cli(*study_args(tmp_path / "s", FUZZY_TASK, "--policy", "react", "--model", MODEL, *point), env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    (result,) = StudyStore(tmp_path / "s").latest().values()
    assert (result.status, result.reward) == ("done", 1.0)  # the judge on the server said "correct"
    roles = ["judge" if r.is_judge else "actor" for r in server.requests]
    assert roles == ["actor", "judge"]
    assert all(
        r.body["model"] == "fake" and r.headers["authorization"] == f"Bearer {DUMMY_KEY}" for r in server.requests
    )
    assert all(r.body["max_tokens"] == 384 for r in server.requests)  # ReAct's card value; the judge's bound
    assert "Evaluator judge: openai/fake" in out.stdout


@pytest.mark.browser
@pytest.mark.slow
def test_a_policys_own_api_base_option_works(server, tmp_path):
    server.reply = answers(say("stop [1796]"))
    policy = f"react:api_base={server.url},temperature=0"
    out = run_cli(*study_args(tmp_path / "s", EXACT_TASK, "--policy", policy, "--model", MODEL))
    assert out.returncode == 0, out.stderr[-3000:]
    (result,) = StudyStore(tmp_path / "s").latest().values()
    assert (result.status, result.reward) == ("done", 1.0)
    assert [r.body["temperature"] for r in server.requests] == [0]


@pytest.mark.parametrize(
    "policy,message",
    [
        ("react:bogus=1", "unknown option 'bogus'"),
        ("react:temperature", "options are written name:key=value"),
        ("nosuchpolicy", "unknown policy 'nosuchpolicy'"),
    ],
)
def test_bad_policy_options_exit_non_zero_with_one_clear_message(tmp_path, policy, message):
    out = run_cli(*study_args(tmp_path / "s", EXACT_TASK, "--policy", policy, "--model", MODEL))
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and out.stderr.count("error:") == 1
    assert not (tmp_path / "s" / "results.jsonl").exists()


@pytest.mark.browser
@pytest.mark.slow
def test_a_rejected_key_stops_the_study_after_one_episode_with_one_message(server, tmp_path):
    server.api_key = "the-right-key"  # the server echoes the wrong key back, as hosted APIs do
    tasks = f"{EXACT_TASK},webarena/local.501,webarena/local.502"
    out = run_cli(*study_args(tmp_path / "s", tasks, "--policy", "react", "--model", MODEL, "--api-base", server.url))
    assert out.returncode == 3 and out.stderr.count("study stopped") == 1, out.stderr[-3000:]
    assert "AuthenticationError" in out.stderr and "--resume" in out.stderr
    (result,) = StudyStore(tmp_path / "s").attempts()  # one episode, then the study stopped
    assert (result.status, result.error_kind) == ("error", "configuration")
    assert len(server.requests) == 1  # not retried as if transient
    written = [
        p.read_text(errors="replace")
        for p in (tmp_path / "s").rglob("*")
        if p.suffix in (".json", ".jsonl", ".md", ".html")
    ]
    assert all(DUMMY_KEY not in text for text in [*written, out.stdout, out.stderr])
    summary = json.loads((tmp_path / "s" / "report" / "summary.json").read_text())
    assert summary["rows"][0]["error_kinds"] == {"configuration": 1}


@pytest.mark.browser
@pytest.mark.slow
def test_a_context_too_small_is_a_configuration_error_printed_once_and_counted(server, tmp_path):
    server.reply = lambda request: (400, "This model's maximum context length is 512 tokens, your prompt has 2301.")
    tasks = f"{EXACT_TASK},webarena/local.501"
    out = run_cli(*study_args(tmp_path / "s", tasks, "--policy", "react", "--model", MODEL, "--api-base", server.url))
    assert out.returncode == 3 and out.stderr.count("maximum context length") == 1, out.stderr[-3000:]
    report = (tmp_path / "s" / "report" / "summary.md").read_text()
    assert "1 (configuration 1)" in report


@pytest.mark.browser
@pytest.mark.slow
def test_unknown_cost_reads_unknown_also_for_a_timed_out_episode(server, tmp_path):
    server.reply = answers(say("stop [1796]"))
    server.delay_s = lambda request: 300 if "Yusuf Eastwood" in json.dumps(request.body) else 0  # task 501
    tasks = f"{EXACT_TASK},webarena/local.501"
    args = study_args(tmp_path / "s", tasks, "--policy", "react", "--model", MODEL, "--api-base", server.url)
    out = run_cli(*args, "--episode-timeout", "40")
    assert out.returncode == 0, out.stderr[-3000:]
    latest = {r.env_id: r for r in StudyStore(tmp_path / "s").latest().values()}
    assert latest["webarena/local.501"].error_kind == "timeout" and not latest["webarena/local.501"].cost_known
    assert wait_for(lambda: len(server.hung_up) == 1)  # the killed episode's call stopped at the server
    summary = json.loads((tmp_path / "s" / "report" / "summary.json").read_text())
    assert summary["rows"][0]["cost_status"] == "unknown"
    report = (tmp_path / "s" / "report" / "summary.md").read_text()
    assert "| unknown |" in report and "unknown: no price is known" in report


# -- the demo takes compare's options ------------------------------------------------------------------


def demo(monkeypatch, *argv: str) -> tuple[argparse.Namespace, list]:
    seen = []
    monkeypatch.setattr(cli, "cmd_compare", lambda args, policies: seen.append((args, policies)) or 0)
    monkeypatch.delenv("WEBARENA_GYM_JUDGE_MODEL", raising=False)
    args = cli.build_parser().parse_args(["demo", *argv])
    assert args.func(args) == 0
    return seen[0]


def test_demo_max_steps_applies_to_the_llm_policies_only_and_labels_stay_right(monkeypatch):
    args, policies = demo(monkeypatch, "--model", MODEL, "--max-steps", "2")
    by_name = {p.name: p for p in policies}
    assert by_name["react"].config["max_steps"] == 2 and by_name["agentoccam"].config["max_steps"] == 2
    assert by_name["react"].label == f"react [{MODEL}] (2 steps)"
    assert "max_steps" not in by_name["reference"].config and by_name["random"].config["max_steps"] == 10
    assert by_name["random"].label == "random actions (10 steps, non-LLM floor)"
    assert args.max_steps is None  # no study-wide budget that would cut the baselines short


def test_demo_accepts_the_policy_options_and_timeouts_of_compare(monkeypatch):
    args, policies = demo(
        monkeypatch,
        *("--model", MODEL, "--policy", "react:temperature=0", "--api-base", "http://127.0.0.1:9/v1"),
        *("--llm-timeout", "300", "--step-timeout", "400", "--episode-timeout", "9000"),
    )
    assert [p.name for p in policies] == ["react", "reference", "random"]
    assert policies[0].config == {"max_steps": cli.DEMO_STEPS, "temperature": 0, "model": MODEL}
    assert (args.api_base, args.llm_timeout, args.step_timeout, args.episode_timeout) == (
        "http://127.0.0.1:9/v1",
        300,
        400,
        9000,
    )
    assert args.judge_model == MODEL


# -- the README's commands ---------------------------------------------------------------------------------

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_section() -> str:
    return README.read_text().split("## Your own model server", 1)[1].split("\n## ", 1)[0]


def readme_commands() -> list[list[str]]:
    """The ``webarena-gym`` command lines of the README's "Your own model server" section."""
    return [shlex.split(line)[1:] for line in readme_section().splitlines() if line.startswith("webarena-gym ")]


def readme_exports() -> dict[str, str]:
    """The variables that section exports before its commands (the dummy key)."""
    lines = [shlex.split(line)[1] for line in readme_section().splitlines() if line.startswith("export ")]
    return dict(line.split("=", 1) for line in lines)


def test_the_readme_model_server_commands_are_valid_command_lines():
    commands = readme_commands()
    assert len(commands) == 4
    for argv in commands:
        args = cli.build_parser().parse_args(argv)
        assert args.command == "demo" and args.api_base and args.llm_timeout == 300 and args.workers == 1


@pytest.mark.browser
@pytest.mark.slow
def test_the_readme_llama_cpp_command_runs_against_a_server(tmp_path):
    """The README's llama.cpp line as written, with the key it exports, on one task, against this test's
    server on the README's port (another port when that one is taken on this machine)."""

    def reply(request) -> str:
        if request.system.startswith("You are an autonomous agent"):  # ReAct
            return say("stop [1796]")
        return "REASON:\nThe page gives the year.\nACTION:\nstop [1796]\nOBSERVATION HIGHLIGHT:\n"  # AgentOccam

    argv = readme_commands()[0]
    readme_url = urlsplit(argv[argv.index("--api-base") + 1])
    try:  # the README's own address when it is free on this machine
        server = ModelServer(reply, port=readme_url.port)
    except OSError:
        server = ModelServer(reply)
        argv[argv.index("--api-base") + 1] = server.url
    try:
        assert readme_exports() == {"OPENAI_API_KEY": "local-server"}
        argv[argv.index("--tasks") + 1] = EXACT_TASK  # one task of the section's site instead of all of them
        out = run_cli(*argv, "--out", str(tmp_path / "demo"), env=readme_exports())
    finally:
        server.close()
    assert out.returncode == 0, out.stderr[-3000:]
    results = {r.policy: (r.status, r.reward) for r in StudyStore(tmp_path / "demo").latest().values()}
    assert results == {
        "react [openai/qwen2.5-7b] (5 steps)": ("done", 1.0),
        "reference solutions (non-LLM upper bound)": ("done", 1.0),
        "random actions (10 steps, non-LLM floor)": results["random actions (10 steps, non-LLM floor)"],
    }
    assert {r.body["model"] for r in server.requests} == {"qwen2.5-7b"}


# -- the judge on the server -----------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.parametrize(
    "failure,kind",
    [((503, "the server is overloaded"), "provider"), ((404, "The model `fake` does not exist"), "configuration")],
)
def test_a_judge_that_cannot_be_used_makes_the_evaluation_an_error(server, make_env, monkeypatch, failure, kind):
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    server.reply = lambda request: failure
    config = task_config()
    config["eval"]["reference_answers"] = {"fuzzy_match": ["42"]}
    env = make_env(config=config, judge_model=MODEL, judge_options={"api_base": server.url, "num_retries": 0})
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("send_msg_to_user('forty-two')")
    assert terminated and reward == 0.0 and len(server.requests) == 1 and server.requests[0].is_judge
    assert (info["error_source"], info["error_kind"]) == ("llm", kind) and "judge call failed" in info["error"]
    assert info["evaluation"]["error_kind"] == kind
