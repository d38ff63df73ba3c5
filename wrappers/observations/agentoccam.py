"""AgentOccam's observation alignment as a Gymnasium wrapper (docs/methods/agentoccam.md).

``AgentOccamObservation`` adds ``obs["text"]`` (the aligned full page with ids, never cut to the
viewport) and ``obs["text_tree"]`` (a :class:`TextTree`: the processed tree, renderable with or
without ids, and the pivotal-node sub-view the policy replays in history). Each pass of the
pipeline is switchable through :class:`ObsConfig`, so the ablation rows can be re-run.

Where the reference implementation's quirks concern observations, and how they are decided:
* both members of a duplicate pair hidden -> keep the first (``wrappers.observations.passes``);
* option ids surviving in the id-free history view -> dropped there (``wrappers.observations.passes``);
* id validation as a substring of the observation text -> ``TextTree.ids``, an exact set;
* its thresholds (1000 lines, 30 pivotal nodes) -> ``ObsConfig.max_lines`` and
  ``TextTree.pivotal(max_nodes=...)``; the 200-word history rule belongs to the policy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

import gymnasium as gym
from browsergym.core.spaces import Anything, Unicode

from webarena_gym.wrappers.forwarding import ForwardsEnvCalls
from webarena_gym.wrappers.observations import dialog_lines
from webarena_gym.wrappers.observations.axtree import Node, build_tree
from webarena_gym.wrappers.observations.passes import PIPELINE, PassState

PIVOTAL_MAX_NODES = 30  # AgentOccam drops a highlight with this many nodes or more


@dataclass(frozen=True)
class ObsConfig:
    """One switch per pass of AgentOccam's pipeline, plus the rendering's line cap.

    Steps in order: ``clean_names`` 1, ``drop_noise_properties`` 2, ``remove_redundant_text`` 3 and
    8, ``remove_images`` 4 and 6, ``remove_duplicates`` 5, ``lift_text`` 7, ``rename_roles`` 9,
    ``fold_options`` 10, ``description_lists`` 11, ``tables_to_markdown`` 12, ``merge_headings``
    13; ``hide_static_ids`` hides the ids of non-interactive roles (``axtree.STATIC_ROLES``; off: every
    element that has an id shows it). ``ObsConfig.none()`` is the normalised source tree with every
    pass off.
    """

    clean_names: bool = True
    drop_noise_properties: bool = True
    remove_redundant_text: bool = True
    remove_images: bool = True
    remove_duplicates: bool = True
    lift_text: bool = True
    rename_roles: bool = True
    fold_options: bool = True
    description_lists: bool = True
    tables_to_markdown: bool = True
    merge_headings: bool = True
    hide_static_ids: bool = True
    max_lines: int = 1000

    @classmethod
    def none(cls, **overrides: Any) -> ObsConfig:
        """Every pass off (the normalised source tree), with ``overrides`` switched back on."""
        off = {f.name: False for f in fields(cls) if f.type in (bool, "bool")}
        return cls(**{**off, **overrides})


class TextTree:
    """A processed page: renderings with/without ids, shown ids, and pivotal-node extraction.

    ``ids`` are exactly the ids the id rendering shows (the line cap included), so an action
    parser can accept an id iff the model could see it (exact match, not the reference's
    substring test on the text, where id ``12`` matched ``[123]``). ``option_parent``
    maps a folded option's id to its dropdown's id (select it there): every ``option``, and menu
    items folded into a combobox/listbox; items of a menu or menubar have no entry because they
    are clicked directly. ``duplicate_of`` maps an id hidden as an
    indistinguishable duplicate to the id that stayed visible, and ``duplicate_names`` counts the
    names of all leaves hidden that way.
    """

    def __init__(self, state: PassState, max_lines: int = 1000) -> None:
        self.root = state.root
        self.option_parent: dict[str, str] = dict(state.option_parent)
        self.duplicate_of: dict[str, str] = dict(state.duplicate_of)
        self.duplicate_names: Counter[str] = Counter(state.duplicate_names)
        self.max_lines = max_lines
        self._state = state
        self._order: list[tuple[Node, int]] = []
        self._parent: dict[Node, Node | None] = {}
        self._layout()
        shown: set[str] = set()
        for node, _ in self._order[: self.max_lines]:
            if state.shows_id(node):
                shown.add(node.bid)  # type: ignore[arg-type]
            if node.embedded:
                shown.update(node.embedded)
        self.ids: frozenset[str] = frozenset(shown)
        self._cache: dict[bool, str] = {}
        self._kids: dict[Node, list[Node]] | None = None  # built on the first pivotal() call
        self._by_id: dict[str, Node] | None = None

    def __repr__(self) -> str:
        return f"TextTree({len(self._order)} lines, {len(self.ids)} ids)"

    def _layout(self) -> None:
        """Visible nodes in display order; a hidden node's visible descendants move up to it."""
        order, parents = self._order, self._parent
        stack: list[tuple[Node, Node | None, int]] = [(self.root, None, 0)]
        while stack:
            n, p, d = stack.pop()
            if n.visible:
                order.append((n, d))
                parents[n] = p
                p, d = n, d + 1
            if n.children:
                stack.extend((c, p, d) for c in reversed(n.children))

    def _index(self) -> tuple[dict[Node, list[Node]], dict[str, Node]]:
        if self._kids is None or self._by_id is None:
            self._kids = {n: [] for n, _ in self._order}
            self._by_id = {}
            for n, _ in self._order:
                parent = self._parent[n]
                if parent is not None:
                    self._kids[parent].append(n)
                for bid in (n.bid, *n.embedded):
                    if bid is not None:
                        self._by_id.setdefault(bid, n)
        return self._kids, self._by_id

    def render(self, ids: bool = True) -> str:
        """The page, one line per visible node, TAB-indented; ids only when ``ids``."""
        if ids not in self._cache:
            self._cache[ids] = self._render(self._order, ids)
        return self._cache[ids]

    def _render(self, order: list[tuple[Node, int]], ids: bool) -> str:
        lines = [("\t" * d) + self._state.line(n, ids) for n, d in order[: self.max_lines]]
        if len(order) > self.max_lines:
            lines.append(f"[... {len(order) - self.max_lines} more lines not shown]")
        return "\n".join(lines)

    def node(self, bid: str) -> Node | None:
        """The visible node that shows ``bid`` (itself, or the line it is folded into)."""
        return self._index()[1].get(bid)

    def pivotal(self, ids: Iterable[str], max_nodes: int = PIVOTAL_MAX_NODES) -> str:
        """The pivotal nodes with their ancestors, descendants and named siblings, without ids.

        Unknown ids are ignored; no known id, or ``max_nodes`` or more nodes, gives ``""``.
        """
        kids, by_id = self._index()
        keep: set[Node] = set()
        for bid in ids:
            node = by_id.get(str(bid).strip())
            if node is None:
                continue
            stack = [node]
            while stack:
                n = stack.pop()
                keep.add(n)
                stack.extend(kids[n])
            parent = self._parent[node]
            for sib in kids[parent] if parent is not None else ():
                if sib.label(False):
                    keep.add(sib)
            while parent is not None:
                keep.add(parent)
                parent = self._parent[parent]
        if not keep or len(keep) >= max_nodes:
            return ""
        return self._render([(n, d) for n, d in self._order if n in keep], ids=False)


