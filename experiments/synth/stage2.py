"""Stage 2, grounded plans (the paper's Sec. 4.2, App. A.5, A.9): a plan per kept trajectory, a replan per later
step, and reasoning traces.

* **Grounded plan** (A.5): the teacher reads the query, the first page (without element ids) and the
  numbered actions, and groups the actions into high-level steps, naming each step's actions. The paper's
  checks are enforced: every action is in exactly one step, each step's indices are consecutive and the
  steps take the actions in order; a plan that fails them is asked again (bounded), then rejected. The
  planner's target keeps Reasoning and Step only (A.3's format) [I].
* **Replanning data** (A.9): one chat per trajectory, round ``k`` (1 .. n-1) showing the page before
  action ``k`` and the actions still to come (``k`` .. n-1), earlier rounds collapsed to placeholders and
  answered by the earlier plans; the replan must cover exactly the future actions (same checks). A
  training pair per step: (query, previous plans, previous actions, page) -> replan (A.10's input).
  A rejected round ends the trajectory's chain (later rounds build on it).
* **CoT** (Sec. 4.2.2): for every plan and replan the teacher writes the reasoning that leads to it; for every
  action, the reasoning that finds it on the page given the plan in force (the replan of that step, the
  grounded plan at step 0), and must reproduce the action exactly.

Each call's result is its own record, so a killed run resumes within a trajectory.
"""

from __future__ import annotations

import functools
from typing import Any

from webarena_gym.experiments.synth import prompts
from webarena_gym.experiments.synth.context import Run
from webarena_gym.experiments.synth.parsing import (
    GroundedStep,
    parse_cot_action,
    parse_cot_plan,
    parse_grounded,
    render_grounded,
    render_plan,
)
from webarena_gym.experiments.synth.stage1 import page_text
from webarena_gym.experiments.synth.teacher import TeacherGaveUp
from webarena_gym.experiments.synth.work import derive_seed, run_items


def kept_trajectories(run: Run) -> list[dict[str, Any]]:
    return [t for t in run.store("trajectories").load() if t["kept"] and t["steps"]]


def _steps(record: dict[str, Any]) -> list[GroundedStep]:
    return [GroundedStep(**{**s, "actions": tuple(s["actions"])}) for s in record["steps"]]


