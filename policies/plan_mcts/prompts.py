"""Plan-MCTS's five prompts (the paper's Figs. 6-10: Planner, Operator, Micro and Macro checks, Reflector) and
the parsers of their answers.

Each builder returns chat messages: the system text from ``policies/prompts/plan_mcts_prompts.txt``
and one user message whose sections come in the order of the paper's figures, the screenshots as
image parts where the figure puts them (``Context.images`` off: text only). Section labels and output
labels are the paper's (they are interfaces); the wording is this project's.

Parsers are strict and raise :class:`AnswerError` with a message for the re-ask; no model text is
ever evaluated.

Decisions where the figures leave gaps:
* the Operator's user message gets the previous subplans as their own section (the system
  message names them, the figure's template has no placeholder), and every page section starts
  with the page's URL and any error of the last action;
* the Micro check's "AXTree snippet" is the aligned page text (the preset already prunes it);
* a JSON answer may be wrapped in a Markdown code fence; anything around the object is ignored;
* the Macro status is read from the last ``STATUS CODE:`` line (bold markers and a trailing label
  such as ``B. ALMOST FINISHED`` allowed); the verdict of the Micro check from the last
  ``Completed:`` line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from webarena_gym.llm import Message, image_part
from webarena_gym.policies.plan_mcts.tree import HistoryItem, Page, Step
from webarena_gym.wrappers.actions.grammar import InvalidActionError, parse_action

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
DONE = "subplan_done"  # the Operator's pseudo-action: the subplan is complete, never sent to the env
OPERATOR_SECTIONS = (
    "Interaction History Summary",
    "Observation Highlights",
    "Observation Description",
    "Reason",
    "Action",
)
VARIATION_KINDS = ("standard", "granular", "alternative")


class AnswerError(ValueError):
    """A model answer has not the required form; the message is shown to the model in the re-ask."""


@cache
def texts() -> dict[str, str]:
    """The fixed prompt texts, by name, from plan_mcts_prompts.txt."""
    parts = re.split(r"^=== (\w+) ===\n", (PROMPTS / "plan_mcts_prompts.txt").read_text(), flags=re.M)
    return {parts[i]: parts[i + 1].rstrip("\n") for i in range(1, len(parts) - 1, 2)}


@cache
def action_specs() -> dict[str, tuple[str, str]]:
    """command -> (format, description), from plan_mcts_actions.txt, in prompt order."""
    specs = {}
    for line in (PROMPTS / "plan_mcts_actions.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, syntax, text = (part.strip() for part in line.split("|", 2))
            specs[name] = (syntax, text)
    return specs


def fill(template: str, **values: Any) -> str:
    """``{name}`` placeholders replaced (not ``str.format``: the texts hold literal JSON braces)."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", str(value))
    return template


def render_actions(commands: tuple[str, ...]) -> str:
    specs = action_specs()
    unknown = [c for c in commands if c not in specs]
    if unknown:
        raise ValueError(f"no description for command(s) {unknown}")
    return "\n".join(f"- {specs[c][0]}: {specs[c][1]}" for c in specs if c in commands)


def variation_kind(index: int) -> str:
    return VARIATION_KINDS[index % len(VARIATION_KINDS)]


def render_variations(k: int) -> str:
    """The three kinds of the Planner figure, numbered; with k > 3 the kinds repeat in order."""
    lines = texts()["planner_variations"].splitlines()
    return "\n".join(fill(lines[i % len(lines)], n=i + 1) for i in range(k))


# -- context -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    """What every prompt shares: the goal, how history is shown, whether images are sent."""

    goal: str
    commands: tuple[str, ...]
    raw_history: bool = False  # the RQ4 ablation: the full atomic trace instead of H_P
    images: bool = True


