"""Devil's Advocate's answer formats for the conformance model (docs/methods/devils_advocate.md).

Every role gets one user message built from a template of ``prompts/devils_advocate_prompts.txt``; the
responder reads the template's slots back out of it. The plan is the reference's units, one numbered
item each. Progress is what the prompt's history shows: the alignment check (this model too) writes
each executed action as WebArena describes it (``click [10] where [10] is link 'My Account'``), and the
units those entries carry out in order are done. The method has no stop command: the answer role gives
the reference's answer once the history shows every other unit done. The viewport tree shows part of a
page: an element the page lacks is looked for by scrolling down, up to :data:`MAX_SCROLLS` times.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from webarena_gym.experiments.conformance.model import (
    LACKS_ELEMENT,
    METHOD_LOGIC,
    NO_GRAMMAR,
    Element,
    Finding,
    Responder,
    Stuck,
    Unit,
    describes,
    page_elements,
    shows_target,
)
from webarena_gym.llm.messages import Message
from webarena_gym.policies.devils_advocate import text as T
from webarena_gym.policies.devils_advocate.policy import ROLES

if TYPE_CHECKING:
    from webarena_gym.experiments.conformance.model import ConformanceModel

ANSWERS = ("send_msg_to_user", "report_infeasible")
MAX_SCROLLS = 10  # scroll-downs in a row looking for an element before the page is taken to lack it
_ENTRY = re.compile(r"^\d+\. (.*)$", re.M)
_TRIAL = re.compile(r"^In trial \d+\b.*:$", re.M)


@cache
def _template(name: str) -> re.Pattern[str]:
    """The prompt ``name`` as a pattern with a named group per slot (a repeated slot must repeat its text)."""
    pattern, seen = "", set()
    for literal, slot in re.findall(r"([^{]*)(?:\{(\w+)\}|$)", T.texts()[name]):
        pattern += re.escape(literal)
        if slot:
            pattern += f"(?P={slot})" if slot in seen else f"(?P<{slot}>.*?)"
            seen.add(slot)
    return re.compile(pattern, re.S)


def slots(name: str, prompt: str) -> dict[str, str]:
    """The slots of a prompt built from template ``name``; a prompt of another shape is a harness bug."""
    match = _template(name).fullmatch(prompt)
    if match is None:
        raise ValueError(f"the prompt is not Devil's Advocate's {name!r} prompt")
    return match.groupdict()


def _quoted(text: str) -> str:
    return f'"{text}"' if "'" in text else f"'{text}'"


def describe(action: str, page: str) -> str:
    """An executed action as WebArena describes it, the element read off the page it ran on."""
    bid = re.match(r"\w+ \[(\d+)\]", action)
    element = next((e for e in page_elements(page) if bid and e.bid == bid.group(1)), None)
    return f"{action} where [{element.bid}] is {element.role} {_quoted(element.name)}" if element else action


def plan_item(unit: Unit) -> str:
    """One plan item in plain words, naming the element by its role and name."""
    step, target = unit.steps[0], unit.target
    element = f"the {target.get('role', '')} {_quoted(str(target.get('name', '')))}"
    if target.get("nth"):
        element += f" (number {int(target['nth']) + 1} of that name)"
    if unit.kind == "click":
        return f"Click {element}."
    if unit.kind == "fill":
        text = _quoted(" ".join(str(step.get("value", "")).split()))  # an item is one line
        return f"Type {text} into {element}{' and press Enter' * (len(unit.steps) - 1)}."
    if unit.kind == "select_option":
        return f"Choose {_quoted(str(step.get('value', '')))} in {element}."
    if unit.kind == "goto":
        return f"Open the address {step.get('url', '')}."
    if unit.kind == "go_back":
        return "Go back to the previous page."
    if unit.kind == "press":
        return f"Press {step.get('value', '')}."
    raise ValueError(f"a plan has no item for {unit.kind!r}")


def final_answer(unit: Unit) -> str:
    """The answer the reference ends with (a task without one answers that it is done)."""
    text = str(unit.steps[0].get("text", ""))
    if unit.kind == "send_msg_to_user":
        return text
    if unit.kind == "report_infeasible":
        return f"N/A: {text}" if text else "N/A"
    return "Done."


class DevilsAdvocateResponder(Responder):
    """Plan, action (and its remedies), alignment, task and subtask checks, element mapping, answer and
    summary, each in the form the method's readers take (``text.parse_*``)."""

    roles = ROLES

    def __init__(self, model: ConformanceModel) -> None:
        super().__init__(model)
        units = model.units
        # The plan: every unit but the final answer, which is the answer role's; a repeated item is
        # marked, so that each step names one unit.
        self.plan = units[:-1] if units[-1].kind in ANSWERS else units
        plain = [plan_item(unit) for unit in self.plan]
        repeats = [plain[:i].count(item) for i, item in enumerate(plain)]
        self.items = [f"{item[:-1]} (time {n + 1})." if n else item for item, n in zip(plain, repeats, strict=True)]

    def answer(self, role: str, messages: list[Message]) -> str:
        if self.model.finding is not None:  # having said it cannot go on, the model says so to every call
            return f"I cannot go on: {self.model.finding.cause}.\nNO"
        prompt = str(messages[0].get("content") or "")  # a re-ask or a remedy follows the first message
        try:
            return self._answer(role, prompt)
        except Stuck as stuck:  # a role whose prompt cannot tell progress: NO, and no action either
            self.model.record(stuck.finding)
            return f"I cannot tell: {stuck.finding.cause}.\nNO"

    def _answer(self, role: str, prompt: str) -> str:
        if role == "plan":
            return "List\n" + "\n".join(f"{i}. {item}" for i, item in enumerate(self.items, 1))
        if role in ("action", "remedy"):
            return self._action(slots("action", prompt))
        if role == "align":
            return self._align(slots("align", prompt))
        if role in ("task_check", "subtask_check"):
            fields = slots("completion", prompt)
            done = self._done(fields["history"])
            needed = len(self.plan) if role == "task_check" else self._step(fields["objective"], fields["plan"]) + 1
            verdict = "YES" if done >= needed else "NO"
            return f"The actions carried out so far finish {done} of the {needed} needed.\n{verdict}"
        if role == "answer":
            if self._done(slots("answer", prompt)["history"]) < len(self.plan):
                return f"{T.ANSWER_MARK} The actions carried out do not finish the task."
            return f"{T.ANSWER_MARK} {final_answer(self.model.units[-1])}"
        if role == "element_map":
            return self._map(slots("map", prompt))
        if role == "summarize":
            elements = page_elements(slots("summary", prompt)["observation"])
            return "\n".join(f"[{e.bid}] {e.role} {_quoted(e.name)}" for e in elements if e.bid)
        raise KeyError(f"Devil's Advocate has no role {role!r}")

    # -- progress, as the prompt shows it ------------------------------------------------------------

    def _entries(self, history: str) -> list[str]:
        """The current trial's history entries as actions: all of them, or once there are trial headings,
        those under the current trial's (a restart undid the others)."""
        current = history.partition("(the current trial):")[2] if _TRIAL.search(history) else history
        lead = f"{T.ALIGNMENT_LEAD} "
        return [e.removeprefix(lead).removesuffix(".") for e in _ENTRY.findall(current)]

    def _done(self, history: str) -> int:
        """How many reference units the history's entries carry out, in order."""
        done, units = 0, self.model.units
        for action in self._entries(history):
            if done < len(units) and describes(action, units[done]):
                done += 1
        return done

    def _step(self, step: str, plan: str) -> int:
        """The index of the plan item ``step`` (the plan in the prompt is this model's)."""
        items = T.parse_plan(plan)
        if step not in items:
            raise Stuck(Finding(METHOD_LOGIC, f"the step {step[:80]!r} is not an item of the plan"))
        return items.index(step)

    # -- the roles -------------------------------------------------------------------------------------

    def _action(self, fields: dict[str, str]) -> str:
        """The next unit's command on the screen the prompt shows; a scroll-down when the element may be
        further down; a reply without an action when the prompt lacks what the unit needs."""
        offered = {c for c in T.PROMPT_COMMANDS if T.render_commands([c]) in fields["commands"]}
        page, done = fields["observation"], self._done(fields["history"])
        units = self.model.units
        try:
            scrolled = self._entries(fields["history"])[-MAX_SCROLLS:] == ["scroll [down]"] * MAX_SCROLLS
            if done < len(units) and not shows_target(units[done], page) and "scroll" in offered and not scrolled:
                return "scroll [down]"
            action = self.model.next_command(done, page, "", offered, _addresses(fields["sites"]))
            if "\n" in action:  # the method reads an action off one line: a typed line break cannot be written
                finding = Finding(NO_GRAMMAR, "the step types text with a line break; an action is one line")
                self.model.record(finding)
                raise Stuck(finding)
            return action
        except Stuck as stuck:
            return f"I cannot go on: {stuck.finding.cause}."  # no action in it: the method has no stop

    def _align(self, fields: dict[str, str]) -> str:
        """The one-sentence description (the history entry) and whether the action serves the step."""
        action = describe(fields["action"], fields["obs1"])
        if action.startswith("scroll"):
            serves = " ".join(fields["obs1"].split()) != " ".join(fields["obs2"].split())
        else:
            unit = self.model.units[self._step(fields["step"], fields["plan"])]
            serves = describes(action, unit) and "(The action could not be carried out:" not in fields["obs2"]
            if "its options are" in fields["obs2"]:  # the labels reach this prompt only, never the action's
                detail = "a dropdown's options are listed in an action error the action prompt does not show"
                self.model.record(Finding(LACKS_ELEMENT, detail))
        return f"{T.ALIGNMENT_LEAD} {action}.\n{'YES' if serves else 'NO'}"

    def _map(self, fields: dict[str, str]) -> str:
        """The id the same element (role, name and rank among its namesakes) has on the new screen."""
        old, new = page_elements(fields["obs1"]), page_elements(fields["obs2"])
        element = next((e for e in old if e.bid == fields["element_id"]), None)
        if element is not None:
            rank = _namesakes(old, element).index(element)
            fresh = _namesakes(new, element)
            if rank < len(fresh):
                return f"[{fresh[rank].bid}]"
        finding = Finding(LACKS_ELEMENT, f"the new screen does not show the old screen's [{fields['element_id']}]")
        self.model.record(finding)
        return "The new screen does not show that element."


def _addresses(sites: str) -> dict[str, str]:
    """The address of each site the prompt's list shows (``- {intro}: {url}``, the method's intros)."""
    by_intro = {intro: site for site, intro in T.site_intros().items()}
    lines = (line.removeprefix("- ").rpartition(": ") for line in sites.splitlines())
    return {by_intro[intro]: url.strip() for intro, _, url in lines if intro in by_intro}


def _namesakes(elements: list[Element], element: Element) -> list[Element]:
    return [e for e in elements if (e.role, e.name) == (element.role, element.name)]
