"""The methods' own limits: the misses of the conformance matrix that a method's design, as its paper (or
the code the paper's numbers came from) has it, makes unavoidable, named so that a reader can tell them
from faults of this implementation.

A miss is filed under a limit when its cause and the model's (or the matrix's) finding match one listed
here for the method's family; every other miss stays this project's to explain. The matrix counts the
tasks within a method's reach as every task but these and those that need a URL no page shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from webarena_gym.experiments.conformance.model import LACKS_ELEMENT, LACKS_HISTORY, METHOD_LOGIC, NO_GRAMMAR


@dataclass(frozen=True)
class Limit:
    family: str  # the method family (``method_of``): its presets share its limits
    cause: str  # the miss's cause, as the matrix files it
    detail: str  # a pattern searched in the finding's detail
    name: str  # the limit and where it comes from

    def matches(self, family: str, cause: str, detail: str) -> bool:
        return family == self.family and cause == self.cause and re.search(self.detail, detail) is not None


_WEBARENA_EARLY_STOP = "WebArena's early stop, which the method keeps (an action repeated 3 times)"
_NO_SITE_NAMED = "the prompts name no other site to go to"

LIMITS: tuple[Limit, ...] = (
    Limit("react", LACKS_HISTORY, "", "WebArena's prompt shows one previous action"),
    Limit("react", METHOD_LOGIC, "early stop", _WEBARENA_EARLY_STOP),
    Limit("agentoccam", METHOD_LOGIC, "budget after 20 steps", "AgentOccam's 20-step budget"),
    # The observation names no page's address and the paper took goto out: an address to type is unknown.
    Limit(
        "agentoccam",
        LACKS_ELEMENT,
        r"no address of the \w+ site",
        "AgentOccam's observation shows no URL (and no goto)",
    ),
    Limit("coact", METHOD_LOGIC, "early stop|same action repeated", _WEBARENA_EARLY_STOP),
    # The paper gives no number of exchanges; 10 is this project's default (a config option).
    Limit("coact", METHOD_LOGIC, "force stop", "CoAct w/ FS's force stop (10 exchanges by default)"),
    Limit(
        "coact", LACKS_ELEMENT, r"no address of the \w+ site", f"{_NO_SITE_NAMED} (CoAct reports no multi-site task)"
    ),
    Limit("plan_and_act", NO_GRAMMAR, "the step needs '(goto|go_home)'", "WebRL's grammar has no way to another site"),
    # The released cleaner keeps no src or href and drops every footer (the shop's 'Contact Us' link is in it).
    Limit(
        "plan_and_act",
        LACKS_ELEMENT,
        r"no address of the \w+ site|no link named 'Contact Us'",
        "the released HTML cleaner drops footers and addresses",
    ),
    Limit(
        "devils_advocate",
        LACKS_ELEMENT,
        "action error the action prompt does not show",
        "its action prompt shows no error",
    ),
    # WebArena's type [id] [text] is read off one line: its text cannot hold a line break.
    Limit("devils_advocate", NO_GRAMMAR, "line break", "WebArena's grammar types no line break"),
    Limit("plan_mcts", LACKS_ELEMENT, r"no address of the \w+ site", _NO_SITE_NAMED),
    Limit("plan_mcts", NO_GRAMMAR, "the step needs 'go_back'", "Plan-MCTS's actions have no go_back"),
    # N = 10 iterations, depth d = 5: a reference longer than five subplans' worth is out of reach.
    Limit("plan_mcts", METHOD_LOGIC, "search spent its", "Plan-MCTS's search budget (N = 10, depth 5)"),
    # The Reflector rewrites the failed edge, so the history names the repair, not the steps before it.
    Limit(
        "plan_mcts", METHOD_LOGIC, "done but not the reference steps before it", "the Reflector's rewrite of the edge"
    ),
)


def own_limit(family: str, cause: str, detail: str) -> str | None:
    """The name of the method's own limit a miss (``cause``, the finding's ``detail``) is, or None."""
    return next((limit.name for limit in LIMITS if limit.matches(family, cause, detail)), None)
