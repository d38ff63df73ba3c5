"""PPO that learns on MiniWoB++, and how fast the numeric envs step when vectorised.

Learning: one MaskablePPO policy (``experiments.rl``, MlpPolicy 64x64, CPU, 32 steps per sub-env and
update, 8 epochs, learning rate 1e-3) trains on five simple
MiniWoB++ tasks at once, seven sub-envs in worker processes (click-button and click-link, where a random
click is mostly wrong, get two each). After the stated budget of training env steps it is evaluated
deterministically on held-out seeds, and the random policy (uniform over the unmasked actions) runs on
the same seeds. Success = MiniWoB's reward within BrowserGym's 10-step budget. Targets (issue 19):
>= 90 % on click-test, focus-text and click-dialog; clearly above random on click-button and click-link.

Throughput: env steps per second of the numeric env on click-button with random unmasked actions (resets
included), for 1 env and for Gymnasium's ``AsyncVectorEnv`` over 2 and 4 envs (forkserver workers, one
browser each). On a 2-core machine more envs only help while the browsers leave a core idle.
"""

from __future__ import annotations

import sys
import tempfile
import time
from typing import Any

import numpy as np

TASKS = ["click-button", "click-link", "click-test", "focus-text", "click-dialog"]
EASY = ("click-test", "focus-text", "click-dialog")
FULL = {"steps": 3000, "n_envs": 7, "eval_episodes": 30, "throughput_steps": 60}
QUICK = {"steps": 140, "n_envs": 7, "eval_episodes": 5, "throughput_steps": 8}


def learning_rows(budget: dict[str, int]) -> list[dict[str, Any]]:
    from webarena_gym.experiments.rl import TrainConfig, train

    config = TrainConfig(
        tasks=TASKS,
        steps=budget["steps"],
        n_envs=budget["n_envs"],
        n_steps=32,
        batch_size=56,
        n_epochs=8,
        learning_rate=1e-3,
        eval_episodes=budget["eval_episodes"],
    )
    with tempfile.TemporaryDirectory() as out:
        summary = train(config, out)
    minutes = summary["train_wall_s"] / 60
    budget_note = (
        f"after {summary['train_env_steps']} training env steps ({minutes:.1f} min wall, "
        f"{config.n_envs} sub-envs on this machine); {config.eval_episodes} held-out seeds"
    )
    rows = []
    for task in TASKS:
        result = summary["evaluation"][f"miniwob/{task}"]
        ppo, rnd = result["ppo"]["success_rate"], result["random"]["success_rate"]
        target = ">= 90" if task in EASY else f"> random ({100 * rnd:.0f})"
        rows.append(
            {
                "name": f"{task}: PPO success",
                "value": round(100 * ppo, 1),
                "unit": "%",
                "target": target,
                "note": f"random {100 * rnd:.0f} % on the same seeds; {budget_note}",
            }
        )
    rows.append(
        {
            "name": "training throughput",
            "value": summary["train_env_steps_per_s"],
            "unit": "env steps/s",
            "target": "",
            "note": f"{config.n_envs} sub-envs (SubprocVecEnv) while PPO learns",
        }
    )
    return rows


def throughput(n_envs: int, vector_steps: int, task: str = "miniwob/click-button") -> float:
    """Env steps per second with random unmasked actions (resets included), after a warm-up reset."""
    import gymnasium as gym

    from webarena_gym.wrappers.numeric import numeric_env_fns

    rng = np.random.default_rng(0)
    fns = numeric_env_fns([task], n_envs)
    env: Any = fns[0]() if n_envs == 1 else gym.vector.AsyncVectorEnv(fns, context="forkserver")
    try:
        _, info = env.reset(seed=0)
        started = time.perf_counter()
        for _ in range(vector_steps):
            if n_envs == 1:
                _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
                if terminated or truncated:
                    _, info = env.reset()
            else:
                actions = [int(rng.choice(np.flatnonzero(mask))) for mask in info["action_mask"]]
                _, _, _, _, info = env.step(np.array(actions))
        return n_envs * vector_steps / (time.perf_counter() - started)
    finally:
        env.close()


def run(quick: bool = False) -> list[dict[str, Any]]:
    budget = QUICK if quick else FULL
    rows = learning_rows(budget)
    for n in (1, 2, 4):
        rows.append(
            {
                "name": f"env steps/s, {n} env{'s' if n > 1 else ''}",
                "value": round(throughput(n, budget["throughput_steps"]), 2),
                "unit": "steps/s",
                "target": "",
                "note": "numeric env on click-button, random unmasked actions, resets included"
                + ("" if n == 1 else ", AsyncVectorEnv"),
            }
        )
    return rows


if __name__ == "__main__":
    import json

    for row in run(quick="--quick" in sys.argv[1:]):
        print(json.dumps(row))
