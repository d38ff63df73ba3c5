"""Hostile model output and failing providers, through the real rollout loop, study loop and report.

The environment is the small text site of test_rollout_loop.py (fast and deterministic); models are
scripted through litellm's mock path, so provider errors are litellm's own exception types. What must
hold: any string a model returns is recorded; no credential reaches a file or a log; an outage is an
error (shown apart, left out of the success rates, retried by ``--resume``), a policy's own failure
stays a failure, and a configuration error stops the study at once.
"""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

import litellm
import pytest
from test_rollout_loop import PAGES, TextSiteEnv, Upper, react, say

from webarena_gym.experiments import rollout as rollout
from webarena_gym.experiments import tasksets
from webarena_gym.experiments.compare import EpisodeJob, PolicySpec, StudyStopped, compare, progress_line, run_job
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.report.plots import cost_points
from webarena_gym.experiments.report.summary import summarize
from webarena_gym.experiments.report.tables import all_tables
from webarena_gym.experiments.store import EpisodeResult, StudyStore
from webarena_gym.experiments.trajectory import Trajectory
from webarena_gym.llm.redaction import install_log_redaction
from webarena_gym.policies.base import Decision, Policy, TaskSpec

TASKS = [tasksets.TaskInfo(f"test/shop.{i}", i, ("shopping",), 1, ("string_match",)) for i in range(3)]


def text_site(env_id: str, preset: str, kwargs: dict) -> Upper:
    return Upper(TextSiteEnv(max_episode_steps=kwargs["max_episode_steps"]))


@pytest.fixture(autouse=True)
def text_env(monkeypatch):
    monkeypatch.setattr(rollout, "_make_env", text_site)


def job(tmp_path: Path, task: int = 0, attempt: int = 1) -> EpisodeJob:
    out = tmp_path / "episodes" / f"{task}_{attempt}"
    return EpisodeJob(PolicySpec("react", label="react"), TASKS[task], 0, attempt, str(out), str(tmp_path), None, {})


def react_saying(*answers) -> callable:
    return lambda _job: react(list(answers), retries=0)


# -- model output --------------------------------------------------------------------------------------


def test_a_lone_surrogate_from_the_model_or_the_page_is_stored_escaped_and_the_episode_recorded(tmp_path, monkeypatch):
    page = "[1] link 'Hats \udc00'\n[2] link 'Shoes'"
    monkeypatch.setitem(PAGES, "http://t/", page)
    traj = rollout.run_episode("test/shop", react([say("stop [a\ud800b]")]), out_dir=tmp_path)
    assert traj.steps[0].action == "stop [a\\ud800b]"  # escaped where the model's text enters the harness
    saved = Trajectory.load(tmp_path)
    assert saved.steps[0].llm_calls[0]["responses"][0] == say("stop [a\\ud800b]")
    assert saved.steps[0].observation == page.upper()  # the page's own text round-trips exactly
    assert json.loads((tmp_path / "summary_info.json").read_text())["n_steps"] == 1


# -- credentials ---------------------------------------------------------------------------------------

SHORT_SECRET = "tiny9secret"  # shaped like no provider's key: only the environment says it is one
SHORT_KEY = "sk-a1b2c3d4e5"  # a short key of a known shape, in no variable


@pytest.fixture
def redacting_logs():
    factory = logging.getLogRecordFactory()
    install_log_redaction()
    yield
    logging.setLogRecordFactory(factory)
    logging.captureWarnings(False)


