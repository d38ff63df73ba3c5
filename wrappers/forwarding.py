"""The env calls beyond ``reset``/``step`` (``snapshot``, ``restore``, ``goto``, ``end_episode``,
``evaluate_now``), forwarded down a wrapper chain, with every observation they return passed back up
through each wrapper on the way.

Search and reflective policies move the browser with these calls (through the rollout's handle); the
observation they get back must be exactly what ``step`` would have shown them, and a wrapper that
remembers the page (the action wrapper checks element ids against it) must see it too. So each wrapper
of this project forwards the calls itself (:class:`ForwardsEnvCalls`); Gymnasium's own wrappers in the
chain are passed through, and an observation wrapper of another library still transforms the result.

Example::

    env = make_env("webarena/local.0", "agentoccam")
    env.reset(seed=0)
    snap = env.snapshot()
    env.step("click [12]")
    obs, info = env.restore(snap)       # obs["text"] is the aligned page again
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

ENV_CALLS = ("snapshot", "restore", "goto", "end_episode", "evaluate_now")
_OBSERVATION_CALLS = frozenset({"restore", "goto", "end_episode"})  # their result starts with an observation


def call_env(env: gym.Env, name: str, *args: Any) -> Any:
    """Call ``name`` on ``env``: handled by a wrapper of this project, else forwarded to the wrapped env
    (its observation transformed on the way back by any ``gym.ObservationWrapper`` in between)."""
    if name not in ENV_CALLS:
        raise ValueError(f"{name!r} is not a forwarded env call ({', '.join(ENV_CALLS)})")
    if isinstance(env, ForwardsEnvCalls) or not isinstance(env, gym.Wrapper):
        return getattr(env, name)(*args)
    result = call_env(env.env, name, *args)
    if name in _OBSERVATION_CALLS and isinstance(env, gym.ObservationWrapper):
        result = (env.observation(result[0]), *result[1:])
    return result


class ForwardsEnvCalls:
    """Mixin for this project's wrappers: the env calls of :data:`ENV_CALLS`, forwarded, with returned
    observations passed through :meth:`received` (an observation wrapper's ``observation``, by default)."""

    env: gym.Env

    def snapshot(self) -> Any:
        return call_env(self.env, "snapshot")

    def restore(self, snapshot: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, info = call_env(self.env, "restore", snapshot)
        return self.received(obs), info

    def goto(self, url: str) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, info = call_env(self.env, "goto", url)
        return self.received(obs), info

    def end_episode(self, answer: str = "") -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = call_env(self.env, "end_episode", answer)
        return self.received(obs), reward, terminated, truncated, info

    def evaluate_now(self, answer: str) -> dict[str, Any]:
        return call_env(self.env, "evaluate_now", answer)

    def received(self, obs: dict[str, Any]) -> dict[str, Any]:
        """The observation this wrapper passes up for an ``obs`` that came from below."""
        if isinstance(self, gym.ObservationWrapper):
            return self.observation(obs)
        return obs
