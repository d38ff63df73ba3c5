"""CoAct's answer formats for the conformance model (``coact``, ``coact_fs``): the global planner's plan,
decision and collation, the local agent's numbered plans and checks.

The global planner's prompt shows the task and the first page; it writes one phase per page the
reference passes through (typing without Enter stays on the page, so it joins the step after it), and
names the phase's reference steps in its subtask (``Steps 3-4 of 7: ...``). The local agent's prompt
shows that subtask as its OBJECTIVE, the page, and after a run its local plan and the numbered results:
progress is read off those, and ids off the page.
"""

from __future__ import annotations

import re

from webarena_gym.experiments.conformance.model import (
    GIVE_UP,
    METHOD_LOGIC,
    Finding,
    Responder,
    Stuck,
    Unit,
    line_after,
    message_text,
    offered_commands,
    section,
    shows_done,
    system_text,
)
from webarena_gym.llm.messages import Message
from webarena_gym.policies.coact.text import Phase, render_global_plan

_REQUEST = re.compile(r"^Current request: `(\w+)`", re.M)
_STEPS = re.compile(r"^Steps? (\d+)(?:-(\d+))? of \d+:")
_DONE = re.compile(r"^\d+\. .* -> done", re.M)
_PLAN_LINE = re.compile(r"^\*\*Action \d+:\*\*", re.M)
_PROGRESS = re.compile(r"^Progress: (\d+) of the (\d+) phases", re.M)
_ANSWERS = ("send_msg_to_user", "report_infeasible")
_SCROLL_LINE = re.compile(r"^\*\*Action \d+:\*\* scroll \[", re.M)


def describe(unit: Unit) -> str:
    """A reference unit in words, naming its element by role and accessible name."""
    step = unit.steps[0]
    target = f"the {unit.target.get('role', '')} {str(unit.target.get('name', ''))!r}"
    if unit.kind == "fill":
        return f"type {str(step.get('value', ''))!r} into {target}" + (
            " and press Enter" if len(unit.steps) == 2 else ""
        )
    if unit.kind == "select_option":
        return f"choose {str(step.get('value', ''))!r} in {target}"
    if unit.kind == "click":
        return f"click {target}"
    if unit.kind == "press":
        return f"press {str(step.get('value', ''))} in {target}"
    if unit.kind == "goto":
        return f"open {step.get('url', '')}"
    if unit.kind == "send_msg_to_user":
        return f"answer {str(step.get('text', ''))!r}"
    if unit.kind == "report_infeasible":
        return "report that the task cannot be done"
    return unit.kind.replace("_", " ")


def phases(units: list[Unit]) -> list[tuple[int, int]]:
    """(first, last) unit of each phase: a page's worth of steps, planned from one observation."""
    out, first = [], 0
    for i, unit in enumerate(units):
        if unit.kind != "fill" or len(unit.steps) == 2 or i == len(units) - 1:
            out.append((first, i))
            first = i + 1
    return out


