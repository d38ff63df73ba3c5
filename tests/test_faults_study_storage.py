"""A study's own records under faults: what identifies an episode, who may write a study at once, what a
failed or torn write leaves, and the command-line mistakes that must end as usage errors (exit 2).

The per-episode runners are small picklable functions (the scheduling is what is tested); the full-disk
test runs a real episode on the local suite and fails its trajectory write at the OS edge.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from webarena_gym.experiments import cli, tasksets
from webarena_gym.experiments.compare import (
    EpisodeJob,
    PolicySpec,
    StudyConfigError,
    _result_base,
    compare,
    run_job,
)
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.store import EpisodeResult, StudyStore
from webarena_gym.experiments.trajectory import Trajectory

TASKS = [tasksets.TaskInfo(f"webarena/local.{i}", i, ("shopping",), 1, ("string_match",)) for i in range(2)]
RELEASE = "release-the-runner"


def succeed(job) -> EpisodeResult:
    return _result_base(job, "done", reward=1.0, n_steps=1)


def wait_for_release(job):
    """Holds the episode until the test creates the study's release file: the study is 'live' till then."""
    deadline = time.monotonic() + 300
    while not (Path(job.study_dir) / RELEASE).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return succeed(job)


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-P", "-m", "webarena_gym.experiments.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# -- 3: an episode is keyed by its policy's whole configuration -----------------------------------------


def test_two_configurations_under_one_label_are_refused_before_anything_runs(tmp_path):
    cold = PolicySpec("react", {"model": "gpt-4o", "temperature": 0.0}, "react [gpt-4o]")
    hot = PolicySpec("react", {"model": "gpt-4o", "temperature": 1.0}, "react [gpt-4o]")
    with pytest.raises(StudyConfigError, match="share the label"):
        compare([cold, hot], TASKS, tmp_path / "s", runner=succeed, progress=False)
    with pytest.raises(StudyConfigError, match="same configuration"):
        compare([cold, PolicySpec("react", dict(cold.config), "other")], TASKS, tmp_path / "s", runner=succeed)
    assert not (tmp_path / "s" / "results.jsonl").exists()


def test_configurations_with_their_own_labels_each_keep_their_results_and_resume_runs_nothing(tmp_path):
    cold = PolicySpec("random", {"max_steps": 2, "seed": 1}, "random A")
    hot = PolicySpec("random", {"max_steps": 2, "seed": 2}, "random B")
    out = compare([cold, hot], TASKS, tmp_path / "s", runner=succeed, progress=False)
    store = StudyStore(out)
    assert len(store.latest()) == 4 and {r.policy_key for r in store.attempts()} == {cold.key(), hot.key()}
    compare([cold, hot], TASKS, out, runner=succeed, progress=False, resume=True)
    assert len(list(store.attempts())) == 4
    manifest = store.read_manifest()
    assert [p["key"] for p in manifest["policies"]] == [cold.key(), hot.key()]


def test_the_command_line_labels_two_variants_apart_and_refuses_what_it_cannot(tmp_path):
    cold, hot = cli._policy_spec("react:temperature=0", "gpt-4o"), cli._policy_spec("react:temperature=1", "gpt-4o")
    assert cold.label != hot.label and cold.key() != hot.key()
    assert cli._policy_spec("react:label=mine", "gpt-4o").label == "mine"
    same = ["--policy", "react:api_base=http://a", "--policy", "react:api_base=http://b", "--model", "gpt-4o"]
    out = run_cli("compare", "--tasks", "webarena/local.0", "--out", str(tmp_path / "s"), *same)
    assert out.returncode == 2 and "share the label" in out.stderr and "Traceback" not in out.stderr


def test_a_study_written_before_keys_resumes_by_label_without_rerunning(tmp_path):
    policy = PolicySpec("reference", label="reference solutions")
    store = StudyStore(tmp_path / "old")
    store.write_manifest({"policies": [{"name": "reference", "config": {}, "label": policy.label}]})
    for task in TASKS:  # records as the harness wrote them before: no policy_key, keyed by label
        record = {"policy": policy.label, "env_id": task.env_id, "task_id": task.task_id, "site_group": "shopping"}
        with open(store.root / "results.jsonl", "a") as fh:
            fh.write(json.dumps({**record, "template_id": 1, "seed": 0, "status": "done", "reward": 1.0}) + "\n")
    compare([policy], TASKS, store.root, runner=succeed, progress=False, resume=True)
    assert len(list(store.attempts())) == 2


# -- 8: one run per study directory ---------------------------------------------------------------------


def test_a_second_compare_or_a_resume_during_a_live_run_exits_at_once(tmp_path):
    out = tmp_path / "s"
    policy = PolicySpec("reference", label="reference solutions (non-LLM upper bound)")
    first = threading.Thread(
        target=compare, args=([policy], TASKS, out), kwargs={"runner": wait_for_release, "progress": False}
    )
    first.start()
    try:
        deadline = time.monotonic() + 120
        while not (out / "episodes").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # the first run has its lock and an episode in flight
        for extra in ([], ["--resume"]):
            started = time.monotonic()
            second = run_cli(
                "compare", "--policy", "reference", "--tasks", "webarena/local.0", "--out", str(out), *extra
            )
            assert second.returncode == 2 and "in use by another run" in second.stderr, second.stderr[-2000:]
            assert time.monotonic() - started < 120  # it did not wait for the first run
    finally:
        (out / RELEASE).touch()
        first.join(timeout=300)
    assert sorted(r.env_id for r in StudyStore(out).attempts()) == [t.env_id for t in TASKS]  # each once


