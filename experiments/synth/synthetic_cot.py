"""Reasoning for the synthetic plans of Stages 3 and 4, so the CoT planner set keeps them.

The released code writes a synthetic task's reasoning together with its plan, against the one example
whose first page the task reuses ([C], its synthetic plan generator). Our expansion and targeted calls
write many plans per call, without reasoning; here each kept pair gets the reasoning that leads to its
plan, from its query and that first page, with the same teacher request Stage 2 uses for a grounded
plan (``cot_plan``: the plan is given, the reasoning must arrive at it step by step). The records go to
``stage2/cot.jsonl`` with ``kind="plan"`` and ``ref`` the pair's key, which ``synth export`` reads.
"""

from __future__ import annotations

import functools
from typing import Any

from webarena_gym.experiments.synth import prompts
from webarena_gym.experiments.synth.context import Run
from webarena_gym.experiments.synth.parsing import parse_cot_plan
from webarena_gym.experiments.synth.teacher import TeacherGaveUp
from webarena_gym.experiments.synth.work import derive_seed, run_items
from webarena_gym.wrappers.observations.html import strip_ids


def reason_pairs(run: Run, source: str, stage: int) -> None:
    """A reasoning trace for every pair of ``source`` (``"expansion"`` or ``"targeted"``) that has none."""
    if not run.cfg.cot:
        return
    done = {r["key"] for r in run.store("cot").load()} | {r["key"] for r in run.rejected(stage).load()}
    todo = [p for p in run.store(source).load() if f"cot|plan|{p['key']}" not in done]

    def messages(pair: dict[str, Any]) -> list:
        return prompts.cot_plan_messages(pair["intent"], strip_ids(run.pages.get(pair["page"])), pair["plan"])

    def reason(pair: dict[str, Any]) -> None:
        key = f"cot|plan|{pair['key']}"
        prov = run.teacher.provenance("cot", derive_seed(run.cfg.seed, key))
        parse = functools.partial(parse_cot_plan, n_steps=len(pair["steps"]))
        try:
            (reasoning, output), _ = run.teacher.ask("cot", messages(pair), parse)
        except TeacherGaveUp as gave_up:
            run.reject(stage, key, gave_up, prov)
            return
        seed = pair.get("source", pair.get("seed", ""))  # the grounded plan (or training point) it came from
        anchor = {"trajectory": seed, "step": 0, "task_id": pair["key"], "env_id": pair["env_id"]}
        anchor |= {"site": pair["site"], "intent": pair["intent"], "page": pair["page"]}
        record = {"key": key, **anchor, "kind": "plan", "ref": pair["key"], "reasoning": reasoning, "output": output}
        run.store("cot").append([{**record, "teacher": prov}])

    samples = [messages(p) for p in todo[:3]]
    run.costs.estimate(f"stage {stage}: reasoning", [run.teacher.estimate("cot", samples, len(todo))])
    run_items(todo, reason, **run.run_opts(f"stage {stage} reasoning"))