def render_history(history: list[HistoryItem], *, scores: bool = False) -> str:
    """H_P, one subplan per line; with ``scores`` also the macro status, score and notes (Fig. 9)."""
    if not history:
        return "None yet: this is the first subplan."
    lines = []
    for i, item in enumerate(history, 1):
        line = f"{i}. {item.subplan} [{'Completed' if item.completed else 'Not Completed'}]"
        if scores and item.status is not None:
            line += f" status {item.status}, score {item.score:.2f}"
        if scores and item.notes:
            line += f"; notes: {item.notes}"
        lines.append(line)
    return "\n".join(lines)


def render_steps(steps: list[Step], empty: str = "No actions yet.") -> str:
    if not steps:
        return empty
    return "\n".join(f"{i}. {step.line()}" for i, step in enumerate(steps, 1))


def _page_text(page: Page) -> str:
    head = f"URL: {page.url}\n" if page.url else ""
    if page.error:
        head += f"Error of the last action: {page.error}\n"
    return head + page.text


class _User:
    """Builds one user message from labelled sections, images in place."""

    def __init__(self, images: bool) -> None:
        self.images = images
        self.parts: list[dict[str, Any]] = []

    def text(self, text: str) -> _User:
        if self.parts and self.parts[-1]["type"] == "text":
            self.parts[-1]["text"] += "\n\n" + text
        else:
            self.parts.append({"type": "text", "text": text})
        return self

    def section(self, label: str, body: str) -> _User:
        return self.text(f"{label}\n{body}")

    def image(self, label: str, page: Page) -> _User:
        png = page.png() if self.images else None
        if png is None:
            return self.text(f"{label}\n(no screenshot)" if self.images else label + "\n(screenshots are not sent)")
        self.text(label)
        self.parts.append(image_part(png))
        return self

    def message(self) -> Message:
        if len(self.parts) == 1:
            return {"role": "user", "content": self.parts[0]["text"]}
        return {"role": "user", "content": self.parts}


def _history_section(ctx: Context, history: list[HistoryItem], raw: list[Step], label: str) -> tuple[str, str]:
    if ctx.raw_history:
        return "### Interaction History (All Previous Actions) ###", render_steps(raw, "No actions yet.")
    return label, render_history(history)


def _feedback(user: _User, feedback: list[str]) -> None:
    if feedback:
        user.section("### Lessons From Failed Subplans ###", "\n".join(f"- {f}" for f in feedback))


# -- builders ------------------------------------------------------------------------------------------


def planner_messages(
    ctx: Context,
    k: int,
    history: list[HistoryItem],
    raw: list[Step],
    page: Page,
    *,
    actions: bool = False,
    feedback: list[str] = (),  # type: ignore[assignment]
) -> list[Message]:
    """Fig. 6; ``actions``: the action-level baseline asks for k candidate commands instead."""
    if actions:
        system = fill(
            texts()["planner_actions_system"],
            k=k,
            variations=render_variations(k),
            actions=render_actions(ctx.commands),
        )
    else:
        system = fill(texts()["planner_system"], k=k, variations=render_variations(k))
    user = _User(ctx.images).section("### User Instruction ###", ctx.goal)
    user.section(*_history_section(ctx, history, raw, "### Subplan History ###"))
    _feedback(user, list(feedback))
    user.image("### Current Screenshot ###", page)
    user.section("### Current Page Accessibility Tree ###", _page_text(page))
    user.text(fill(texts()["planner_reminder"], k=k))
    return [{"role": "system", "content": system}, user.message()]


def operator_messages(
    ctx: Context,
    subplan: str,
    history: list[HistoryItem],
    raw: list[Step],
    local: list[Step],
    page: Page,
    feedback: list[str] = (),  # type: ignore[assignment]
) -> list[Message]:
    """Fig. 7: the Operator sees H_P and only the current subplan's actions (h_loc)."""
    system = fill(texts()["operator_system"], actions=render_actions(ctx.commands))
    user = _User(ctx.images).section("### User Instruction ###", ctx.goal)
    user.section(*_history_section(ctx, history, raw, "### Previous Subplans ###"))
    _feedback(user, list(feedback))
    user.section("### Current Subplan to Execute ###", subplan)
    user.section("### Interaction History (Current Subplan) ###", render_steps(local))
    user.image("### Current Screenshot ###", page)
    user.section("# Current page Accessibility Tree", _page_text(page))
    return [{"role": "system", "content": system}, user.message()]