def test_credentials_are_redacted_in_every_file_and_log(tmp_path, monkeypatch, caplog, redacting_logs):
    monkeypatch.setenv("EXAMPLE_PROVIDER_API_KEY", SHORT_SECRET)
    echo = litellm.AuthenticationError(
        f"Incorrect API key provided: {SHORT_SECRET} (also tried {SHORT_KEY})", llm_provider="openai", model="gpt-4o"
    )
    store = StudyStore(tmp_path)
    store.write_manifest({"policies": [{"label": "react"}], "tasks": ["test/shop.0"], "seeds": [0]})
    result = run_job(job(tmp_path), build_policy=react_saying(say("click [1]"), echo))
    store.append(result)
    build_report(tmp_path)
    with caplog.at_level(logging.WARNING):
        logging.getLogger("experiments").warning("the provider said %s", echo)
        warnings.warn(f"retrying after: {echo}", stacklevel=1)
    written = {path: path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file()}
    assert {p.name for p in written} >= {"trajectory.json", "summary_info.json", "results.jsonl", "index.html"}
    assert any("Incorrect API key provided" in text for text in written.values())  # the message is kept ...
    for text in [*written.values(), caplog.text]:
        assert SHORT_SECRET not in text and SHORT_KEY not in text  # ... without the credentials
    assert caplog.text.count("<redacted>") >= 4


# -- outages and policy failures -----------------------------------------------------------------------


class Buggy(Policy):
    name = "buggy"
    uses_llm = False

    def reset(self, task: TaskSpec) -> None:
        pass

    def act(self, obs, handle) -> Decision:
        raise ZeroDivisionError("a bug in the policy")


def rate_limited() -> Exception:
    return litellm.RateLimitError("rate limited", llm_provider="openai", model="gpt-4o")


def too_long() -> Exception:
    return litellm.ContextWindowExceededError(
        "This model's maximum context length is 512 tokens", model="openai/small", llm_provider="openai"
    )


@pytest.mark.parametrize(
    "build,status,kind",
    [
        (react_saying(say("click [1]"), rate_limited()), "error", "provider"),  # kept failing after retries
        (
            react_saying(litellm.AuthenticationError("no key", llm_provider="openai", model="m")),
            "error",
            "configuration",
        ),
        (react_saying(too_long()), "error", "configuration"),
        (lambda _job: Buggy(), "done", None),  # the policy's own bug: a failure, not an outage
        (react_saying("no action here", "still none", "none again"), "done", None),  # gave up: a failure
        (react_saying(say("stop [$13]")), "done", None),  # a wrong answer
    ],
)
def test_outages_are_errors_and_a_policys_own_failures_stay_failures(tmp_path, build, status, kind):
    result = run_job(job(tmp_path), build_policy=build)
    assert (result.status, result.error_kind, result.success) == (status, kind, False)


def test_a_dead_browser_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(rollout, "_make_env", lambda e, p, kw: TextSiteEnv(kw["max_episode_steps"], fail_on="stop"))
    result = run_job(job(tmp_path), build_policy=react_saying(say("stop [$12]")))
    assert result.status == "error" and "browser has been closed" in result.err_msg


# -- the report ----------------------------------------------------------------------------------------


def result(task: int, status: str, reward: float = 0.0, **kw) -> EpisodeResult:
    return EpisodeResult("react", f"test/shop.{task}", task, "shopping", 1, 0, status, reward=reward, **kw)


def test_the_report_shows_errors_apart_from_the_success_rates(tmp_path):
    store = StudyStore(tmp_path)
    store.write_manifest(
        {"policies": [{"label": "react"}], "tasks": [f"test/shop.{i}" for i in range(4)], "seeds": [0]}
    )
    for r in (
        result(0, "done", 1.0),
        result(1, "done", 0.0),
        result(2, "error", error_kind="provider", err_msg="RateLimitError: rate limited"),
        result(3, "error", error_kind="timeout", err_msg="episode timed out after 600 s"),
    ):
        store.append(r)
    row = summarize(tmp_path)["rows"][0]
    assert row["success"]["all"] == {"mean": 0.5, "stderr": 0.5, "n_tasks": 2}  # the two judged episodes
    assert row["errors"] == 2 and row["error_kinds"] == {"provider": 1, "timeout": 1}
    table = all_tables(summarize(tmp_path))[0]
    assert table.rows[0][-1] == "2 (provider 1, timeout 1)" and "are left out" in table.notes[0]
    assert summarize(tmp_path, errors_as_failures=True)["rows"][0]["success"]["all"]["mean"] == 0.25
    html = (build_report(tmp_path) / "index.html").read_text()
    assert "error (provider)" in html and "error (timeout)" in html


