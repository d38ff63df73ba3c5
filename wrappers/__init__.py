"""Observation/action alignment (AgentOccam), presets for the ablation rows, numeric RL spaces.

See docs/design.md (section wrappers) for the contract.
"""

from wrappers.actions.agentoccam import ActionConfig, AgentOccamActions
from wrappers.actions.grammar import InvalidActionError, parse_action, parse_command
from wrappers.numeric import NumericWebArena
from wrappers.observations.agentoccam import AgentOccamObservation, ObsConfig
from wrappers.observations.set_of_marks import SetOfMarksObservation
from wrappers.observations.webarena_text import WebArenaTextObservation
from wrappers.presets import PRESETS, Preset, make_env

__all__ = [
    "PRESETS",
    "ActionConfig",
    "AgentOccamActions",
    "AgentOccamObservation",
    "InvalidActionError",
    "NumericWebArena",
    "ObsConfig",
    "Preset",
    "SetOfMarksObservation",
    "WebArenaTextObservation",
    "make_env",
    "parse_action",
    "parse_command",
]
