"""Named observation/action spaces: one per row of AgentOccam's ablation ladder (docs/methods/agentoccam.md),
plus the simplified-HTML spaces of WebRL / WebArena-Lite that Plan-and-Act reads and writes.

A preset is (observation wrapper + its config, enabled commands). History and planning *behaviour*
belong to the policy; the presets only decide what the model sees and which commands it may use,
so "history" has the spaces of "simplified_obs" and "agentoccam" adds the planning commands.
``plan_and_act`` pairs the simplified-HTML observation (with ids, plus the id-free copy a planner reads)
with the WebRL action grammar; ``set_of_marks`` is Plan-MCTS's marked screenshot beside the aligned text.

Each row changes only what the paper's row changes: ``reduced_actions`` -> ``no_scroll`` drops
``scroll`` and shows the whole page instead of the viewport, in the same WebArena text format and
the same 500-line cap; ``no_scroll`` -> ``simplified_obs`` switches the alignment passes on (their
format, their 1000-line cap). "WebArena text" is WebArena's own tree text (``observations.webarena_text``);
AgentOccam's presets open the browser at its 1920x1080 (``webarena``, WebArena's agent, at the task's 1280x720).

``make_env(env_id, preset)`` builds the env, puts the observation wrapper on it and the action
wrapper outermost (so it validates ids against exactly what the model was shown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from webarena_gym.wrappers.actions.agentoccam import (
    AGENTOCCAM_COMMANDS,
    WEBARENA_COMMANDS,
    ActionConfig,
    AgentOccamActions,
)
from webarena_gym.wrappers.actions.webrl import WebRLActionConfig, WebRLActions
from webarena_gym.wrappers.actions.webrl_grammar import COMMANDS as WEBRL_COMMANDS
from webarena_gym.wrappers.observations.agentoccam import AgentOccamObservation, ObsConfig
from webarena_gym.wrappers.observations.html import HTMLConfig, SimplifiedHTMLObservation
from webarena_gym.wrappers.observations.set_of_marks import SetOfMarksObservation
from webarena_gym.wrappers.observations.webarena_text import WebArenaTextObservation

RAW_TREE_LINES = 500  # the rows before "Obs Opt." showed the raw tree's first 500 lines
# AgentOccam's code ran its browser at 1920x1080 (WebArena's agent, the "Vanilla" row, at 1280x720, the
# task default); the viewport decides what the viewport rows see. ``make_env(..., viewport=...)`` overrides it.
AGENTOCCAM_VIEWPORT = {"width": 1920, "height": 1080}
# Plan-MCTS's space (docs/methods/plan_mcts.md): a concise set of high-frequency primitives plus the answer;
# scroll reaches elements outside the marked viewport.
SET_OF_MARKS_COMMANDS = ("click", "type", "scroll", "goto", "stop")
_NAVIGATION = ("click", "type", "stop", "note", "go_back", "go_home")  # go_home: multi-site tasks only


@dataclass(frozen=True)
class Preset:
    """One ablation row's spaces. ``html`` set = the simplified-HTML observation with the WebRL actions;
    else ``obs_config`` None = WebArena's text observation, of the viewport (``viewport_only``) or of the
    whole page, cut to ``raw_lines`` lines (None: all), with the bracketed commands; ``set_of_marks`` =
    the marked screenshot beside the aligned text, whose ids are those of the viewport only."""

    name: str
    description: str
    actions: tuple[str, ...]
    obs_config: ObsConfig | None = None
    raw_lines: int | None = None
    viewport_only: bool = True
    html: HTMLConfig | None = None
    set_of_marks: bool = False
    viewport: dict[str, int] | None = None  # the browser's default viewport on WebArena tasks (None: the task's)

    @property
    def full_page(self) -> bool:
        """Whether the model sees the whole page (else the viewport only)."""
        return self.html is not None or self.obs_config is not None or not self.viewport_only

    @property
    def full_page_ids(self) -> bool:
        """Whether an action may name any element of the page (else only those in the viewport)."""
        return self.full_page and not self.set_of_marks

    @property
    def obs_mode(self) -> str:
        """The env observation the preset reads: the viewport presets need BrowserGym's element
        visibility and the HTML presets its DOM snapshot (``"dom"``), the Set-of-Marks one the screenshot
        too (``"full"``); the other full-page presets read only the AX tree (``"axtree"``), several times
        cheaper per step."""
        if self.set_of_marks:
            return "full"
        return "dom" if self.html is not None or not self.full_page else "axtree"

    def wrap(self, env: gym.Env) -> gym.Wrapper:
        if self.html is not None:
            return WebRLActions(SimplifiedHTMLObservation(env, self.html), WebRLActionConfig(self.actions))
        if self.obs_config is None:
            observed: gym.Env = WebArenaTextObservation(env, self.viewport_only, max_lines=self.raw_lines)
        elif self.set_of_marks:
            observed = SetOfMarksObservation(env, self.obs_config)
        else:
            observed = AgentOccamObservation(env, self.obs_config)
        return AgentOccamActions(observed, ActionConfig(self.actions))


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("webarena", "vanilla WebArena: original actions, viewport tree", WEBARENA_COMMANDS),
        Preset(
            "reduced_actions",
            "fewer actions (no hover/press/tabs/goto/go_forward); WebArena's tree text of the viewport, 500 lines",
            ("click", "type", "scroll", *_NAVIGATION[2:]),
            raw_lines=RAW_TREE_LINES,
            viewport=AGENTOCCAM_VIEWPORT,
        ),
        Preset(
            "no_scroll",
            "no scrolling: WebArena's tree text of the whole page, 500 lines",
            _NAVIGATION,
            raw_lines=RAW_TREE_LINES,
            viewport_only=False,
            viewport=AGENTOCCAM_VIEWPORT,
        ),
        Preset(
            "simplified_obs",
            "full page, aligned observation (every pass on)",
            _NAVIGATION,
            ObsConfig(),
            viewport=AGENTOCCAM_VIEWPORT,
        ),
        Preset(
            "history",
            "spaces of simplified_obs; the policy adds pivotal-node history",
            _NAVIGATION,
            ObsConfig(),
            viewport=AGENTOCCAM_VIEWPORT,
        ),
        Preset(
            "agentoccam",
            "aligned observation, reduced actions, branch/prune planning",
            AGENTOCCAM_COMMANDS,
            ObsConfig(),
            viewport=AGENTOCCAM_VIEWPORT,
        ),
        Preset(
            "plan_and_act",
            "simplified HTML, full page (with ids for the executor, id-free for the planner); WebRL actions",
            WEBRL_COMMANDS,
            html=HTMLConfig(),
        ),
        Preset(
            "set_of_marks",
            "marked screenshot + aligned text (viewport ids); click, type, scroll, goto, stop (Plan-MCTS)",
            SET_OF_MARKS_COMMANDS,
            ObsConfig(),
            set_of_marks=True,
        ),
    )
}


def get_preset(preset: str | Preset) -> Preset:
    if isinstance(preset, Preset):
        return preset
    if preset not in PRESETS:
        raise KeyError(f"unknown preset {preset!r}; known presets: {', '.join(PRESETS)}")
    return PRESETS[preset]


def paired_action_mapping(action_timeout_ms: int | None = None) -> Callable[[str], str]:
    """The env's own BrowserGym action set, accepting multi-actions so ``type ... [1]`` runs fill +
    Enter as one env step (one step of the budget, as in WebArena); the action wrapper sends at
    most one command's actions per step. ``action_timeout_ms``: the env option of that name."""
    from webarena_gym.envs.action_set import DEFAULT_ACTION_TIMEOUT_MS, default_action_set

    return default_action_set(action_timeout_ms or DEFAULT_ACTION_TIMEOUT_MS, multiaction=True).to_python_code


def make_env(env_id: str, preset: str | Preset = "agentoccam", **env_kwargs: Any) -> gym.Wrapper:
    """``envs.make(env_id, **env_kwargs)`` wrapped in the preset's observation and action wrappers.

    ``obs_mode`` defaults to what the preset reads (:attr:`Preset.obs_mode`); pass ``"full"`` to also get
    screenshots (and the DOM snapshot). ``viewport`` defaults to the preset's on WebArena tasks (MiniWoB++
    tasks keep their own size).
    """
    from webarena_gym import envs

    env_kwargs.setdefault("obs_mode", get_preset(preset).obs_mode)
    viewport = get_preset(preset).viewport
    if viewport is not None and not env_id.startswith("miniwob/"):
        env_kwargs.setdefault("viewport", dict(viewport))
    if "action_mapping" not in env_kwargs:
        env_kwargs["action_mapping"] = paired_action_mapping(env_kwargs.get("action_timeout_ms"))
    return get_preset(preset).wrap(envs.make(env_id, **env_kwargs))
