"""Benchmark of Plan-MCTS's search machinery: what one search iteration costs beyond the browser actions.

Plan-MCTS runs full 10-iteration searches on local-suite tasks with a zero-latency scripted model
(played through litellm's mock path): the Planner proposes three subplans, the Operator scrolls once and
declares the subplan done, the Micro check says no to every third subplan (which calls the
Reflector and runs the repair), the Macro check answers C three times; no answer is ever given, so
the search uses its whole budget and then runs the final-answer step. What an iteration costs
beyond its env steps is the search overhead: restoring the node to work from (exact restore on the
local suite, with the full Set-of-Marks observation it returns), snapshots of new nodes, building the
five prompts (marked screenshots encoded as PNG once per page), the LLM layer (litellm's call path,
token counting with images, recording) and the tree bookkeeping. It is measured as the ``act`` time of
the episode minus the time of its ``handle.step`` calls, divided by the iterations, after a warm-up
episode. Target (issue 26; 0.5 s in issue 17): at most 0.3 s per iteration on the local suite on a quiet
machine, small against any real model's latency (several seconds per call, about ten calls per
iteration).
Run: ``python -m webarena_gym.benchmarks.plan_mcts [--quick]``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any

QUICK_TASKS = (212,)
FULL_TASKS = (212, 0, 300)  # forum, shop, code host start pages
OPERATOR = (
    "### Interaction History Summary ###\nOn track.\n### Observation Highlights ###\n1\n"
    "### Observation Description ###\nA page.\n### Reason ###\nNext.\n### Action ###\n{action}"
)


def _script() -> Any:
    from webarena_gym.llm import Script, text_of

    micro_calls = [0]

    def operator(messages: list[dict[str, Any]]) -> str:
        history = text_of(messages[-1]).split("### Interaction History (Current Subplan) ###", 1)[1]
        return OPERATOR.format(action="subplan_done" if "1. scroll" in history else "scroll [down]")

    def micro(messages: list[dict[str, Any]]) -> str:
        micro_calls[0] += 1
        return f'Thoughts: compared.\nCompleted: "{"no" if micro_calls[0] % 3 == 0 else "yes"}"'

    candidates = [{"thought": "t", "subplan": f"Read the page further ({i})."} for i in range(3)]
    subplans = json.dumps({"subplans": candidates})
    return Script(
        {
            "planner": Script.forever(subplans),
            "operator": Script.forever(operator),
            "micro": Script.forever(micro),
            "macro": Script.forever("Thoughts: some progress.\nSTATUS CODE: C\nNotes: none."),
            "reflector": Script.forever('{"reason": "Type B: too coarse.", "revised_plan": "Scroll down once."}'),
        }
    )


class _CpuTimedHandle:
    """The rollout's handle with the CPU time of its ``step`` calls summed (this process's own work:
    Playwright's client side and the observation wrappers), so the search's CPU can be told apart."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self.step_cpu = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def step(self, action: str) -> Any:
        start = time.thread_time()
        try:
            return self._handle.step(action)
        finally:
            self.step_cpu += time.thread_time() - start


def _episode(task_id: int) -> dict[str, float]:
    from webarena_gym.experiments.rollout import run_episode
    from webarena_gym.policies import make_policy

    policy = make_policy("plan_mcts", script=_script(), model="gpt-4o", early_stop=False)
    act, cpu = policy.act, {"act": 0.0, "steps": 0.0}

    def timed(obs: Any, handle: Any) -> Any:
        wrapped, start = _CpuTimedHandle(handle), time.thread_time()
        try:
            return act(obs, wrapped)
        finally:
            cpu["act"] += time.thread_time() - start
            cpu["steps"] += wrapped.step_cpu

    policy.act = timed  # type: ignore[method-assign]
    traj = run_episode(f"webarena/local.{task_id}", policy)
    if traj.err_msg:
        raise RuntimeError(f"task {task_id}: {traj.err_msg}")
    step = traj.steps[0]
    calls = step.handle_calls
    if traj.tree is None:
        raise RuntimeError(f"task {task_id}: the trajectory records no search tree")
    iterations = traj.tree["iterations"]

    def spent(op: str) -> list[float]:
        return [c["elapsed_s"] for c in calls if c["op"] == op]

    act_s = step.timings["act_s"]
    steps, restores, snapshots = spent("step"), spent("restore"), spent("snapshot")
    llm = sum(c["latency_s"] for c in step.llm_calls)
    overhead = act_s - sum(steps)
    return {
        "iterations": iterations,
        "overhead": overhead / iterations,
        "cpu": (cpu["act"] - cpu["steps"]) / iterations,
        "restore": sum(restores) / iterations,
        "restore_each": statistics.median(restores) if restores else 0.0,
        "restores": len(restores) / iterations,
        "snapshot": sum(snapshots) / iterations,
        "llm": llm / iterations,
        "calls": len(step.llm_calls) / iterations,
        "other": (overhead - sum(restores) - sum(snapshots) - llm) / iterations,
        "env_step": statistics.median(steps) if steps else 0.0,
        "prompt_tokens": sum(c["prompt_tokens"] for c in step.llm_calls) / iterations,
    }


def run(quick: bool = False) -> list[dict[str, Any]]:
    tasks = QUICK_TASKS if quick else FULL_TASKS
    _episode(tasks[0])  # warm-up: litellm's first call, the site server and the browser
    runs = [_episode(task_id) for task_id in tasks for _ in range(1 if quick else 2)]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    where = (
        f"{len(runs)} searches of {int(med('iterations'))} iterations on local tasks {', '.join(map(str, tasks))}; "
        f"load average {load:.1f} on {os.cpu_count()} cores"
    )
    return [
        {
            "name": "search overhead per iteration (median over searches)",
            "value": med("overhead"),
            "unit": "s",
            "target": "<= 0.3",
            "note": f"act time minus env steps, per iteration; {where}",
        },
        {
            "name": "search overhead per iteration, this process's CPU (median)",
            "value": med("cpu"),
            "unit": "s",
            "target": "",
            "note": "CPU time of act minus that of its env steps (the browser's own work is not in it); "
            "less sensitive to the machine's load than the wall time",
        },
        {
            "name": "  restores per iteration",
            "value": med("restore"),
            "unit": "s",
            "target": "",
            "note": f"{med('restores'):.2f} exact restores per iteration, {1000 * med('restore_each'):.0f} ms each "
            "(database, cookies, tabs, and the Set-of-Marks observation of the restored page)",
        },
        {
            "name": "  snapshots per iteration",
            "value": med("snapshot"),
            "unit": "s",
            "target": "",
            "note": "one per verified node",
        },
        {
            "name": "  LLM layer per iteration (zero-latency model)",
            "value": med("llm"),
            "unit": "s",
            "target": "",
            "note": f"{med('calls'):.1f} calls per iteration: litellm's call path, token counts with images, records",
        },
        {
            "name": "  prompts and bookkeeping per iteration",
            "value": med("other"),
            "unit": "s",
            "target": "",
            "note": "prompt building, PNG encoding of marked screenshots, parsing, tree updates",
        },
        {
            "name": "env step with the Set-of-Marks observation (median, for scale)",
            "value": med("env_step"),
            "unit": "s",
            "target": "",
            "note": "BrowserGym action + full observation + aligned text + marked screenshot",
        },
        {
            "name": "prompt tokens per iteration (mean of medians)",
            "value": med("prompt_tokens"),
            "unit": "tokens",
            "target": "",
            "note": "all five roles, screenshots counted by litellm from their size",
        },
    ]


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv[1:]):
        print(json.dumps(row))
