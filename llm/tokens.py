"""Token counts and prices through litellm's bundled tokenizers and price map (no network).

Scripted calls have no provider usage, so their tokens are counted here as a real call would be
billed; the system prompt and examples repeat every step, so text counts are cached.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from webarena_gym.llm.messages import Message


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


_P50K_FILE = "ec7223a39ce59f226a68acc30dc1af2788490e15"  # litellm's copy of tiktoken's p50k_base file
_P50K_SHA256 = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
_GPT2_RANKS = 50256  # GPT-2's merge ranks 0..50255; 50256 is <|endoftext|>


@functools.lru_cache(maxsize=1)
def gpt2_encoding() -> Any:
    """GPT-2's tokenizer (the one AgentOccam counts observation tokens with), built offline.

    tiktoken's own ``gpt2`` encoding downloads its vocabulary on first use, which fails without a
    network. litellm ships tiktoken's ``p50k_base`` file, and p50k_base is GPT-2's vocabulary with
    24 whitespace-run tokens appended after ``<|endoftext|>`` (ranks 50257-50280): its ranks below
    50256 are exactly GPT-2's (checked rank for rank against the ``gpt2.tiktoken`` file OpenAI ships
    with whisper), so the encoding built from them splits every text as GPT-2 does. Falls back to
    tiktoken's ``gpt2`` (which may download) if the file is missing or altered.
    """
    import base64
    import hashlib
    import importlib.util
    from pathlib import Path

    import tiktoken

    spec = importlib.util.find_spec("litellm")
    bundled = (
        Path(spec.origin).parent / "litellm_core_utils" / "tokenizers" / _P50K_FILE if spec and spec.origin else None
    )
    contents = bundled.read_bytes() if bundled is not None and bundled.is_file() else b""
    if hashlib.sha256(contents).hexdigest() != _P50K_SHA256:
        return tiktoken.get_encoding("gpt2")
    from tiktoken_ext.openai_public import r50k_pat_str  # GPT-2's pre-tokenisation pattern

    # The file's lines are "<base64 token> <rank>". Read here rather than by tiktoken's loader, which
    # leaves a copy of every file it reads in a cache under the temporary directory.
    pairs = (line.split() for line in contents.splitlines() if line)
    ranks = {base64.b64decode(token): int(rank) for token, rank in pairs if int(rank) < _GPT2_RANKS}
    return tiktoken.Encoding(
        "gpt2",
        pat_str=r50k_pat_str,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": _GPT2_RANKS},
        explicit_n_vocab=_GPT2_RANKS + 1,
    )


def gpt2_tokens(text: str) -> int:
    """The number of GPT-2 tokens of ``text`` (special-token markup counted as plain text)."""
    return len(gpt2_encoding().encode(text, disallowed_special=()))


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
