"""Token ids and log-probabilities of a sampled answer, when the server returns them.

RL trainers that score a policy's own samples need the sampled tokens' log-probabilities (and their ids,
to avoid re-tokenising text that may not round-trip). OpenAI-compatible servers return them on request:
``logprobs=True`` gives each token with its log-probability; vLLM adds the ids with
``return_token_ids`` (litellm keeps them as the choice's ``token_ids`` provider field, and the prompt's as
``prompt_token_ids``) or writes each token as ``token_id:<id>`` with ``return_tokens_as_token_ids``.
"""

from __future__ import annotations

from typing import Any

_ID_PREFIX = "token_id:"


def sample_tokens(response: Any, choice: Any) -> dict[str, Any] | None:
    """``{"tokens", "logprobs", "token_ids", "prompt_token_ids"}`` of one choice (lists; ids None when the
    server gave none), or None when the server returned no log-probabilities for it."""
    content = getattr(getattr(choice, "logprobs", None), "content", None) or []
    if not content:
        return None
    tokens = [str(getattr(t, "token", "")) for t in content]
    logprobs = [float(getattr(t, "logprob", 0.0)) for t in content]
    fields = getattr(choice, "provider_specific_fields", None) or {}
    ids = fields.get("token_ids")
    if ids is None and all(t.startswith(_ID_PREFIX) and t[len(_ID_PREFIX) :].isdigit() for t in tokens):
        ids = [int(t[len(_ID_PREFIX) :]) for t in tokens]
    prompt_ids = getattr(response, "prompt_token_ids", None)
    return {
        "tokens": tokens,
        "logprobs": logprobs,
        "token_ids": [int(i) for i in ids] if ids is not None else None,
        "prompt_token_ids": [int(i) for i in prompt_ids] if prompt_ids is not None else None,
    }
