"""Plan-and-Act's prompts: one builder per call, in the two styles of docs/methods/plan_and_act.md.

* ``cot=False`` -- the paper's prompts (its appendix): the planner's system prompt and user message (A.3), the
  replanner's system prompt and collapsed user/assistant rounds (A.10), the executor's plan section (A.4)
  in front of the WebRL executor prompt, with WebArena-Lite's chat rounds.
* ``cot=True`` -- the authors' released CoT system: single-message planner and replanner prompts that ask for
  reasoning and then the plan between ``[Start of Plan]`` and ``[End of Plan]``, and the executor's
  multi-round conversation that asks for reasoning and then the action between ``[Start of Action]`` and
  ``[End of Action]``.

All wording is in ``prompts/plan_and_act_prompts.txt`` and ``prompts/plan_and_act_actions.txt``; section
labels, tags and round formats are the paper's and the released code's interfaces. Decisions they leave open:
* the executor's system prompt is the plan section, a blank line, then the WebRL prompt; with dynamic
  replanning the plan section carries the newest plan in every round (non-CoT);
* the replanner's first user message starts with a ``## User Query`` section (the system prompt names the
  query as an input, A.10.2 shows no slot for it); the initial plan is the A.3 planner's, shown as the
  replanner's first answer (as the released code starts from its initial planner);
* previous actions are listed as ``- Action k:`` blocks separated by blank lines in both styles (the released
  replanner's layout; A.10 does not show one);
* the action formats listed are exactly the actions the task enables (the CoT code lists 8, WebRL 14);
* an action that failed in the browser is reported in the next round's user message (``action_error``),
  unless the policy turns that off.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from webarena_gym.llm import Message
from webarena_gym.wrappers.actions.webrl_grammar import DO_ACTIONS, NEEDS_ARGUMENT, NEEDS_ELEMENT
from webarena_gym.wrappers.observations.html import PLACEHOLDER as HTML_PLACEHOLDER  # WebRL's stand-in for an old page

PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
ACTIONS_PLACEHOLDER = "** List of previous actions **"  # A.10.2's stand-in for earlier action lists
PLAN_TAGS = ("[Start of Plan]", "[End of Plan]")
ACTION_TAGS = ("[Start of Action]", "[End of Action]")


@cache
def texts() -> dict[str, str]:
    """The prompt sections of ``plan_and_act_prompts.txt`` by name."""
    parts = re.split(r"^=== (\w+) ===\n", (PROMPTS / "plan_and_act_prompts.txt").read_text(), flags=re.M)
    return {parts[i]: parts[i + 1].rstrip("\n") for i in range(1, len(parts), 2)}


@dataclass(frozen=True)
class ActionSpec:
    name: str
    format: str
    meaning: str
    example: str


@cache
def action_specs() -> dict[str, ActionSpec]:
    """The actions of ``plan_and_act_actions.txt`` in prompt order."""
    specs = {}
    for line in (PROMPTS / "plan_and_act_actions.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, form, meaning, example = line.split("|", 3)
            specs[name] = ActionSpec(name, form, meaning, example.replace("\\n", "\n"))
    return specs


def _enabled(commands: Sequence[str]) -> list[ActionSpec]:
    specs = action_specs()
    unknown = [c for c in commands if c not in specs]
    if unknown:
        raise ValueError(f"no Plan-and-Act description for action(s) {unknown}")
    return [spec for name, spec in specs.items() if name in commands]


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(f'"{n}"' for n in names) or "none"


def webrl_system(commands: Sequence[str]) -> str:
    """WebArena-Lite's WebRL executor prompt for exactly the enabled actions."""
    t = texts()
    enabled = _enabled(commands)
    do = [s.name for s in enabled if s.name in DO_ACTIONS]
    functions = []
    if do:
        functions.append(
            t["webrl_do"].format(
                actions=_quoted(do),
                details="\n".join(f'        "{s.name}" {s.meaning}.' for s in enabled if s.name in DO_ACTIONS),
                argument_actions=_quoted([a for a in do if a in NEEDS_ARGUMENT]),
                element_actions=_quoted([a for a in do if a in NEEDS_ELEMENT]),
            )
        )
    functions += [t[f"webrl_{s.name}"] for s in enabled if s.name not in DO_ACTIONS]
    examples = "\n\n".join(s.example for s in enabled if s.example)
    return t["webrl_system"].format(functions="\n\n".join(functions), examples=examples)


def action_formats(commands: Sequence[str]) -> str:
    """Numbered action formats for the CoT executor (the released code's), one per enabled action."""
    return "\n".join(f"{i}. {s.name}: `{s.format}` ({s.meaning})" for i, s in enumerate(_enabled(commands), 1))


def previous_actions(actions: Sequence[str]) -> str:
    """The executor's earlier actions, comments included, as ``- Action k:`` blocks ("None" before any)."""
    if not actions:
        return "None"
    return "\n\n".join(f"- Action {k}:\n{text}" for k, text in enumerate(actions, 1))


# -- planner (A.3 / released CoT) --------------------------------------------------------------------------


def planner_messages(goal: str, html: str, cot: bool) -> list[Message]:
    """The initial planner's input: the query and the initial page without ids."""
    t = texts()
    if cot:
        return [{"role": "user", "content": t["cot_planner"].format(goal=goal, html=html)}]
    return [
        {"role": "system", "content": t["planner_system"]},
        {"role": "user", "content": t["planner_user"].format(goal=goal, html=html)},
    ]


