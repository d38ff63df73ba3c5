"""Scripted CoAct models for the tests: answers chosen by the request a prompt makes, written in the
output formats the prompts ask for (the way a model would write them, not through the policy's code)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Answer = str | Callable[[list[dict[str, Any]]], str]


def request_of(messages: list[dict[str, Any]]) -> str:
    """The request a CoAct prompt makes (``global_plan``, ``pass_check`` ...), read off its system message."""
    match = re.search(r"Current request: `(\w+)`", messages[0]["content"])
    assert match, "not a CoAct prompt"
    return match.group(1)


class Brain:
    """One agent's scripted answers by request: a string answers every such request, a list answers
    them in order (and fails the test when it runs out). Items may be callables of the messages."""

    def __init__(self, **answers: Answer | list[Answer]) -> None:
        self.answers = {k: list(v) if isinstance(v, list) else v for k, v in answers.items()}
        self.asked: list[str] = []

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        request = request_of(messages)
        self.asked.append(request)
        item = self.answers.get(request)
        if isinstance(item, list):
            assert item, f"no scripted answer left for {request}"
            item = item.pop(0)
        assert item is not None, f"no scripted answer for {request}"
        return item(messages) if callable(item) else item


def plan(*phases: tuple[str, str]) -> str:
    """A global plan as a model writes it (the card's output format)."""
    blocks = [
        f"**Subtask {i}:**\n- **Subtask**: {subtask}\n- **Expected State**: {state}"
        for i, (subtask, state) in enumerate(phases, 1)
    ]
    return "Here is the plan.\n\n" + "\n\n".join(blocks)


def actions(*commands: str) -> str:
    return "\n".join(f"**Action {i}:** {c}" for i, c in enumerate(commands, 1))


def decision(word: str, reasons: str = "That is what the page shows.") -> str:
    return f"Action: {word}\nReasons: {reasons}"


def collation(answer: str) -> str:
    return f"The phases were carried out as planned and the page shows the result.\nFINAL ANSWER: {answer}"


def element_id(messages: list[dict[str, Any]], role: str, name: str) -> str:
    """The id the page in the prompt's OBSERVATION gives the element ``role 'name'``."""
    page = messages[-1]["content"]
    match = re.search(rf"\[(\w+)\] {role} '{re.escape(name)}'", page)
    assert match, f"no {role} {name!r} on the page shown"
    return match.group(1)


def click(role: str, name: str) -> Callable[[list[dict[str, Any]]], str]:
    """A local plan of one click on the named element, read off the page in the prompt."""
    return lambda messages: actions(f"click [{element_id(messages, role, name)}]")
