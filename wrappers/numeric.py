"""Fixed-size numeric spaces over the command wrapper, so off-the-shelf RL (SB3 PPO/DQN, MlpPolicy) runs.

Observation: a Box of ``text_dim`` hashed bag-of-words buckets of ``obs["text"]`` followed by ``k``
element slots (role one-hot, hashed name words, a present bit) for the first ``k`` interactive
elements the model can see, in page order. Action: Discrete(2k+1) -- click slot i, type
``type_text`` into slot i (with Enter), or ``stop [answer]``. Each maps onto one AgentOccam command,
so the env, its evaluator and its URL guard are the same ones LLM policies use.

An action on an empty slot takes no env step (like any invalid command) but counts towards
``max_steps``, the wrapper's own limit, so an agent cannot loop forever without touching the page.
"""

from __future__ import annotations

import zlib
from typing import Any

import gymnasium as gym
import numpy as np

from wrappers.actions.agentoccam import AgentOccamActions, page_ids

ROLES = (
    "link", "button", "textbox", "searchbox", "combobox", "option", "checkbox", "radio",
    "menuitem", "tab", "spinbutton", "switch",
)  # fmt: skip
_ROLE_INDEX = {role: i for i, role in enumerate(ROLES)}
NAME_DIM = 16


class NumericWebArena(gym.Wrapper):
    """Box observations and Discrete actions over an env that contains :class:`AgentOccamActions`."""

    def __init__(
        self,
        env: gym.Env,
        k: int = 16,
        text_dim: int = 256,
        type_text: str = "test",
        answer: str = "",
        max_steps: int = 30,
    ):
        super().__init__(env)
        if _find_actions(env) is None:
            raise TypeError("NumericWebArena needs an env wrapped in AgentOccamActions (see wrappers.presets)")
        self.k, self.text_dim, self.type_text, self.answer, self.max_steps = k, text_dim, type_text, answer, max_steps
        self.slot_dim = len(ROLES) + 1 + NAME_DIM + 1  # roles + "other", name words, present
        self.observation_space = gym.spaces.Box(0.0, 1.0, (text_dim + k * self.slot_dim,), np.float32)
        self.action_space = gym.spaces.Discrete(2 * k + 1)
        self._obs: dict[str, Any] = {}
        self._elements: list[tuple[str, str, str]] = []
        self._steps = 0

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._steps = 0
        return self._encode(obs), info

    def step(self, action: int):
        self._steps += 1
        command = self.command(int(action))
        if command is None:
            info = {"action_error": f"slot {int(action) % self.k} is empty", "command": None}
            return self._encode(self._obs), 0.0, False, self._steps >= self.max_steps, info
        obs, reward, terminated, truncated, info = self.env.step(command)
        info["command"] = command
        truncated = truncated or (self._steps >= self.max_steps and not terminated)
        return self._encode(obs), float(reward), terminated, truncated, info

    def command(self, action: int) -> str | None:
        """The AgentOccam command for a discrete action, or None for an empty slot."""
        if not 0 <= action <= 2 * self.k:
            raise ValueError(f"action {action} is outside Discrete({2 * self.k + 1})")
        if action == 2 * self.k:
            return f"stop [{self.answer}]"
        slot = action % self.k
        if slot >= len(self._elements):
            return None
        bid = self._elements[slot][0]
        return f"click [{bid}]" if action < self.k else f"type [{bid}] [{self.type_text}] [1]"

    def _encode(self, obs: dict[str, Any]) -> np.ndarray:
        self._obs = obs
        self._elements = interactive_elements(obs, self.k)
        vector = np.zeros(self.observation_space.shape, np.float32)
        vector[: self.text_dim] = _hashed_words(obs.get("text") or "", self.text_dim)
        for slot, (_, role, name) in enumerate(self._elements):
            base = self.text_dim + slot * self.slot_dim
            vector[base + _ROLE_INDEX.get(role, len(ROLES))] = 1.0
            names = base + len(ROLES) + 1
            vector[names : names + NAME_DIM] = _hashed_words(name, NAME_DIM)
            vector[base + self.slot_dim - 1] = 1.0
        return vector


def interactive_elements(obs: dict[str, Any], k: int) -> list[tuple[str, str, str]]:
    """(id, role, name) of the first ``k`` interactive elements the model may act on, in page order."""
    allowed = page_ids(obs)
    found = []
    for node in _document_order((obs.get("axtree_object") or {}).get("nodes") or []):
        bid = node.get("browsergym_id")
        role = (node.get("role") or {}).get("value")
        if bid and role in _ROLE_INDEX and str(bid) in allowed:
            found.append((str(bid), role, str((node.get("name") or {}).get("value") or "")))
            if len(found) == k:
                break
    return found


def _document_order(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Depth-first from the root: CDP lists the nodes in no reading order."""
    if not nodes:
        return []
    by_id = {n.get("nodeId"): n for n in nodes}
    ordered, stack, seen = [], [nodes[0]], set()
    while stack:
        node = stack.pop()
        if node.get("nodeId") in seen:
            continue
        seen.add(node.get("nodeId"))
        ordered.append(node)
        stack.extend(by_id[c] for c in reversed(node.get("childIds") or []) if c in by_id)
    return ordered


def _hashed_words(text: str, dim: int) -> np.ndarray:
    """Bag of words hashed into ``dim`` buckets (stable crc32), squashed to [0, 1)."""
    counts = np.zeros(dim, np.float32)
    for word in text.lower().split():
        counts[zlib.crc32(word.encode()) % dim] += 1.0
    return 1.0 - 1.0 / (1.0 + np.log1p(counts))


def _find_actions(env: gym.Env) -> AgentOccamActions | None:
    while isinstance(env, gym.Wrapper):
        if isinstance(env, AgentOccamActions):
            return env
        env = env.env
    return None