def test_unknown_cost_is_unknown_not_zero_in_tables_and_plots(tmp_path):
    store = StudyStore(tmp_path)
    labels = ["priced", "unpriced", "mixed", "no model"]
    store.write_manifest({"policies": [{"label": label} for label in labels], "tasks": ["test/shop.0"], "seeds": [0]})
    for label, cost, known in (("priced", 0.5, True), ("unpriced", 0.0, False), ("mixed", 0.2, False)):
        store.append(
            EpisodeResult(label, "test/shop.0", 0, "shopping", 1, 0, "done", llm_calls=3, cost=cost, cost_known=known)
        )
    store.append(EpisodeResult("no model", "test/shop.0", 0, "shopping", 1, 0, "done"))
    summary = summarize(tmp_path)
    table = all_tables(summary)[0]
    costs = {row[0]: row[-3] for row in table.rows}
    assert costs == {"priced": "0.5000", "unpriced": "unknown", "mixed": "0.2000*", "no model": "0.0000"}
    assert any(note.startswith("* cost partly unknown") for note in table.notes)
    assert any(note.startswith("unknown: no price is known") for note in table.notes)
    points, left_off = cost_points(summary)
    assert [p[2] for p in points] == ["no model", "mixed", "priced"] and left_off == ["unpriced"]
    assert "unknown: no price is known" in (build_report(tmp_path) / "index.html").read_text()


def test_the_progress_bar_shows_an_unknown_cost_as_unknown():
    def episode(cost: float, known: bool, status: str = "done") -> EpisodeResult:
        return EpisodeResult("p", "test/shop.0", 0, "shopping", 1, 0, status, llm_calls=2, cost=cost, cost_known=known)

    assert progress_line([episode(0.0, False), episode(0.0, False)]).endswith("cost unknown")
    assert progress_line([episode(0.25, True), episode(0.0, False)]).endswith("cost $0.25+?")
    assert progress_line([episode(0.25, True), episode(0.0, False, "error")]) == (
        "success 0/1 errors 1 tokens 0 cost $0.25+?"
    )


# -- studies: resume and fail-fast ---------------------------------------------------------------------


def outage_on_first_attempt(job: EpisodeJob) -> EpisodeResult:
    """Task 0 answers right, task 1 meets a rate limit on its first attempt, task 2 answers wrong."""
    rollout._make_env = text_site  # this runs in a study worker
    answers = {0: [say("stop [$12]")], 1: [rate_limited()] if job.attempt == 1 else [say("stop [$12]")]}
    return run_job(job, build_policy=lambda j: react(answers.get(j.task.task_id, [say("stop [$1]")]), retries=0))


def missing_key_on_first_attempt(job: EpisodeJob) -> EpisodeResult:
    rollout._make_env = text_site
    if job.attempt == 1 and job.task.task_id == 0:
        answers = [
            litellm.AuthenticationError("The api_key client option must be set", llm_provider="openai", model="m")
        ]
    else:
        answers = [say("stop [$12]")]
    return run_job(job, build_policy=lambda j: react(answers, retries=0))


SPEC = [PolicySpec("react", label="react")]


