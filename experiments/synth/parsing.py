"""Strict readers of the teacher's answers, one per output format of the paper's data prompts.

Each raises :class:`~experiments.synth.teacher.ParseError` with a message written for the teacher (the
re-ask shows it). Formats (the paper's or the released code's interfaces, or ours where both are silent):

* queries: ``[Start Task N]`` / ``Task:`` / ``Initial HTML State from Example Index: M`` / ``[End Task N]``;
* feasibility: ``## Task N`` / ``Verdict: FEASIBLE|INFEASIBLE`` / ``Reason:`` (ours);
* outcome and classification: ``## Reasoning`` then ``## Verdict`` (SUCCESS|FAILURE, ours) or
  ``## Classification`` (``Class X`` or ``Other``, A.7);
* grounded plans and replans (A.5, A.9): ``## Step N`` / ``Reasoning:`` / ``Description:`` / ``Step:`` /
  ``Actions:``, checked: every action covered once, each step's indices consecutive, steps in order;
* CoT: reasoning, then the plan or the action between its tags (the released code's targets); a CoT action
  must reproduce the given action exactly;
* plan pairs (A.6, A.8): ``## Data Pair i`` / ``User Query:`` / ``Initial HTML State:`` (A.6 only, an
  example's number) / ``Global Plan:`` with ``## Step N`` / ``Reasoning:`` / ``Step:`` steps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from webarena_gym.experiments.synth.teacher import ParseError
from webarena_gym.policies.plan_and_act.parsing import AnswerFormatError, PlanStep, plan_steps, tagged
from webarena_gym.policies.plan_and_act.prompts import ACTION_TAGS, PLAN_TAGS

_TASK_BLOCK = re.compile(r"\[Start Task (\d+)\](.*?)\[End Task \1\]", re.S)
_TASK_FIELDS = re.compile(r"Task:\s*(.*?)\s*\n\s*Initial HTML State from Example Index:\s*(\d+)", re.S)
_FEASIBILITY = re.compile(
    r"^##\s*Task\s+(\d+)\s*\n\s*Verdict:\s*\**\s*(FEASIBLE|INFEASIBLE)\b[^\n]*(?:\n\s*Reason:\s*([^\n]*))?",
    re.M | re.I,
)
_STEP_HEADER = re.compile(r"^##\s*Step\s+(\d+)\s*$", re.M)
_FIELD = re.compile(r"^(Reasoning|Description|Step|Actions):[ \t]*", re.M)
_PAIR_HEADER = re.compile(r"^##\s*Data Pair\s+(\d+)\s*$", re.M)
_LEAKED_INDEX = re.compile(r"\n?\s*Initial HTML State from Example Index:\s*\d+\s*$")
_SPACES = re.compile(r"\s+")
GROUNDED_FIELDS = ("Reasoning", "Description", "Step", "Actions")


def normalize(text: str) -> str:
    """A query compared by content: lower case, single spaces, no surrounding punctuation or quotes."""
    return _SPACES.sub(" ", text.lower()).strip(" .?!\"'")


# -- Stage 1 -------------------------------------------------------------------------------------------


def parse_queries(text: str, n: int, n_examples: int) -> list[tuple[str, int]]:
    """``n`` generated tasks as (query, example number 1..n_examples)."""
    blocks = _TASK_BLOCK.findall(text)
    numbers = [int(number) for number, _ in blocks]
    if numbers != list(range(1, n + 1)):
        raise ParseError(
            f"expected {n} blocks [Start Task 1] ... [End Task {n}] numbered 1 to {n}, found numbers {numbers}"
        )
    out = []
    for number, body in blocks:
        fields = _TASK_FIELDS.search(body)
        if not fields or not fields.group(1).strip():
            raise ParseError(f"task {number} needs a 'Task:' line and an 'Initial HTML State from Example Index:' line")
        index = int(fields.group(2))
        if not 1 <= index <= n_examples:
            raise ParseError(f"task {number} names example {index}; the examples are numbered 1 to {n_examples}")
        out.append((fields.group(1).strip(), index))
    return out


def parse_feasibility(text: str, n: int) -> list[tuple[bool, str]]:
    """A verdict (feasible?, reason) for each of tasks 1..n."""
    found: dict[int, tuple[bool, str]] = {}
    for number, verdict, reason in _FEASIBILITY.findall(text):
        if int(number) in found:
            raise ParseError(f"task {number} has more than one verdict")
        found[int(number)] = (verdict.upper() == "FEASIBLE", (reason or "").strip())
    missing = [i for i in range(1, n + 1) if i not in found]
    if missing:
        raise ParseError(f"no 'Verdict: FEASIBLE' or 'Verdict: INFEASIBLE' under '## Task N' for tasks {missing}")
    return [found[i] for i in range(1, n + 1)]


def _section(text: str, header: str) -> str | None:
    match = re.search(rf"^##\s*{header}\s*$(.*?)(?=^##\s|\Z)", text, re.M | re.S)
    return match.group(1).strip() if match else None


def parse_verdict(text: str) -> tuple[bool, str]:
    """(success, reasoning) from ``## Reasoning`` / ``## Verdict``."""
    verdict = _section(text, "Verdict")
    word = re.match(r"\W*(SUCCESS|FAILURE)\b", verdict or "", re.I)
    if not word:
        raise ParseError("end with a '## Verdict' section whose first word is SUCCESS or FAILURE")
    return word.group(1).upper() == "SUCCESS", _section(text, "Reasoning") or ""


