"""Devil's Advocate's prompts and the readers of the model's replies (docs/methods/devils_advocate.md).

The prompt texts live in ``prompts/devils_advocate_prompts.txt`` (the project's wording; the paper's
slots in the paper's order). The readers are strict about what they return and tolerant about what
they read: anything they cannot use raises :class:`ReplyError` (or returns ``None`` where the
method has a fallback), never something half-parsed, and model text is never evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from webarena_gym.wrappers.actions.grammar import InvalidActionError, parse_command

PROMPTS = Path(__file__).resolve().parent.parent / "prompts" / "devils_advocate_prompts.txt"

# The action prompt's grammar in the paper's order. ``go_forward`` is in the paper's action space
# but not in its prompt: accepted when the model writes it, never offered.
PROMPT_COMMANDS = ("click", "scroll", "goto", "go_back", "type", "note_down")
UNLISTED_COMMANDS = ("go_forward",)
ELEMENT_COMMANDS = frozenset({"click", "type"})  # actions that name an element id (remapped on backtracking)
NOTE = "note_down"  # handled by the policy: it changes nothing in the browser
ALIGNMENT_LEAD = "The action is to"
ANSWER_MARK = "###Answer"


class ReplyError(ValueError):
    """A reply holds nothing usable; the message says why (it is shown to the model on a re-ask)."""


@cache
def texts() -> dict[str, str]:
    parts = re.split(r"^=== (\w+) ===\n", PROMPTS.read_text(), flags=re.M)
    return {parts[i]: parts[i + 1].rstrip("\n") for i in range(1, len(parts) - 1, 2)}


def _table(name: str) -> dict[str, str]:
    return dict(line.split("|", 1) for line in texts()[name].splitlines() if line.strip())


def site_intros() -> dict[str, str]:
    """Default ``{WEBSITE INTRO}`` per site (the paper gives none)."""
    return _table("site_intros")


# -- rendering of the slots ------------------------------------------------------------------------


@dataclass(frozen=True)
class Memo:
    """One entry of the history: the alignment call's description of an executed action (G_describe)."""

    trial: int
    text: str


def numbered(items: Sequence[str], empty: str) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1)) if items else empty


def render_history(memos: Sequence[Memo], empty: str = "None yet.", trial: int | None = None) -> str:
    """Numbered descriptions; a heading per trial once the history spans more than one trial or holds
    entries of a trial before the current one (``trial``), whose actions a restart has undone. With
    ``trial`` given, each heading says whether it is the current trial's: without that, a new trial's
    prompt (no entries of its own yet) would read like the last trial's."""
    if not memos:
        return empty
    several = len({m.trial for m in memos} | ({trial} if trial is not None else set())) > 1
    lines, heading = [], None
    for i, memo in enumerate(memos, 1):
        if several and memo.trial != heading:
            heading = memo.trial
            mark = "" if trial is None else " (the current trial)" if heading == trial else " (before a restart)"
            lines.append(f"In trial {heading}{mark}:")
        lines.append(f"{i}. {memo.text}")
    return "\n".join(lines)


def render_failures(failures: Sequence[tuple[int, Sequence[str], str]]) -> str:
    """``{FAILED PLAN}``: every earlier plan with its trial and why that trial failed."""
    if not failures:
        return "None: this is the first trial."
    return "\n\n".join(
        f"The plan of trial {trial} (it failed: {why}):\n{numbered(plan, '(empty)')}" for trial, plan, why in failures
    )


def render_review(history: str, notes: Sequence[str]) -> str:
    """The plan revision's ``{HISTORY}``: the executed actions, then the notes (the paper's review is of
    the actions executed and the notes taken)."""
    return history + ("\n\n" + texts()["review_notes"].format(notes=numbered(notes, "")) if notes else "")


def render_sites(site_urls: Mapping[str, str], intros: Mapping[str, str]) -> str:
    return "\n".join(f"- {intros.get(site, site)}: {url}" for site, url in site_urls.items()) or "- (none given)"


def render_commands(commands: Iterable[str]) -> str:
    lines = _table("commands")
    return "\n".join(f"- {lines[c]}" for c in PROMPT_COMMANDS if c in set(commands))


# -- prompts (one user message each; the slot order is the paper's) ---------------------------------


