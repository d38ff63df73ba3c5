"""Faults for the conformance matrix under noise: the conformance model's right answer replaced, now and
then, by a plausible wrong one, so that each method's recovery machinery (and the harness's handling
of bad replies) is exercised on every task.

Three kinds, each what a real model does:

- ``wrong_id``: the answer's command names another element of the page the prompt shows;
- ``premature``: the answer's command is replaced by an answer to the task (``stop [...]``) before
  the work is done;
- ``malformed``: a reply in no format the method parses.

An answer without an element id in a command can only be malformed or premature (a planner's plan, a
checker's verdict). The draws come from a generator seeded by task, method and seed, so a noisy run is
repeatable.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from webarena_gym.experiments.conformance.model import page_elements
from webarena_gym.llm.messages import Message, text_of

KINDS = ("wrong_id", "premature", "malformed")
MALFORMED = "Let me look at the page more carefully before I decide what to do."
PREMATURE_ANSWER = "I believe the task is already done."
PREMATURE = f"stop [{PREMATURE_ANSWER}]"
# A command as every method writes it: a lower-case name, then its bracketed argument(s).
_COMMAND = re.compile(r"\b([a-z_]+) \[([^\]\n]*)\](?: \[[^\]\n]*\])*")
_ID_COMMANDS = ("click", "type", "hover", "select", "focus", "clear", "press", "scroll_to")


@dataclass
class Faults:
    """Replaces about ``rate`` of the answers (see the module docstring); ``injected`` counts them by kind."""

    rate: float
    rng: random.Random
    kinds: tuple[str, ...] = KINDS  # drawn from with equal chance
    injected: dict[str, int] = field(default_factory=dict)

    @classmethod
    def seeded(cls, rate: float, task_id: int, method: str, seed: int = 0) -> Faults:
        return cls(rate, random.Random(f"{task_id}:{method}:{seed}"))

    def apply(self, reply: str, messages: list[Message]) -> str:
        """``reply``, or (with probability ``rate``) a wrong answer in its place."""
        if self.rate <= 0 or self.rng.random() >= self.rate:
            return reply
        kind = self.rng.choice(self.kinds)
        wrong = self._wrong(kind, reply, messages)
        if wrong is None:
            kind, wrong = "malformed", MALFORMED
        self.injected[kind] = self.injected.get(kind, 0) + 1
        return wrong

    def _wrong(self, kind: str, reply: str, messages: list[Message]) -> str | None:
        if kind == "malformed":
            return MALFORMED
        command = next((m for m in _COMMAND.finditer(reply) if m.group(1) in (*_ID_COMMANDS, "stop")), None)
        if command is None:
            return None
        if kind == "premature":
            return reply[: command.start()] + PREMATURE + reply[command.end() :]
        if command.group(1) == "stop" or not command.group(2).isdigit():
            return None
        page = text_of(messages[-1]) if messages else ""
        others = sorted({e.bid for e in page_elements(page) if e.bid and e.bid != command.group(2)}, key=int)
        if not others:
            return None
        start, end = command.span(2)
        return reply[:start] + self.rng.choice(others) + reply[end:]
