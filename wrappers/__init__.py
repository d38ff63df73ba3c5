"""Observation/action alignment (AgentOccam), presets for the ablation rows, numeric RL spaces.

See docs/design.md (section wrappers) for the contract.
"""

from wrappers.action import ActionConfig, AgentOccamActions
from wrappers.grammar import InvalidActionError, parse_action, parse_command
from wrappers.numeric import NumericWebArena
from wrappers.observation import AgentOccamObservation, ObsConfig
from wrappers.presets import PRESETS, Preset, make_env
from wrappers.webarena_text import WebArenaTextObservation

__all__ = [
    "PRESETS",
    "ActionConfig",
    "AgentOccamActions",
    "AgentOccamObservation",
    "InvalidActionError",
    "NumericWebArena",
    "ObsConfig",
    "Preset",
    "WebArenaTextObservation",
    "make_env",
    "parse_action",
    "parse_command",
]
