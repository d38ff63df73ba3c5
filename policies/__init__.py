"""Policies: the common interface, the litellm LLM layer and the methods (see docs/design.md).

``make_policy(name, **config)`` builds any registered method; ``available_policies()`` lists them.
"""

from webarena_gym.llm import LLM, CallSettings, Completion, LLMCall, LLMError, Script
from webarena_gym.policies.base import (
    Decision,
    EnvHandle,
    EnvHandleError,
    Policy,
    TaskSpec,
    available_policies,
    make_policy,
    register_policy,
)

__all__ = [
    "LLM",
    "CallSettings",
    "Completion",
    "Decision",
    "EnvHandle",
    "EnvHandleError",
    "LLMCall",
    "LLMError",
    "Policy",
    "Script",
    "TaskSpec",
    "available_policies",
    "make_policy",
    "register_policy",
]
