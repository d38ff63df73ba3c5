"""Token counts and prices through litellm's bundled tokenizers and price map (no network).

Scripted calls have no provider usage, so their tokens are counted here as a real call would be
billed; the system prompt and examples repeat every step, so text counts are cached.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from llm.messages import Message


def litellm_module() -> Any:
    import litellm

    litellm.suppress_debug_info = True  # failures are recorded, not printed with a help banner
    return litellm


def count_message_tokens(model: str, messages: list[Message]) -> int:
    if all(isinstance(m.get("content"), str) for m in messages):
        # Per-message framing once per role sequence + cached content counts (same total as litellm's).
        framing = _framing_tokens(model, tuple(str(m.get("role")) for m in messages))
        return framing + sum(count_text_tokens(model, m["content"]) for m in messages)
    try:  # content parts (images): litellm counts image tokens from the image size
        return int(litellm_module().token_counter(model=model, messages=messages))
    except Exception:  # noqa: BLE001 - an unknown model or content shape: a rough estimate
        return max(1, len(json.dumps(messages, default=str)) // 4)


@functools.lru_cache(maxsize=512)
def count_text_tokens(model: str, text: str) -> int:
    try:
        return int(litellm_module().token_counter(model=model, text=text))
    except Exception:  # noqa: BLE001
        return max(1, len(text) // 4)


@functools.lru_cache(maxsize=64)
def _framing_tokens(model: str, roles: tuple[str, ...]) -> int:
    try:
        return int(litellm_module().token_counter(model=model, messages=[{"role": r, "content": ""} for r in roles]))
    except Exception:  # noqa: BLE001
        return 4 * len(roles) + 3


def price(model: str, prompt: int, completion: int) -> float | None:
    """USD for the tokens, or None when litellm has no price for the model."""
    try:
        p, c = litellm_module().cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=completion)
        return float(p + c)
    except Exception:  # noqa: BLE001
        return None


def response_cost(response: Any) -> float | None:
    try:
        return float(litellm_module().completion_cost(completion_response=response))
    except Exception:  # noqa: BLE001 - unknown model price: tokens only
        return None
