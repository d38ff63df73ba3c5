"""Stage 3, synthetic plan expansion (the paper's Sec. 4.3, App. A.6).

Each call shows the teacher ``n_seed`` grounded plans of one site (sites taken round-robin [C], seeds
drawn with the call's sampling seed), each as its query, its initial page without ids and its plan, and
asks for ``n_new`` new query-plan pairs [P: 5 -> 10]. Every pair names the example whose initial page it
starts from; the pair reuses that seed's page by reference (its planner input is the new query with that
page). A query left with the task-generation line ``Initial HTML State from Example Index: N`` has it
removed (as the released code does); a query that repeats an evaluated task's intent is dropped. Calls continue until at
least ``n_expand`` pairs exist [P: 10,000], in whole calls (a pair paid for is never thrown away); a call
whose answer stays unusable is rejected and replaced.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from typing import Any

from webarena_gym.experiments.synth import prompts
from webarena_gym.experiments.synth.context import Run
from webarena_gym.experiments.synth.parsing import parse_pairs
from webarena_gym.experiments.synth.synthetic_cot import reason_pairs
from webarena_gym.experiments.synth.teacher import TeacherGaveUp
from webarena_gym.experiments.synth.work import derive_seed, fill
from webarena_gym.wrappers.observations.html import strip_ids


def seed_plans(run: Run) -> list[dict[str, Any]]:
    """The plans expansion learns from, checked against the evaluation exclusion."""
    plans = run.store("plans").load()
    run.exclusion.check(((p["env_id"], p["intent"]) for p in plans), "the Stage 2 plans")
    return plans


def planner_page(run: Run, digest: str) -> str:
    """A stored page as planners read it (simplified HTML loses its ids; other text stays as it is)."""
    return strip_ids(run.pages.get(digest))


def run_stage(run: Run) -> None:
    cfg, teacher = run.cfg, run.teacher
    mark = teacher.mark()
    by_site: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for plan in seed_plans(run):
        by_site[plan["site"]].append(plan)
    sites = sorted(by_site)
    store, rejected = run.store("expansion"), run.rejected(3)
    if not sites:
        run.echo("[stage 3] no grounded plans to expand yet")
        return

    def batch(i: int) -> tuple[str, list[dict[str, Any]], int, list]:
        site = sites[i % len(sites)]
        sample_seed = derive_seed(cfg.seed, "expansion", i)
        seeds = random.Random(sample_seed).sample(by_site[site], min(cfg.n_seed, len(by_site[site])))
        shown = [(s["intent"], planner_page(run, s["page"]), s["plan"]) for s in seeds]
        return site, seeds, sample_seed, prompts.expansion_messages(shown, cfg.n_new)

    def run_batch(i: int) -> None:
        site, seeds, sample_seed, messages = batch(i)
        prov = teacher.provenance("expander", sample_seed)
        try:
            pairs, _ = teacher.ask("expander", messages, lambda t: parse_pairs(t, cfg.n_new, len(seeds)))
        except TeacherGaveUp as gave_up:
            run.reject(3, f"x:{i}", gave_up, prov, batch=f"x:{i}")
            return
        records = []
        for j, pair in enumerate(pairs):
            assert pair.example is not None
            source = seeds[pair.example - 1]
            key = f"x:{i}:{j}"
            leak = run.exclusion.reason(None, pair.query)
            if leak:
                run.rejected(3).append([{"key": key, "stage": 3, "error": leak, "answer": pair.query, "teacher": prov}])
                continue
            records.append(
                {
                    "key": key,
                    "batch": f"x:{i}",
                    "index": j,
                    "site": site,
                    "intent": pair.query,
                    "seeds": [s["key"] for s in seeds],
                    "seed_index": pair.example,
                    "source": source["key"],
                    "env_id": source["env_id"],
                    "page": source["page"],
                    "steps": [{"number": s.number, "reasoning": s.reasoning, "step": s.step} for s in pair.steps],
                    "plan": pair.plan,
                    "teacher": prov,
                }
            )
        store.append([{**r, "batch_size": len(records)} for r in records])
        if not records:
            rejected.append(
                [{"key": f"x:{i}", "stage": 3, "error": "every pair was dropped", "answer": "", "teacher": prov}]
            )

    def finished() -> set[int]:
        keys = {r["batch"] for r in store.load()} | {r["key"] for r in rejected.load()}
        return {int(k.split(":")[1]) for k in keys if k.count(":") == 1}

    n_calls = math.ceil(max(0, cfg.n_expand - len(store.load())) / cfg.n_new)
    samples = [batch(i)[3] for i in range(min(n_calls, 3))]
    run.costs.estimate("stage 3", [teacher.estimate("expander", samples, n_calls)])
    fill(cfg.n_expand, cfg.n_new, lambda: len(store.load()), finished, run_batch, **run.run_opts("stage 3 expansion"))
    reason_pairs(run, "expansion", 3)
    run.costs.spent("stage 3", teacher.spent(mark))
