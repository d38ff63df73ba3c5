"""Fixed-size numeric spaces over the env, so off-the-shelf RL (SB3 PPO/MaskablePPO, MlpPolicy) runs.

Observation: one ``float32`` Box in [0, 1] laid out as (offsets in :meth:`NumericWebArena.layout`):

- ``goal`` (``goal_dim``): the goal's words, hashed into buckets (crc32 of each lower-cased word), each
  bucket's count squashed to [0, 1);
- ``page`` (``text_dim``): the words of the page's accessibility tree (every node's name), hashed the same way;
- ``k`` element slots, one per element the agent can act on, in page order (first ``k``): nodes of an
  interactive role (:data:`ROLES`) and text spans (a generic node holding only text, as MiniWoB++'s
  clickable words are). Each
  slot has ``slot_dim`` values: a one-hot of its role (:data:`ROLES`, plus "other"), its name's words
  hashed into ``NAME_DIM`` buckets, then ``present`` (the slot holds an element), ``typeable`` (a text
  field), ``goal_overlap`` (the share of the name's words that occur in the goal), ``goal_quoted``
  (the name equals a text the goal quotes, e.g. ``"Submit"``) and the element's state as the tree gives
  it: ``checked`` (0.5 when mixed), ``selected``, ``expanded`` and ``focused``. Without the state a click
  that ticks a box leaves the observation as it was, and a policy without memory cannot tell a
  multi-step task's next step.

The two goal features are what let a small network tie the instruction to an element ("Click on the
'Submit' button" -> the slot whose name is "Submit") without learning words: for a click task the
policy's logit for a slot can read that slot's own ``goal_overlap``.

Action: ``Discrete(2k + 1)``: ``i < k`` clicks slot ``i``, ``k <= i < 2k`` fills slot ``i - k`` with
``type_text``, ``2k`` answers ``answer`` (``send_msg_to_user``). Each maps onto one BrowserGym action of the
env itself (the wrapper reads the raw accessibility tree, so no text alignment runs on the way), and the
env, its evaluator and its URL guard are the ones LLM policies use. :meth:`NumericWebArena.action_masks` (what
sb3-contrib's MaskablePPO reads) and ``info["action_mask"]`` mark the actions that do something: clicks
on filled slots, typing into text fields, and ``stop`` unless ``allow_stop=False``. An action on an empty
slot takes no env step and returns the same observation with ``info["action_error"]``.

The step limit is Gymnasium's :class:`~gymnasium.wrappers.TimeLimit` around this wrapper (it counts every
numeric step, empty-slot ones included); :func:`make_numeric_env` builds the whole chain::

    env = make_numeric_env("miniwob/click-button")      # TimeLimit(NumericWebArena(env))
    vector, info = env.reset(seed=0)
    vector, reward, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Callable
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from webarena_gym.envs.action_set import BrowserActionSpace

ROLES = (
    "link", "button", "textbox", "searchbox", "combobox", "option", "checkbox", "radio",
    "menuitem", "tab", "spinbutton", "switch",
)  # fmt: skip
TYPEABLE = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
TEXT_SPAN = "generic"  # a generic node whose children are all text: one slot, named by its text
_ROLE_INDEX = {role: i for i, role in enumerate(ROLES)}
NAME_DIM = 16
STATES = ("checked", "selected", "expanded", "focused")  # AX-tree properties a slot carries
SLOT_FLAGS = ("present", "typeable", "goal_overlap", "goal_quoted", *STATES)
SLOT_DIM = len(ROLES) + 1 + NAME_DIM + len(SLOT_FLAGS)  # one slot's values (role one-hot, name, flags)
_STATE_VALUES = {"true": 1.0, "mixed": 0.5}  # a tristate's values; any other (false, undefined) is 0
_WORD = re.compile(r"\w+")
_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'|“([^”]+)”")

Element = tuple[str, str, str]  # (id, role, name)


class NumericWebArena(gym.Wrapper):
    """Box observations and Discrete actions over an env of this project (BrowserGym action strings).

    Args:
        env: ``envs.make(...)`` (any Gymnasium wrappers around it that keep its action strings).
        k: element slots (the action space is ``Discrete(2k + 1)``).
        goal_dim, text_dim: hash buckets of the goal's and the page's words.
        type_text: what a type action enters.
        answer: what ``stop`` answers.
        allow_stop: whether the mask lets the agent stop (MiniWoB++ tasks end by themselves).

    Example::

        env = NumericWebArena(envs.make("miniwob/click-test", obs_mode="axtree"))
        vector, info = env.reset(seed=0)     # info["action_mask"]: what can be done now
    """

    def __init__(
        self,
        env: gym.Env,
        k: int = 16,
        goal_dim: int = 64,
        text_dim: int = 128,
        type_text: str = "test",
        answer: str = "",
        allow_stop: bool = True,
    ) -> None:
        super().__init__(env)
        if not isinstance(env.action_space, BrowserActionSpace):
            raise TypeError("NumericWebArena wraps an env of this project that takes BrowserGym action strings")
        self.k, self.goal_dim, self.text_dim = k, goal_dim, text_dim
        self.type_text, self.answer, self.allow_stop = type_text, answer, allow_stop
        self.slot_dim = SLOT_DIM
        self._size = goal_dim + text_dim + k * self.slot_dim
        self.observation_space = gym.spaces.Box(0.0, 1.0, (self._size,), np.float32)
        self.action_space = gym.spaces.Discrete(2 * k + 1)
        self._obs: dict[str, Any] = {}
        self._goal = ""
        self._elements: list[Element] = []

    def layout(self) -> dict[str, Any]:
        """Where each part of the observation vector starts, and the order of a slot's values."""
        slot_fields = [f"role:{r}" for r in (*ROLES, "other")] + [f"name:{i}" for i in range(NAME_DIM)]
        return {
            "goal": (0, self.goal_dim),
            "page": (self.goal_dim, self.text_dim),
            "slots": (self.goal_dim + self.text_dim, self.k, self.slot_dim),
            "slot_fields": [*slot_fields, *SLOT_FLAGS],
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._goal = str(info.get("intent") or obs.get("goal") or "")
        vector = self._encode(obs)
        info["action_mask"] = self.action_masks()
        return vector, info

    def step(self, action: int) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        command = self.command(int(action))
        if command is None:
            info: dict[str, Any] = {"action_error": f"slot {int(action) % self.k} is empty", "command": None}
            info["action_mask"] = self.action_masks()
            return self._encode(self._obs), 0.0, False, False, info
        obs, reward, terminated, truncated, info = self.env.step(command)
        info["command"] = command
        vector = self._encode(obs)
        info["action_mask"] = self.action_masks()
        return vector, float(reward), terminated, truncated, info

    def command(self, action: int) -> str | None:
        """The BrowserGym action for a discrete action, or None for an empty slot."""
        if not 0 <= action <= 2 * self.k:
            raise ValueError(f"action {action} is outside Discrete({2 * self.k + 1})")
        if action == 2 * self.k:
            return f"send_msg_to_user({self.answer!r})"
        slot = action % self.k
        if slot >= len(self._elements):
            return None
        bid = self._elements[slot][0]
        return f"click({bid!r})" if action < self.k else f"fill({bid!r}, {self.type_text!r})"

    def action_masks(self) -> np.ndarray:
        """True for the actions that do something now (sb3-contrib's MaskablePPO calls this)."""
        mask = np.zeros(2 * self.k + 1, dtype=bool)
        for slot, (_, role, _) in enumerate(self._elements):
            mask[slot] = True
            mask[self.k + slot] = role in TYPEABLE
        mask[2 * self.k] = self.allow_stop or not mask.any()  # never an all-false mask
        return mask

    def _encode(self, obs: dict[str, Any]) -> np.ndarray:
        self._obs = obs
        self._elements = interactive_elements(obs, self.k)
        vector = np.zeros(self._size, np.float32)
        vector[: self.goal_dim] = hashed_words(self._goal, self.goal_dim)
        start = self.goal_dim + self.text_dim
        vector[self.goal_dim : start] = hashed_words(page_text(obs), self.text_dim)
        goal_words = set(words(self._goal))
        quoted = quoted_texts(self._goal)
        states = element_states(obs, {bid for bid, _, _ in self._elements})
        for slot, (bid, role, name) in enumerate(self._elements):
            base = start + slot * self.slot_dim
            vector[base + _ROLE_INDEX.get(role, len(ROLES))] = 1.0
            names = base + len(ROLES) + 1
            vector[names : names + NAME_DIM] = hashed_words(name, NAME_DIM)
            flags = names + NAME_DIM
            name_words = words(name)
            vector[flags] = 1.0
            vector[flags + 1] = float(role in TYPEABLE)
            if name_words:
                vector[flags + 2] = sum(w in goal_words for w in name_words) / len(name_words)
            key = " ".join(name_words)
            vector[flags + 3] = float(bool(key) and key in quoted)
            vector[flags + 4 : flags + 4 + len(STATES)] = states.get(bid, (0.0,) * len(STATES))
        return vector


def make_numeric_env(
    env_id: str,
    *,
    max_episode_steps: int | None = None,
    k: int = 16,
    keep_browser: bool = False,
    fast: bool = False,
    numeric: dict[str, Any] | None = None,
    **env_kwargs: Any,
) -> gym.Env:
    """``TimeLimit(NumericWebArena(envs.make(env_id)))``, ready for RL libraries and vector envs.

    ``max_episode_steps`` defaults to the task's own budget (MiniWoB++: BrowserGym's 10; WebArena: 30);
    the env gets the same limit, so a WebArena episode that uses every step on the page is still scored.
    ``keep_browser=False`` makes ``close()`` stop the env's Chromium (a vector env's worker process
    exits without the exit handlers that would stop a parked one). ``numeric``: further
    :class:`NumericWebArena` options (``type_text``, ``answer``, ``allow_stop``, ``goal_dim``, ``text_dim``).
    The env reads only the accessibility tree (``obs_mode="axtree"``) unless ``env_kwargs`` say otherwise.
    ``fast=True`` is for RL only: clicks and fills skip Playwright's actionability waits (the env's
    ``force_actions``), a reset restarts the task on the last episode's tab (the env's ``fast_reset``;
    MiniWoB++: the page's own seeded episode start, the same problem as a fresh page), two things an LLM
    agent relies on and an RL policy does not need, and a step that navigated nothing is read in one page
    evaluation (the env's ``fast_steps``; the same observation). Each can be set on its own through
    ``env_kwargs``.
    """
    from webarena_gym import envs
    from webarena_gym.envs.registration import default_max_steps

    limit = max_episode_steps or default_max_steps(env_id)
    env_kwargs.setdefault("obs_mode", "axtree")
    env_kwargs.setdefault("force_actions", fast)
    env_kwargs.setdefault("fast_reset", fast)
    env_kwargs.setdefault("fast_steps", fast)
    env = envs.make(env_id, max_episode_steps=limit, keep_browser=keep_browser, **env_kwargs)
    return gym.wrappers.TimeLimit(NumericWebArena(env, k=k, **(numeric or {})), max_episode_steps=limit)


def _seeded_numeric_env(env_id: str, start: int, stride: int, options: dict[str, Any]) -> gym.Env:
    from webarena_gym.wrappers.seeds import EpisodeSeeds

    return EpisodeSeeds(make_numeric_env(env_id, **options), start=start, stride=stride)


def numeric_env_fn(env_id: str, *, seed_start: int = 0, seed_stride: int = 1, **options: Any) -> Callable[[], gym.Env]:
    """A picklable factory of one numeric env whose resets without a seed use ``seed_start``,
    ``seed_start + seed_stride``, ... (:class:`wrappers.seeds.EpisodeSeeds`); ``options`` go to
    :func:`make_numeric_env`."""
    return functools.partial(_seeded_numeric_env, env_id, seed_start, seed_stride, options)


def numeric_env_fns(env_ids: list[str], n_envs: int | None = None, **options: Any) -> list[Callable[[], gym.Env]]:
    """Factories of ``n_envs`` numeric envs (default: one per id), for any vector env.

    Sub-env ``i`` runs ``env_ids[i % len(env_ids)]`` and trains on seeds ``i, i + n_envs, ...``;
    ``options`` go to :func:`make_numeric_env`. Each sub-env owns its browser and stops it on
    ``close()``. Example::

        fns = numeric_env_fns(["miniwob/click-test", "miniwob/click-button"])
        vec = gymnasium.vector.AsyncVectorEnv(fns, context="forkserver")   # or SyncVectorEnv(fns)
        vec = stable_baselines3.common.vec_env.SubprocVecEnv(fns, start_method="forkserver")

    Worker processes are best started by ``forkserver`` (or ``spawn``): a process forked after it drove a
    browser would inherit its Playwright connection.
    """
    if not env_ids:
        raise ValueError("numeric_env_fns needs at least one env id")
    n = n_envs or len(env_ids)
    return [numeric_env_fn(env_ids[i % len(env_ids)], seed_start=i, seed_stride=n, **options) for i in range(n)]


def slot_flags(vector: np.ndarray, k: int) -> np.ndarray:
    """The flags of each of the ``k`` slots of an observation, a ``(k, len(SLOT_FLAGS))`` array whose
    columns are :data:`SLOT_FLAGS`. The slots end the vector, so a policy given only the vector and its mask
    (``k`` = ``(len(mask) - 1) // 2``) can read them."""
    slots = np.asarray(vector)[len(vector) - k * SLOT_DIM :].reshape(k, SLOT_DIM)
    return slots[:, -len(SLOT_FLAGS) :]


def element_states(obs: dict[str, Any], bids: set[str]) -> dict[str, tuple[float, ...]]:
    """The :data:`STATES` of the nodes with these ``bids``, as the accessibility tree gives them, by bid."""
    out = {}
    for node in (obs.get("axtree_object") or {}).get("nodes") or []:
        if (bid := str(node.get("browsergym_id") or "")) in bids:
            given = {p.get("name"): (p.get("value") or {}).get("value") for p in node.get("properties") or ()}
            out[bid] = tuple(_STATE_VALUES.get(str(given.get(s)).lower(), 0.0) for s in STATES)
    return out


def interactive_elements(obs: dict[str, Any], k: int) -> list[Element]:
    """(id, role, name) of the first ``k`` elements an agent can act on, in page order: nodes of an
    interactive role, and text spans (role ``generic``, named by their text)."""
    nodes = (obs.get("axtree_object") or {}).get("nodes") or []
    by_id = {n.get("nodeId"): n for n in nodes}
    found = []
    for node in _document_order(nodes):
        bid = node.get("browsergym_id")
        if not bid or node.get("ignored"):
            continue
        role = _field(node, "role")
        if role in _ROLE_INDEX:
            found.append((str(bid), role, str(_field(node, "name") or "")))
        elif role == TEXT_SPAN and (text := _span_text(node, by_id)):
            found.append((str(bid), TEXT_SPAN, text))
        if len(found) == k:
            break
    return found


def page_text(obs: dict[str, Any]) -> str:
    """Every named node's name, in no particular order (a bag of words needs none)."""
    nodes = (obs.get("axtree_object") or {}).get("nodes") or []
    return " ".join(str(_field(n, "name") or "") for n in nodes if _field(n, "role") != "InlineTextBox")


def _span_text(node: dict[str, Any], by_id: dict[Any, dict[str, Any]]) -> str:
    """The text of a node whose children are all StaticText, else ""."""
    children = [by_id[c] for c in node.get("childIds") or () if c in by_id]
    if not children or any(_field(c, "role") != "StaticText" for c in children):
        return ""
    return " ".join(str(_field(c, "name") or "") for c in children).strip()


def _field(node: dict[str, Any], key: str) -> Any:
    wrapped = node.get(key)
    return wrapped.get("value") if isinstance(wrapped, dict) else None


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


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, underscore)."""
    return _WORD.findall(text.lower())


def quoted_texts(goal: str) -> set[str]:
    """The texts a goal quotes, normalised to their words (``Click "Submit now"`` -> ``{"submit now"}``)."""
    return {" ".join(words(next(g for g in m.groups() if g is not None))) for m in _QUOTED.finditer(goal)}


def hashed_words(text: str, dim: int) -> np.ndarray:
    """Bag of words hashed into ``dim`` buckets (stable crc32), squashed to [0, 1)."""
    counts = np.zeros(dim, np.float32)
    for word in words(text):
        counts[zlib.crc32(word.encode()) % dim] += 1.0
    return 1.0 - 1.0 / (1.0 + np.log1p(counts))
