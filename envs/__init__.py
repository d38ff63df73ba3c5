"""WebArena and MiniWoB++ tasks as Gymnasium environments (see docs/design.md).

``import envs`` registers ``webarena/<task_id>`` (the 812 real tasks), ``webarena/local.<task_id>``
(the embedded suite) and ``miniwob/<task>`` (MiniWoB++); ``envs.make(env_id, **kwargs)`` is ``gym.make``
after registration.
"""

import os

# litellm (used lazily by the evaluator and the policies) otherwise fetches its price list at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from .registration import list_env_ids, make, register_all  # noqa: E402

register_all()

__all__ = ["list_env_ids", "make", "register_all"]