def run_passes(axtree_object: dict[str, Any], config: ObsConfig = ObsConfig()) -> PassState:
    """The enabled passes run on BrowserGym's ``axtree_object``, before the tree is laid out (a wrapper
    that hides more ids, like the Set-of-Marks one, edits this state before building its :class:`TextTree`)."""
    state = PassState(build_tree(axtree_object), hide_static_ids=config.hide_static_ids)
    for name, run in PIPELINE:
        if getattr(config, name):
            run(state)
    return state


def process_axtree(axtree_object: dict[str, Any], config: ObsConfig = ObsConfig()) -> TextTree:
    """Run the enabled passes on BrowserGym's ``axtree_object`` and return the processed tree."""
    return TextTree(run_passes(axtree_object, config), max_lines=config.max_lines)


class AgentOccamObservation(ForwardsEnvCalls, gym.ObservationWrapper):
    """Adds ``obs["text"]`` (aligned page with ids) and ``obs["text_tree"]`` (:class:`TextTree`).

    Args:
        env: a BrowserGym-style env (its observations carry ``axtree_object``).
        config: which alignment passes run (:class:`ObsConfig`; ``ObsConfig.none()`` turns all off).

    Example::

        env = AgentOccamObservation(envs.make("webarena/local.0"), ObsConfig(tables_to_markdown=False))
        obs, info = env.reset(seed=0)
        print(obs["text"])                     # the aligned full page, one element per line
    """

    def __init__(self, env: gym.Env, config: ObsConfig = ObsConfig()) -> None:
        super().__init__(env)
        self.config = config
        space = env.observation_space
        if isinstance(space, gym.spaces.Dict):
            self.observation_space = gym.spaces.Dict({**space.spaces, "text": Unicode(), "text_tree": Anything()})

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        tree = process_axtree(observation.get("axtree_object") or {}, self.config)
        return {**observation, "text": dialog_lines(observation) + tree.render(ids=True), "text_tree": tree}
