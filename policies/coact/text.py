"""CoAct's prompt texts, message builders and output parsers (docs/methods/coact.md).

Prompt wording lives in ``prompts/coact_global.txt``, ``prompts/coact_local.txt`` (one section per
agent intro, request and re-ask) and ``prompts/coact_examples.txt`` (the local plan's worked examples).
Every call's system message is the agent's intro, a blank line, then the request's instructions; its
user message is the four-field template (OBSERVATION, URL, OBJECTIVE, PREVIOUS ACTION) followed by the
extra sections the request needs, each as ``LABEL: value`` or ``LABEL:`` and a block.

The parsers are strict about what matters (a numbered action per plan line, a known decision word, a
``FINAL ANSWER:`` line) and tolerant of markdown decoration; each raises :class:`MalformedOutput`
with a message for the re-ask. Model text is only ever matched, never evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from webarena_gym.llm import Message
from webarena_gym.policies.react import render_actions, user_message
from webarena_gym.wrappers.actions.grammar import InvalidActionError, parse_command

PROMPTS = Path(__file__).parent.parent / "prompts"
GLOBAL_CALLS = ("global_plan", "decide", "revise", "collation")
LOCAL_CALLS = ("local_plan", "pass_check", "false_check", "revise", "overruled")


class MalformedOutput(ValueError):
    """The model's answer does not have the requested form; the message tells the model what is wrong."""


@dataclass(frozen=True)
class Phase:
    """One phase of the global plan: what the local agent does, and the state it should lead to."""

    subtask: str
    expected_state: str


@dataclass(frozen=True)
class PlanStep:
    """One line of a local plan: the command as the env takes it, or why the line cannot be run."""

    text: str
    action: str | None = None
    error: str | None = None
    answer: str | None = None  # the answer of a ``stop`` step


# -- prompt files ------------------------------------------------------------------------------------


@cache
def _sections(name: str) -> tuple[tuple[str, str], ...]:
    """(header, text) pairs of a prompt file split on ``=== header ===`` lines, in file order."""
    parts = re.split(r"^=== (\w+) ===\n", (PROMPTS / name).read_text(), flags=re.M)
    return tuple((parts[i], parts[i + 1].strip("\n")) for i in range(1, len(parts) - 1, 2))


def texts(agent: str) -> dict[str, str]:
    """The prompt sections of ``agent`` (``"global"`` or ``"local"``)."""
    return dict(_sections(f"coact_{agent}.txt"))


def examples() -> list[Message]:
    """The local plan's worked examples as alternating user/assistant turns."""
    return [{"role": role, "content": text} for role, text in _sections("coact_examples.txt")]


# -- messages ------------------------------------------------------------------------------------------


def global_system(call: str, reasons: str = "") -> str:
    """Intro of the global planner + the instructions of ``call`` (one of :data:`GLOBAL_CALLS`)."""
    t = texts("global")
    return t["intro"] + "\n\n" + t[call].format(plan_format=t["plan_format"], reasons=reasons.strip() or "(none given)")


def local_system(call: str, actions: Sequence[str], reasons: str = "") -> str:
    """Intro of the local agent (listing the enabled page operations) + the instructions of ``call``."""
    t = texts("local")
    intro = t["intro"].format(actions=render_actions(tuple(actions)))
    return intro + "\n\n" + t[call].format(plan_format=t["plan_format"], reasons=reasons.strip() or "(none given)")


def reask(agent: str, key: str, problem: str) -> str:
    """The follow-up that asks again after a malformed answer, with a concrete example of the form."""
    return texts(agent)[key].format(problem=problem.rstrip("."))


INLINE_SECTIONS = frozenset({"OVERALL TASK", "EXPECTED STATE", "CURRENT PHASE"})


def user_content(
    observation: str, url: str, objective: str, previous_action: str, sections: Sequence[tuple[str, str]] = ()
) -> str:
    """The four-field template, then each extra section: the short ones of :data:`INLINE_SECTIONS` on the
    label's line like the template's fields, every other one as a block below its label."""
    lines = [user_message(observation, url, objective, previous_action)]
    for label, value in sections:
        value = value.strip() or "(none)"
        inline = label in INLINE_SECTIONS and "\n" not in value
        lines.append(f"{label}: {value}" if inline else f"{label}:\n{value}")
    return "\n".join(lines)


