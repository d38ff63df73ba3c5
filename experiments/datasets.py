"""Any study as a training set: its episodes' steps and model calls, as files fine-tuning libraries read.

``export_study(study, out)`` reads a study directory (``results.jsonl`` and the trajectories; nothing is
re-run or re-crawled: every step's trajectory record already holds the page the policy read, the
simplified HTML for Plan-and-Act, and every model call's messages) and writes::

    out/data/steps.<split>.jsonl   per step: the observation the policy saw, the action, the step's reward,
                                   done, the model's output (each call's role and answer), the episode's reward
    out/data/chat.<split>.jsonl    per model call that led to a step: its messages plus the answer as the
                                   assistant's message (``messages``), with the call's role; only answers
                                   the policy used and the env carried out (see :func:`rejections`)
    out/README.md                  the ``datasets`` configurations ``steps`` and ``chat`` with their splits
    out/dataset_info.json          LLaMA-Factory's entry for the chat files (ShareGPT form, OpenAI tags)

Every record carries the study's name, the task id, the env id, the site, the policy and the seed; none
carries a credential or a machine path. Filters: the episode's reward (``min_reward``/``max_reward``),
the policy labels, the sites, and the call roles of the chat file. With ``validation_fraction`` whole
tasks are held out (``validation`` split, seed 42 as Plan-and-Act's splits).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from webarena_gym.experiments.cli import EXIT_USAGE
from webarena_gym.experiments.dataset_files import (
    chat_record,
    llamafactory_entries,
    sanitize,
    split_groups,
    write_card,
    write_jsonl,
)
from webarena_gym.experiments.store import RESULTS_FILE, EpisodeResult, StudyStore
from webarena_gym.experiments.trajectory import StepRecord, Trajectory
from webarena_gym.llm.messages import text_of
from webarena_gym.llm.redaction import write_text

SPLIT_SEED = 42


def episodes(
    study: Path,
    *,
    min_reward: float | None = None,
    max_reward: float | None = None,
    policies: Sequence[str] = (),
    sites: Sequence[str] = (),
) -> list[EpisodeResult]:
    """The study's finished episodes (last attempt of each) that pass the filters, in a fixed order."""
    if not (study / RESULTS_FILE).exists():
        raise FileNotFoundError(f"{study} is not a study directory (it has no {RESULTS_FILE})")
    out = []
    for r in StudyStore(study).latest().values():
        if r.status != "done" or not r.trajectory:
            continue
        if min_reward is not None and r.reward < min_reward or max_reward is not None and r.reward > max_reward:
            continue
        if policies and r.policy not in policies and r.policy.split(" [")[0] not in policies:
            continue
        if sites and r.site_group not in sites:
            continue
        out.append(r)
    return sorted(out, key=lambda r: r.key)


def rejections(rec: StepRecord, calls: Sequence[dict[str, Any]]) -> list[str | None]:
    """Why each of a step's answered calls was not carried out (None: it was used).

    A call was asked again (a later call of the step replays its answer and adds a request after it:
    the policy refused the answer); the step's last call, whose answer the policy could not use
    (``decision_error``) or whose action the env refused (``action_error``, e.g. an id not on the page).
    Plans and judgements earlier in the step were used by the policy and count as accepted."""
    reasons: list[str | None] = [None] * len(calls)
    for i, call in enumerate(calls):
        shown = [{"role": m["role"], "content": text_of(m)} for m in call["messages"]]
        answered = [*shown, {"role": "assistant", "content": str(call["responses"][0])}]
        if any(_extends(later["messages"], answered) for later in calls[i + 1 :]):
            reasons[i] = "asked again: the policy could not use the answer"
    if calls and reasons[-1] is None:
        if rec.decision_error:
            reasons[-1] = f"not used by the policy: {rec.decision_error}"
        elif rec.action_error:
            reasons[-1] = f"refused by the env: {rec.action_error}"
    return reasons


def _extends(messages: Sequence[Any], prefix: Sequence[dict[str, str]]) -> bool:
    if len(messages) <= len(prefix):
        return False
    return all(m["role"] == p["role"] and text_of(m) == p["content"] for m, p in zip(messages, prefix, strict=False))


def _records(
    study: Path, result: EpisodeResult, roles: Sequence[str], keep_rejected: bool = False
) -> tuple[list[dict], list[dict]]:
    traj = Trajectory.load(study / result.trajectory)  # type: ignore[operator]
    meta = {
        "study": study.name,
        "task_id": result.env_id,
        "env_id": traj.env_id,
        "site": result.site_group,
        "policy": result.policy,
        "seed": result.seed,
        "episode_reward": float(result.reward),
    }
    steps, chats = [], []
    last = len(traj.steps) - 1
    for rec in traj.steps:
        calls = [c for c in rec.llm_calls if not c.get("error") and c.get("responses")]
        rejected = rejections(rec, calls)
        steps.append(
            {
                **meta,
                "step": rec.index,
                "url": rec.url,
                "observation": rec.observation,
                "action": rec.action,
                "reward": float(rec.reward),
                "done": bool(rec.terminated or rec.truncated or rec.index == last),  # the last step ends it
                "action_error": rec.action_error,
                "model_output": [
                    {"role": str(c["role"]), "output": str(c["responses"][0]), "accepted": why is None}
                    for c, why in zip(calls, rejected, strict=True)
                ],
            }
        )
        for c, why in zip(calls, rejected, strict=True):
            if roles and c["role"] not in roles or why is not None and not keep_rejected:
                continue
            flag = {"rejected": why} if keep_rejected else {}
            messages = [{"role": m["role"], "content": text_of(m)} for m in c["messages"]]
            answer = str(c["responses"][0])
            chats.append(chat_record(messages, answer, **meta, step=rec.index, role=str(c["role"]), **flag))
    return steps, chats