# -- replanner (A.10 / released CoT) -----------------------------------------------------------------------


def replanner_messages(goal: str, plans: Sequence[str], actions: Sequence[str], html: str, cot: bool) -> list[Message]:
    """The replanner's input after at least one action: every earlier plan (A.10: as its own answers to
    collapsed rounds; CoT: only the latest), the actions so far and the current page without ids."""
    if not plans:
        raise ValueError("replanning needs the initial plan")
    t = texts()
    if cot:
        content = t["cot_replanner"].format(
            goal=goal, plan=plans[-1], actions=previous_actions(actions), html=html
        )  # fmt: skip
        return [{"role": "user", "content": content}]
    query = f"## User Query\n{goal}\n\n"
    messages: list[Message] = [{"role": "system", "content": t["replanner_system"]}]
    for i, plan in enumerate(plans):
        collapsed = f"# Previous Actions\n{ACTIONS_PLACEHOLDER}\n\n# HTML\n{HTML_PLACEHOLDER}"
        messages.append({"role": "user", "content": (query if i == 0 else "") + collapsed})
        messages.append({"role": "assistant", "content": plan})
    messages.append({"role": "user", "content": f"# Previous Actions\n{previous_actions(actions)}\n\n# HTML\n{html}"})
    return messages


# -- executor (A.4 + WebRL / released CoT) -------------------------------------------------------------


@dataclass(frozen=True)
class PastRound:
    """One earlier executor round as its history shows it: the page stand-in (placeholder or snippet),
    the action text (comments and call) and, in the CoT style, the reasoning before it."""

    page: str
    action: str
    reasoning: str = ""


def executor_messages(
    goal: str,
    commands: Sequence[str],
    html: str,
    history: Sequence[PastRound],
    *,
    plan: str | None,
    cot: bool,
    dynamic: bool,
    error: str | None = None,
) -> list[Message]:
    """The executor's input for the current round: earlier rounds with their pages replaced (by the
    caller's :class:`PastRound` pages), then the current page with ids. ``plan`` None: no planner."""
    note = texts()["action_error"].format(error=error) + "\n\n" if error else ""
    if cot:
        return _cot_executor(goal, commands, html, history, plan, dynamic, note)
    system = webrl_system(commands)
    if plan is not None:
        system = texts()["executor_plan"].format(goal=goal, plan=plan) + "\n\n" + system
    messages: list[Message] = [{"role": "system", "content": system}]
    for i, past in enumerate(history):
        if i == 0:
            page = goal if past.page == HTML_PLACEHOLDER else past.page  # WebRL repeats the task in round 0
            user = f"Task Instruction: {goal}\n\nRound 0\n{page}"
        else:
            user = f"Round {i}\n{past.page}"
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": past.action}]
    index = len(history)
    head = f"Task Instruction: {goal}\n\nRound 0" if index == 0 else f"Round {index}"
    messages.append({"role": "user", "content": f"{head}\n\n{note}{html}"})
    return messages


def cot_answer(reasoning: str, action: str) -> str:
    """An earlier CoT executor answer as its history shows it (the released code's format)."""
    return f"<think>\n{reasoning}\n</think>\n\n{ACTION_TAGS[0]}\n{action}\n{ACTION_TAGS[1]}"


def _cot_executor(
    goal: str,
    commands: Sequence[str],
    html: str,
    history: Sequence[PastRound],
    plan: str | None,
    dynamic: bool,
    note: str,
) -> list[Message]:
    t = texts()
    variant = "none" if plan is None else "dynamic" if dynamic else "static"
    # who the executor is, what it gets besides the task, what it keeps in line with, what the question cites
    agent, inputs, step, ref = t[f"cot_variant_{variant}"].split("\n")
    first = t["cot_executor_first"].format(
        agent=agent, plan_inputs=inputs, plan_step=step, formats=action_formats(commands), goal=goal
    )
    static_plan = "\n\n" + t["cot_static_plan"].format(plan=plan) if plan is not None and not dynamic else ""

    def round_text(n: int, page: str, current: bool) -> str:
        """Round ``n``'s user message: prefix, the plan (current round, dynamic plans only), postfix."""
        plan_ref = "the UPDATED plan" if dynamic and plan is not None and n > 1 else ref
        question = t["cot_executor_question"].format(plan_ref=plan_ref)
        if n == 1:
            prefix = first + static_plan
            postfix = t["cot_executor_round_first"].format(html=page, question=question)
        else:
            prefix = t["cot_executor_round_next"].format(round=n)
            postfix = f"{page}\n\n{question}"
        live = ""
        if current and dynamic and plan is not None:
            live = t["cot_current_plan" if n == 1 else "cot_updated_plan"].format(plan=plan)
        return "\n\n".join(part for part in (prefix, live, postfix) if part)

    messages: list[Message] = []
    for i, past in enumerate(history):
        messages.append({"role": "user", "content": round_text(i + 1, past.page, current=False)})
        messages.append({"role": "assistant", "content": cot_answer(past.reasoning, past.action)})
    messages.append({"role": "user", "content": round_text(len(history) + 1, note + html, current=True)})
    return messages


def retry_message(kind: str, error: str, cot: bool) -> Message:
    """The corrective message after an unusable answer (``kind``: "plan" or "action"), with an example."""
    return {"role": "user", "content": texts()[f"retry_{kind}" + ("_cot" if cot else "")].format(error=error)}
