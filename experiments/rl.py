"""Train stable-baselines3 PPO (MlpPolicy, CPU) on one task through the numeric wrapper.

    python -m experiments.rl --env webarena/local.<id> --steps 256

A baseline that shows the environments plug into standard RL tooling: the agent sees hashed page
text and element slots (wrappers.numeric) and acts with click/type/stop on those slots. Prints one
JSON object: episodes finished, their rewards and lengths, mean reward and success rate.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def train(
    env_id: str,
    steps: int,
    *,
    preset: str = "agentoccam",
    k: int = 16,
    n_steps: int = 64,
    seed: int = 0,
    max_steps: int = 30,
    env_kwargs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train PPO for ``steps`` env steps; returns the finished episodes' statistics."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.monitor import Monitor

    from wrappers.numeric import NumericWebArena
    from wrappers.presets import make_env

    env = Monitor(NumericWebArena(make_env(env_id, preset, **(env_kwargs or {})), k=k, max_steps=max_steps))
    try:
        n_steps = max(2, min(n_steps, steps))
        model = PPO(
            "MlpPolicy", env, n_steps=n_steps, batch_size=n_steps, n_epochs=4, seed=seed, device="cpu", verbose=0
        )
        model.learn(total_timesteps=steps)
        rewards = [float(r) for r in env.get_episode_rewards()]
        lengths = [int(n) for n in env.get_episode_lengths()]
        return {
            "env_id": env_id,
            "preset": preset,
            "steps": int(env.get_total_steps()),
            "episodes": len(rewards),
            "episode_rewards": rewards,
            "episode_lengths": lengths,
            "mean_reward": sum(rewards) / len(rewards) if rewards else None,
            "success_rate": sum(r >= 1.0 for r in rewards) / len(rewards) if rewards else None,
        }
    finally:
        env.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", required=True, help="gym id, e.g. webarena/local.0")
    parser.add_argument("--steps", type=int, default=256, help="PPO training steps (env steps)")
    parser.add_argument("--preset", default="agentoccam", help="wrappers preset (observation/action spaces)")
    parser.add_argument("--k", type=int, default=16, help="interactive-element slots")
    parser.add_argument("--n-steps", type=int, default=64, help="PPO rollout length")
    parser.add_argument("--max-steps", type=int, default=30, help="steps per episode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--env-kwargs", type=json.loads, default={}, help="JSON, e.g. '{\"headless\": true}'")
    args = parser.parse_args(argv)
    options = {name: getattr(args, name) for name in ("preset", "k", "n_steps", "seed", "max_steps", "env_kwargs")}
    result = train(args.env, args.steps, **options)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
