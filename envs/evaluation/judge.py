"""The LLM judge behind WebArena's ``fuzzy_match`` and unachievable-task ("N/A") checks.

Calls go through ``litellm.completion`` (temperature 0, litellm's timeout). Retries of transient
failures (rate limits, server errors, timeouts) happen here, with exponential backoff: litellm's own
``num_retries`` needs the optional ``tenacity`` package and fails every call without it. A judge
never raises: a missing key, a network error or a reply without a verdict gives score 0 and a recorded
error, so an evaluation always finishes. Every call is recorded with its verdict, raw reply, tokens
and cost. ``mock_response`` (a string, or a callable of the messages) is passed to litellm's mock
path, which exercises the same code as a real call.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

DEFAULT_JUDGE_MODEL = "gpt-4-1106-preview"  # WebArena's grader
JUDGE_MODEL_ENV_VAR = "WEBARENA_GYM_JUDGE_MODEL"

FuzzyPrompt = Literal["webarena", "agentoccam"]
JudgeKind = Literal["fuzzy_match", "unachievable"]
MockResponse = str | Callable[[list[dict[str, str]]], str]

_SYSTEM = "You are a careful, impartial grader."

_FUZZY_WEBARENA = (
    "Grade a student's answer to a question by comparing it with the reference answer. The student may "
    "word things differently; what counts is whether the student's answer means the same thing as the "
    "reference answer.\n"
    "question: {question}\n"
    "reference answer: {reference}\n"
    "Wherever you see the string 'N/A', it is a special token meaning 'not achievable'.\n"
    "student answer: {answer}\n"
    "Finish with your verdict: correct, incorrect or partially correct."
)

# AgentOccam's relaxed grader (paper App. E): key points of the reference must be present; extra,
# non-contradicting information does not make an answer partially correct.
_FUZZY_AGENTOCCAM = (
    "Grade a student's answer to a question by comparing it with the reference answer. The student "
    "obtained the answer by carrying out actions on websites, so the answer may be worded differently "
    "or contain more detail than the reference. Decide whether every key point of the reference answer "
    "is present in the student's answer. Additional information that does not contradict the reference "
    "answer is acceptable: such an answer is correct, not partially correct.\n"
    "question: {question}\n"
    "reference answer: {reference}\n"
    "Wherever you see the string 'N/A', it is a special token meaning 'not achievable'.\n"
    "student answer: {answer}\n"
    "Finish with your verdict (correct, incorrect or partially correct) and a short explanation."
)

_UNACHIEVABLE = (
    "task: {question}\n"
    "actual reason the task cannot be done: {reference}\n"
    "reason given by the person who tried: {answer}\n"
    "The task above cannot be completed, for the actual reason stated. Someone attempted it, failed, and "
    "gave their own reason for failing. Compare the two reasons and decide whether the given reason "
    "agrees with the actual one, even if only implicitly. Reply 'same' if it agrees and 'different' "
    "if it does not."
)

_MAX_BACKOFF_S = 30.0
_SECRET = re.compile(r"\b(sk|key|api|token)[-_A-Za-z0-9]{12,}", re.IGNORECASE)


def _redact(text: str) -> str:
    return _SECRET.sub("<redacted>", text)


@dataclass
class JudgeCall:
    """One judge call as recorded in the evaluation details."""

    kind: JudgeKind
    model: str
    score: float
    verdict: str | None
    response: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None  # USD from litellm's price map; None where the model is not priced
    latency_s: float = 0.0
    attempts: int = 0
    mocked: bool = False
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _first_verdict(reply: str, verdicts: tuple[tuple[str, float], ...]) -> tuple[str | None, float]:
    """The first listed verdict phrase found in the lower-cased reply; (None, 0) when none is."""
    text = reply.lower()
    return next(((phrase, score) for phrase, score in verdicts if phrase in text), (None, 0.0))


def fuzzy_verdict(reply: str) -> tuple[str | None, float]:
    """WebArena's reading: any 'partially correct'/'incorrect' fails; otherwise 'correct' passes."""
    return _first_verdict(reply, (("partially correct", 0.0), ("incorrect", 0.0), ("correct", 1.0)))


