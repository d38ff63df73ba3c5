"""WebArena and MiniWoB++ tasks as Gymnasium environments (see docs/design.md).

``import webarena_gym`` registers ``webarena/<task_id>`` (the 812 real tasks), ``webarena-lite/<task_id>`` (the 165
WebArena-Lite tasks), ``webarena/local.<task_id>`` (the embedded suite) and ``miniwob/<task>`` (MiniWoB++);
``envs.make(env_id, **kwargs)`` is ``gym.make`` after registration.
"""

import os

# litellm (used lazily by the evaluator and the policies) otherwise fetches its price list at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import sys  # noqa: E402

from .registration import list_env_ids, make, register_all  # noqa: E402

register_all()


def shutdown() -> None:
    """Close what this process keeps for later environments (idle browsers, idle site servers); the
    Playwright driver stops with the last browser. Entry points call it when they finish, so a clean
    end does not depend on the order of exit hooks (litellm's fails while a driver still runs)."""
    for module, pool in (("webarena_gym.envs.local.launcher", "POOL"), ("webarena_gym.envs.browser", "BROWSERS")):
        loaded = sys.modules.get(module)
        if loaded is not None:
            getattr(loaded, pool).shutdown()


__all__ = ["list_env_ids", "make", "register_all", "shutdown"]