def parse_classification(text: str, labels: tuple[str, ...]) -> tuple[str, str]:
    """(label, reasoning): a label of ``labels`` ("A", "B", ... or "Other") from ``## Classification``."""
    section = _section(text, "Classification")
    found = re.match(r"\W*(?:Class\s+([A-Z])\b|(Other)\b)", section or "", re.I)
    label = (found.group(1) or "").upper() or "Other" if found else None
    if label not in labels:
        allowed = ", ".join("Other" if x == "Other" else f"Class {x}" for x in labels)
        raise ParseError(f"end with a '## Classification' section holding one label of: {allowed}")
    return label, _section(text, "Reasoning") or ""


# -- grounded plans (Stage 2) --------------------------------------------------------------------------


@dataclass(frozen=True)
class GroundedStep:
    number: int
    reasoning: str
    description: str
    step: str
    actions: tuple[int, ...]


def _indices(text: str, number: int) -> tuple[int, ...]:
    out: list[int] = []
    for token in filter(None, re.split(r"[\s,]+", text.strip().strip("[]()"))):
        bounds = re.fullmatch(r"(\d+)\s*-\s*(\d+)|(\d+)", token)
        if not bounds:
            raise ParseError(f"Step {number}'s Actions line must list action indexes, like [3, 4, 5]; got {text!r}")
        if bounds.group(3):
            out.append(int(bounds.group(3)))
        else:
            out.extend(range(int(bounds.group(1)), int(bounds.group(2)) + 1))
    if not out:
        raise ParseError(f"Step {number} lists no actions")
    return tuple(out)


def parse_grounded(text: str, first: int, last: int) -> list[GroundedStep]:
    """A grounded plan whose steps cover actions ``first..last``: each once, consecutively, in order."""
    headers = list(_STEP_HEADER.finditer(text))
    if not headers:
        raise ParseError("no '## Step N' header found; begin with '## Step 1'")
    steps = []
    for i, header in enumerate(headers):
        number = int(header.group(1))
        if number != i + 1:
            raise ParseError(f"steps must be numbered 1, 2, 3 ...; step {i + 1} is headed '## Step {number}'")
        body = text[header.end() : headers[i + 1].start() if i + 1 < len(headers) else len(text)]
        fields = list(_FIELD.finditer(body))
        names = [f.group(1) for f in fields]
        if names != list(GROUNDED_FIELDS):
            raise ParseError(
                f"Step {number} must have the lines Reasoning:, Description:, Step: and Actions:, in that order "
                f"(found {names or 'none'})"
            )
        values = {
            f.group(1): body[f.end() : fields[j + 1].start() if j + 1 < len(fields) else len(body)].strip()
            for j, f in enumerate(fields)
        }
        if not values["Step"] or not values["Reasoning"]:
            raise ParseError(f"Step {number} has an empty Reasoning or Step")
        actions = _indices(values["Actions"].splitlines()[0] if values["Actions"] else "", number)
        if list(actions) != list(range(actions[0], actions[0] + len(actions))):
            raise ParseError(f"Step {number}'s actions {list(actions)} are not consecutive")
        steps.append(GroundedStep(number, values["Reasoning"], values["Description"], values["Step"], actions))
    check_coverage(steps, first, last)
    return steps


def check_coverage(steps: list[GroundedStep], first: int, last: int) -> None:
    """The paper's check: the steps take actions ``first..last`` one after another, each exactly once."""
    covered = [a for s in steps for a in s.actions]
    wanted = list(range(first, last + 1))
    if covered == wanted:
        return
    missing = sorted(set(wanted) - set(covered))
    twice = sorted({a for a in covered if covered.count(a) > 1})
    extra = sorted(set(covered) - set(wanted))
    problems = []
    if missing:
        problems.append(f"actions {missing} are in no step")
    if twice:
        problems.append(f"actions {twice} are in more than one step")
    if extra:
        problems.append(f"actions {extra} do not exist (the actions are {first} to {last})")
    if not problems:
        problems.append(f"the steps take the actions out of order ({covered})")
    raise ParseError(
        "; ".join(problems) + f"; every action from {first} to {last} must be in exactly one step, in order"
    )


def render_plan(steps: Sequence[GroundedStep | PlanStep]) -> str:
    """The planner's format (A.3): Reasoning and Step of each step; the annotation fields are dropped."""
    return "\n".join(f"## Step {i}\nReasoning: {s.reasoning}\nStep: {s.step}" for i, s in enumerate(steps, 1))