def test_resume_retries_outages_but_not_a_policys_failures(tmp_path):
    out = compare(SPEC, TASKS, tmp_path / "s", runner=outage_on_first_attempt, progress=False)
    latest = StudyStore(out).latest()
    assert [latest[f"{SPEC[0].key()}|test/shop.{i}|0"].status for i in range(3)] == ["done", "error", "done"]
    assert summarize(out)["rows"][0]["success"]["all"]["mean"] == 0.5
    compare(SPEC, TASKS, out, runner=outage_on_first_attempt, progress=False, resume=True)
    attempts = [(r.task_id, r.attempt) for r in StudyStore(out).attempts()]
    assert sorted(attempts) == [(0, 1), (1, 1), (1, 2), (2, 1)]  # only the outage ran again
    assert summarize(out)["rows"][0]["success"]["all"]["mean"] == pytest.approx(2 / 3)


def test_a_configuration_error_stops_the_study_after_its_episode(tmp_path):
    with pytest.raises(StudyStopped, match="study stopped: react on test/shop.0 hit a configuration error") as stop:
        compare(SPEC, TASKS, tmp_path / "s", runner=missing_key_on_first_attempt, progress=False)
    assert "api_key client option must be set" in str(stop.value) and "--resume" in str(stop.value)
    assert [(r.task_id, r.error_kind) for r in StudyStore(tmp_path / "s").attempts()] == [(0, "configuration")]
    # fixed and resumed: the stopped episode runs again, and its configuration error used up no attempt
    compare(
        SPEC, TASKS, tmp_path / "s", runner=missing_key_on_first_attempt, progress=False, resume=True, max_attempts=1
    )
    assert all(r.success for r in StudyStore(tmp_path / "s").latest().values())


def report_settings(job: EpisodeJob) -> EpisodeResult:
    """What the worker was given, in the free-text ``err_msg`` field."""
    from webarena_gym.experiments.compare import _result_base

    given = {"config": job.policy.config, "judge": job.env_kwargs.get("judge_options")}
    return _result_base(job, "done", err_msg=json.dumps(given))


def test_the_studys_api_base_and_timeouts_reach_every_llm_policy_and_the_judge(tmp_path):
    policies = [*SPEC, PolicySpec("react", {"timeout": 5}, label="own timeout"), PolicySpec("reference")]
    out = compare(
        policies,
        TASKS[:1],
        tmp_path / "s",
        runner=report_settings,
        progress=False,
        api_base="http://127.0.0.1:9/v1",
        llm_timeout_s=300,
    )
    given = {r.policy: json.loads(r.err_msg) for r in StudyStore(out).latest().values()}
    judge = {"api_base": "http://127.0.0.1:9/v1", "timeout": 300}
    assert given["react"] == {"config": judge, "judge": judge}
    assert given["own timeout"]["config"] == {"api_base": "http://127.0.0.1:9/v1", "timeout": 5}  # its own wins
    assert given["reference"]["config"] == {}  # no model, no LLM options
    manifest = StudyStore(out).read_manifest()
    assert manifest["llm_timeout_s"] == 300 and manifest["step_timeout_s"] == 330  # room for one call per step


def test_every_role_of_every_llm_policy_gets_the_studys_api_base_and_timeout(tmp_path):
    """Built from the configs the workers receive: each client of each method (CoAct's two agents,
    Plan-and-Act's three roles, the searches' five ...) calls the study's server with its timeout."""
    from webarena_gym.policies.base import available_policies, make_policy, policy_class

    names = [name for name in available_policies() if policy_class(name).uses_llm]
    out = compare(
        [PolicySpec(name, {"model": "openai/fake"}, label=name) for name in names],
        TASKS[:1],
        tmp_path / "s",
        runner=report_settings,
        progress=False,
        api_base="http://127.0.0.1:9/v1",
        llm_timeout_s=300,
    )
    given = {r.policy: json.loads(r.err_msg)["config"] for r in StudyStore(out).latest().values()}
    assert sorted(given) == sorted(names)
    for name, config in given.items():
        llms = make_policy(name, **config, script={}).llms()
        assert llms, name
        for llm in llms:
            assert (llm.api_base, llm.timeout) == ("http://127.0.0.1:9/v1", 300), name
            assert all("api_base" not in s.extra for s in llm.roles.values()), name  # no role points elsewhere