def export_study(
    study: str | Path,
    out: str | Path,
    *,
    min_reward: float | None = None,
    max_reward: float | None = None,
    policies: Sequence[str] = (),
    sites: Sequence[str] = (),
    roles: Sequence[str] = (),
    validation_fraction: float = 0.0,
    seed: int = SPLIT_SEED,
    keep_rejected: bool = False,
    force: bool = False,
) -> dict[str, Any]:
    """Write the study's training files into ``out`` (see the module docstring); returns the counts.

    ``keep_rejected`` keeps the answers the policy or the env refused in the chat file, each with its
    reason in ``rejected`` (None on the others); by default they are left out, as no model should learn
    them. ``out`` must be empty or missing, unless ``force``: then the files of an earlier export there
    are deleted first, so no stale split survives. Episodes whose trajectory cannot be read are left out
    and listed under ``unreadable``.
    """
    study, out = Path(study), Path(out)
    chosen = episodes(study, min_reward=min_reward, max_reward=max_reward, policies=policies, sites=sites)
    steps: list[dict[str, Any]] = []
    chats: list[dict[str, Any]] = []
    unreadable: list[str] = []
    exported: list[EpisodeResult] = []
    for result in chosen:
        try:
            s, c = _records(study, result, roles, keep_rejected)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # a torn or missing trajectory
            unreadable.append(f"{result.key}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        exported.append(result)
        steps += s
        chats += c
    _clear_previous_export(out, force)
    roots = [study.resolve(), out.resolve(), Path.cwd()]
    steps, chats = sanitize(steps, roots), sanitize(chats, roots)
    configs: dict[str, dict[str, str]] = {}
    counts: dict[str, Any] = {"episodes": len(exported)}
    refused = sum(1 for step in steps for o in step["model_output"] if not o["accepted"])
    counts["rejected_answers"] = refused  # left out of the chat file unless keep_rejected
    if unreadable:
        counts["unreadable"] = unreadable
    for name, records in (("steps", steps), ("chat", chats)):
        train, validation = split_groups(records, lambda r: r["task_id"], validation_fraction, seed)
        for split, part in (("train", train), ("validation", validation)):
            if part:
                path = f"data/{name}.{split}.jsonl"
                counts[f"{name}.{split}"] = write_jsonl(out / path, part)
                configs.setdefault(name, {})[split] = path
    write_card(
        out,
        f"Training data from the study {study.name}",
        configs,
        f"Exported by webarena-gym from {len(exported)} episodes. `steps`: one record per step (observation, "
        "action, reward, done, the model's output). `chat`: one record per model call, `messages` in the "
        "chat format TRL, torchtune and LLaMA-Factory read.",
    )
    if "chat" in configs:
        entries = llamafactory_entries({f"{study.name}_{s}": p for s, p in configs["chat"].items()}, chat=True)
        write_text(out / "dataset_info.json", json.dumps(entries, indent=1))
    return counts


class OutputNotEmptyError(FileExistsError):
    """``out`` holds files and ``force`` was not given."""


def _clear_previous_export(out: Path, force: bool) -> None:
    if not out.exists() or not any(out.iterdir()):
        return
    if not force:
        raise OutputNotEmptyError(f"{out} is not empty; pick a new --out or pass --force to replace an export there")
    for stale in [*(out / "data").glob("*.jsonl"), out / "README.md", out / "dataset_info.json"]:
        stale.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="webarena-gym dataset", description="export a study as a training set")
    p.add_argument("study", help="a study directory (webarena-gym compare --out ...)")
    p.add_argument("--out", required=True, help="directory to write the training set into")
    p.add_argument("--min-reward", type=float, default=None, help="keep episodes with at least this reward")
    p.add_argument("--max-reward", type=float, default=None, help="keep episodes with at most this reward")
    p.add_argument("--policy", action="append", default=[], help="keep this policy (label or name); repeatable")
    p.add_argument("--site", action="append", default=[], help="keep this site (or multisite); repeatable")
    p.add_argument("--role", action="append", default=[], help="chat file: only calls of this role; repeatable")
    p.add_argument("--validation-fraction", type=float, default=0.0, help="tasks held out as the validation split")
    p.add_argument(
        "--keep-rejected",
        action="store_true",
        help="chat file: keep answers the policy or the env refused, flagged with their reason in 'rejected'",
    )
    p.add_argument("--force", action="store_true", help="replace an earlier export in --out")
    args = p.parse_args(argv)
    try:
        counts = export_study(
            args.study,
            args.out,
            min_reward=args.min_reward,
            max_reward=args.max_reward,
            policies=args.policy,
            sites=args.site,
            roles=args.role,
            validation_fraction=args.validation_fraction,
            keep_rejected=args.keep_rejected,
            force=args.force,
        )
    except OutputNotEmptyError as error:
        print(f"webarena-gym dataset: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    unreadable = counts.pop("unreadable", [])
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))
    for episode in unreadable:
        print(f"skipped, its trajectory cannot be read: {episode}", file=sys.stderr)
    if not counts["episodes"]:
        print("no finished episode passed the filters; nothing but the dataset card was written")
    return 0
