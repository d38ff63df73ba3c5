"""The final-answer step of WebArena-Verified's response contract, the same for every policy.

A task scored by WebArena-Verified expects one JSON response object (``envs.evaluation.verified``); its
goal tells the policy so. When a policy answers, the rollout reads the answer against the contract: an
answer that parses is scored as it is; one that does not is shown to the policy's model once more, with
the rule it broke, under the role :data:`ROLE` (its settings are the policy's ``final_answer`` role). The
reply is scored if it parses; otherwise the original answer is scored as it stands (the package records
it as malformed). Nothing is ever filled in for the model.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from webarena_gym.envs.evaluation.verified import ResponseError, parse_response, response_instruction
from webarena_gym.llm import LLM
from webarena_gym.llm.client import LLMCall

ROLE = "final_answer"
_SYSTEM = (
    "You write the final response of a web agent that has finished a task. Reply with the JSON response "
    "object only, built from the agent's answer; do not change what the agent found or did."
)


@dataclass
class FinalAnswer:
    """What the step decided: the text scored, whether it follows the contract, and why not."""

    answer: str  # the policy's own answer
    text: str  # the answer scored: the policy's, or the re-asked reply when that one parses
    response: dict[str, Any] | None  # the parsed response object, None when ``text`` does not parse
    reasked: bool = False
    error: str | None = None  # why the policy's answer did not parse (and the reply's, after a re-ask)
    call: LLMCall | None = None  # the re-ask, for the step's record

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "call"}


def _reask_messages(goal: str, answer: str, schema: dict | None, error: str) -> list[dict[str, Any]]:
    user = (
        f"Task: {goal}\n\nThe agent's final answer:\n{answer}\n\nIt is not a valid response ({error}). "
        f"{response_instruction(schema)}"
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def finalize(answer: str, contract: dict[str, Any], goal: str, llm: LLM | None) -> FinalAnswer:
    """The answer to score for ``answer`` under ``contract`` (``{"results_schema": ...}``); re-asks
    ``llm`` at most once, and only when ``answer`` does not parse. A failing re-ask call (provider down)
    raises its :class:`LLMError`, an infrastructure error of the episode."""
    schema = contract.get("results_schema")
    try:
        return FinalAnswer(answer, answer, parse_response(answer, schema))
    except ResponseError as exc:
        first_error = str(exc)
    if llm is None:
        return FinalAnswer(answer, answer, None, error=f"{first_error} (no model to ask again)")
    completion = llm.complete(ROLE, _reask_messages(goal, answer, schema, first_error))
    reply = completion.text
    try:
        response = parse_response(reply, schema)
    except ResponseError as exc:
        error = f"{first_error}; asked again: {exc}"
        return FinalAnswer(answer, answer, None, reasked=True, error=error, call=completion.call)
    text = json.dumps(response, ensure_ascii=False)
    return FinalAnswer(answer, text, response, reasked=True, error=first_error, call=completion.call)
