"""Observation/action alignment (AgentOccam), the simplified HTML and WebRL actions (Plan-and-Act), presets
for the ablation rows, numeric RL spaces.

See docs/design.md (section wrappers) for the contract.
"""

from webarena_gym.wrappers.actions.agentoccam import ActionConfig, AgentOccamActions
from webarena_gym.wrappers.actions.grammar import InvalidActionError, parse_action, parse_command
from webarena_gym.wrappers.actions.webrl import WebRLActionConfig, WebRLActions
from webarena_gym.wrappers.actions.webrl_grammar import WebRLAction, WebRLActionError, parse_webrl
from webarena_gym.wrappers.numeric import NumericWebArena
from webarena_gym.wrappers.observations.agentoccam import AgentOccamObservation, ObsConfig
from webarena_gym.wrappers.observations.html import HTMLConfig, HtmlPage, SimplifiedHTMLObservation, strip_ids
from webarena_gym.wrappers.observations.set_of_marks import SetOfMarksObservation
from webarena_gym.wrappers.observations.webarena_text import WebArenaTextObservation
from webarena_gym.wrappers.presets import PRESETS, Preset, make_env

__all__ = [
    "PRESETS",
    "ActionConfig",
    "HTMLConfig",
    "HtmlPage",
    "AgentOccamActions",
    "AgentOccamObservation",
    "InvalidActionError",
    "NumericWebArena",
    "ObsConfig",
    "Preset",
    "SimplifiedHTMLObservation",
    "SetOfMarksObservation",
    "WebArenaTextObservation",
    "WebRLAction",
    "WebRLActionConfig",
    "WebRLActionError",
    "WebRLActions",
    "make_env",
    "parse_action",
    "parse_command",
    "parse_webrl",
    "strip_ids",
]
