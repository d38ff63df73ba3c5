"""Each method family's answer format for the conformance model: where its prompt shows the page, the
commands and what was done before, and how its answer is written. One responder per family; the
model (:mod:`.model`) decides the command."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from webarena_gym.experiments.conformance.coact import CoActResponder
from webarena_gym.experiments.conformance.devils_advocate import DevilsAdvocateResponder
from webarena_gym.experiments.conformance.model import (
    ELEMENT_UNITS,
    GIVE_UP,
    LACKS_HISTORY,
    METHOD_LOGIC,
    Finding,
    Responder,
    Stuck,
    describes,
    is_field,
    line_after,
    message_text,
    offered_commands,
    section,
    shows_done,
    shows_undone,
    system_text,
)
from webarena_gym.experiments.conformance.plan_and_act import PlanAndActResponder
from webarena_gym.experiments.conformance.plan_mcts import PlanMCTSResponder
from webarena_gym.llm.messages import Message

if TYPE_CHECKING:
    from webarena_gym.experiments.conformance.model import ConformanceModel

_FAILED = " (it failed: "  # how ReAct's PREVIOUS ACTION marks an action that did not run
_HOMEPAGE = re.compile(r"the homepage at (https?://[^\s,]+)")  # ReAct's system prompt names it so
_SCROLLED = re.compile(r"scroll \[(?:direction=)?(?:down|up)\]")


@dataclass(frozen=True)
class _ReActView:
    """What one ReAct prompt shows: the page, its URL, the commands, the previous action (with its error,
    if it failed) and the homepage's address."""

    page: str
    url: str
    offered: set[str]
    previous: str
    homepage: str


class ReActResponder(Responder):
    """WebArena's CoT answer: reasoning, then the phrase and the command in triple backticks. The
    prompt shows the current page and only the last action, so progress is the reference step right
    after the one PREVIOUS ACTION describes.

    The page is the viewport's tree: a step whose element it does not show scrolls down, and the
    model suspects the element lacking until a scrolled view shows it (the prompt does not count the
    scrolls, so the method's step limit ends a search that finds nothing). After a scroll the
    previous action places no step: the next one is the element step the page now shows (two such,
    and which one is next is not in the prompt: a finding). The prompt names the homepage, not the
    other sites: a task that opens another site by address follows its goto-free path from there."""

    roles = ("actor",)

    def answer(self, role: str, messages: list[Message]) -> str:
        from webarena_gym.policies.react import ANSWER_PHRASE

        user, system = message_text(messages[-1]), system_text(messages)
        homepage = _HOMEPAGE.search(system)
        view = _ReActView(
            page=section(user, "OBSERVATION", r"\nURL: "),
            url=line_after(user, "URL: "),
            offered=offered_commands(system),
            previous=line_after(user, "PREVIOUS ACTION: ", rest=True),
            homepage=homepage.group(1) if homepage else "",
        )
        try:
            command = self._after_scroll(view) if _SCROLLED.match(view.previous) else self._command(view)
        except Stuck as stuck:
            self.model.record(stuck.finding)
            return f"I cannot go on: {stuck}. {ANSWER_PHRASE} ```stop [{GIVE_UP}: {stuck.finding.cause}]```"
        return f"The next step of the solution is on this page. {ANSWER_PHRASE} ```{command}```"

    def _probe(self, i: int, view: _ReActView) -> str | None:
        return self.model.possible_command(i, view.page, view.url, view.offered, view.previous, view.homepage)

    def _command(self, view: _ReActView) -> str:
        """The next unit's command, or a scroll down when the page does not show its element."""
        done = self._progress(view)
        if done < len(self.model.units) and self.model.scroll_for(self.model.units[done], view.page, view.offered):
            return "scroll [down]"
        return self.model.next_command(
            done, view.page, view.url, view.offered, errors=view.previous, homepage=view.homepage
        )

    def _after_scroll(self, view: _ReActView) -> str:
        """The element step the scrolled page can carry out; a further scroll when it shows none. Of
        several, form fields show their state: the ones showing the reference's value are done, and so
        is every step before the last of them (a form is filled in order: a collapsed dropdown before a
        filled title shows no choice, yet was chosen) unless the page shows it undone (a radio still
        unchecked before a prefilled nickname); the first field still empty after it is next."""
        viable: dict[str, int] = {}
        undone: set[int] = set()  # steps the page shows not carried out, wherever they are
        shown = 0  # the last step whose field shows the reference's value
        for i, unit in enumerate(self.model.units):
            possible = self._probe(i, view) if unit.kind in ELEMENT_UNITS else None
            if possible and shows_done(unit, possible, view.page):
                shown = i + 1
            elif possible:
                viable.setdefault(possible, i + 1)
                if shows_undone(unit, possible, view.page):
                    undone.add(i + 1)
        viable = {command: step for command, step in viable.items() if step > shown or step in undone}
        first = min(viable.values(), default=0)
        if len(viable) > 1 and is_field(self.model.units[first - 1]):
            viable = {c: i for c, i in viable.items() if i == first}
        if len(viable) > 1:
            steps = " and ".join(str(i) for i in viable.values())
            detail = f"after a scroll the page can carry out steps {steps}; no action shown tells which is next"
            raise Stuck(Finding(LACKS_HISTORY, detail))
        if not viable:
            return "scroll [down]"
        self.model.suspect(None)
        return next(iter(viable))

    def _progress(self, view: _ReActView) -> int:
        """How many reference units are done: none at the start; else one past the unit the previous
        action describes (of several such units, the one whose successor the page can carry out), or
        that unit itself when the action failed. When the reference repeats that action and the page
        can carry out the steps after two of its occurrences, which one was done is nowhere in the
        prompt: a finding."""
        previous = view.previous
        if previous in ("", "None"):
            return 0
        after = 0 if _FAILED in previous else 1
        matches = [i for i, unit in enumerate(self.model.units) if describes(previous, unit)]
        if not matches:
            raise Stuck(Finding(METHOD_LOGIC, f"PREVIOUS ACTION {previous[:120]!r} matches no reference step"))
        viable: dict[str, int] = {}
        for i in matches:
            possible = self._probe(i + after, view)
            if possible is not None:
                viable.setdefault(possible, i + after)
        if len(viable) > 1:
            steps = " and ".join(str(i) for i in viable.values())
            raise Stuck(
                Finding(
                    LACKS_HISTORY,
                    f"PREVIOUS ACTION {previous[:80]!r} is the reference's step before steps {steps}, "
                    "both possible on this page; the prompt shows no earlier action to tell which",
                )
            )
        return next(iter(viable.values()), matches[0] + after)


