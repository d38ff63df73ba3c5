"""WebArena's own accessibility-tree text, for the rows of the ablation ladder before AgentOccam's alignment
(and for ReAct and CoAct, whose WebArena agent read it).

WebArena's agent read one line per node, ``[id] role 'name' prop: value ...``, indented by a tab per level,
after its filters: unnamed layout nodes without properties (generic, paragraph, list, listitem, ...) are
left out with their children moved up, a few properties are never printed (focusable, editable, ...), and
a ``StaticText`` whose text one of the three lines before it already shows (a link's own label, say) is
dropped. :func:`~wrappers.observations.axtree.build_tree` applies the node and property filters (and
drops the ``InlineTextBox`` / ``LineBreak`` nodes today's Chromium adds, which the Chromium WebArena ran
did not report); this module adds the viewport cut, the line format and the repeated-text rule.

With ``viewport_only`` an element stays when at least :data:`IN_VIEWPORT_RATIO` of its box lies in the
viewport (WebArena's rule; BrowserGym's ``visibility`` is that ratio); a left-out element's children are
judged on their own, and a text node, which has no box of its own here, goes with its element. Text
nodes carry no id (BrowserGym ids are element ids), so their lines start with the role.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
from browsergym.core.spaces import Anything, Unicode

from webarena_gym.wrappers.forwarding import ForwardsEnvCalls
from webarena_gym.wrappers.observations import dialog_lines
from webarena_gym.wrappers.observations.axtree import Node, build_tree

IN_VIEWPORT_RATIO = 0.6  # WebArena keeps an element when this share of its box is in the viewport
REPEAT_WINDOW = 3  # a StaticText is dropped when one of this many lines before it contains its text


def webarena_text(
    axtree_object: dict[str, Any], props: dict[str, Any] | None = None, viewport_only: bool = False
) -> str:
    """The page as WebArena's agent read it (module docstring); ``props`` are BrowserGym's
    ``extra_element_properties``, needed for ``viewport_only``."""
    if not (axtree_object or {}).get("nodes"):
        return ""
    if viewport_only:
        axtree_object = in_viewport(axtree_object, props or {})
    return render(build_tree(axtree_object))


def render(root: Node) -> str:
    lines: list[str] = []
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if node.role == "StaticText":
            text = node.name.strip()
            if not text or any(text in line for line in lines[-REPEAT_WINDOW:]):
                continue
        lines.append("\t" * depth + line(node))
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return "\n".join(lines)


def line(node: Node) -> str:
    """``[id] role 'name' prop: value`` (no id for nodes without one: text, the page itself)."""
    head = f"[{node.bid}] {node.role}" if node.bid is not None else node.role
    text = f"{head} {node.name.strip()!r}"
    if node.props:
        text += " " + " ".join(f"{k}: {v}" for k, v in node.props.items())
    return text


def in_viewport(axtree_object: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
    """A copy of the CDP tree without the elements outside the viewport (their children moved up in
    their place, each judged on its own); nodes without an element id follow their nearest element."""
    nodes = [n for n in axtree_object.get("nodes") or () if isinstance(n, dict)]
    if not nodes:
        return {"nodes": []}
    by_id = {n.get("nodeId"): n for n in nodes}
    root = nodes[0]
    kept: dict[Any, bool] = {}
    stack: list[tuple[dict[str, Any], bool]] = [(root, True)]
    while stack:
        node, inherited = stack.pop()
        key = node.get("nodeId")
        if key in kept:
            continue
        bid = node.get("browsergym_id")
        shown = inherited if bid is None or bid not in props else _in_view(props[bid])
        kept[key] = shown or node is root
        stack.extend((by_id[c], shown) for c in node.get("childIds") or () if c in by_id and c not in kept)
    # The children a kept node shows: its kept children, and in a left-out child's place that child's own.
    shown_children: dict[Any, list[Any]] = {}
    order: list[Any] = []
    visit = [root.get("nodeId")]
    seen: set[Any] = set()
    while visit:  # pre-order, then processed in reverse: every child before its parent
        key = visit.pop()
        if key in seen or key not in kept:
            continue
        seen.add(key)
        order.append(key)
        visit.extend(c for c in by_id[key].get("childIds") or () if c in by_id)
    for key in reversed(order):
        children: list[Any] = []
        for child in by_id[key].get("childIds") or ():
            if child not in shown_children:
                continue
            children += [child] if kept[child] else shown_children[child]
        shown_children[key] = children
    return {"nodes": [{**by_id[key], "childIds": shown_children[key]} for key in order if kept[key]]}


def _in_view(element: Any) -> bool:
    if not isinstance(element, dict):
        return True
    box = element.get("bbox")
    if box is not None and len(box) == 4 and (not box[2] or not box[3]):
        return False  # an element with no area is not on the screen
    return float(element.get("visibility") or 0.0) >= IN_VIEWPORT_RATIO


class WebArenaTextObservation(ForwardsEnvCalls, gym.ObservationWrapper):
    """Adds ``obs["text"]`` (WebArena's tree text, of the viewport or the whole page) and
    ``obs["text_tree"] = None`` (the action wrapper reads the ids off the lines).

    Viewport filtering needs BrowserGym's element visibility (``extra_element_properties``); an env
    in ``obs_mode="axtree"`` has none, and then the whole page is shown (with a warning).

    Args:
        env: a BrowserGym-style env in ``obs_mode="dom"`` or ``"full"``.
        viewport_only: keep only the elements inside the viewport (WebArena's agent saw that).
        max_lines: keep the first lines only (AgentOccam's rows before its alignment used 500); None keeps all.

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
        text = webarena_text(observation.get("axtree_object") or {}, props, self.viewport_only and bool(props))
        if self.max_lines is not None:
            text = "\n".join(text.splitlines()[: self.max_lines])
        return dict(observation, text=dialog_lines(observation) + text, text_tree=None)
