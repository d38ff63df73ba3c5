"""Seed schedules for automatic resets, so training and evaluation episodes come from disjoint seeds.

Vector envs (Gymnasium's and stable-baselines3's) reset finished sub-envs with ``seed=None``; the env then
draws the next task seed from its own generator, which reproduces a run but may repeat seeds used for
evaluation. :class:`EpisodeSeeds` gives every reset that names no seed the next one of an arithmetic
sequence instead: sub-env ``i`` of ``n`` trains on seeds ``i, i + n, i + 2n, ...`` and evaluation uses
seeds from :data:`EVAL_SEED_BASE` on, which training never reaches; choosing among a run's checkpoints uses
seeds from :data:`VALIDATION_SEED_BASE` on, apart from both. A schedule that would reach the validation seeds
wraps round to repeat training seeds instead: a long run trains on a seed twice rather than on a seed it is
judged on.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

EVAL_SEED_BASE = 1_000_000  # evaluation seeds start here; training schedules stay below
VALIDATION_SEED_BASE = 500_000  # checkpoint selection's seeds: below the held-out ones, above any training run's


class EpisodeSeeds(gym.Wrapper):
    """Reset number ``j`` without an explicit seed uses ``start + j * stride`` modulo
    :data:`VALIDATION_SEED_BASE` (an explicit seed wins).

    Example::

        env = EpisodeSeeds(make_numeric_env("miniwob/click-button"), start=1, stride=4)
        env.reset()   # seed 1, then 5, 9, ...
    """

    def __init__(self, env: gym.Env, start: int = 0, stride: int = 1) -> None:
        super().__init__(env)
        if stride < 1:
            raise ValueError("stride must be at least 1")
        self.start, self.stride, self.resets = start, stride, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if seed is None:
            seed = (self.start + self.resets * self.stride) % VALIDATION_SEED_BASE
            self.resets += 1
        return self.env.reset(seed=seed, options=options)
