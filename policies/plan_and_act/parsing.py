"""Reading the planner's, replanner's and executor's answers (docs/methods/plan_and_act.md).

* A plan without CoT is the ``## Step N`` / ``Reasoning:`` / ``Step:`` list (A.3); the plan handed on is the
  text from the first ``## Step`` header on, as written.
* With CoT, the plan or action is the text between its tags (``[Start of Plan]``/``[End of Plan]``,
  ``[Start of Action]``/``[End of Action]``), the last tagged block when the reasoning also mentions the
  tags; the reasoning is everything before it, without ``<think>`` tags (the released code sends
  ``<think>`` itself and cuts at ``</think>``; a chat model writes the reasoning as plain text).
* An action is one WebRL call (:func:`wrappers.actions.webrl_grammar.parse_webrl`) with its comment lines.

Every problem raises :class:`AnswerFormatError`, whose message tells the model what to fix; the policy
re-asks with it (bounded) and ends the episode as the authors' runner does when the re-asks are spent.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from webarena_gym.policies.plan_and_act.prompts import ACTION_TAGS, PLAN_TAGS
from webarena_gym.wrappers.actions.webrl_grammar import WebRLAction, WebRLActionError, parse_webrl

_STEP = re.compile(
    r"^##\s*Step\s+(\d+)\s*\n\s*Reasoning:\s*(.*?)\n\s*Step:\s*(.*?)(?=\n##\s*Step\s+\d+|\Z)", re.S | re.M
)
_FIRST_STEP = re.compile(r"^##\s*Step\s+\d+", re.M)
_THINK = re.compile(r"</?think>")


class AnswerFormatError(ValueError):
    """An answer the policy cannot use; the message is meant for the model."""


@dataclass(frozen=True)
class PlanStep:
    number: int
    reasoning: str
    step: str


@dataclass(frozen=True)
class ParsedPlan:
    """A plan as handed on (``text``), its steps, and the reasoning written before it (CoT)."""

    text: str
    steps: tuple[PlanStep, ...]
    reasoning: str = ""


@dataclass(frozen=True)
class ParsedAction:
    action: WebRLAction
    reasoning: str = ""


def plan_steps(text: str) -> tuple[PlanStep, ...]:
    """The ``## Step N`` / ``Reasoning:`` / ``Step:`` steps of a plan, in order."""
    return tuple(
        PlanStep(int(n), reasoning.strip(), step.strip()) for n, reasoning, step in _STEP.findall(text.strip())
    )


def parse_plan(text: str, cot: bool) -> ParsedPlan:
    """A plan answer; without CoT it must hold at least one complete step (A.3's format)."""
    reasoning = ""
    body = text
    if cot:
        reasoning, body = tagged(text, PLAN_TAGS)
        if not body:
            raise AnswerFormatError("the plan between [Start of Plan] and [End of Plan] is empty")
        return ParsedPlan(body, plan_steps(body), reasoning)
    start = _FIRST_STEP.search(body)
    steps = plan_steps(body[start.start() :]) if start else ()
    if not steps:
        raise AnswerFormatError(
            "no plan step found; every step needs a '## Step N' line, a 'Reasoning:' line and a 'Step:' line"
        )
    assert start is not None
    return ParsedPlan(body[start.start() :].strip(), steps)


def parse_action(text: str, cot: bool, commands: Collection[str] | None = None) -> ParsedAction:
    """An executor answer: one WebRL action (with CoT, inside the action tags)."""
    reasoning, body = tagged(text, ACTION_TAGS) if cot else ("", text)
    try:
        return ParsedAction(parse_webrl(body, commands), reasoning)
    except WebRLActionError as error:
        raise AnswerFormatError(str(error)) from None


def tagged(text: str, tags: tuple[str, str]) -> tuple[str, str]:
    """(reasoning, body) of a CoT answer: the last ``start ... end`` block and the text before it."""
    start_tag, end_tag = tags
    start = text.rfind(start_tag)
    if start < 0:
        raise AnswerFormatError(f"the answer has no {start_tag} tag; put the result between {start_tag} and {end_tag}")
    end = text.find(end_tag, start)
    if end < 0:
        raise AnswerFormatError(f"the answer has no {end_tag} tag after {start_tag}")
    reasoning = _THINK.sub("", text[:start]).strip()
    return reasoning, text[start + len(start_tag) : end].strip()
