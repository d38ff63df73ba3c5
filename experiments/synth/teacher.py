"""The teacher: every LLM call the pipeline makes, per role, with strict parsing and bounded re-asks.

Roles and their defaults (the paper's Sec. 4 and 5.1; [C] = the released code; [I] = the paper leaves it
open, our choice):

==================  ===========  ==========  ==================================================
role                temperature  max_tokens  what it does
==================  ===========  ==========  ==================================================
query_generator     0.7 [I]      4096        Stage 1: new queries from seed queries
feasibility         0.0 [I]      2048        Stage 1: drops queries the site cannot serve
orm                 0.0 [I]      2048        Stage 1: outcome reward where no evaluator exists
plan_annotator      0.0 [I]      4096        Stage 2: grounded plans (A.5)
replan_annotator    0.0 [I]      4096        Stage 2: replanning data (A.9)
cot                 0.6 [C]      16384 [C]   Stage 2: reasoning traces (DeepSeek's CoT setting)
expander            0.7 [I]      8192        Stage 3: synthetic plan expansion (A.6)
failure_classifier  0.0 [I]      2048        Stage 4: a failed validation episode's class
classifier          0.0 [I]      2048        Stage 4: a training point's class (A.7)
targeted            0.7 [I]      4096        Stage 4: one similar pair per kept point (A.8)
==================  ===========  ==========  ==================================================

The paper used GPT-4o for queries, plans and expansion and DeepSeek-R1-Distill-Llama-70B for CoT; any
litellm model string works for any role (``roles[...].model``), through the project's one LLM layer
(retries, cache, cost). An answer that does not parse is asked again with the bad answer and the parse
error, up to ``max_retries`` times (the released code's three); then :class:`TeacherGaveUp` and the item is
recorded as rejected. A provider that keeps failing raises :class:`llm.LLMError`, which stops the stage
(nothing is lost; ``--resume`` continues).

Every generated item records its teacher's provenance: role, model, temperature and the sampling seed
of the item (:meth:`Teacher.provenance`), never a key or an endpoint.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from webarena_gym.llm import LLM, CallSettings, LLMCall, Message, Script
from webarena_gym.llm.tokens import count_message_tokens, price

T = TypeVar("T")


class ParseError(ValueError):
    """A teacher answer that does not have the required form; the message is meant for the teacher."""


@dataclass(frozen=True)
class RoleSettings:
    temperature: float
    max_tokens: int
    expected_output_tokens: int  # for cost estimates only [I]
    model: str | None = None  # None: the teacher's model


ROLE_DEFAULTS: dict[str, RoleSettings] = {
    "query_generator": RoleSettings(0.7, 4096, 1200),
    "feasibility": RoleSettings(0.0, 2048, 400),
    "orm": RoleSettings(0.0, 2048, 400),
    "plan_annotator": RoleSettings(0.0, 4096, 1500),
    "replan_annotator": RoleSettings(0.0, 4096, 1500),
    "cot": RoleSettings(0.6, 16384, 2500),
    "expander": RoleSettings(0.7, 8192, 6000),
    "failure_classifier": RoleSettings(0.0, 2048, 400),
    "classifier": RoleSettings(0.0, 2048, 400),
    "targeted": RoleSettings(0.7, 4096, 800),
}


class TeacherGaveUp(Exception):
    """No usable answer within the re-asks; ``answer`` is the last one (for the rejected record)."""

    def __init__(self, role: str, error: str, answer: str) -> None:
        super().__init__(f"the {role} gave no usable answer: {error}")
        self.role, self.error, self.answer = role, error, answer


@dataclass(frozen=True)
class Spent:
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    unknown_cost_calls: int  # calls whose model litellm has no price for

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": round(self.cost, 6),
            "unknown_cost_calls": self.unknown_cost_calls,
        }


class Teacher:
    """The pipeline's LLM: one :class:`llm.LLM` with a call role per teacher job (thread-safe use)."""

    def __init__(
        self,
        model: str,
        roles: dict[str, RoleSettings] | None = None,
        *,
        api_base: str | None = None,
        cache_dir: str | None = None,
        script: Script | None = None,
        max_retries: int = 3,
        retries: int = 4,
        timeout: float = 600.0,
    ) -> None:
        self.roles = {**ROLE_DEFAULTS, **(roles or {})}
        unknown = sorted(set(self.roles) - set(ROLE_DEFAULTS))
        if unknown:
            raise ValueError(f"unknown teacher roles {unknown}; the roles are {', '.join(ROLE_DEFAULTS)}")
        self.max_retries = max_retries
        self.llm = LLM(
            model,
            {
                role: CallSettings(temperature=s.temperature, max_tokens=s.max_tokens, model=s.model)
                for role, s in self.roles.items()
            },
            cache_dir=cache_dir,
            retries=retries,
            timeout=timeout,
            script=script,
            api_base=api_base,
        )
        self._calls: list[LLMCall] = []
        self._lock = threading.Lock()

    def model(self, role: str) -> str:
        return self.llm.model_for(role)

    def provenance(self, role: str, seed: int) -> dict[str, Any]:
        """What every generated item records about its teacher."""
        return {"role": role, "model": self.model(role), "temperature": self.roles[role].temperature, "seed": seed}

    def ask(self, role: str, messages: list[Message], parse: Callable[[str], T]) -> tuple[T, str]:
        """Call ``role`` and parse its answer; re-ask with the error up to ``max_retries`` times.

        Returns (parsed, answer text). Raises :class:`TeacherGaveUp` or :class:`llm.LLMError`."""
        from webarena_gym.experiments.synth.prompts import retry_message

        messages = list(messages)
        for attempt in range(self.max_retries + 1):
            completion = self.llm.complete(role, messages)
            with self._lock:
                self._calls.append(completion.call)
            try:
                return parse(completion.text), completion.text
            except ParseError as error:
                if attempt == self.max_retries:
                    raise TeacherGaveUp(role, str(error), completion.text) from None
                messages += [{"role": "assistant", "content": completion.text}, retry_message(str(error))]
        raise AssertionError("unreachable")

    # -- accounting ----------------------------------------------------------------------------------

    def mark(self) -> int:
        """A point in the call log; :meth:`spent` counts the calls after it."""
        with self._lock:
            return len(self._calls)

    def spent(self, since: int = 0) -> Spent:
        with self._lock:
            calls = [c for c in self._calls[since:] if not c.cached]
        costs = [c.cost for c in calls]
        return Spent(
            calls=len(calls),
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            cost=sum(c for c in costs if c is not None),
            unknown_cost_calls=sum(1 for c in costs if c is None),
        )

    def estimate(self, role: str, samples: list[list[Message]], n_calls: int) -> dict[str, Any]:
        """Expected tokens and cost of ``n_calls`` calls of ``role``, from the prompts of ``samples``
        (a few of the calls to make) and the role's expected answer length; re-asks not included."""
        model = self.model(role)
        if n_calls <= 0 or not samples:
            return {"role": role, "model": model, "calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0}
        mean_prompt = sum(count_message_tokens(model, m) for m in samples) / len(samples)
        settings = self.roles[role]
        prompt = int(mean_prompt * n_calls)
        completion = min(settings.expected_output_tokens, settings.max_tokens) * n_calls
        return {
            "role": role,
            "model": model,
            "calls": n_calls,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cost": price(model, prompt, completion),
        }
