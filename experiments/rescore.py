"""Re-scoring a finished study with another evaluator, from what its episodes recorded, without running
any policy again; the new verdicts go to ``rescored/<evaluator>.jsonl`` beside the study's results.

What each evaluator reads from an episode's folder:

* ``webarena-verified``: the answer (``trajectory.json``'s evaluation) and the network trace
  (``network.har``; an episode recorded without one is re-scored on an empty trace, which fails its
  network checks, and the row says so). Everything it needs is recorded: the whole verdict is offline.
* ``webarena`` / ``agentoccam``: the answer and the final URL (``string_match``, ``url_match``; a
  ``fuzzy_match`` reference calls the judge model as a live run would). ``program_html`` reads pages of
  the live site, which a finished study no longer has: such an episode is not re-scored (``score``
  null, the reason given) rather than scored on a partial check. An answer given under
  WebArena-Verified's response contract is read for what it says (its retrieved data, or "N/A").
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from webarena_gym.experiments.store import EpisodeResult, StudyStore
from webarena_gym.experiments.trajectory import NETWORK_FILE
from webarena_gym.llm.redaction import redacted_json

EVALUATORS = ("webarena", "agentoccam", "webarena-verified")
RESCORE_DIR = "rescored"
OFFLINE_EVAL_TYPES = ("string_match", "url_match")


@dataclass
class Rescored:
    """One episode's verdict under ``evaluator`` beside the one the study recorded."""

    key: str
    policy: str
    env_id: str
    site_group: str
    seed: int
    evaluator: str
    score: float | None  # None: this evaluator could not score the episode from its records (see reason)
    reason: str  # why it scored so (the failing check), or why it could not
    original_evaluator: str
    original_score: float | None  # None: the study recorded an error, not a verdict
    original_reason: str
    trajectory: str | None = None


def _reason_webarena(details: dict[str, Any]) -> str:
    failed = [t for t in details.get("eval_types", []) if (details.get(t) or {}).get("score") == 0.0]
    return f"failed: {', '.join(failed)}" if failed else "passed" if details.get("score") == 1.0 else "no verdict"


def _reason_verified(details: dict[str, Any]) -> str:
    verdict = details.get("webarena_verified") or {}
    failed = [r["evaluator_name"] for r in verdict.get("evaluators_results", []) if r.get("status") != "success"]
    if verdict.get("error_msg"):
        return f"error: {verdict['error_msg']}"
    return f"failed: {', '.join(failed)}" if failed else "passed"


def reason_of(evaluation: dict[str, Any] | None) -> str:
    """A one-line account of a recorded evaluation (which check failed), for the agreement listing."""
    if not evaluation:
        return "no evaluation recorded"
    details = evaluation.get("details") or {}
    return _reason_verified(details) if "webarena_verified" in details else _reason_webarena(details)


def _load_trajectory(study: Path, result: EpisodeResult) -> dict[str, Any] | None:
    if not result.trajectory:
        return None
    path = study / result.trajectory / "trajectory.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _network_entries(folder: Path) -> tuple[list[dict], bool]:
    path = folder / NETWORK_FILE
    if not path.exists():
        return [], False
    return json.loads(path.read_text(encoding="utf-8"))["log"]["entries"], True


def rescore_episode(study: Path, result: EpisodeResult, evaluator: str, judge_model: str | None = None) -> Rescored:
    """``result``'s episode scored again by ``evaluator`` from its folder (see the module docstring)."""
    from webarena_gym.envs.evaluation import verified
    from webarena_gym.envs.evaluation.evaluator import EvalOptions, Judge, evaluate
    from webarena_gym.envs.registration import task_config
    from webarena_gym.envs.sites import replace_placeholders

    traj = _load_trajectory(study, result) or {}
    recorded = traj.get("evaluation") or {}
    original = result.reward if result.status == "done" else None

    def row(score: float | None, reason: str) -> Rescored:
        return Rescored(
            key=result.key, policy=result.policy, env_id=result.env_id, site_group=result.site_group,
            seed=result.seed, evaluator=evaluator, score=score, reason=reason,
            original_evaluator=str((traj.get("reset_info") or {}).get("evaluator") or "webarena"),
            original_score=original, original_reason=reason_of(recorded) if original is not None else
            f"error: {result.err_msg or result.status}", trajectory=result.trajectory,
        )  # fmt: skip

    if not traj or not recorded:
        return row(None, "the episode recorded no evaluation (it ended in an error)")
    answer = str(recorded.get("answer") or "")
    site_urls = dict((traj.get("reset_info") or {}).get("site_urls") or {})
    try:
        config = task_config(result.env_id)
    except ValueError as exc:
        return row(None, str(exc))
    if evaluator == "webarena-verified":
        if "verified" not in config:
            return row(None, "the task has no WebArena-Verified form")
        entries, recorded_trace = _network_entries(study / str(result.trajectory))
        out = verified.score(config["verified"], answer, entries, site_urls)
        reason = reason_of(out) + ("" if recorded_trace else " (no network trace was recorded)")
        return row(None if out.get("error") else out["score"], reason)
    if evaluator == "agentoccam" and result.env_id.startswith("webarena/") and "local." not in result.env_id:
        from webarena_gym.envs.evaluation.corrections import apply_agentoccam_corrections

        config = apply_agentoccam_corrections(config)
    config = replace_placeholders(config, site_urls)
    live = [t for t in config.get("eval", {}).get("eval_types", []) if t not in OFFLINE_EVAL_TYPES]
    if live:
        return row(None, f"not re-scored: {', '.join(live)} reads pages of the live site")
    options = EvalOptions.agentoccam() if evaluator == "agentoccam" else EvalOptions()
    final_url = str(recorded.get("final_url") or (recorded.get("details") or {}).get("final_url") or "")
    judge = Judge(judge_model)
    said = verified.plain_answer(answer)  # an answer under WebArena-Verified's contract: what it says
    verdict = evaluate(config, None, said, judge=judge, last_url=final_url, urls=site_urls, options=options)
    return row(verdict.score, reason_of({"details": verdict.details}))


def rescore(study: str | os.PathLike, evaluator: str, judge_model: str | None = None) -> Path:
    """Score every finished episode of ``study`` again with ``evaluator``; writes and returns
    ``rescored/<evaluator>.jsonl`` (replaced whole, so a second run gives the same file)."""
    if evaluator not in EVALUATORS:
        raise ValueError(f"evaluator must be one of {', '.join(EVALUATORS)}, not {evaluator!r}")
    root = Path(study)
    store = StudyStore(root)
    store.read_manifest()  # a clear error for a folder that holds no study
    rows = [rescore_episode(root, r, evaluator, judge_model) for r in store.latest().values()]
    folder = root / RESCORE_DIR
    folder.mkdir(exist_ok=True)
    path = folder / f"{evaluator}.jsonl"
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(redacted_json(asdict(r), sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_rescored(study: str | os.PathLike) -> dict[str, list[Rescored]]:
    """Every re-scoring of ``study``, by evaluator."""
    folder = Path(study) / RESCORE_DIR
    out: dict[str, list[Rescored]] = {}
    for evaluator in EVALUATORS:
        path = folder / f"{evaluator}.jsonl"
        if path.exists():
            lines = path.read_text(encoding="utf-8").splitlines()
            out[evaluator] = [Rescored(**json.loads(line)) for line in lines if line.strip()]
    return out
