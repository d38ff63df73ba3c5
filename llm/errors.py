"""The error every LLM call failure becomes (shared by the client and the scripted LLM)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from webarena_gym.llm.client import LLMCall

ErrorKind = Literal["provider", "configuration", "script"]


class LLMError(RuntimeError):
    """A call failed for good. ``call`` is the recorded attempt.

    ``kind``: ``"provider"`` (the provider kept failing: outage, rate limits, timeouts after retries),
    ``"configuration"`` (a missing key, an unknown model, a request the server rejects, such as a
    prompt over its context length: retrying cannot help) or ``"script"`` (the scripted LLM ran out).
    """

    def __init__(self, message: str, call: LLMCall | None = None, kind: ErrorKind = "provider"):
        super().__init__(message)
        self.call = call
        self.kind = kind
        self.attempts = 0


class ScriptExhaustedError(LLMError):
    """The scripted LLM was asked for more answers than its script holds for that role."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="script")


class LLMBudgetExhausted(RuntimeError):
    """An episode's LLM budget (``budget``: ``"llm_calls"``, ``"llm_tokens"`` or ``"llm_cost"``) is
    spent; the refused call was not sent. Not an :class:`LLMError`: nothing failed, the episode ends
    the way it ends at its other budgets (the rollout stops it with the policy's own stop answer)."""

    def __init__(self, budget: str, message: str) -> None:
        super().__init__(message)
        self.budget = budget


class ImagesRejectedError(LLMError):
    """The model server refused a request because it carries images or content parts (a text-only
    chat template): a configuration error that retrying cannot help."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="configuration")
