"""The reproducibility record: what decides a score besides the policy and the task, kept per study (its
manifest) and per episode (its result), so a report can show it and flag a study whose episodes ran
under different records (a study resumed after an upgrade).

A record holds the project's revision and whether the tree had uncommitted changes, the versions of the
libraries between the policy and the score (browsergym, playwright, litellm, webarena-verified,
gymnasium), Chromium's build, Python, the OS, CPU count and memory, the hashes of the policy's prompt
templates, and the evaluator with its corrections. It holds no machine path.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import subprocess
import sys
from importlib import metadata, resources
from pathlib import Path
from typing import Any

PACKAGES = ("browsergym-core", "playwright", "litellm", "webarena-verified", "gymnasium")
# Fields that make two episodes' records differ in a way that can change a score (the machine's CPU and
# memory are shown but do not split a study: a study may run on several machines).
DECIDING = ("code_revision", "uncommitted_changes", "packages", "chromium", "python", "prompt_templates", "evaluator")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _memory_gb() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


@functools.cache
def machine_record() -> dict[str, Any]:
    """The code, libraries and machine of this process (computed once per process)."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "code_revision": (_git("rev-parse", "--short", "HEAD") or "").strip() or None,
        "uncommitted_changes": None if status is None else bool(status.strip()),
        "packages": versions,
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "cpus": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "implementation": sys.implementation.name,
    }


@functools.cache
def prompt_templates(policy_name: str) -> dict[str, str]:
    """Short SHA-256 of each prompt template of the policy's method (``policies/prompts/<method>_*.txt``)."""
    folder = resources.files("webarena_gym.policies") / "prompts"
    out = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        method = entry.name.rsplit("_", 1)[0]
        if entry.name.endswith(".txt") and policy_name.startswith(method):
            out[entry.name] = hashlib.sha256(entry.read_bytes()).hexdigest()[:12]
    return out


def evaluator_record(evaluator: str) -> dict[str, Any]:
    """The evaluator and what corrects it: AgentOccam's corrected labels, WebArena-Verified's dataset."""
    record: dict[str, Any] = {"name": evaluator}
    if evaluator == "agentoccam":
        source = resources.files("webarena_gym.envs.evaluation") / "corrections.py"
        record["corrections"] = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    if evaluator == "webarena-verified":
        from webarena_gym.envs.verified import verified_tasks

        data = repr(verified_tasks()).encode()
        record["corrections"] = f"dataset {hashlib.sha256(data).hexdigest()[:12]}"
    return record


def episode_record(policy_name: str, evaluator: str, chromium: str | None) -> dict[str, Any]:
    """One episode's record: the machine's, its browser build, its policy's prompts, its evaluator."""
    return {
        **machine_record(),
        "chromium": chromium,
        "prompt_templates": prompt_templates(policy_name),
        "evaluator": evaluator_record(evaluator),
    }


def fingerprint(record: dict[str, Any]) -> str:
    """A short digest of a record's deciding fields (equal for records that should score alike)."""
    deciding = {k: record.get(k) for k in DECIDING if k != "prompt_templates"}
    return hashlib.sha256(repr(sorted(deciding.items())).encode()).hexdigest()[:10]


def record_groups(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct records of a study's episodes (prompts aside: policies differ by design), most
    episodes first, each with its count; more than one means the study mixed records."""
    groups: dict[str, dict[str, Any]] = {}
    for record in records:
        key = fingerprint(record)
        group = groups.setdefault(key, {"fingerprint": key, "episodes": 0, "record": record})
        group["episodes"] += 1
    return sorted(groups.values(), key=lambda g: -g["episodes"])
