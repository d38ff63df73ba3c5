"""Benchmark of the policy layer: what a policy adds per step beyond the env step, and prompt size.

ReAct runs local-suite tasks end to end with a zero-latency scripted LLM (the reference solution in
ReAct's answer format, played through litellm's mock path), so every millisecond of ``act`` is the
policy's own work: prompt assembly, observation truncation, the litellm call path, token and cost
accounting, answer parsing. The rollout loop's own bookkeeping is measured separately. Token figures
use each model's tokenizer through litellm (cl100k for GPT-4-Turbo); the AgentOccam paper's Table 4
counts observation tokens with GPT-2's tokenizer on the real sites, so compare orders of magnitude.
The aligned-observation figure replays the same reference trajectories through the ``agentoccam``
preset (no LLM needed). Target (issue 5): at most 10 ms of policy overhead per step.
Run: ``python -m experiments.bench_policies [--quick]``.
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

QUICK_TASKS = (200, 306)
FULL_TASKS = (200, 203, 206, 212, 216, 302, 306, 314)
PAPER_OBS_TOKENS = {"webarena": 2210.2, "agentoccam": 2930.9}  # Table 4, "All" column (GPT-2 tokens)


def _react_with_reference(task_id: int) -> Any:
    from policies.baselines import ReferenceOracle
    from policies.llm import Script
    from policies.react import ANSWER_PHRASE, ReActPolicy

    oracle = ReferenceOracle(task_id, "webarena", lambda c: f"The page shows the way forward. {ANSWER_PHRASE} ```{c}```")
    return oracle.attach(ReActPolicy(script=Script({"actor": [oracle] * 30})))


def _warm_up() -> None:
    """Import litellm and run its call path once, so the first measured step is not the import."""
    from policies.llm import LLM, Script

    LLM("gpt-4-turbo", script=Script({"actor": ["ok"]})).complete("actor", [{"role": "user", "content": "hi"}])


def _obs_tokens(text: str) -> int:
    from policies.llm import _litellm

    return len(_litellm().encode(model="gpt-4-turbo", text=text))


def _ms(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    return 1000 * statistics.median(values), 1000 * values[min(len(values) - 1, int(0.9 * len(values)))]


def run(quick: bool = False) -> list[dict[str, Any]]:
    from experiments.rollout import run_episode
    from policies import make_policy

    tasks = QUICK_TASKS if quick else FULL_TASKS
    _warm_up()
    act, env, loop, prompt, obs, aligned = [], [], [], [], [], []
    solved = aligned_solved = 0
    for task_id in tasks:
        traj = run_episode(f"webarena/local.{task_id}", _react_with_reference(task_id))
        solved += traj.reward >= 1.0
        for step in traj.steps:
            t = step.timings
            act.append(t["act_s"])
            if "env_s" in t:
                env.append(t["env_s"])
                loop.append(t.get("step_s", 0.0) - t["act_s"] - t["env_s"])
            prompt += [c["prompt_tokens"] for c in step.llm_calls]
            obs.append(_obs_tokens(step.observation))
        ref = run_episode(f"webarena/local.{task_id}", make_policy("reference", preset="agentoccam"))
        aligned_solved += ref.reward >= 1.0
        aligned += [_obs_tokens(s.observation) for s in ref.steps if s.observation]
    act_med, act_p90 = _ms(act)
    env_med, _ = _ms(env or [0.0])
    loop_med, _ = _ms(loop or [0.0])
    where = f"{len(tasks)} local tasks, {len(act)} ReAct steps; reference-scripted LLM solved {solved}/{len(tasks)}"
    return [
        {"name": "react policy overhead per step (median)", "value": act_med, "unit": "ms", "target": "<= 10",
         "note": f"policy.act with a zero-latency scripted LLM; {where}"},
        {"name": "react policy overhead per step (p90)", "value": act_p90, "unit": "ms", "target": "",
         "note": "same steps"},
        {"name": "rollout loop bookkeeping per step (median)", "value": loop_med, "unit": "ms", "target": "",
         "note": "step time minus act and env step (recording, policy state)"},
        {"name": "env step (median, for scale)", "value": env_med, "unit": "ms", "target": "",
         "note": "webarena preset: BrowserGym action + observation + wrappers"},
        {"name": "react prompt tokens per step (mean)", "value": statistics.mean(prompt), "unit": "tokens",
         "target": "", "note": "system + 2 examples + observation (cut to 1920) + fields; cl100k"},
        {"name": "react observation tokens per step (mean)", "value": statistics.mean(obs), "unit": "tokens",
         "target": "", "note": f"viewport tree before the 1920-token cut, cl100k; paper Vanilla "
                               f"{PAPER_OBS_TOKENS['webarena']} (GPT-2 tokens, real WebArena)"},
        {"name": "aligned observation tokens per step (mean)", "value": statistics.mean(aligned or [0]),
         "unit": "tokens", "target": "",
         "note": f"agentoccam preset along the reference trajectories ({aligned_solved}/{len(tasks)} solved), "
                 f"full page, cl100k; paper AgentOccam {PAPER_OBS_TOKENS['agentoccam']} (GPT-2 tokens)"},
    ]


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv[1:]):
        print(json.dumps(row))
