"""Plan-MCTS's roles for the conformance model (docs/methods/plan_mcts.md): Planner, Operator, Micro and
Macro checks, Reflector, each in the format of :mod:`policies.plan_mcts.prompts`.

A subplan is a stretch of the reference written as one phrase per unit (``click the link 'My
Orders'; then answer the user: 000000195``), at most :data:`UNITS_PER_SUBPLAN` units: the Operator
has ``operator_steps`` = 5 actions per subplan and the tree ``max_depth`` = 5 levels, so a 4-unit
stretch leaves one action for a scroll and the path carries 20 units. Every role finds progress in
what its prompt shows: the completed subplans of the history (each must be such a stretch, in the
reference's order) and the actions of the current subplan (``scroll`` and failed actions are no
reference step). The model knows one way only, so the Planner's k variations are the same subplan
(the method keeps one of duplicates) and the search is a single path.

The ablations change what the prompts show, and the roles read it: with the raw history (``context="raw"``)
progress is the reference units the whole action trace carries out; at action level (``action_mcts``,
``action_search``) the Planner proposes the next command itself, read off the page in its prompt, every
subplan of the history is one command, and the checks judge that one action.
"""

from __future__ import annotations

import json
import re

from webarena_gym.envs.local.reference import PLACEHOLDERS
from webarena_gym.experiments.conformance.model import (
    GIVE_UP,
    LACKS_ELEMENT,
    METHOD_LOGIC,
    Element,
    Finding,
    Responder,
    Stuck,
    Unit,
    command,
    find_element,
    line_after,
    message_text,
    offered_commands,
    page_elements,
    section,
    system_text,
    typed,
)
from webarena_gym.llm.messages import Message
from webarena_gym.policies.plan_mcts.prompts import DONE, action_specs, texts

UNITS_PER_SUBPLAN = 4
_JOIN = "; then "
_ITEM = re.compile(r"^\d+\. (.*) \[(Completed|Not Completed)\](?: status [A-E], score [\d.]+)?(?:; notes: .*)?$")
_STEP = re.compile(r"^\d+\. (\S+)(.*?)(?: -> \S*)?( \(error: .*\))?\s*$", re.S)
# One numbered entry of an action list (a typed text may run over several lines).
_ENTRY = re.compile(r"^\d+\. .*?(?=^\d+\. |\Z)", re.M | re.S)
# A header of the Plan-MCTS prompts: ``### Current Subplan ###``, ``## Context ##``, ``# Current page ...``.
_HEADER = r"\n#{1,3} [A-Z][^\n]*"
# Where the raw-history ablation shows the whole action trace instead of the subplans (prompts.py).
_RAW_HISTORY = ("### Interaction History (All Previous Actions) ###", "### Previously Executed Actions ###")
# An element of the aligned text outside the marked viewport: its role and name, no id.
_UNMARKED = re.compile(r"""^[ \t]*(\w+) (?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")""", re.M)


def phrase(unit: Unit) -> str:
    """One reference unit in words, by the role and name (or value) the reference gives."""
    step, target = unit.steps[0], unit.target
    element = f"the {target.get('role', '')} '{' '.join(str(target.get('name', '')).split())}'"
    if int(target.get("nth", 0)):
        element += f" (match {int(target.get('nth', 0)) + 1})"
    value = " ".join(str(step.get("value", "")).split())
    text = " ".join(str(step.get("text", "")).split())
    kind = unit.kind
    if kind == "click":
        return f"click {element}"
    if kind == "fill":
        return f"type '{value}' into {element}" + (" and press Enter" if len(unit.steps) == 2 else "")
    if kind == "select_option":
        return f"choose '{value}' in {element}"
    if kind == "press":
        return f"press {value}"
    if kind == "goto":
        url = str(step.get("url", ""))
        for placeholder, site in PLACEHOLDERS.items():
            if url.startswith(placeholder):
                return f"open {url[len(placeholder) :] or '/'} on the {site} site"
        return f"open {url}"
    if kind == "go_back":
        return "go back to the previous page"
    if kind == "report_infeasible":
        return f"answer the user that the task cannot be done: {text}"
    if kind == "send_msg_to_user":
        return f"answer the user: {text}"
    return f"{kind} {element}"


