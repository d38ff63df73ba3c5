"""The one LLM layer of the project: every policy role and the evaluator's judge call models through it.

Why one layer: runs must be comparable across methods, so every call is retried, timed, costed, cached
and recorded the same way, whoever makes it (see :mod:`llm.client`). Messages may carry images
(:mod:`llm.messages`); tests and offline runs use the scripted LLM (:mod:`llm.script`), which goes
through litellm's own call path.
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list download at import

from webarena_gym.llm.budget import LLM_BUDGETS, LLMLimits  # noqa: E402
from webarena_gym.llm.cache import ResponseCache, cache_key  # noqa: E402
from webarena_gym.llm.client import (  # noqa: E402
    API_BASE_ENV_VAR,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_MODEL_ENV,
    LLM,
    CallSettings,
    Completion,
    LLMCall,
    default_model,
)
from webarena_gym.llm.errors import (  # noqa: E402
    ImagesRejectedError,
    LLMBudgetExhausted,
    LLMError,
    ScriptExhaustedError,
)
from webarena_gym.llm.messages import Message, image_part, text_of  # noqa: E402
from webarena_gym.llm.script import Script  # noqa: E402

__all__ = [
    "API_BASE_ENV_VAR",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_ENV",
    "LLM",
    "LLM_BUDGETS",
    "CallSettings",
    "Completion",
    "ImagesRejectedError",
    "LLMBudgetExhausted",
    "LLMCall",
    "LLMError",
    "LLMLimits",
    "Message",
    "ResponseCache",
    "Script",
    "ScriptExhaustedError",
    "cache_key",
    "default_model",
    "image_part",
    "text_of",
]