def render_grounded(steps: list[GroundedStep]) -> str:
    """A grounded plan in its annotation format (the annotator's earlier answers in a replanning chat)."""
    return "\n".join(
        f"## Step {s.number}\nReasoning: {s.reasoning}\nDescription: {s.description}\nStep: {s.step}\n"
        f"Actions: [{', '.join(map(str, s.actions))}]"
        for s in steps
    )


# -- CoT (Stage 2) -------------------------------------------------------------------------------------


def _tagged(text: str, tags: tuple[str, str]) -> tuple[str, str]:
    try:
        reasoning, body = tagged(text, tags)
    except AnswerFormatError as error:
        raise ParseError(str(error)) from None
    if not reasoning:
        raise ParseError(f"write your reasoning before {tags[0]}")
    return reasoning, body


def parse_cot_plan(text: str, n_steps: int) -> tuple[str, str]:
    """(reasoning, plan): a plan between the plan tags with ``n_steps`` steps in the A.3 format."""
    reasoning, body = _tagged(text, PLAN_TAGS)
    steps = plan_steps(body[body.find("## Step") :] if "## Step" in body else "")
    if len(steps) != n_steps:
        raise ParseError(
            f"the plan between the tags must keep the {n_steps} steps given, each with a 'Reasoning:' and a "
            f"'Step:' line (found {len(steps)})"
        )
    return reasoning, render_plan(steps)


def _lines(action: str) -> list[str]:
    return [line.strip() for line in action.strip().splitlines() if line.strip()]


def parse_cot_action(text: str, action: str) -> str:
    """The reasoning before an action that reproduces ``action`` exactly (comment lines included)."""
    reasoning, body = _tagged(text, ACTION_TAGS)
    if _lines(body) != _lines(action):
        raise ParseError(
            f"the action between the tags must be exactly the given one, comment lines included:\n{action}"
        )
    return reasoning


# -- plan pairs (Stages 3 and 4) -----------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    query: str
    example: int | None  # the example whose initial page the pair reuses (A.6); None for A.8
    steps: tuple[PlanStep, ...]

    @property
    def plan(self) -> str:
        return render_plan(self.steps)


def _pair(body: str, number: int, with_index: bool, n_examples: int) -> Pair:
    labels = ("User Query:", "Initial HTML State:", "Global Plan:") if with_index else ("User Query:", "Global Plan:")
    positions = [body.find(label) for label in labels]
    if -1 in positions or positions != sorted(positions):
        raise ParseError(f"data pair {number} must have the fields {', '.join(labels)} in that order")
    parts = [
        body[p + len(label) : positions[i + 1] if i + 1 < len(positions) else len(body)].strip()
        for i, (p, label) in enumerate(zip(positions, labels, strict=True))
    ]
    query = _LEAKED_INDEX.sub(
        "", parts[0]
    ).strip()  # as the released code does: a task-generation line leaking into the query
    if not query:
        raise ParseError(f"data pair {number} has an empty User Query")
    example = None
    if with_index:
        digits = re.match(r"\D{0,20}?(\d+)", parts[1])
        if not digits or not 1 <= int(digits.group(1)) <= n_examples:
            raise ParseError(
                f"data pair {number}'s Initial HTML State must be an example number from 1 to {n_examples}"
            )
        example = int(digits.group(1))
    plan = parts[-1]
    steps = plan_steps(plan[plan.find("## Step") :] if "## Step" in plan else "")
    if not steps or [s.number for s in steps] != list(range(1, len(steps) + 1)):
        raise ParseError(
            f"data pair {number}'s Global Plan must be steps '## Step 1', '## Step 2' ..., each with a "
            "'Reasoning:' line and a 'Step:' line"
        )
    return Pair(query, example, steps)


def parse_pairs(text: str, n: int, n_examples: int) -> list[Pair]:
    """``n`` expansion pairs (A.6) numbered 1..n, each reusing one of ``n_examples`` initial pages."""
    headers = list(_PAIR_HEADER.finditer(text))
    numbers = [int(h.group(1)) for h in headers]
    if numbers != list(range(1, n + 1)):
        raise ParseError(f"expected {n} data pairs headed '## Data Pair 1' to '## Data Pair {n}', found {numbers}")
    return [
        _pair(text[h.end() : headers[i + 1].start() if i + 1 < len(headers) else len(text)], i + 1, True, n_examples)
        for i, h in enumerate(headers)
    ]


def parse_targeted(text: str, seed_query: str) -> Pair:
    """The one new pair of A.8; a copy of the seed's query is refused."""
    headers = list(_PAIR_HEADER.finditer(text))
    if [int(h.group(1)) for h in headers] != [1]:
        raise ParseError("write exactly one data pair, headed '## Data Pair 1'")
    pair = _pair(text[headers[0].end() :], 1, False, 0)
    if normalize(pair.query) == normalize(seed_query):
        raise ParseError("the new User Query is the example's query; change its details and its wording")
    return pair
