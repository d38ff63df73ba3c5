"""Planner, replanner and executor training files from a run (the released code's training-data builders).

Inputs are built with the policy's own prompt builders (``policies.plan_and_act.prompts``), so a model
fine-tuned on these files is prompted exactly as ``plan_and_act`` prompts it. Per file set (``name``):

* ``planner``: query + initial page (no ids) -> plan (A.3), for every grounded plan, expansion pair and
  targeted pair; ``replanner``: query + earlier plans + actions so far + current page (no ids) -> replan
  (A.10), one per replanning record; ``executor``: task + plan in force + earlier rounds + current page
  (ids) -> action (A.4 + WebRL), one per step of every kept trajectory on simplified HTML. The executor's
  plan is the step's replan (``executor_plan="dynamic"``, the paper's final system), the grounded plan
  (``"static"``) or none (``"none"``, the No-Planner row); earlier pages are WebRL's placeholder.
* ``planner_cot``, ``replanner_cot``, ``executor_cot``: the CoT prompts with the CoT targets
  (reasoning, ``</think>``, then the plan or action between its tags), for the items that have a
  reasoning trace (Stage 2's, and for Stage 3 and 4 pairs :mod:`experiments.synth.synthetic_cot`'s);
  earlier executor pages are their recorded snippets and earlier answers keep their reasoning, as the
  CoT executor sees them.

Each is written as chat JSONL (``chat/``), as torchtune records (``torchtune/``: ``input``, ``output``)
and LLaMA-Factory records (``llamafactory/``: ``instruction``, ``input``, ``output``), the prompt rendered
with a chat template (``llama3`` by default, ``<think>\\n`` after the generation prompt for CoT targets).
Splits hold out whole tasks with seed 42: 5 % for the planner sets, 10 % for the executor sets (the
released code's splits). Every record carries its task id, site, source and study (the run's stage-1
study, an imported study, or ``synthetic`` for generated pairs).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from webarena_gym.experiments.dataset_files import (
    ChatTemplate,
    chat_record,
    chat_template,
    llamafactory_entries,
    rendered_records,
    sanitize,
    split_groups,
    write_card,
    write_jsonl,
)
from webarena_gym.experiments.synth.context import FILES
from webarena_gym.experiments.synth.store import JsonlStore, PageStore
from webarena_gym.policies.plan_and_act import prompts as pa
from webarena_gym.wrappers.observations.html import PLACEHOLDER, strip_ids

PLANNER_VALIDATION = 0.05  # [C]
EXECUTOR_VALIDATION = 0.1  # [C]
SPLIT_SEED = 42  # [C]
THINK = "<think>\n"


def cot_target(reasoning: str, body: str, tags: tuple[str, str]) -> str:
    """The released code's CoT target: reasoning, ``</think>``, a blank line, then the body between its tags."""
    return f"{reasoning.strip()}\n</think>\n\n{tags[0]}\n{body.strip()}\n{tags[1]}"


class Examples:
    """The examples of a run, as (messages, target, meta) per file set."""

    def __init__(self, run_dir: Path, executor_plan: str) -> None:
        if executor_plan not in ("dynamic", "static", "none"):
            raise ValueError(f"executor_plan must be dynamic, static or none, not {executor_plan!r}")
        self.dir, self.executor_plan = run_dir, executor_plan
        self.pages = PageStore(run_dir / "pages")
        load = {name: JsonlStore(run_dir / path).load() for name, path in FILES.items()}
        self.load = load
        self.trajs = {t["key"]: t for t in load["trajectories"] if t["kept"]}
        self.cot = {
            (r["kind"], r["ref"] if r["kind"] != "action" else f"{r['trajectory']}|{r['step']}"): r for r in load["cot"]
        }
        self.replan_at = {(r["trajectory"], r["step"]): r for r in load["replans"]}
        self.plan_of = {p["trajectory"]: p for p in load["plans"]}

    def _meta(self, source: str, task_id: str, site: str, study: str) -> dict[str, Any]:
        return {"source": source, "task_id": task_id, "site": site, "study": study}

    def _study(self, record: dict[str, Any]) -> str:
        traj = self.trajs.get(record.get("trajectory", ""))
        return traj["study"] if traj else "synthetic"

    def planner(self, cot: bool) -> Iterable[tuple[list, str, dict]]:
        """Grounded plans, then the synthetic ones; with CoT, the pairs whose reasoning was written
        (the grounded ones by Stage 2, the synthetic ones by synthetic_cot)."""
        grounded = ((p, self._meta("grounded", p["task_id"], p["site"], self._study(p))) for p in self.load["plans"])
        synthetic = (
            (p, self._meta(source, p["key"], p["site"], "synthetic"))
            for source in ("expansion", "targeted")
            for p in self.load[source]
        )
        for p, meta in (*grounded, *synthetic):
            page = strip_ids(self.pages.get(p["page"]))
            trace = self.cot.get(("plan", p["key"]))
            if not cot:
                yield pa.planner_messages(p["intent"], page, False), p["plan"], meta
            elif trace:
                target = cot_target(trace["reasoning"], trace["output"], pa.PLAN_TAGS)
                yield pa.planner_messages(p["intent"], page, True), target, meta

    def replanner(self, cot: bool) -> Iterable[tuple[list, str, dict]]:
        for r in self.load["replans"]:
            meta = self._meta("replan", r["task_id"], r["site"], self._study(r))
            page = strip_ids(self.pages.get(r["page"]))
            args = (r["intent"], r["previous_plans"], r["previous_actions"], page)
            trace = self.cot.get(("replan", r["key"]))
            if not cot:
                yield pa.replanner_messages(*args, False), r["plan"], meta
            elif trace:
                yield (
                    pa.replanner_messages(*args, True),
                    cot_target(trace["reasoning"], trace["output"], pa.PLAN_TAGS),
                    meta,
                )

    def _plan_in_force(self, traj: dict[str, Any], k: int) -> str | None:
        if self.executor_plan == "none":
            return ""
        plan = self.plan_of.get(traj["key"])
        if plan is None:
            return None
        if self.executor_plan == "static" or k == 0:
            return plan["plan"]
        replan = self.replan_at.get((traj["key"], k))
        return replan["plan"] if replan else None

    def executor(self, cot: bool) -> Iterable[tuple[list, str, dict]]:
        for traj in self.trajs.values():
            if traj["page_format"] != "html" or not traj["commands"]:
                continue  # the WebRL executor reads simplified HTML and acts in the WebRL grammar
            meta = self._meta("trajectory", traj["task_id"], traj["site"], traj["study"])
            history: list[pa.PastRound] = []
            for k, step in enumerate(traj["steps"]):
                trace = self.cot.get(("action", f"{traj['key']}|{k}"))
                plan = self._plan_in_force(traj, k)
                if plan is not None and (trace is not None or not cot):
                    messages = pa.executor_messages(
                        traj["intent"],
                        traj["commands"],
                        self.pages.get(step["page"]),
                        history,
                        plan=plan or None,
                        cot=cot,
                        dynamic=self.executor_plan == "dynamic",
                    )
                    target = (
                        cot_target(trace["reasoning"], step["action"], pa.ACTION_TAGS)
                        if cot and trace is not None
                        else step["action"]
                    )
                    yield messages, target, {**meta, "step": k}
                page = (step.get("snippet") or PLACEHOLDER) if cot else PLACEHOLDER
                history.append(pa.PastRound(page, step["action"], trace["reasoning"] if trace and cot else ""))


