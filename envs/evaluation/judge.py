"""The LLM judge behind WebArena's ``fuzzy_match`` and unachievable-task ("N/A") checks.

Calls go through the project's one LLM layer (:mod:`llm`): the same retries of transient failures,
timeouts, accounting and scripted mock as every policy role, temperature 0 and a bounded reply. A
judge never raises: a missing key, a network error or a reply without a verdict gives score 0 and a
recorded error (with its kind, so a study can tell a configuration error from a real verdict), and
an evaluation always finishes.

The verdict is read strictly: the reply's last ``Verdict: <word>`` line, or a reply that is nothing
but the verdict. WebArena's grader looked for the verdict words anywhere in the reply, which read a
reply that merely echoed the instructions ("correct, incorrect or partially correct") as a verdict.
``mock_response`` (a string, or a callable of the messages) plays through litellm's mock path;
:data:`PASSING_JUDGE` is a mock that passes every answer in the verdict word of the check that asks, and
:func:`prompt_fields` and :func:`verdict_reply` let a mock grade what it is asked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from webarena_gym.llm import LLM, CallSettings, LLMError, Script
from webarena_gym.llm.redaction import redact

DEFAULT_JUDGE_MODEL = "gpt-4-1106-preview"  # WebArena's grader
JUDGE_MODEL_ENV_VAR = "WEBARENA_GYM_JUDGE_MODEL"
# ``judge_model="none"``: no judge at all. Checks that need one score 0, recorded as "no judge" (not a
# failure of the run): what a run without any model (the demo's baselines) can honestly do.
NO_JUDGE = "none"
DEFAULT_JUDGE_MAX_TOKENS = 384  # a short reason and the verdict line; bounded so a local server cannot run away

FuzzyPrompt = Literal["webarena", "agentoccam"]
JudgeKind = Literal["fuzzy_match", "unachievable"]
MockResponse = str | Callable[[list[dict[str, str]]], str]
# ``judge_mock="pass"``: every check passes, whichever verdict words its prompt asks for. For runs that
# measure what an agent does rather than how an answer is judged; a fixed reply such as "correct" is no
# verdict of an unachievable-task check, which asks for "same" or "different". (The conformance matrix
# grades what it is asked: ``experiments.conformance.judge``.)
PASSING_JUDGE = "pass"

_SYSTEM = "You are a careful, impartial grader."

_FUZZY_WEBARENA = (
    "Grade a student's answer to a question by comparing it with the reference answer. The student may "
    "word things differently; what counts is whether the student's answer means the same thing as the "
    "reference answer.\n"
    "question: {question}\n"
    "reference answer: {reference}\n"
    "Wherever you see the string 'N/A', it is a special token meaning 'not achievable'.\n"
    "student answer: {answer}\n"
    "Give a short reason, then end with one line that is exactly one of: 'Verdict: correct', "
    "'Verdict: incorrect' or 'Verdict: partially correct'."
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
    "Give a short explanation, then end with one line that is exactly one of: 'Verdict: correct', "
    "'Verdict: incorrect' or 'Verdict: partially correct'."
)

_UNACHIEVABLE = (
    "task: {question}\n"
    "actual reason the task cannot be done: {reference}\n"
    "reason given by the person who tried: {answer}\n"
    "The task above cannot be completed, for the actual reason stated. Someone attempted it, failed, and "
    "gave their own reason for failing. Compare the two reasons and decide whether the given reason "
    "agrees with the actual one, even if only implicitly. End with one line that is exactly "
    "'Verdict: same' if it agrees or 'Verdict: different' if it does not."
)

_VERDICT_LINE = re.compile(r"^\W*verdict\W*[:\-]\s*(.+?)\W*$", re.IGNORECASE)


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
    error_kind: str | None = None  # "provider" / "configuration" (the call failed), "reply" (no verdict),
    # "unconfigured" (no judge model: NO_JUDGE)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_verdict(reply: str, verdicts: dict[str, float]) -> tuple[str | None, float]:
    """The verdict of a reply: its last ``Verdict: X`` line, or the whole reply if it is just ``X``.

    Returns (None, 0.0) when neither names one of ``verdicts`` exactly (case and trailing
    punctuation aside).
    """
    candidates = [m.group(1) for line in reply.splitlines() if (m := _VERDICT_LINE.match(line.strip()))]
    if not candidates:
        candidates = [re.sub(r"^\W+|\W+$", "", reply.strip())]
    word = re.sub(r"^\W+|\W+$", "", candidates[-1]).lower()
    return (word, verdicts[word]) if word in verdicts else (None, 0.0)


def fuzzy_verdict(reply: str) -> tuple[str | None, float]:
    """Only 'correct' passes; 'incorrect' and 'partially correct' fail (WebArena's scoring)."""
    return read_verdict(reply, {"correct": 1.0, "incorrect": 0.0, "partially correct": 0.0})


def unachievable_verdict(reply: str) -> tuple[str | None, float]:
    return read_verdict(reply, {"same": 1.0, "different": 0.0})


def verdict_reply(messages: list[dict[str, str]], passed: bool) -> str:
    """A mock judge's reply: the passing or the failing verdict of the check whose prompt this is."""
    if "'Verdict: same'" in _prompt(messages):
        return "Verdict: same" if passed else "Verdict: different"
    return "Verdict: correct" if passed else "Verdict: incorrect"


def passing_reply(messages: list[dict[str, str]]) -> str:
    """The reply of :data:`PASSING_JUDGE`: the passing verdict of the check whose prompt this is."""
    return verdict_reply(messages, True)


def prompt_fields(messages: list[dict[str, str]]) -> dict[str, str] | None:
    """The question, the reference and the answer a judge prompt was made of, for a mock that grades
    what it is asked (None for a prompt none of the judge's templates made)."""
    prompt = _prompt(messages)
    for pattern in _TEMPLATE_PATTERNS:
        if (found := pattern.fullmatch(prompt)) is not None:
            return found.groupdict()
    return None


def _prompt(messages: list[dict[str, str]]) -> str:
    return str(messages[-1].get("content", "")) if messages else ""


def _template_pattern(template: str) -> re.Pattern[str]:
    """A template as a pattern: the question and the reference (the task's own text) end where the template
    goes on, the answer (the agent's) runs to the template's end, so text inside it stays inside it."""
    pattern = re.escape(template)
    for name, group in (("question", ".*?"), ("reference", ".*?"), ("answer", ".*")):
        pattern = pattern.replace(re.escape(f"{{{name}}}"), f"(?P<{name}>{group})", 1)
    return re.compile(pattern, re.DOTALL)


_TEMPLATE_PATTERNS = tuple(_template_pattern(t) for t in (_FUZZY_WEBARENA, _FUZZY_AGENTOCCAM, _UNACHIEVABLE))


class Judge:
    """LLM grader for fuzzy answers and unachievable-task reasons.

    ``model`` defaults to ``$WEBARENA_GYM_JUDGE_MODEL`` or WebArena's ``gpt-4-1106-preview``
    (:data:`NO_JUDGE` for none); ``api_base`` (default ``$WEBARENA_GYM_API_BASE``) points it at an
    OpenAI-compatible server.
    """

    def __init__(
        self,
        model: str | None = None,
        mock_response: MockResponse | None = None,
        *,
        num_retries: int = 3,
        timeout: float = 60.0,
        max_tokens: int = DEFAULT_JUDGE_MAX_TOKENS,
        backoff_s: float = 2.0,
        api_base: str | None = None,
    ) -> None:
        self.model = model or os.environ.get(JUDGE_MODEL_ENV_VAR) or DEFAULT_JUDGE_MODEL
        if mock_response == PASSING_JUDGE:
            mock_response = passing_reply
        self.mock_response = mock_response
        script = Script({"judge": Script.forever(mock_response)}) if mock_response is not None else None
        self.llm = LLM(
            self.model,
            {"judge": CallSettings(temperature=0, max_tokens=max_tokens)},
            retries=num_retries,
            timeout=timeout,
            script=script,
            backoff_s=backoff_s,
            api_base=api_base,
        )

    def fuzzy_match(self, question: str, reference: str, answer: str, style: FuzzyPrompt = "webarena") -> JudgeCall:
        template = _FUZZY_AGENTOCCAM if style == "agentoccam" else _FUZZY_WEBARENA
        prompt = template.format(question=question, reference=reference, answer=answer)
        return self._call("fuzzy_match", prompt, fuzzy_verdict)

    def unachievable_match(self, question: str, reason: str, answer: str) -> JudgeCall:
        prompt = _UNACHIEVABLE.format(question=question, reference=reason, answer=answer)
        return self._call("unachievable", prompt, unachievable_verdict)

    def _call(self, kind: JudgeKind, prompt: str, verdict_of: Callable[[str], tuple[str | None, float]]) -> JudgeCall:
        messages = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]
        call = JudgeCall(
            kind=kind, model=self.model, score=0.0, verdict=None, response=None, mocked=self.mock_response is not None
        )
        if self.model == NO_JUDGE and self.mock_response is None:
            call.error, call.error_kind = "no judge model is configured (judge_model='none')", "unconfigured"
            return call
        try:
            completion = self.llm.complete("judge", messages)
        except LLMError as exc:  # no key, network, provider error, a failing mock: recorded, never raised
            record = exc.call
            if record is not None:
                call.attempts, call.latency_s = record.attempts, record.latency_s
            call.error = redact(f"judge call failed: {exc}")[:2000]
            call.error_kind = exc.kind
            return call
        record = completion.call
        call.response = completion.text
        call.prompt_tokens, call.completion_tokens = record.prompt_tokens, record.completion_tokens
        call.cost, call.latency_s, call.attempts = record.cost, record.latency_s, record.attempts
        call.verdict, call.score = verdict_of(call.response)
        if call.verdict is None:
            call.error, call.error_kind = "the judge's reply contains no verdict", "reply"
        return call
