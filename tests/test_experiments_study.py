"""The study loop itself: append-only store, resume, timeouts, crashed workers, task sets.

The per-episode runner here is a small picklable function so the scheduling behaviour is tested in
isolation; end-to-end studies on the local suite are in test_experiments_e2e.py.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from webarena_gym.experiments import tasksets
from webarena_gym.experiments.compare import PolicySpec, _result_base, compare
from webarena_gym.experiments.store import EpisodeResult, StudyStore

TASKS = [tasksets.TaskInfo(f"webarena/local.{i}", i, ("shopping",), 1, ("string_match",)) for i in range(4)]


def succeed(job) -> EpisodeResult:
    return _result_base(job, "done", reward=1.0, n_steps=2, prompt_tokens=10, llm_calls=2)


def crash_on_task_1(job) -> EpisodeResult:
    if job.task.task_id == 1:
        os._exit(3)  # the worker process dies mid-episode (e.g. a segfaulting browser took it down)
    return succeed(job)


def hang_on_task_2(job) -> EpisodeResult:
    if job.task.task_id == 2:
        time.sleep(60)
    return succeed(job)


def error_first_attempt(job) -> EpisodeResult:
    if job.attempt == 1 and job.task.task_id == 3:
        raise RuntimeError("flaky site")
    return succeed(job)


def environment_probe(job) -> EpisodeResult:
    """Reports what the worker process sees, in the free-text ``err_msg`` field."""
    seen = {"flag": os.environ.get("WEBARENA_GYM_TEST_FLAG"), "cwd": os.getcwd(), "preloaded": "litellm" in sys.modules}
    return _result_base(job, "done", reward=1.0, err_msg=json.dumps(seen))


def report_worker_in_step(job) -> EpisodeResult:
    """Reports its worker's pid; a worker's k-th episode ends only once another worker has started its
    k-th, so neither runs out of tasks on its own sites while the other is still starting (a loaded
    machine can delay a worker's start by seconds, and a worker with nothing left on its sites rightly
    takes the other site's tasks)."""
    marks = Path(job.study_dir) / "started"
    marks.mkdir(exist_ok=True)
    me = str(os.getpid())
    k = len(list(marks.glob(f"{me}.*")))
    (marks / f"{me}.{k}").touch()
    deadline = time.monotonic() + 300
    while not any(m.name.split(".")[0] != me for m in marks.glob(f"*.{k}")) and time.monotonic() < deadline:
        time.sleep(0.02)
    return _result_base(job, "done", reward=1.0, err_msg=me)


POLICY = PolicySpec("reference", label="reference solutions (non-LLM upper bound)")


def run(tmp_path: Path, runner, **kw) -> StudyStore:
    out = compare([POLICY], TASKS, tmp_path / "study", runner=runner, progress=False, **kw)
    return StudyStore(out)


def test_every_episode_is_recorded_once(tmp_path):
    store = run(tmp_path, succeed, n_workers=2)
    results = list(store.attempts())
    assert sorted(r.env_id for r in results) == sorted(t.env_id for t in TASKS)
    assert all(r.success for r in results)
    manifest = store.read_manifest()
    assert manifest["tasks"] == [t.env_id for t in TASKS] and manifest["policies"][0]["label"] == POLICY.label


def test_workers_see_the_studys_current_environment_and_start_preloaded(tmp_path, monkeypatch):
    run(tmp_path / "first", succeed, n_workers=1)  # the workers' fork server runs from here on
    monkeypatch.setenv("WEBARENA_GYM_TEST_FLAG", "set-after-the-fork-server-started")
    monkeypatch.chdir(tmp_path)
    store = run(tmp_path / "second", environment_probe, n_workers=2)
    seen = [json.loads(r.err_msg) for r in store.latest().values()]
    assert seen == [{"flag": "set-after-the-fork-server-started", "cwd": str(tmp_path), "preloaded": True}] * 4


def test_workers_stay_on_the_sites_they_have_running(tmp_path):
    interleaved = [
        tasksets.TaskInfo(f"webarena/local.{i}", i, (("shopping",), ("reddit",))[i % 2], 1, ("string_match",))
        for i in range(8)
    ]
    out = compare([POLICY], interleaved, tmp_path / "study", runner=report_worker_in_step, n_workers=2, progress=False)
    sites_by_worker: dict[str, set] = {}
    for r in StudyStore(out).latest().values():
        sites_by_worker.setdefault(r.err_msg, set()).add(r.site_group)
    assert sorted(map(len, sites_by_worker.values())) == [1, 1]  # not both workers on both sites


def test_a_dead_worker_is_an_error_and_the_study_goes_on(tmp_path):
    store = run(tmp_path, crash_on_task_1, n_workers=1)
    latest = store.latest()
    assert len(latest) == 4
    dead = [r for r in latest.values() if r.task_id == 1][0]
    assert dead.status == "error" and "died" in dead.err_msg
    assert sum(r.success for r in latest.values()) == 3


def test_a_hung_episode_times_out_and_its_processes_are_killed(tmp_path):
    started = time.monotonic()
    store = run(tmp_path, hang_on_task_2, n_workers=1, episode_timeout_s=3)
    assert time.monotonic() - started < 40
    hung = [r for r in store.latest().values() if r.task_id == 2][0]
    assert hung.status == "error" and "timed out" in hung.err_msg


def test_resume_reruns_only_errored_episodes_up_to_the_bound(tmp_path):
    store = run(tmp_path, error_first_attempt, n_workers=1)
    assert [r.status for r in store.attempts()].count("error") == 1
    compare([POLICY], TASKS, store.root, runner=error_first_attempt, progress=False, resume=True)
    attempts = list(store.attempts())
    assert len(attempts) == 5  # 4 first attempts + 1 retry of the errored one, nothing run twice
    assert all(r.success for r in store.latest().values())
    compare([POLICY], TASKS, store.root, runner=error_first_attempt, progress=False, resume=True)
    assert len(list(store.attempts())) == 5


def test_a_finished_study_is_not_overwritten_without_resume(tmp_path):
    store = run(tmp_path, succeed)
    with pytest.raises(FileExistsError):
        compare([POLICY], TASKS, store.root, runner=succeed, progress=False)


def test_a_torn_last_line_is_skipped(tmp_path):
    store = run(tmp_path, succeed)
    with open(store.root / "results.jsonl", "a") as fh:
        fh.write('{"policy": "x", "env_')  # a writer killed mid-line
    assert len(store.latest()) == 4
    store.append(next(iter(store.latest().values())))
    assert len(list(store.attempts())) == 5  # the next record is not lost in the torn line


def test_real_webarena_dependencies_order_the_episodes(tmp_path):
    # BrowserGym's metadata chains real tasks per site; a study must run a task after the ones it depends on.
    chain = [t for t in tasksets.real_tasks() if t.sites == ("shopping_admin",)][:4]
    assert chain[1].depends_on == (chain[0].env_id,)
    store = StudyStore(compare([POLICY], chain[::-1], tmp_path / "s", runner=succeed, progress=False, n_workers=2))
    order = [r.env_id for r in store.attempts()]
    assert order == [t.env_id for t in chain]
    assert "depend" in store.read_manifest()["ordering"]


def test_task_sets():
    assert len(tasksets.resolve("webarena")) == 812
    gitlab = tasksets.resolve("webarena:site=gitlab")
    assert gitlab and all("gitlab" in t.sites for t in gitlab)
    dev = tasksets.resolve("webarena:dev")
    assert dev == tasksets.resolve("webarena:dev")  # fixed seed: the same subset every time
    assert len({t.template_id for t in dev}) == len(dev) == len({t.template_id for t in tasksets.real_tasks()})
    assert [t.env_id for t in tasksets.resolve("webarena/310,webarena/3")] == ["webarena/310", "webarena/3"]
    with pytest.raises(ValueError):
        tasksets.resolve("webarena/99999")
    with pytest.raises(ValueError):
        tasksets.resolve("nonsense")


def test_results_are_plain_json_lines(tmp_path):
    store = run(tmp_path, succeed)
    for line in (store.root / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        assert {"policy", "env_id", "seed", "status", "reward", "n_steps", "cost"} <= set(record)