class AgentOccamResponder(Responder):
    """AgentOccam's fields (ACTION, or ACTION CANDIDATES when its judge is on) and the judge's ACTION
    SELECTION. The prompt's INTERACTION HISTORY lists every action taken: progress is their count. The
    ladder rows without history (no such section, and no INTERACTION HISTORY SUMMARY in the answer
    format) show no earlier action at all, so every call looks like the first: only a one-step task
    can be answered."""

    roles = ("actor", "judge")

    def answer(self, role: str, messages: list[Message]) -> str:
        from webarena_gym.policies.agentoccam.text import actor_answer

        user = message_text(messages[-1])
        if role == "judge":
            return "ACTION SELECTION:\n0"  # every candidate this model proposes is the same command
        page = section(user, "CURRENT OBSERVATION", ends=r"\Z")  # the last section: a page line may look like a header
        history = user.partition("CURRENT OBSERVATION:")[0]
        done = len(re.findall(r"^ACTION:\n", history, re.M))
        offered = offered_commands(system_text(messages))
        try:
            command = self.model.next_command(done, page, "", offered)
            shows_history = "INTERACTION HISTORY" in history or "INTERACTION HISTORY SUMMARY" in system_text(messages)
            if not shows_history and len(self.model.units) > 1:
                detail = f"no earlier action is shown, so which of the {len(self.model.units)} steps is next is unknown"
                raise Stuck(self.model.record(Finding(LACKS_HISTORY, detail)))
            reason = "This is the next step of the solution."
        except Stuck as stuck:
            command, reason = f"stop [{GIVE_UP}: {stuck.finding.cause}]", f"I cannot go on: {stuck}."
        if "ACTION CANDIDATES:" in system_text(messages):
            return (
                "INTERACTION HISTORY SUMMARY:\nOn track.\nOBSERVATION DESCRIPTION:\nThe page.\n"
                f"ACTION CANDIDATES:\n- reason: [{reason}]\n- action: [{command}]\nOBSERVATION HIGHLIGHT:\n"
            )
        return actor_answer(command, reason)


FAMILIES: dict[str, type[Responder]] = {
    "react": ReActResponder,
    "agentoccam": AgentOccamResponder,
    "agentoccam_judge": AgentOccamResponder,
    "coact": CoActResponder,
    "coact_fs": CoActResponder,
    "plan_and_act": PlanAndActResponder,
    "plan_and_act_dynamic": PlanAndActResponder,
    "devils_advocate": DevilsAdvocateResponder,
    "plan_mcts": PlanMCTSResponder,
}
# The registered ablation presets: each responder reads what its variant changes off the prompts.
VARIANT_FAMILIES: dict[str, type[Responder]] = {
    "coact_fs_search": CoActResponder,  # its search step adds passages only when a search function is set
    "devils_advocate_oracle": DevilsAdvocateResponder,  # a rejected answer starts a trial the history heads
    "plan_and_act_static": PlanAndActResponder,
    "plan_and_act_no_planner": PlanAndActResponder,  # the executor's rounds alone show progress
    **dict.fromkeys(
        (
            "plan_mcts_micro_only",
            "plan_mcts_macro_only",
            "plan_mcts_no_refinement",
            "plan_mcts_reflection",
            "plan_mcts_raw_history",
            "plan_search",
            "action_mcts",
            "action_search",
        ),
        PlanMCTSResponder,
    ),
}


def responder(method: str, model: ConformanceModel) -> Responder:
    """The responder of the family ``method`` belongs to."""
    families = {**FAMILIES, **VARIANT_FAMILIES}
    if method not in families:
        raise KeyError(
            f"the conformance model has no answer format for {method!r} yet (covered: {', '.join(families)})"
        )
    return families[method](model)