def micro_messages(ctx: Context, subplan: str, local: list[Step], before: Page, after: Page) -> list[Message]:
    """Fig. 8: did this subplan get done, judged from its actions and the pages before and after."""
    system = fill(texts()["micro_system"], subplan=subplan)
    user = _User(ctx.images).section("### Current Subplan ###", subplan)
    user.section("### Interaction History (Actions for This Subplan) ###", render_steps(local))
    user.image("### Initial State (Before Subplan Execution) ###", before).text(_page_text(before))
    user.image("### Current State (After Subplan Execution) ###", after).text(_page_text(after))
    return [{"role": "system", "content": system}, user.message()]


def macro_messages(
    ctx: Context,
    subplan: str,
    history: list[HistoryItem],
    raw: list[Step],
    local: list[Step],
    before: Page,
    after: Page,
) -> list[Message]:
    """Fig. 9: the value of the state reached, given the earlier subplans with their codes and scores."""
    user = _User(ctx.images).section("### Overall Task Objective ###", ctx.goal)
    if ctx.raw_history:
        user.section("### Previously Executed Actions ###", render_steps(raw, "None yet."))
    else:
        user.section("### Previously Executed Subplans ###", render_history(history, scores=True))
    user.image("### Initial State (Before Current Subplan) ###", before).text(_page_text(before))
    user.section("### Current Subplan Action History ###", render_steps(local))
    user.section("### Current Subplan Being Evaluated ###", subplan)
    user.image("### Current State (After Subplan Execution) ###", after).text(_page_text(after))
    return [{"role": "system", "content": texts()["macro_system"]}, user.message()]


def reflector_messages(ctx: Context, subplan: str, trace: list[Step], last: Page) -> list[Message]:
    """Fig. 10: diagnose the failed subplan from its trace and the last page; pivot or decompose."""
    user = _User(ctx.images).section("## Context ##", f'The original subplan was: "{subplan}"')
    user.text(f"User goal: {ctx.goal}")
    user.section("## Execution Trace ##", render_steps(trace, "No action was executed."))
    user.image("## Last Screenshot ##", last)
    user.section("## Last Page State (Accessibility Tree) ##", _page_text(last))
    user.section("## Task ##", texts()["reflector_task"])
    return [{"role": "system", "content": texts()["reflector_system"]}, user.message()]


def reask(role: str, error: str) -> Message:
    """The follow-up user message after an unusable answer, with a concrete example of the form."""
    return {"role": "user", "content": fill(texts()[f"reask_{role}"], error=error)}


# -- parsers -------------------------------------------------------------------------------------------


def _json_object(text: str) -> dict[str, Any]:
    body = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", body, re.S | re.I)
    if fence:
        body = fence.group(1).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise AnswerError("no JSON object found")
    try:
        value = json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise AnswerError(f"the JSON object does not parse ({exc.msg} at character {exc.pos})") from None
    except RecursionError:  # json's decoder recurses per level: thousands of "[" exhaust the stack
        raise AnswerError("the JSON object nests too deeply; answer with a flat object") from None
    if not isinstance(value, dict):
        raise AnswerError("the answer must be a JSON object")
    return value


@dataclass(frozen=True)
class Candidate:
    thought: str
    subplan: str