FILE_SETS: dict[str, tuple[Callable[[Examples, bool], Iterable], bool, float]] = {
    "planner": (Examples.planner, False, PLANNER_VALIDATION),
    "replanner": (Examples.replanner, False, PLANNER_VALIDATION),
    "executor": (Examples.executor, False, EXECUTOR_VALIDATION),
    "planner_cot": (Examples.planner, True, PLANNER_VALIDATION),
    "replanner_cot": (Examples.replanner, True, PLANNER_VALIDATION),
    "executor_cot": (Examples.executor, True, EXECUTOR_VALIDATION),
}


def export_training(
    run_dir: str | Path,
    out: str | Path,
    *,
    template: str = "llama3",
    executor_plan: str = "dynamic",
    seed: int = SPLIT_SEED,
) -> dict[str, int]:
    """Write every file set of the run into ``out``; returns the rows per file."""
    run_dir, out = Path(run_dir), Path(out)
    examples = Examples(run_dir, executor_plan)
    render: ChatTemplate | None = chat_template(template)
    roots = [run_dir.resolve(), out.resolve(), Path.cwd()]
    configs: dict[str, dict[str, str]] = {}
    chat_files: dict[str, str] = {}
    rendered_files: dict[str, str] = {}
    counts: dict[str, int] = {}
    for name, (build, cot, fraction) in FILE_SETS.items():
        items = [(m, t, meta) for m, t, meta in build(examples, cot)]
        chats = [sanitize(chat_record(m, (THINK if cot else "") + t, **meta), roots) for m, t, meta in items]
        train, validation = split_groups(chats, lambda r: r["task_id"], fraction, seed)
        for split, part in (("train", train), ("validation", validation)):
            if not part:
                continue
            path = f"chat/{name}.{split}.jsonl"
            counts[path] = write_jsonl(out / path, part)
            configs.setdefault(name, {})[split] = path
            chat_files[f"{name}_{split}_chat"] = path
        if render is None:
            continue
        held = {r["task_id"] for r in validation}
        rendered = [
            (meta["task_id"] in held, *rendered_records(m, t, render, THINK if cot else "", **meta))
            for m, t, meta in items
        ]
        for split, is_val in (("train", False), ("validation", True)):
            tune = [sanitize(r[1], roots) for r in rendered if r[0] == is_val]
            factory = [sanitize(r[2], roots) for r in rendered if r[0] == is_val]
            if tune:
                counts[f"torchtune/{name}.{split}.jsonl"] = write_jsonl(out / f"torchtune/{name}.{split}.jsonl", tune)
                path = f"llamafactory/{name}.{split}.jsonl"
                counts[path] = write_jsonl(out / path, factory)
                rendered_files[f"{name}_{split}"] = path
    write_card(
        out,
        f"Plan-and-Act training data from the run {run_dir.name}",
        configs,
        "Configurations: planner, replanner and executor (the paper's prompts), and their `_cot` versions "
        "(reasoning before the tagged plan or action). `chat/` holds `messages` lists; `torchtune/` and "
        f"`llamafactory/` hold the same examples rendered with the `{template}` chat template.",
    )
    info = {**llamafactory_entries(chat_files, chat=True), **llamafactory_entries(rendered_files, chat=False)}
    (out / "dataset_info.json").write_text(json.dumps(info, indent=1))
    return counts
