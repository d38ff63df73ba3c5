"""The study directory: a manifest plus an append-only log of finished episodes.

Layout::

    <study>/study.json          what was asked (policies, tasks, seeds, model, options) and when
    <study>/results.jsonl       one JSON line per finished episode attempt, appended as it ends
    <study>/episodes/<key>/     trajectory.json, summary_info.json, screenshots of one attempt
    <study>/report/             tables, plots and the HTML report (rebuilt from the log at any time)

Lines are appended under an exclusive file lock and fsync'ed, so a study killed at any moment loses at
most the episodes in flight, and several processes (or Ray workers on one host) may append safely. A
torn last line (power loss mid-write) is skipped on reading. Every line and the manifest are redacted
(:mod:`llm.redaction`) as they are written.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from webarena_gym.llm.files import write_atomic
from webarena_gym.llm.redaction import redacted_json

RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "study.json"


# Episode folder names are cut to this many characters (a hash of the whole name kept at the end): a
# 300-character model string in a label must not make a name the file system refuses.
MAX_DIR_NAME = 120


def episode_key(policy_key: str, env_id: str, seed: int) -> str:
    """What identifies an episode in a study: its policy configuration's key (``PolicySpec.key``; the
    label in studies written before keys existed), the task and the seed."""
    return f"{policy_key}|{env_id}|{seed}"


def trajectory_intact(episode_dir: Path) -> bool:
    """Whether ``episode_dir`` holds a whole ``trajectory.json`` (written, and ending as a JSON object
    does): what tells a finished episode from one whose record was lost or torn."""
    path = episode_dir / "trajectory.json"
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - 64))
            return fh.read().rstrip().endswith(b"}")
    except OSError:
        return False


def file_name(text: str, suffix: str = "") -> str:
    """``text`` as a file name ending in ``suffix``: unsafe characters replaced, cut to
    :data:`MAX_DIR_NAME` characters with a hash of the whole name at the end when longer."""
    name = _slug(text)
    if len(name) + len(suffix) > MAX_DIR_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:12]
        name = f"{name[: MAX_DIR_NAME - len(suffix) - len(digest) - 1]}-{digest}"
    return name + suffix


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


@dataclass
class EpisodeResult:
    """One finished episode attempt, as the reports need it (the full record is its trajectory)."""

    policy: str  # the policy's label in reports
    env_id: str
    task_id: int
    site_group: str
    template_id: int
    seed: int
    # "done": the episode ran to an end and was judged (a policy's own failure included); "error": the
    # infrastructure failed it (model provider or configuration, browser, sites, judge, a timeout)
    status: str
    reward: float = 0.0
    n_steps: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    wall_time_s: float = 0.0
    terminated: bool = False
    truncated: bool = False
    interactions: int = 0  # env actions the policy caused, explored and undone ones included
    restores: int = 0
    budget_exhausted: str | None = None  # "decisions" | "interactions" when a budget ended the episode
    oracle_assisted: bool = False  # the policy could ask the evaluator during the episode
    trial_scores: list[float | None] = field(default_factory=list)  # report-only verdict after each trial
    trial_actions: list[int] = field(default_factory=list)  # actions each trial executed
    role_calls: dict[str, dict[str, float]] = field(default_factory=dict)  # role -> calls, tokens, cost
    action_counts: dict[str, int] = field(default_factory=dict)  # command name -> times decided on
    commands: list[str] = field(default_factory=list)  # the commands the episode offered the policy
    observation_tokens: int = 0  # GPT-2 tokens the steps showed the model (Trajectory.observation_tokens)
    policy_counters: dict[str, float] = field(default_factory=dict)  # numbers of the policy's state()["counters"]
    path_length: int | None = None  # atomic actions on the delivered path (a search's final path)
    search_iterations: int | None = None  # iterations a search method ran ...
    search_budget: int | None = None  # ... out of its iteration budget
    err_msg: str | None = None
    # what failed an "error" episode: provider | configuration (an LLM's, the judge's included) | browser |
    # sites | evaluator | timeout | worker | storage (its trajectory could not be written)
    error_kind: str | None = None
    trajectory: str | None = None  # path relative to the study directory
    attempt: int = 1
    extra: dict[str, Any] = field(default_factory=dict)
    policy_key: str = ""  # the configuration's key (PolicySpec.key); "" in studies written before keys existed

    @property
    def key(self) -> str:
        return episode_key(self.policy_key or self.policy, self.env_id, self.seed)

    @property
    def success(self) -> bool:
        return self.status == "done" and self.reward >= 1.0


class StudyStore:
    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    # -- manifest -------------------------------------------------------------------------------
    def write_manifest(self, manifest: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(self.root / MANIFEST_FILE, redacted_json(manifest, indent=2, sort_keys=True))

    def read_manifest(self) -> dict[str, Any]:
        path = self.root / MANIFEST_FILE
        if not path.exists():
            raise FileNotFoundError(f"{self.root} is not a study directory (no {MANIFEST_FILE})")
        return json.loads(path.read_text(encoding="utf-8"))

    # -- results --------------------------------------------------------------------------------
    def episode_dir(self, key: str, attempt: int, label: str = "") -> Path:
        """``episodes/<label>_<key>__a<attempt>``, cut to :data:`MAX_DIR_NAME` characters."""
        return self.root / "episodes" / file_name(f"{label}|{key}" if label else key, f"__a{attempt}")

    def append(self, result: EpisodeResult) -> None:
        line = redacted_json(asdict(result), sort_keys=True, default=str) + "\n"
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / RESULTS_FILE, "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                if fh.seek(0, os.SEEK_END) and (fh.seek(-1, os.SEEK_END), fh.read(1))[1] != b"\n":
                    line = "\n" + line  # a killed writer left a torn line: never glue a record onto it
                fh.write(line.encode())
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def attempts(self) -> Iterator[EpisodeResult]:
        path = self.root / RESULTS_FILE
        if not path.exists():
            return
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    yield EpisodeResult(**json.loads(line))
                except (json.JSONDecodeError, TypeError):
                    continue  # a torn line from a killed writer

    def latest(self) -> dict[str, EpisodeResult]:
        """The last attempt of every episode key: what the reports count."""
        out: dict[str, EpisodeResult] = {}
        for r in self.attempts():
            out[r.key] = r
        return out

    def attempt_counts(self, *, configuration_errors: bool = True) -> dict[str, int]:
        """Attempts per episode key; without ``configuration_errors``, attempts a configuration error
        stopped (they say nothing about the episode, so they do not use up its retries)."""
        counts: dict[str, int] = {}
        for r in self.attempts():
            if configuration_errors or not (r.status == "error" and r.error_kind == "configuration"):
                counts[r.key] = counts.get(r.key, 0) + 1
        return counts
