"""One import name: the project installs ``webarena_gym`` and nothing else, so it runs inside a user's own
project whatever that project's packages are called (``envs``, ``policies``, ``llm``, ...)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

USER_PACKAGES = ("envs", "policies", "wrappers", "experiments", "llm", "benchmarks")


def _user_project(root: Path) -> Path:
    """A research folder with its own packages of our folders' names; importing any of them says so."""
    root.mkdir(exist_ok=True)
    for name in USER_PACKAGES:
        (root / name).mkdir()
        (root / name / "__init__.py").write_text(f"OWNER = 'user'\nNAME = {name!r}\n")
    return root


def test_the_distribution_installs_one_top_level_name():
    """Non-editable: the wheel's top-level files. Editable: the finder's mapping, and no folder on the path."""
    # the installed record (a checkout's own egg-info, found first from its folder, lists sources)
    dist = next(
        d for d in metadata.distributions(name="webarena-gym") if any(f.name == "RECORD" for f in d.files or [])
    )
    files = dist.files or []
    finders = [f.stem for f in files if f.name.startswith("__editable__") and f.suffix == ".py"]
    if finders:
        tops = {name.split(".")[0] for name in importlib.import_module(finders[0]).MAPPING}
        pth = [f for f in files if f.suffix == ".pth"]
        assert all(line.startswith("import ") for f in pth for line in f.read_text().splitlines() if line.strip())
    else:
        tops = {str(f).split("/")[0] for f in files if f.suffix == ".py"}
    assert tops == {"webarena_gym"}, tops


def test_the_users_own_packages_win_in_their_folder_and_ours_still_import(tmp_path):
    project = _user_project(tmp_path)
    code = (
        "import json, sys, gymnasium as gym, webarena_gym\n"
        "import envs, policies, llm, experiments\n"
        "print(json.dumps({'user': [m.OWNER for m in (envs, policies, llm, experiments)],\n"
        "  'ours': webarena_gym.envs.__name__, 'ids': sum(k.startswith('webarena/') for k in gym.registry)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["user"] == ["user"] * 4
    assert got["ours"] == "webarena_gym.envs" and got["ids"] >= 812


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("executor", ["process", "ray"])
def test_a_study_runs_from_a_folder_holding_packages_named_like_ours(tmp_path, executor):
    """``python -m`` puts the user's folder first on the import path, as their own scripts do."""
    project = _user_project(tmp_path / "project")
    env = {k: v for k, v in os.environ.items() if k != "WEBARENA_GYM_MODEL"}
    args = ["compare", "--policy", "reference", "--tasks", "webarena/local.121,webarena/local.203"]
    args += ["--out", str(project / "study"), "--executor", executor, "--workers", "2", "--no-progress"]
    out = subprocess.run(
        [sys.executable, "-m", "webarena_gym.experiments.cli", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    results = [json.loads(line) for line in (project / "study" / "results.jsonl").read_text().splitlines()]
    assert sorted((r["env_id"], r["status"], r["reward"]) for r in results) == [
        ("webarena/local.121", "done", 1.0),
        ("webarena/local.203", "done", 1.0),
    ]