# -- 7: a write that fails is an error, never a finished episode ----------------------------------------


@pytest.mark.browser
def test_a_full_disk_while_writing_the_trajectory_is_a_storage_error_that_resume_reruns(tmp_path, monkeypatch):
    real_write = os.write

    def disk_full_for_trajectories(fd: int, data) -> int:
        if "trajectory.json" in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    study = tmp_path / "s"
    policy = PolicySpec("reference", label="reference solutions (non-LLM upper bound)")
    task = tasksets.resolve("webarena/local.500")[0]
    compare([policy], [task], study, runner=succeed, progress=False)  # a study with its manifest
    store = StudyStore(study)
    job = EpisodeJob(policy, task, 1, 1, str(store.episode_dir(f"{task.env_id}|1", 1, "full")), str(study), None, {})
    monkeypatch.setattr(os, "write", disk_full_for_trajectories)
    result = run_job(job)
    monkeypatch.undo()
    assert (result.status, result.error_kind) == ("error", "storage") and "could not be written" in result.err_msg
    episode = Path(job.out_dir)
    assert not (episode / "trajectory.json").exists() and not list(episode.rglob("*.tmp"))
    store.append(result)
    compare([policy], [task], study, runner=succeed, progress=False, resume=True, seeds=[1])
    assert [r.status for r in store.attempts() if r.seed == 1] == ["error", "done"]  # run again, once


def test_a_torn_trajectory_is_not_counted_done_and_the_dataset_export_skips_it(tmp_path, capsys):
    policy = PolicySpec("reference", label="reference solutions (non-LLM upper bound)")
    store = StudyStore(tmp_path / "s")
    store.write_manifest({"policies": [{"name": policy.name, "label": policy.label, "key": policy.key()}]})
    for task in TASKS:  # as a study before atomic writes left them: one whole trajectory, one torn
        job = EpisodeJob(policy, task, 0, 1, str(store.episode_dir(task.env_id, 1)), str(store.root), None, {})
        Path(job.out_dir).mkdir(parents=True)
        path = Trajectory(env_id=task.env_id, policy={"name": policy.name, "preset": None}, seed=0, max_steps=1).save(
            job.out_dir
        )
        if task.task_id == 1:
            path.write_text(path.read_text()[:200])
        store.append(_result_base(job, "done", reward=1.0, trajectory=os.path.relpath(job.out_dir, store.root)))
    assert cli.main(["dataset", str(store.root), "--out", str(tmp_path / "d")]) == 0
    err = capsys.readouterr().err
    assert "webarena/local.1" in err and "cannot be read" in err and "webarena/local.0" not in err
    compare([policy], TASKS, store.root, runner=succeed, progress=False, resume=True)
    assert [(r.env_id, r.attempt) for r in store.attempts()][2:] == [("webarena/local.1", 2)]


# -- 11: inputs that crashed a study or its tools --------------------------------------------------------


def test_a_300_character_model_string_gives_bounded_folder_names(tmp_path):
    long = PolicySpec("react", {"model": "openai/" + "m" * 300}, "react [" + "m" * 300 + "]")
    out = compare([long], TASKS, tmp_path / "s", runner=succeed, progress=False)
    assert len(StudyStore(out).latest()) == 2
    assert all(len(p.name) <= 120 for p in (out / "episodes").iterdir())


def test_a_label_matplotlib_would_read_as_a_formula_still_gives_a_report(tmp_path):
    math = PolicySpec("random", {"max_steps": 1}, r"cost $5 \x$ and $a^$")
    out = compare([math], TASKS, tmp_path / "s", runner=succeed, progress=False)
    report = build_report(out)
    assert (report / "success_by_site.png").stat().st_size > 0 and (report / "index.html").exists()


def test_dataset_export_into_a_non_empty_folder_refuses_unless_forced_and_then_leaves_no_stale_file(tmp_path):
    out = compare([PolicySpec("reference", label="ref")], TASKS, tmp_path / "s", runner=succeed, progress=False)
    target = tmp_path / "d"
    (target / "data").mkdir(parents=True)
    (target / "README.md").write_text("the user's own notes")
    (target / "data" / "steps.validation.jsonl").write_text('{"stale": true}\n')
    assert cli.main(["dataset", str(out), "--out", str(target)]) == 2
    assert (target / "README.md").read_text() == "the user's own notes"
    assert cli.main(["dataset", str(out), "--out", str(target), "--force"]) == 0
    assert not (target / "data" / "steps.validation.jsonl").exists()
    assert (target / "README.md").read_text() != "the user's own notes"


def test_unknown_task_ids_and_report_on_a_non_study_are_usage_errors(tmp_path, capsys):
    assert (
        cli.main(["compare", "--policy", "reference", "--tasks", "webarena/local.99999", "--out", str(tmp_path)]) == 2
    )
    assert cli.main(["tasks", "webarena/nosuchtask"]) == 2
    (tmp_path / "notes").mkdir()
    assert cli.main(["report", str(tmp_path / "notes")]) == 2
    err = capsys.readouterr().err
    assert "unknown env ids" in err and "is not a study directory" in err and "Traceback" not in err