class Annotator:
    """The stage's calls for one trajectory at a time (the replanning chain is sequential)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.done_plans = {r["key"]: r for r in run.store("plans").load()}
        self.done_replans = {r["key"]: r for r in run.store("replans").load()}
        self.done_cots = {r["key"] for r in run.store("cot").load()}
        self.rejected = {r["key"] for r in run.rejected(2).load()}

    def _ask(self, role: str, key: str, messages: list, parse: Any) -> tuple[Any, dict[str, Any]] | None:
        prov = self.run.teacher.provenance(role, derive_seed(self.run.cfg.seed, key))
        try:
            result, _ = self.run.teacher.ask(role, messages, parse)
        except TeacherGaveUp as gave_up:
            self.run.reject(2, key, gave_up, prov)
            return None
        return result, prov

    def _base(self, traj: dict[str, Any], key: str, k: int) -> dict[str, Any]:
        return {
            "key": key,
            "trajectory": traj["key"],
            "step": k,
            "task_id": traj["task_id"],
            "env_id": traj["env_id"],
            "site": traj["site"],
            "intent": traj["intent"],
            "page": traj["steps"][k]["page"],
        }

    def plan(self, traj: dict[str, Any]) -> dict[str, Any] | None:
        key = f"plan|{traj['key']}"
        if key in self.done_plans or key in self.rejected:
            return self.done_plans.get(key)
        actions = [s["action"] for s in traj["steps"]]
        messages = prompts.plan_annotator_messages(traj["intent"], page_text(self.run, traj, 0, ids=False), actions)
        got = self._ask("plan_annotator", key, messages, lambda t: parse_grounded(t, 0, len(actions) - 1))
        if got is None:
            return None
        steps, prov = got
        record = {
            **self._base(traj, key, 0),
            "n_actions": len(actions),
            "steps": [{**vars(s), "actions": list(s.actions)} for s in steps],
            "plan": render_plan(steps),
            "teacher": prov,
        }
        self.run.store("plans").append([record])
        return record

    def replans(self, traj: dict[str, Any], plan: dict[str, Any]) -> list[dict[str, Any]]:
        """The chain of replans of steps 1.. until its end or a rejected round."""
        actions = [s["action"] for s in traj["steps"]]
        answers, texts, out = [render_grounded(_steps(plan))], [plan["plan"]], []
        for k in range(1, len(actions)):
            key = f"replan|{traj['key']}|{k}"
            record = self.done_replans.get(key)
            if record is None:
                if key in self.rejected:
                    break
                html = page_text(self.run, traj, k, ids=False)
                messages = prompts.replan_annotator_messages(traj["intent"], actions, answers, k, html)
                last = len(actions) - 1
                got = self._ask("replan_annotator", key, messages, lambda t, k=k, last=last: parse_grounded(t, k, last))
                if got is None:
                    break
                steps, prov = got
                record = {
                    **self._base(traj, key, k),
                    "previous_plans": list(texts),
                    "previous_actions": actions[:k],
                    "steps": [{**vars(s), "actions": list(s.actions)} for s in steps],
                    "plan": render_plan(steps),
                    "annotated": render_grounded(steps),
                    "teacher": prov,
                }
                self.run.store("replans").append([record])
            answers.append(record["annotated"])
            texts.append(record["plan"])
            out.append(record)
        return out

    def _cot(self, traj: dict[str, Any], key: str, kind: str, ref: str, k: int, messages: list, parse: Any) -> None:
        if key in self.done_cots or key in self.rejected:
            return
        got = self._ask("cot", key, messages, parse)
        if got is None:
            return
        (reasoning, output), prov = got
        record = {**self._base(traj, key, k), "kind": kind, "ref": ref, "reasoning": reasoning, "output": output}
        self.run.store("cot").append([{**record, "teacher": prov}])

    def cot(self, traj: dict[str, Any], plan: dict[str, Any], replans: list[dict[str, Any]]) -> None:
        actions = [s["action"] for s in traj["steps"]]
        goal = traj["intent"]
        html0 = page_text(self.run, traj, 0, ids=False)
        self._cot(
            traj,
            f"cot|plan|{traj['key']}",
            "plan",
            plan["key"],
            0,
            prompts.cot_plan_messages(goal, html0, plan["plan"]),
            lambda t: parse_cot_plan(t, len(plan["steps"])),
        )
        in_force = [plan, *replans]  # the plan the executor follows at each step (dynamic replanning)
        for r in replans:
            k = r["step"]
            self._cot(
                traj,
                f"cot|replan|{traj['key']}|{k}",
                "replan",
                r["key"],
                k,
                prompts.cot_replan_messages(
                    goal, r["previous_plans"][-1], actions[:k], page_text(self.run, traj, k, ids=False), r["plan"]
                ),
                functools.partial(parse_cot_plan, n_steps=len(r["steps"])),
            )
        for k, action in enumerate(actions):
            current = in_force[min(k, len(in_force) - 1)]
            messages = prompts.cot_action_messages(
                goal, current["plan"], actions[:k], page_text(self.run, traj, k, ids=True), action
            )
            self._cot(
                traj,
                f"cot|action|{traj['key']}|{k}",
                "action",
                current["key"],
                k,
                messages,
                lambda t, a=action: (parse_cot_action(t, a), a),
            )

    def annotate(self, traj: dict[str, Any]) -> None:
        plan = self.plan(traj)
        if plan is None:
            return
        replans = self.replans(traj, plan)
        if self.run.cfg.cot:
            self.cot(traj, plan, replans)


def _pending_calls(annotator: Annotator, trajs: list[dict[str, Any]], cot: bool) -> dict[str, int]:
    counts = {"plan_annotator": 0, "replan_annotator": 0, "cot": 0}
    for t in trajs:
        n, key = len(t["steps"]), t["key"]
        counts["plan_annotator"] += f"plan|{key}" not in annotator.done_plans
        counts["replan_annotator"] += sum(f"replan|{key}|{k}" not in annotator.done_replans for k in range(1, n))
        if cot:
            wanted = [f"cot|plan|{key}"] + [f"cot|replan|{key}|{k}" for k in range(1, n)]
            wanted += [f"cot|action|{key}|{k}" for k in range(n)]
            counts["cot"] += sum(w not in annotator.done_cots for w in wanted)
    return counts


def run_stage(run: Run) -> None:
    mark = run.teacher.mark()
    trajs = kept_trajectories(run)
    run.exclusion.check(((t["env_id"], t["intent"]) for t in trajs), "the kept trajectories")
    annotator = Annotator(run)
    calls = _pending_calls(annotator, trajs, run.cfg.cot)
    samples = [
        prompts.plan_annotator_messages(t["intent"], page_text(run, t, 0, ids=False), [s["action"] for s in t["steps"]])
        for t in trajs[:3]
    ]
    run.costs.estimate("stage 2", [run.teacher.estimate(role, samples, n) for role, n in calls.items()])
    run_items(trajs, annotator.annotate, **run.run_opts("stage 2 plans"))
    run.costs.spent("stage 2", run.teacher.spent(mark))
