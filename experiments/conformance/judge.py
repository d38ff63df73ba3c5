"""The matrix's judge mock: an answer passes only when it is the task's reference solution's own answer.

The matrix measures whether a method reaches the reference solution's result, so a judged answer (WebArena's
``fuzzy_match``, an unachievable task's reason) is graded against the one answer the reference solution
gives: the conformance model's give-up ("cannot continue: ..."), a premature answer or any other text fails,
as a real judge would fail it, instead of passing whatever it is asked about.
"""

from __future__ import annotations

from dataclasses import dataclass

from webarena_gym.envs.evaluation.evaluator import clean_answer, infeasible_answer
from webarena_gym.envs.evaluation.judge import prompt_fields, verdict_reply
from webarena_gym.envs.local import registry

# The study's ``judge_mock``: a name for its manifest; each episode's runner makes it the task's ReferenceJudge.
REFERENCE_JUDGE = "reference"


@dataclass(frozen=True)
class ReferenceJudge:
    """A judge mock (``Judge(mock_response=...)``) passing the answers in ``answers`` (cleaned as the
    evaluator cleans an answer before it asks) and failing every other, and any prompt it cannot read."""

    answers: frozenset[str]

    @classmethod
    def of_task(cls, task_id: int) -> ReferenceJudge:
        """The answer a local task's reference solution ends with, as the env records it: a message's text,
        or an infeasibility report's ``N/A: reason`` (its goto-free path, where it has one, ends the same)."""
        answers = set()
        for step in registry.load_solution(task_id):
            if step["action"] == "send_msg_to_user":
                answers.add(str(step["text"]))
            elif step["action"] == "report_infeasible":
                answers.add(infeasible_answer(str(step["text"])))
        return cls(frozenset(clean_answer(clean_answer(answer)) for answer in answers))

    def __call__(self, messages: list[dict[str, str]]) -> str:
        fields = prompt_fields(messages)
        return verdict_reply(messages, fields is not None and clean_answer(fields["answer"]) in self.answers)