def parse_subplans(text: str, k: int) -> list[Candidate]:
    """The Planner's ``{"subplans": [{"thought", "subplan"}, ...]}``: the first ``k`` usable candidates
    (a non-empty ``subplan`` string; duplicates dropped). At least one is required."""
    items = _json_object(text).get("subplans")
    if not isinstance(items, list):
        raise AnswerError('the object needs the key "subplans" holding a list')
    out: list[Candidate] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        subplan, thought = item.get("subplan"), item.get("thought", "")
        if not isinstance(subplan, str) or not subplan.strip():
            continue
        candidate = Candidate(thought.strip() if isinstance(thought, str) else "", " ".join(subplan.split()))
        if candidate.subplan not in {c.subplan for c in out}:
            out.append(candidate)
    if not out:
        raise AnswerError('no candidate has a non-empty "subplan" text')
    return out[:k]


_SECTION = re.compile(r"^[ \t]*#{1,4}[ \t]*([A-Za-z ()]+?)[ \t]*#{0,4}[ \t]*$", re.M)


def operator_sections(text: str) -> dict[str, str]:
    """``### Header ###`` sections of an Operator answer, by header (case as in OPERATOR_SECTIONS)."""
    known = {name.lower(): name for name in OPERATOR_SECTIONS}
    marks = [(m.start(), m.end(), known.get(m.group(1).strip().lower())) for m in _SECTION.finditer(text)]
    sections: dict[str, str] = {}
    for i, (_, end, name) in enumerate(marks):
        if name is None:
            continue
        stop = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        sections[name] = text[end:stop].strip()
    return sections


def parse_operator(text: str, commands: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """The one action of the ``### Action ###`` section (a command of ``commands`` or
    ``subplan_done``), and all sections. Backticks around the action are dropped."""
    sections = operator_sections(text)
    if "Action" not in sections:
        raise AnswerError("the answer has no ### Action ### section")
    action = sections["Action"].strip().strip("`").strip()
    if action.lower().rstrip("()") == DONE:
        return DONE, sections
    try:
        parsed = parse_action(action, commands)
    except InvalidActionError as exc:
        raise AnswerError(str(exc)) from None
    if len(parsed) != 1:
        raise AnswerError(f"the Action section must hold exactly one action, got {len(parsed)}")
    return str(parsed[0]), sections


_COMPLETED = re.compile(r"completed\s*\**\s*:\s*\**\s*[\"'“”]?\s*(yes|no)\b", re.I)


def parse_micro(text: str) -> tuple[bool, str]:
    """(completed, thoughts) from ``Completed: "yes"|"no"`` (the last such line counts)."""
    found = _COMPLETED.findall(text)
    if not found:
        raise AnswerError('the answer has no line Completed: "yes" or Completed: "no"')
    thoughts = re.split(r"completed\s*\**\s*:", text, flags=re.I)[0]
    thoughts = re.sub(r"^\s*thoughts?\s*:\s*", "", thoughts.strip(), flags=re.I)
    return found[-1].lower() == "yes", thoughts.strip()


_STATUS = re.compile(r"status\s*code\s*\**\s*:\s*\**\s*\(?([A-E])\b", re.I)
_NOTES = re.compile(r"notes\s*\**\s*:\s*(.*)\Z", re.I | re.S)


def parse_macro(text: str) -> tuple[str, str]:
    """(status code A-E, notes) from the Macro check's answer."""
    found = _STATUS.findall(text)
    if not found:
        raise AnswerError("the answer has no line STATUS CODE: followed by one of A, B, C, D, E")
    notes = _NOTES.search(text[text.lower().rfind("status") :])
    return found[-1].upper(), " ".join(notes.group(1).split()) if notes else ""


@dataclass(frozen=True)
class Repair:
    reason: str
    revised_plan: str


def parse_reflection(text: str) -> Repair:
    """The Reflector's ``{"reason", "revised_plan"}``; the revised plan must be non-empty text."""
    value = _json_object(text)
    plan, reason = value.get("revised_plan"), value.get("reason", "")
    if not isinstance(plan, str) or not plan.strip():
        raise AnswerError('the object needs a non-empty "revised_plan" text')
    return Repair(reason.strip() if isinstance(reason, str) else "", " ".join(plan.split()))