class PlanMCTSResponder(Responder):
    """Every role of Plan-MCTS (prompts.py's five builders), answered from the reference."""

    roles = ("planner", "operator", "micro", "macro", "reflector")

    def answer(self, role: str, messages: list[Message]) -> str:
        """``role``'s answer to its prompt (the user message after the system text; a re-ask, after
        an answer of this model that did not parse, adds nothing it needs)."""
        return str(getattr(self, role)(system_text(messages), message_text(messages[1])))

    # -- the plan and its progress ----------------------------------------------------------------

    def plan(self, start: int, stop: int) -> str:
        """The subplan for reference units ``start`` to ``stop``."""
        text = _JOIN.join(phrase(u) for u in self.model.units[start:stop])
        return text[:1].upper() + text[1:] + "."

    def stretch(self, subplan: str, start: int = 0) -> tuple[int, int]:
        """The units (start, stop) a subplan of this model names, the earliest from ``start``."""
        units = len(self.model.units)
        for first in range(start, units):
            for last in range(first + 1, min(first + UNITS_PER_SUBPLAN, units) + 1):
                if self.plan(first, last) == subplan:
                    return first, last
        raise Stuck(Finding(METHOD_LOGIC, f"the subplan {subplan[:120]!r} is no stretch of the reference"))

    def history_done(self, user: str, header: str) -> int:
        """The units the prompt's history shows done: the raw action trace when the prompt shows one,
        else the completed subplans under ``header``."""
        raw = next((h for h in _RAW_HISTORY if f"\n{h}\n" in f"\n{user}"), None)
        if raw is not None:
            return self.carried_out(0, _part(user, raw))
        return self.done_before(_part(user, header))

    def done_before(self, history: str) -> int:
        """The units the history's completed subplans carried out: each must be the stretch that
        follows the one before it (a history that skips steps does not show them done); a subplan that
        is one command (action level) carries out the next unit when it is that unit's command."""
        done = 0
        for line in history.strip().splitlines():
            item = _ITEM.match(line.strip())
            if item is None or item.group(2) != "Completed":
                continue
            if is_command(item.group(1)):
                done += self.carried_out(done, f"1. {item.group(1)}")
                continue
            first, last = self.stretch(item.group(1), done)
            if first != done:
                detail = f"the history shows {item.group(1)[:80]!r} done but not the reference steps before it"
                raise Stuck(Finding(METHOD_LOGIC, detail))
            done = last
        return done

    def carried_out(self, first: int, actions: str) -> int:
        """How many units from ``first`` the listed actions carried out: each action that is no
        scroll and shows no error is the next unit (a unit it does not match ends the count)."""
        done = first
        for entry in _ENTRY.findall(actions.strip()):
            step = _STEP.match(entry)
            if step is None or step.group(1) == "scroll" or step.group(3):
                continue
            if done >= len(self.model.units) or not self._is(step.group(1), step.group(2), self.model.units[done]):
                break
            done += 1
        return done - first

    def _is(self, verb: str, arguments: str, unit: Unit) -> bool:
        """Whether an action (its verb and bracketed arguments) is the command ``unit`` needs."""
        if unit.kind in ("send_msg_to_user", "report_infeasible"):
            answer = command(unit, "", "", {"stop"}, self.model.sites)
            return " ".join(f"{verb}{arguments}".split()) == " ".join(answer.split())
        value = _squeezed(str(unit.steps[0].get("value", "")))
        if unit.kind == "fill":
            return verb == "type" and typed(value, _squeezed(arguments), f" [{1 if len(unit.steps) == 2 else 0}]")
        if unit.kind == "select_option":  # the option clicked, or its label typed into the dropdown
            return verb == "click" or (verb == "type" and f"[{value}]" in arguments)
        return verb == unit.kind

    # -- roles ------------------------------------------------------------------------------------

    def planner(self, system: str, user: str) -> str:
        """The next stretch of the reference after what the history shows done, as every variation."""
        k = int(m.group(1)) if (m := re.search(r"exactly (\d+) different", system)) else 1
        actions = system.startswith(_ACTION_PLANNER)
        try:
            done = self.history_done(user, "### Subplan History ###")
            if done >= len(self.model.units):
                raise Stuck(Finding(METHOD_LOGIC, "the history shows every reference step done, yet asks for more"))
            if actions:
                page = _part(user, "### Current Page Accessibility Tree ###")
                subplan = self._command(done, page, line_after(page, "URL: "), offered_commands(system))
            else:
                subplan = self.plan(done, min(done + UNITS_PER_SUBPLAN, len(self.model.units)))
            thought = "The history shows the steps before this one done; this is the next stretch of the solution."
        except Stuck as stuck:
            self._record(stuck)
            thought = f"I cannot go on: {stuck}."
            subplan = (
                f"stop [{GIVE_UP}: {stuck.finding.cause}]"
                if actions
                else f"Stop: the task cannot continue ({stuck.finding.cause})."
            )
        kinds = ("Standard", "Granular", "Alternative")
        items = [{"thought": f"{kinds[i % 3]}: {thought} I know no other way.", "subplan": subplan} for i in range(k)]
        return json.dumps({"subplans": items})

    def operator(self, system: str, user: str) -> str:
        """The command for the next unit of the subplan, ``subplan_done`` once its units are done."""
        page = _part(user, "# Current page Accessibility Tree")
        url = line_after(page, "URL: ")
        offered = offered_commands(system)
        try:
            done = self.history_done(user, "### Previous Subplans ###")
            subplan = " ".join(_part(user, "### Current Subplan to Execute ###").split())
            first, last = (done, len(self.model.units)) if subplan == _FINAL else self.stretch(subplan, done)
            local = _part(user, "### Interaction History (Current Subplan) ###")
            at = first + self.carried_out(first, local)
            if at >= last:
                action, reason = DONE, "Every step of the subplan is done."
            else:
                action, reason = self._command(at, page, url, offered), "This is the next step of the subplan."
        except Stuck as stuck:
            self._record(stuck)
            action, reason = f"stop [{GIVE_UP}: {stuck.finding.cause}]", f"I cannot go on: {stuck}."
        ids = ", ".join(re.findall(r"^(?:click|type) \[(\d+)\]", action))
        return (
            "### Interaction History Summary ###\nThe steps before this one are done.\n"
            f"### Observation Highlights ###\n{ids or 'none'}\n"
            "### Observation Description ###\nThe page shows what the next step needs.\n"
            f"### Reason ###\n{reason}\n### Action ###\n{action}\n"
        )

    def micro(self, system: str, user: str) -> str:
        """Yes when the subplan's actions are its units, each carried out without an error."""
        subplan = " ".join(_part(user, "### Current Subplan ###").split())
        local = _part(user, "### Interaction History (Actions for This Subplan) ###")
        if is_command(subplan):
            if _ran(local):
                return 'Thoughts: the action was carried out without an error.\nCompleted: "yes"'
            return 'Thoughts: the action was not carried out, or it failed.\nCompleted: "no"'
        try:
            first, last = self.stretch(subplan)
        except Stuck as stuck:
            return f'Thoughts: {stuck.finding.detail}.\nCompleted: "no"'
        done = self.carried_out(first, local)
        if first + done < last:
            return f'Thoughts: the actions carried out {done} of the subplan\'s {last - first} steps.\nCompleted: "no"'
        return 'Thoughts: every step of the subplan was carried out without an error.\nCompleted: "yes"'

    def macro(self, system: str, user: str) -> str:
        """The status the reference gives the state: A when its last unit (the answer) is done, B with
        one or two units left, C with more; E when the subplan's actions are not its units."""
        subplan = " ".join(_part(user, "### Current Subplan Being Evaluated ###").split())
        local = _part(user, "### Current Subplan Action History ###")
        try:
            done = self.history_done(user, "### Previously Executed Subplans ###")
            if is_command(subplan):  # one action: the state is as far as it took the task
                first, last = done, done + self.carried_out(done, local)
                carried = _ran(local)
            else:
                first, last = self.stretch(subplan, done)
                carried = first == done and first + self.carried_out(first, local) >= last
        except Stuck as stuck:
            return f"Thoughts: {stuck.finding.detail}.\nSTATUS CODE: D\nNotes: progress is unclear."
        if not carried:
            return "Thoughts: the subplan's steps were not carried out.\nSTATUS CODE: E\nNotes: retry them."
        left = len(self.model.units) - last
        code = "A" if left == 0 else "B" if left <= 2 else "C"
        return f"Thoughts: {left} reference steps remain.\nSTATUS CODE: {code}\nNotes: {last} steps done."

    def reflector(self, system: str, user: str) -> str:
        """The subplan's units the trace does not show done, and why the next one was not."""
        subplan = line_after(user, "The original subplan was: ").strip('"')
        page = _part(user, "## Last Page State (Accessibility Tree) ##")
        url = line_after(page, "URL: ")
        try:
            first, last = self.stretch(subplan)
        except Stuck as stuck:
            return json.dumps({"reason": f"Type A: {stuck.finding.detail}", "revised_plan": subplan})
        at = min(first + self.carried_out(first, _part(user, "## Execution Trace ##")), last - 1)
        try:
            command(self.model.units[at], page, url, PLAN_MCTS_COMMANDS, self.model.sites)
            reason = "Type B: the subplan stopped before its remaining steps."
        except Stuck as stuck:
            reason = f"Type A: {stuck}"
        return json.dumps({"reason": reason, "revised_plan": self.plan(at, last)})

    def _command(self, at: int, page: str, url: str, offered: set[str]) -> str:
        """The unit's command; ``scroll`` when the page text names its element outside the marked
        viewport (without an id)."""
        try:
            return command(self.model.units[at], page, url, offered, self.model.sites)
        except Stuck as stuck:
            direction = _beyond_viewport(self.model.units[at], page)
            if stuck.finding.cause != LACKS_ELEMENT or direction is None or "scroll" not in offered:
                return self.model.next_command(at, page, url, offered)  # records the finding
            return f"scroll [{direction}]"

    def _record(self, stuck: Stuck) -> None:
        self.model.record(stuck.finding)