def open_tabs(obs: Mapping[str, Any]) -> str:
    """The open tabs as WebArena's observation heads its tree: ``Tab 0 (current): Title | Tab 1: Title``
    (both agents' prompts name the open tabs, and ``tab_focus`` needs their indices); "" without tabs."""
    titles = [str(t) for t in obs.get("open_pages_titles") or ()]
    active: Any = obs.get("active_page_index")
    try:
        current = int(active[0] if hasattr(active, "__len__") else active)  # BrowserGym gives an array
    except (TypeError, ValueError, IndexError):
        current = -1
    return " | ".join(f"Tab {i}{' (current)' if i == current else ''}: {t}" for i, t in enumerate(titles))


def render_global_plan(phases: Sequence[Phase]) -> str:
    """A global plan in the output format the planner writes (so it reads its own plan back)."""
    return "\n\n".join(
        f"**Subtask {i}:**\n- **Subtask**: {p.subtask}\n- **Expected State**: {p.expected_state}"
        for i, p in enumerate(phases, 1)
    )


def render_local_plan(steps: Sequence[PlanStep]) -> str:
    return "\n".join(f"**Action {i}:** {s.action or s.text}" for i, s in enumerate(steps, 1))


# -- parsers -------------------------------------------------------------------------------------------

_DECOR = r"[ \t>#*-]*"  # list markers, quote marks, headings and bold around labels
_PHASE_HEADER = re.compile(rf"^{_DECOR}(?:\d+[.)][ \t]*)?{_DECOR}(?:Subtask|Phase)[ \t]+(\d+)\b(.*)$", re.I | re.M)
_PHASE_FIELD = re.compile(rf"^{_DECOR}(Subtask|Expected[ \t]+State)[ \t*]*:[ \t*]*(.*)$", re.I | re.M)
_ACTION_LINE = re.compile(rf"^{_DECOR}Action[ \t]+(\d+)[ \t]*[:.)]?[ \t*]*:?[ \t]*(.*)$", re.I | re.M)
_DECISION = re.compile(rf"^{_DECOR}(?:Action|Decision)[ \t*]*:[ \t*]*(.*)$", re.I | re.M)
_REASONS = re.compile(rf"^{_DECOR}Reasons?[ \t*]*:[ \t*]*", re.I | re.M)
_FINAL = re.compile(rf"^{_DECOR}FINAL[ \t]+ANSWER[ \t*]*:[ \t*]*", re.I | re.M)
_BACKTICKS = re.compile(r"`+([^`]+?)`+")
_ANSWER_PHRASE = re.compile(r"^in summary, the next action i will perform is\s*", re.I)


def _tidy(text: str) -> str:
    """A field's value without surrounding whitespace, bold markers or one pair of placeholder brackets."""
    text = text.strip().strip("*").strip()
    if text.startswith("[") and text.endswith("]") and text.count("[") == 1:
        text = text[1:-1].strip()
    return text


def parse_global_plan(text: str) -> list[Phase]:
    """Phases from ``**Subtask n:**`` (or ``Phase n``) blocks, each with ``- **Subtask**:`` and
    ``- **Expected State**:`` fields; a field runs to the next field or block. A block without a
    Subtask field uses its header's title. Raises :class:`MalformedOutput`."""
    text = text or ""
    headers = list(_PHASE_HEADER.finditer(text))
    if not headers:
        raise MalformedOutput("it has no phase blocks starting with a line such as **Subtask 1:**")
    phases = []
    for n, (head, nxt) in enumerate(zip(headers, [*headers[1:], None], strict=False), 1):
        block = text[head.end() : nxt.start() if nxt else len(text)]
        fields: dict[str, str] = {}
        found = list(_PHASE_FIELD.finditer(block))
        for field_, after in zip(found, [*found[1:], None], strict=False):
            value = field_.group(2) + block[field_.end() : after.start() if after else len(block)]
            key = " ".join(field_.group(1).lower().split())
            fields.setdefault(key, _tidy(value))
        subtask = fields.get("subtask") or _tidy(head.group(2).lstrip(" \t:.)-*"))
        if not subtask:
            raise MalformedOutput(f"phase {n} has no '- **Subtask**:' line")
        if not fields.get("expected state"):
            raise MalformedOutput(f"phase {n} has no '- **Expected State**:' line")
        phases.append(Phase(subtask, fields["expected state"]))
    return phases