def unachievable_verdict(reply: str) -> tuple[str | None, float]:
    """'different' fails before 'same' passes, as in WebArena."""
    return _first_verdict(reply, (("different", 0.0), ("same", 1.0)))


class Judge:
    """LLM grader for fuzzy answers and unachievable-task reasons.

    ``model`` defaults to ``$WEBARENA_GYM_JUDGE_MODEL`` or WebArena's ``gpt-4-1106-preview``.
    """

    def __init__(
        self,
        model: str | None = None,
        mock_response: MockResponse | None = None,
        *,
        num_retries: int = 3,
        timeout: float = 60.0,
        max_tokens: int = 768,
        backoff_s: float = 2.0,
    ) -> None:
        self.model = model or os.environ.get(JUDGE_MODEL_ENV_VAR) or DEFAULT_JUDGE_MODEL
        self.mock_response = mock_response
        self.num_retries = num_retries
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.backoff_s = backoff_s

    def fuzzy_match(self, question: str, reference: str, answer: str, style: FuzzyPrompt = "webarena") -> JudgeCall:
        template = _FUZZY_AGENTOCCAM if style == "agentoccam" else _FUZZY_WEBARENA
        prompt = template.format(question=question, reference=reference, answer=answer)
        return self._call("fuzzy_match", prompt, fuzzy_verdict)

    def unachievable_match(self, question: str, reason: str, answer: str) -> JudgeCall:
        prompt = _UNACHIEVABLE.format(question=question, reference=reason, answer=answer)
        return self._call("unachievable", prompt, unachievable_verdict)

    def _call(
        self,
        kind: JudgeKind,
        prompt: str,
        read_verdict: Callable[[str], tuple[str | None, float]],
    ) -> JudgeCall:
        messages = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]
        call = JudgeCall(
            kind=kind, model=self.model, score=0.0, verdict=None, response=None, mocked=self.mock_response is not None
        )
        start = time.monotonic()
        response = None
        while response is None:
            call.attempts += 1
            try:
                response = self._complete(messages)
            except Exception as exc:  # no key, network, provider error, a failing mock: recorded, never raised
                if call.attempts <= self.num_retries and _transient(exc):
                    time.sleep(min(self.backoff_s * 2 ** (call.attempts - 1), _MAX_BACKOFF_S))
                    continue
                call.error = _redact(f"judge call failed: {type(exc).__name__}: {exc}")[:2000]
                call.latency_s = time.monotonic() - start
                return call
        call.latency_s = time.monotonic() - start
        try:
            call.response = response.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            call.error = "the judge's reply has no message"
            return call
        usage = getattr(response, "usage", None)
        if usage is not None:
            call.prompt_tokens = usage.prompt_tokens
            call.completion_tokens = usage.completion_tokens
        call.cost = _cost(response)
        call.verdict, call.score = read_verdict(call.response)
        if call.verdict is None:
            call.error = "the judge's reply contains no verdict"
        return call

    def _complete(self, messages: list[dict[str, str]]) -> Any:
        import litellm  # deferred: importing litellm takes seconds and most runs never need a judge

        litellm.suppress_debug_info = True  # failures are recorded with the verdict; no help banner on stdout
        kwargs: dict[str, Any] = {}
        if self.mock_response is not None:
            mock = self.mock_response
            kwargs["mock_response"] = mock(messages) if callable(mock) else mock
        return litellm.completion(
            model=self.model,
            messages=messages,
            temperature=0,
            max_tokens=self.max_tokens,
            num_retries=0,
            timeout=self.timeout,
            **kwargs,
        )


def _transient(exc: BaseException) -> bool:
    """Worth another attempt: rate limits, server errors, timeouts, dropped connections (not a missing key)."""
    import litellm

    text = str(exc).lower()
    if "credential" in text or "api_key" in text or "api key" in text:
        return False
    kinds = (
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.Timeout,
        litellm.APIConnectionError,
        litellm.BadGatewayError,
    )
    status = getattr(exc, "status_code", None)
    return isinstance(exc, kinds) or isinstance(status, int) and (status == 429 or status >= 500)


def _cost(response: Any) -> float | None:
    import litellm

    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # model missing from litellm's price map: tokens are still recorded
        return None
