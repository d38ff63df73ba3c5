"""The Set-of-Marks observation: the page screenshot with element ids drawn on it, together with the
pruned accessibility-tree text that shows the same ids (docs/methods/plan_mcts.md).

Multimodal methods (Plan-MCTS, and any other that reads screenshots) look at the image to find an
element and name it by the number drawn on it; the text gives roles, names and states the image
does not. Both come from one observation so they can never disagree on an id.

* ``obs["text"]``: the dialog lines, then the AgentOccam-aligned page (every pass of
  :class:`~wrappers.observations.agentoccam.ObsConfig`; the paper prunes its tree that way). The whole
  page is shown, so content below the fold can be read.
* ``obs["som_screenshot"]``: the screenshot (an RGB array) with a box and a numbered tag on every
  element whose id the text shows and that lies in the viewport (BrowserGym's ``overlay_som``);
  ``obs["som_ids"]`` lists them. Every drawn id is usable in an action and every usable id in view
  is drawn.
* ``obs["text_tree"]``: the processed tree; its ``ids`` are the ids an action may use.

With ``visible_ids_only`` (the default) an element outside the viewport keeps its line in the text but
not its id, so actions can only name elements currently visible in the marked screenshot, the
paper's rule ("interaction actions are only valid if they reference specific element IDs currently
visible in the SoM"); ``scroll`` brings the rest into view. Ids folded into another element's line (a
dropdown's options, links inside a table cell) follow that line: a closed dropdown's options are never
in view, yet choosing one is how a dropdown is used. ``visible_ids_only=False`` keeps every id usable
(Playwright scrolls to the element itself).

Needs the env in ``obs_mode="full"`` (screenshot and element geometry); in ``"axtree"`` mode there is
nothing to draw on, every id stays usable and a warning says so once.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any

import gymnasium as gym
import numpy as np
from browsergym.core.spaces import Anything, Unicode
from browsergym.utils.obs import overlay_som

from webarena_gym.llm.messages import array_digest
from webarena_gym.wrappers.forwarding import ForwardsEnvCalls
from webarena_gym.wrappers.observations import dialog_lines
from webarena_gym.wrappers.observations.agentoccam import ObsConfig, TextTree, run_passes

MIN_MARK_AREA = 20  # px²; BrowserGym's overlay skips smaller boxes (with a log line each), so do we, silently
DRAWN_MEMO_SIZE = 4  # marked screenshots kept: a restore shows a page seen before, drawing it costs ~50 ms


class SetOfMarksObservation(ForwardsEnvCalls, gym.ObservationWrapper):
    """Adds ``text``, ``text_tree``, ``som_screenshot`` and ``som_ids`` (see the module docstring).

    Args:
        env: a BrowserGym-style env in ``obs_mode="full"``.
        config: the alignment passes of the text (:class:`ObsConfig`).
        visible_ids_only: only elements in the viewport keep their id (the paper's rule).

    Example::

        env = SetOfMarksObservation(envs.make("webarena/local.0", obs_mode="full"))
        obs, info = env.reset(seed=0)
        obs["som_screenshot"]                  # HxWx3 uint8, ids drawn on the page
        print(obs["text"])                     # the aligned page; ids of the marked elements
    """

    def __init__(self, env: gym.Env, config: ObsConfig | None = None, visible_ids_only: bool = True) -> None:
        super().__init__(env)
        self.config = config or ObsConfig()
        self.visible_ids_only = visible_ids_only
        self._warned = False
        self._drawn: OrderedDict[tuple, np.ndarray] = OrderedDict()
        space = env.observation_space
        if isinstance(space, gym.spaces.Dict):
            extra = {"text": Unicode(), "text_tree": Anything(), "som_screenshot": Anything(), "som_ids": Anything()}
            self.observation_space = gym.spaces.Dict({**space.spaces, **extra})

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        props: dict[str, dict[str, Any]] = observation.get("extra_element_properties") or {}
        shot: Any = observation.get("screenshot")  # an image array under obs_mode="full"
        drawable = isinstance(shot, np.ndarray) and shot.ndim == 3 and shot.shape[0] > 1 and bool(props)
        if not drawable and not self._warned:
            warnings.warn(
                "no screenshot or element geometry in the observation (obs_mode='full' is needed): "
                "nothing is marked and every id of the text stays usable",
                stacklevel=2,
            )
            self._warned = True
        in_view = _in_viewport(props, shot.shape[:2]) if drawable else set()
        state = run_passes(observation.get("axtree_object") or {}, self.config)
        if drawable and self.visible_ids_only:
            for node in state.root.walk():
                if node.bid is not None and node.bid not in in_view:
                    node.hide_id = True
        tree = TextTree(state, max_lines=self.config.max_lines)
        marks = sorted(in_view & tree.ids, key=_id_order)
        image = self._marked(shot, {b: props[b] for b in marks}) if marks else shot
        return {
            **observation,
            "text": dialog_lines(observation) + tree.render(ids=True),
            "text_tree": tree,
            "som_screenshot": image,
            "som_ids": marks,
        }

    def _marked(self, shot: np.ndarray, props: dict[str, dict[str, Any]]) -> np.ndarray:
        """The screenshot with ``props``' boxes and ids drawn (read-only: a kept drawing is shared)."""
        key = (array_digest(shot), tuple((bid, tuple(p["bbox"])) for bid, p in props.items()))
        image = self._drawn.get(key)
        if image is None:
            image = overlay_som(shot, {bid: {**p, "set_of_marks": True} for bid, p in props.items()})
            image.flags.writeable = False
            self._drawn[key] = image
            if len(self._drawn) > DRAWN_MEMO_SIZE:
                self._drawn.popitem(last=False)
        self._drawn.move_to_end(key)
        return image


def _in_viewport(props: dict[str, dict[str, Any]], size: tuple[int, int]) -> set[str]:
    """Ids of elements at least partly visible in the viewport with a box big enough to mark."""
    height, width = size
    seen = set()
    for bid, p in props.items():
        box = p.get("bbox")
        if not box or not (p.get("visibility") or 0) > 0:
            continue
        x, y, w, h = box
        if w * h >= MIN_MARK_AREA and x < width and y < height and x + w > 0 and y + h > 0:
            seen.add(str(bid))
    return seen


def _id_order(bid: str) -> tuple[int, int | str]:
    return (0, int(bid)) if bid.isdigit() else (1, bid)