_FINAL = " ".join(texts()["final_subplan"].split())
PLAN_MCTS_COMMANDS = set(action_specs())
_ACTION_PLANNER = texts()["planner_actions_system"].partition("{")[0]  # the action-level Planner's opening


def is_command(subplan: str) -> bool:
    """Whether a subplan is one command (the action-level ablations): this model's subplans are phrases."""
    return subplan.split(" ", 1)[0] in PLAN_MCTS_COMMANDS


def _squeezed(text: str) -> str:
    """``text`` with each run of whitespace one space, and none just inside a bracket: a typed text that
    ends in a line break (a file's content) reads as the reference's value."""
    return re.sub(r"\[ | \]", lambda m: m.group(0).strip(), " ".join(text.split()))


def _ran(actions: str) -> bool:
    """Whether an action list shows an action run, none with an error (an action-level subplan's check)."""
    entries = [_STEP.match(entry) for entry in _ENTRY.findall(actions.strip())]
    return bool(entries) and all(step is not None and not step.group(3) for step in entries)


def _part(text: str, header: str) -> str:
    """The body under ``header`` (a line of its own, the last such) up to the next header, or ""."""
    return section(text, header, _HEADER, after=r"\n")


def _beyond_viewport(unit: Unit, page: str) -> str | None:
    """``down`` (or ``up``) when the page text names the unit's element without an id after (or
    before) the marked viewport's elements: a scroll brings it into view. None when it names none."""
    marked = [e for e in page_elements(page) if e.bid]  # not a folded dropdown: its items have ids
    unmarked = [
        Element("", m.group(1), name, m.start())
        for m in _UNMARKED.finditer(page)
        if not re.search(r"\[\d+\]", name := " ".join((m.group(2) or m.group(3) or "").split()))
    ]
    target = unit.target
    try:
        element = find_element(
            sorted([*marked, *unmarked], key=lambda e: e.at),
            str(target.get("role", "")),
            str(target.get("name", "")),
            int(target.get("nth", 0)),
            allow_folded=True,
        )
    except Stuck:
        return None
    if element.bid or not marked:
        return None
    return "up" if element.at < marked[0].at else "down"