class CoActResponder(Responder):
    """Both CoAct agents; the call is the ``Current request`` its system message names.

    The checks are truthful: ``pass_check`` moves on when the results list every action of the local
    plan, else revises; ``false_check`` revises (the plan is the reference's, the failure is local);
    ``decide`` overrules (the global plan is the reference's); the collation gives the local agent's
    answer, or the plan's when the summary shows every phase before the answer passed. The planner's
    ``revise`` prompt does not show which phases passed, so writing a new plan there is a finding."""

    roles = ("global_planner", "local_agent")

    def answer(self, role: str, messages: list[Message]) -> str:
        system, user = system_text(messages), message_text(messages[-1])
        request = _REQUEST.search(system)
        call = request.group(1) if request else ""
        if role == "global_planner":
            return self._global(call, user)
        if call in ("pass_check", "false_check"):
            return self._check(call, user)
        return self._local_plan(call, system, user)

    def _global(self, call: str, user: str) -> str:
        if call == "global_plan":
            return self.plan()
        if call == "decide":
            return (
                "Action: overrule\nReasons: The plan follows the solution; carry out the current phase from this page."
            )
        if call == "collation":
            answer = line_after(user, "The local agent's answer: ") or self._planned_answer(user)
            if not answer:  # what stopped the work before the answer is the method's, and the miss's cause
                progress = _PROGRESS.search(user)
                stopped = line_after(user, "Why the work stopped: ").rstrip(".")
                passed = f"; {progress.group(0)}" if progress else ""
                self.model.record(Finding(METHOD_LOGIC, f"the work stopped before the answer: {stopped}{passed}"))
            summary = "The work reached the answer." if answer else "The work stopped before the task was done."
            return f"{summary}\nFINAL ANSWER: {answer or 'N/A'}"
        finding = Finding(METHOD_LOGIC, "the planner's revise prompt does not show which phases passed")
        self.model.record(finding)
        return render_global_plan([Phase(f"stop: {finding.detail}", "the task cannot be continued")])

    def plan(self) -> str:
        """The global plan: a phase per page of the reference, its steps named by number and in words."""
        units, out = self.model.units, []
        for first, last in phases(units):
            numbers = f"Step {first + 1}" if first == last else f"Steps {first + 1}-{last + 1}"
            words = "; ".join(describe(u) for u in units[first : last + 1])
            out.append(Phase(f"{numbers} of {len(units)}: {words}", f"{numbers} of the solution carried out."))
        return render_global_plan(out)

    def _planned_answer(self, user: str) -> str:
        """The answer the plan's last phase gives, when the execution summary shows every phase before it
        passed (a force stop can cut the dialogue just before it); else ""."""
        progress = _PROGRESS.search(user)
        last = self.model.units[-1]
        if progress is None or int(progress.group(1)) < int(progress.group(2)) - 1 or last.kind not in _ANSWERS:
            return ""
        return self.model.next_command(len(self.model.units) - 1, "", "", {"stop"}).removeprefix("stop [")[:-1]

    def _check(self, call: str, user: str) -> str:
        plan = section(user, "LOCAL PLAN")
        planned = len(_PLAN_LINE.findall(plan))
        done = len(_DONE.findall(section(user, "EXECUTION RESULTS")))
        if _SCROLL_LINE.search(plan):
            return "Action: revise\nReasons: The plan scrolled down to reach the rest of the phase; plan it again."
        if call == "pass_check" and done >= planned:
            return f"Action: move\nReasons: All {planned} actions of the local plan were carried out."
        return f"Action: revise\nReasons: {done} of the {planned} actions were carried out; plan the rest again."

    def _local_plan(self, call: str, system: str, user: str) -> str:
        """The phase's remaining reference steps as commands on the page shown, up to a scroll down when
        one's element is not in view (the observation is the viewport's tree). After a run, the steps
        before them are the phase's first ones plus what the results list as done; after a scroll, the
        page tells: a phase's steps before its last are typing, whose fields show the typed text."""
        offered = offered_commands(system.partition("Page operations you can use")[2].partition("What you may")[0])
        page = section(user, "OBSERVATION", r"\nURL: ")
        url = line_after(user, "URL: ")
        try:
            first, last = self._phase(line_after(user, "OBJECTIVE: "))
            previous = section(user, "PREVIOUS LOCAL PLAN")
            if call != "local_plan" and _SCROLL_LINE.search(previous):
                first = self._first_not_shown_done(first, last, page, url, offered)
            elif call != "local_plan":  # revise / overruled: the previous plan ran to the phase's end
                results = section(user, "EXECUTION RESULTS") or section(user, "EXECUTION EXCEPTIONS")
                first = last + 1 - len(_PLAN_LINE.findall(previous)) + len(_DONE.findall(results))
            commands = self._commands(first, last, page, url, offered, section(user, "EXECUTION EXCEPTIONS"))
        except Stuck as stuck:
            commands = [f"stop [{GIVE_UP}: {stuck.finding.cause}]"]
        return "\n".join(f"**Action {i}:** {c}" for i, c in enumerate(commands, 1))

    def _commands(self, first: int, last: int, page: str, url: str, offered: set[str], errors: str) -> list[str]:
        """Units ``first``..``last`` as commands, ending in a scroll down at the first one whose element
        the page does not show (suspected lacking until a view shows it); ``errors`` the exception the
        prompt shows."""
        commands: list[str] = []
        for unit_index in range(first, last + 1):
            if self.model.scroll_for(self.model.units[unit_index], page, offered):
                return [*commands, "scroll [down]"]
            commands.append(self.model.next_command(unit_index, page, url, offered, errors=errors))
        return commands

    def _first_not_shown_done(self, first: int, last: int, page: str, url: str, offered: set[str]) -> int:
        """The phase's first unit the scrolled page does not show done (or does not show at all)."""
        for unit_index in range(first, last):
            possible = self.model.possible_command(unit_index, page, url, offered)
            if possible is None or not shows_done(self.model.units[unit_index], possible, page):
                return unit_index
        return last

    def _phase(self, objective: str) -> tuple[int, int]:
        """The reference units (0-based, inclusive) the phase's subtask names."""
        m = _STEPS.match(objective)
        if m is None:
            finding = Finding(METHOD_LOGIC, f"the OBJECTIVE {objective[:120]!r} names no step of the solution")
            self.model.record(finding)
            raise Stuck(finding)
        return int(m.group(1)) - 1, int(m.group(2) or m.group(1)) - 1