def plan_prompt(
    *,
    sites: str,
    website: str,
    instructions: str,
    start_screen: str,
    task: str,
    failed_plans: str,
    history: str,
) -> str:
    return texts()["plan"].format(
        sites=sites,
        website=website,
        instructions=instructions or "None.",
        start_screen=start_screen,
        task=task,
        failed_plans=failed_plans,
        history=history,
    )


def reask_plan(error: str) -> str:
    return texts()["reask_plan"].format(error=error.rstrip("."))


def action_prompt(
    *, sites: str, task: str, plan: str, history: str, step: str, observation: str, notes: str, commands: str
) -> str:
    return texts()["action"].format(
        sites=sites,
        task=task,
        plan=plan,
        history=history,
        step=step,
        observation=observation,
        notes=notes,
        commands=commands,
    )


def remedy_question() -> str:
    """The follow-up turn of anticipatory reflection, asked in the action's conversation."""
    return texts()["remedy"]


def reask_action(error: str, example: str) -> str:
    return texts()["reask_action"].format(error=error.rstrip("."), example=example)


def align_prompt(*, step: str, plan: str, action: str, obs1: str, obs2: str) -> str:
    return texts()["align"].format(step=step, plan=plan, action=action, obs1=obs1, obs2=obs2)


def completion_prompt(*, objective: str, plan: str, history: str, notes: str, observation: str) -> str:
    """G_completed: the task check, and (our reading of the paper) the subtask check with the subtask as objective."""
    return texts()["completion"].format(
        objective=objective, plan=plan, history=history, notes=notes, observation=observation
    )


def answer_prompt(*, task: str, history: str, notes: str, observation: str) -> str:
    return texts()["answer"].format(task=task, history=history, notes=notes, observation=observation)


def reask_answer() -> str:
    return texts()["reask_answer"]


def map_prompt(*, element_id: str, obs1: str, obs2: str) -> str:
    return texts()["map"].format(element_id=element_id, obs1=obs1, obs2=obs2)


def summary_prompt(*, task: str, observation: str) -> str:
    return texts()["summary"].format(task=task, observation=observation)


# -- readers ----------------------------------------------------------------------------------------

_PLAN_ITEM = re.compile(r"^\s*(?:[-*#>]\s*)*(?:\*\*)?(?:step\s*)?(\d{1,3})\s*[.):]\s*(?:\*\*)?\s*(.+?)\s*$", re.I)
_FENCE = re.compile(r"```")
_NOTE = re.compile(rf"{NOTE}\s*\[(.*)\]", re.S)


def parse_plan(text: str) -> list[str]:
    """The numbered items of a plan reply, in order; the leading "List" line is optional."""
    items = [m.group(2).strip("* ") for line in (text or "").splitlines() if (m := _PLAN_ITEM.match(line))]
    items = [item for item in items if item]
    if not items:
        raise ReplyError('the reply has no numbered steps; write them as "1. ...", "2. ...", one per line')
    return items


def parse_action(text: str, allowed: Iterable[str]) -> str:
    """The first action in ``text`` that parses in the action prompt's grammar, in canonical form (``click [12]``,
    ``type [3] [shoes] [1]``, ``note_down [...]``). Raises :class:`ReplyError`.

    Each line is searched for allowed command names; from each, the longest reading up to a closing
    bracket that parses wins, so trailing prose, punctuation or backticks are dropped.
    """
    allowed = tuple(dict.fromkeys(allowed))
    names = "|".join(sorted(map(re.escape, allowed), key=len, reverse=True))
    if not names:
        raise ReplyError("no action is available")
    start = re.compile(rf"(?<![\w-])({names})(?![\w-])")
    first_error: str | None = None
    for line in _FENCE.sub("\n", text or "").splitlines():
        for match in start.finditer(line):
            for candidate in _endings(line[match.start() :]):
                try:
                    return _canonical(candidate, match.group(1), allowed)
                except (InvalidActionError, ReplyError) as error:
                    first_error = first_error or str(error)
    if first_error:
        raise ReplyError(first_error)
    raise ReplyError(f"no action found; the available actions are {', '.join(allowed)}")


def _endings(text: str) -> list[str]:
    """Where a command may end: after each closing bracket, the last one first (free text may hold
    brackets), then after the bare name (``go_back.``)."""
    text = text.strip()
    ends = [i + 1 for i, ch in enumerate(text) if ch == "]"][::-1]
    return [text[:end] for end in ends] + [re.split(r"[\s`'\".,;:!)\[]", text, maxsplit=1)[0]]


