"""The vanilla WebArena text observation, for the ablation rows before AgentOccam's alignment.

BrowserGym's ``flatten_axtree_to_str`` of the raw tree, cut to the viewport as WebArena's agent saw
it (or the whole page, for the "no scrolling" row), in the same ``obs["text"]`` key the AgentOccam
observation uses so policies read one key.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
from browsergym.core.spaces import Anything, Unicode
from browsergym.utils.obs import flatten_axtree_to_str

from webarena_gym.wrappers.forwarding import ForwardsEnvCalls
from webarena_gym.wrappers.observations import dialog_lines


class WebArenaTextObservation(ForwardsEnvCalls, gym.ObservationWrapper):
    """Adds ``obs["text"]`` (flattened tree, viewport only) and ``obs["text_tree"] = None``.

    Viewport filtering needs BrowserGym's element visibility (``extra_element_properties``); an env
    in ``obs_mode="axtree"`` has none, and then the whole page is shown (with a warning).

    Args:
        env: a BrowserGym-style env in ``obs_mode="dom"`` or ``"full"``.
        viewport_only: keep only the elements inside the viewport (WebArena's agent saw that).
        max_lines: keep the first lines only (the "reduced actions" ablation row used 500); None keeps all.

    Example::

        env = WebArenaTextObservation(envs.make("webarena/local.0", obs_mode="dom"))
        obs, info = env.reset(seed=0)
        print(obs["text"])                     # "[12] link 'My Account'" ...
    """

    def __init__(self, env: gym.Env, viewport_only: bool = True, max_lines: int | None = None) -> None:
        super().__init__(env)
        self.viewport_only = viewport_only
        self.max_lines = max_lines
        self._warned = False
        space = env.observation_space
        if isinstance(space, gym.spaces.Dict):
            self.observation_space = gym.spaces.Dict({**space.spaces, "text": Unicode(), "text_tree": Anything()})

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        props = observation.get("extra_element_properties") or {}
        if self.viewport_only and not props and not self._warned:
            reason = (
                "obs_mode='axtree' extracts none"
                if getattr(self.env.unwrapped, "obs_mode", "full") == "axtree"
                else "the page reported none"
            )
            warnings.warn(f"no element visibility in the observation ({reason}): showing the whole page", stacklevel=2)
            self._warned = True
        tree = observation.get("axtree_object") or {}
        text = ""
        if tree.get("nodes"):  # an empty tree (e.g. a crashed page) has no root to flatten
            text = flatten_axtree_to_str(tree, extra_properties=props, filter_visible_only=self.viewport_only)
        if self.max_lines is not None:
            text = "\n".join(text.splitlines()[: self.max_lines])
        return dict(observation, text=dialog_lines(observation) + text, text_tree=None)
