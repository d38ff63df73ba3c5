"""Benchmark of the policy layer: what a policy adds per step beyond the env step, and prompt size.

ReAct (and AgentOccam) run local-suite tasks end to end with a zero-latency scripted LLM (the reference solution in
ReAct's answer format, played through litellm's mock path), so every millisecond of ``act`` is the
policy's own work: prompt assembly, observation truncation, the litellm call path, token and cost
accounting, answer parsing. The rollout loop's own bookkeeping is measured separately. Token figures
use each model's tokenizer through litellm (cl100k for GPT-4-Turbo) for the prompt, GPT-2's for the
observation tokens per step (what the report's table counts, as AgentOccam's Table 4 does on the real
sites: compare orders of magnitude).
AgentOccam is measured the same way when it is registered (its answers in its output fields).
Target (issue 5): at most 10 ms of policy overhead per step.
Run: ``python -m webarena_gym.benchmarks.policies [--quick]``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any

# Local tasks whose reference solutions need neither ``goto`` (the AgentOccam action space has none)
# nor a native <select> (the vanilla viewport text does not list its options).
QUICK_TASKS = (203, 216)
FULL_TASKS = (203, 204, 216, 217, 300, 301, 314, 315)
PAPER_OBS_TOKENS = {"react": 2210.2, "agentoccam": 2930.9}  # Table 4, "All" column (GPT-2 tokens)


def _react_answer(command: str) -> str:
    from webarena_gym.policies.react import ANSWER_PHRASE

    return f"The page shows the way forward. {ANSWER_PHRASE} ```{command}```"


def _agentoccam_answer(command: str) -> str:
    """AgentOccam's output fields, in order."""
    return (
        f"INTERACTION HISTORY SUMMARY:\nProgress so far follows the plan.\nOBSERVATION DESCRIPTION:\n"
        f"The page shows the elements needed next.\nREASON:\nThis moves the task forward.\n"
        f"ACTION:\n{command}\nOBSERVATION HIGHLIGHT:\n"
    )


RENDER = {"react": _react_answer, "agentoccam": _agentoccam_answer}


def _with_reference(name: str, task_id: int, cpu: list[float]) -> Any:
    """Policy ``name`` whose scripted actor answers with the task's reference steps in its format;
    the CPU time of each ``act`` is appended to ``cpu`` (wall time is inflated on a loaded machine)."""
    from webarena_gym.benchmarks.support.oracle import ReferenceOracle
    from webarena_gym.llm import Script
    from webarena_gym.policies import make_policy
    from webarena_gym.policies.agentoccam.policy import AgentOccamPolicy
    from webarena_gym.policies.react import ReActPolicy

    policy = make_policy(name, script=Script({}))
    assert isinstance(policy, (ReActPolicy, AgentOccamPolicy))  # the two policies of RENDER
    oracle = ReferenceOracle(task_id, policy.preset, RENDER[name])
    policy.llm.script = Script({"actor": [oracle] * 30})
    oracle.attach(policy)
    act = policy.act

    def timed(obs: Any, handle: Any) -> Any:
        start = time.thread_time()
        try:
            return act(obs, handle)
        finally:
            cpu.append(time.thread_time() - start)

    policy.act = timed  # type: ignore[method-assign]  # times the policy's own act, wrapped as it runs
    return policy


def _warm_up() -> None:
    """Import litellm and run its call path once, so the first measured step is not the import."""
    from webarena_gym.llm import LLM, Script

    LLM("gpt-4-turbo", script=Script({"actor": ["ok"]})).complete("actor", [{"role": "user", "content": "hi"}])


def _ms(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    return 1000 * statistics.median(values), 1000 * values[min(len(values) - 1, int(0.9 * len(values)))]


def _measure(name: str, tasks: tuple[int, ...]) -> list[dict[str, Any]]:
    from webarena_gym.experiments.rollout import run_episode

    act: list[float] = []
    env: list[float] = []
    loop: list[float] = []
    cpu: list[float] = []
    prompt: list[int] = []
    obs: list[int] = []
    solved, errors = 0, []
    for task_id in tasks:
        traj = run_episode(f"webarena/local.{task_id}", _with_reference(name, task_id, cpu))
        solved += traj.reward >= 1.0
        if traj.err_msg:
            errors.append(f"{task_id}: {traj.err_msg[:80]}")
        for step in traj.steps:
            t = step.timings
            act.append(t["act_s"])
            if "env_s" in t:
                env.append(t["env_s"])
                loop.append(t.get("step_s", 0.0) - t["act_s"] - t["env_s"])
            prompt += [c["prompt_tokens"] for c in step.llm_calls]
        obs += traj.observation_tokens()
    if not act:
        return [{"name": f"{name}: no steps", "value": 0, "unit": "", "target": "", "note": "; ".join(errors)}]
    act_med, act_p90 = _ms(act)
    where = f"{len(tasks)} local tasks, {len(act)} steps, reference-scripted LLM solved {solved}/{len(tasks)}" + (
        f"; errors: {'; '.join(errors)}" if errors else ""
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return [
        {
            "name": f"{name} policy overhead per step, CPU (median)",
            "value": _ms(cpu)[0],
            "unit": "ms",
            "target": "<= 10",
            "note": f"CPU time of policy.act with a zero-latency scripted LLM; {where}",
        },
        {
            "name": f"{name} policy overhead per step, wall (median / p90)",
            "value": act_med,
            "unit": "ms",
            "target": "",
            "note": f"p90 {act_p90:.1f} ms; load average {load:.1f} on {os.cpu_count()} cores",
        },
        {
            "name": f"{name} rollout loop bookkeeping per step (median)",
            "value": _ms(loop or [0.0])[0],
            "unit": "ms",
            "target": "",
            "note": "step time minus act and env step (recording, policy state)",
        },
        {
            "name": f"{name} env step (median, for scale)",
            "value": _ms(env or [0.0])[0],
            "unit": "ms",
            "target": "",
            "note": "BrowserGym action + observation + the preset's wrappers",
        },
        {
            "name": f"{name} prompt tokens per step (mean)",
            "value": statistics.mean(prompt or [0]),
            "unit": "tokens",
            "target": "",
            "note": "every message of the actor call, the model's tokenizer (cl100k)",
        },
        {
            "name": f"{name} observation tokens per step (mean)",
            "value": statistics.mean(obs),
            "unit": "tokens",
            "target": "",
            "note": f"GPT-2 tokens, as the report counts them; paper Table 4: {PAPER_OBS_TOKENS[name]} (real WebArena)",
        },
    ]


def run(quick: bool = False) -> list[dict[str, Any]]:
    from webarena_gym.policies import available_policies

    tasks = QUICK_TASKS if quick else FULL_TASKS
    _warm_up()
    rows = []
    for name in RENDER:
        if name in available_policies():
            rows += _measure(name, tasks)
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv[1:]):
        print(json.dumps(row))