def _canonical(candidate: str, name: str, allowed: tuple[str, ...]) -> str:
    if name == NOTE:
        match = _NOTE.fullmatch(candidate)
        if not match or not match.group(1).strip():
            raise ReplyError(f"write a note as `{NOTE} [what to write down]`")
        return f"{NOTE} [{' '.join(match.group(1).split())}]"
    command = parse_command(candidate, [c for c in allowed if c != NOTE])
    args = list(command.args)
    while args and args[-1] == "":  # an omitted optional argument (scroll's reason) is not written out
        args.pop()
    return " ".join([command.name, *(f"[{a}]" for a in args)])


def command_name(action: str) -> str:
    return action.split(" ", 1)[0].split("[", 1)[0]


# The sentence ends at a sentence mark before a space, a line end or the end, never inside a quoted name
# ("click the link 'Reading this week? (March 31)'") or a command's bracketed argument ("type [41] [Hi.
# Thanks] [0]"); an apostrophe inside a word ("it's") opens none.
_DESCRIPTION = re.compile(
    rf"""({re.escape(ALIGNMENT_LEAD)}\b(?:(?<!\w)(?:'[^'\n]*'|"[^"\n]*")(?!\w)|\[[^\]\n]*\]|[^\n])*?)"""
    r"(?:(?<=[.!?])\s|\n|$)",
    re.I,
)
_VERDICT_LINE = re.compile(
    r"^[\s>*#_`\-]*(?:(?:final\s+)?(?:answer|verdict)\s*[:\-]?\s*)?[*_`\"']*(yes|no)\b[\s*_`\"'.!]*$", re.I
)
_LEADING_VERDICT = re.compile(r"^[\s>*#_`\-]*(?:(?:answer|verdict)\s*[:\-]?\s*)?[*_`\"']*(yes|no)\b", re.I)


def parse_verdict(text: str) -> bool | None:
    """YES -> True, NO -> False, anything else (both, neither) -> None, which callers read as NO.

    Read in this order: the last line that is just a verdict ("YES", "Answer: **NO**."); otherwise a
    capitalised YES or NO when only one of them occurs; otherwise a reply that opens with yes/no.
    """
    lines = (text or "").strip().splitlines()
    for line in reversed(lines):
        if match := _VERDICT_LINE.match(line):
            return match.group(1).lower() == "yes"
    words = set(re.findall(r"\b(YES|NO)\b", text or ""))
    if len(words) == 1:
        return words == {"YES"}
    if not words and (match := _LEADING_VERDICT.match(text or "")):
        return match.group(1).lower() == "yes"
    return None


def parse_alignment(text: str) -> tuple[str | None, bool | None]:
    """(the "The action is to ..." sentence or None, the YES/NO verdict or None) of an alignment reply.

    The sentence is the history entry (G_describe); the verdict is read from the rest of the
    reply, so a sentence that happens to contain "no" cannot decide it.
    """
    match = _DESCRIPTION.search(text or "")
    description = " ".join(match.group(1).split()) if match else None
    rest = (text[: match.start()] + "\n" + text[match.end() :]) if match else (text or "")
    return description, parse_verdict(rest)


def parse_answer(text: str) -> str | None:
    """The text after ``###Answer`` on one line (colon and surrounding whitespace dropped), or None."""
    index = (text or "").find(ANSWER_MARK)
    if index < 0:
        return None
    answer = text[index + len(ANSWER_MARK) :].lstrip(" \t:").strip()
    return " ".join(answer.split())


_BRACKETED_ID = re.compile(r"\[\s*([A-Za-z]*\d+)\s*\]")
_BARE_ID = re.compile(r"(?<![\w.])([a-z]*\d+)(?![\w.])")


def parse_element_id(text: str) -> str | None:
    """The element id of a mapping reply: the first bracketed id, else the first integer."""
    match = _BRACKETED_ID.search(text or "") or _BARE_ID.search(text or "")
    return match.group(1) if match else None


def example_action(observation: str, allowed: Iterable[str]) -> str:
    """A concrete action for a re-ask, built from the page (never a placeholder)."""
    allowed = set(allowed)
    match = re.search(r"\[([A-Za-z]*\d+)\] (?:link|button|menuitem|tab|checkbox|radio)\b", observation or "")
    if match and "click" in allowed:
        return f"click [{match.group(1)}]"
    return "scroll [down]" if "scroll" in allowed else "go_back"
