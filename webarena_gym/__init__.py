"""webarena-gym: WebArena tasks as Gymnasium environments, and the agents and studies built on them.

Everything the project installs lives under this one name; the repository's top-level folders (``envs/``,
``policies/``, ``wrappers/``, ``experiments/``, ``llm/``, ``benchmarks/``) are its subpackages, mapped
by the build (setup.py). Importing the package registers the environment ids, so after
``import webarena_gym`` a ``gym.make("webarena/local.9")`` works::

    import gymnasium as gym
    import webarena_gym

    env = gym.make("webarena/local.9")
"""

from webarena_gym.envs import list_env_ids, make, register_all, shutdown

__all__ = ["list_env_ids", "make", "register_all", "shutdown"]