def clean_action(text: str) -> str:
    """The command written on a plan line: the first backtick span if there is one (models add
    comments around it), without WebArena's answer phrase."""
    text = text.strip()
    span = _BACKTICKS.search(text)
    if span:
        text = span.group(1).strip()
    return _ANSWER_PHRASE.sub("", text).strip()


def parse_plan_step(text: str, commands: Collection[str]) -> PlanStep:
    """One plan line read with the strict bracketed grammar; ``[click [3]]`` (the placeholder's brackets
    kept) is accepted too. A line that does not parse is kept with its error: running it is an
    execution exception."""
    action = clean_action(text)
    if not action:
        return PlanStep(text, error="the line holds no action")
    candidates = [action]
    if action.startswith("[") and action.endswith("]"):
        candidates.append(action[1:-1].strip())
    error = ""
    for candidate in candidates:
        try:
            command = parse_command(candidate, commands)
        except InvalidActionError as exc:
            error = error or str(exc)
            continue
        return PlanStep(text, action=candidate, answer=command.args[0] if command.name == "stop" else None)
    return PlanStep(text, error=error)


def parse_local_plan(text: str, commands: Collection[str]) -> list[PlanStep]:
    """The ``**Action k:** action`` lines in order. Raises :class:`MalformedOutput` when there is no
    such line; single lines that do not parse stay in the plan with their error."""
    lines = list(_ACTION_LINE.finditer(text or ""))
    if not lines:
        raise MalformedOutput("it has no numbered action lines such as **Action 1:** click [12]")
    return [parse_plan_step(m.group(2), commands) for m in lines]


CHECK_WORDS = {
    "move": "move",
    "next": "move",
    "pass": "move",
    "passed": "move",
    "proceed": "move",
    "continue": "move",
    "revise": "revise",
    "rework": "revise",
    "request": "request",
    "replan": "request",
    "re-plan": "request",
    "replanning": "request",
}
DECIDE_WORDS = {
    "revise": "revise",
    "agree": "revise",
    "accept": "revise",
    "replan": "revise",
    "re-plan": "revise",
    "overrule": "overrule",
    "reject": "overrule",
    "refuse": "overrule",
    "disagree": "overrule",
    "keep": "overrule",
}


def parse_decision(text: str, allowed: Sequence[str], words: dict[str, str]) -> tuple[str, str]:
    """(decision, reasons) from ``Action: <word>`` and ``Reasons: <text>`` (reasons run to the end).

    The word is matched case-insensitively without brackets, quotes or backticks, first as a whole,
    then by its first word, through ``words`` (synonyms, e.g. replan -> request); it must be one of
    ``allowed``. Raises :class:`MalformedOutput`."""
    text = text or ""
    line = _DECISION.search(text)
    if not line:
        raise MalformedOutput("it has no 'Action:' line")
    value = re.sub(r"[\[\]`'\"“”‘’*.,!]", " ", line.group(1)).lower().split()
    decision = (words.get(" ".join(value)) or words.get(value[0]) or "") if value else ""
    if decision not in allowed:
        shown = " ".join(value) or "(empty)"
        raise MalformedOutput(f"the decision {shown!r} is not one of {', '.join(allowed)}")
    reasons = _REASONS.search(text)
    if not reasons:
        return decision, ""
    end = line.start() if reasons.start() < line.start() else len(text)  # reasons written first
    return decision, text[reasons.end() : end].strip()


def parse_collation(text: str) -> tuple[str, str]:
    """(summary, final answer) from the collation; the answer is what follows the last
    ``FINAL ANSWER:`` label, its lines joined with "; ". Raises :class:`MalformedOutput`."""
    text = text or ""
    labels = list(_FINAL.finditer(text))
    if not labels:
        raise MalformedOutput("it does not end with a 'FINAL ANSWER:' line")
    last = labels[-1]
    lines = [_tidy(line.strip().lstrip("-•").strip()) for line in text[last.end() :].splitlines()]
    answer = "; ".join(line for line in lines if line)
    if not answer:
        raise MalformedOutput("the 'FINAL ANSWER:' line is empty (write N/A when the task could not be done)")
    return text[: last.start()].strip(), answer
