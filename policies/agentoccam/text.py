"""AgentOccam's prompt texts and output parsing: the per-item texts of
``prompts/agentoccam_specs.txt``, the fixed texts of ``prompts/agentoccam_prompts.txt``, and the
tolerant readers of the model's fields, highlight ids and action candidates."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

PROMPTS = Path(__file__).parent.parent / "prompts"


@cache
def specs() -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(field header -> description, command name -> (grammar, description)) from agentoccam_specs.txt."""
    fields: dict[str, str] = {}
    commands: dict[str, tuple[str, str]] = {}
    for line in (PROMPTS / "agentoccam_specs.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, head, text = line.split(" | ", 2)
        text = text.replace("\\n", "\n")
        if kind == "field":
            fields[head] = text
        else:
            commands[head.split(" ", 1)[0]] = (head, text)
    return fields, commands


@cache
def texts() -> dict[str, str]:
    """The fixed prompt texts (instructions, injections) from agentoccam_prompts.txt."""
    parts = re.split(r"^=== (\w+) ===\n", (PROMPTS / "agentoccam_prompts.txt").read_text(), flags=re.M)
    return {parts[i]: parts[i + 1].rstrip("\n") for i in range(1, len(parts) - 1, 2)}


# -- output fields ---------------------------------------------------------------------------------

BASE_FIELDS = ("INTERACTION HISTORY SUMMARY", "OBSERVATION DESCRIPTION", "REASON", "ACTION", "OBSERVATION HIGHLIGHT")
JUDGE_FIELDS = ("INTERACTION HISTORY SUMMARY", "OBSERVATION DESCRIPTION", "ACTION CANDIDATES", "OBSERVATION HIGHLIGHT")
_ALL_HEADERS = sorted(
    set(BASE_FIELDS) | set(JUDGE_FIELDS) | {"PLAN PROGRESS ASSESSMENT", "ACTION ASSESSMENT", "ACTION SELECTION"},
    key=len,
    reverse=True,
)
_HEADER = re.compile(r"^[ \t#*>]*(" + "|".join(map(re.escape, _ALL_HEADERS)) + r")[ \t*]*:[ \t*]*(.*)$", re.I | re.M)


def parse_fields(text: str) -> dict[str, str]:
    """Each header's text runs to the next header line or the end; missing fields are ``""``.

    Tolerant of markdown decoration around headers (``**ACTION:**``, ``### REASON:``) and of case.
    """
    out: dict[str, str] = {}
    matches = list(_HEADER.finditer(text or ""))
    for m, nxt in zip(matches, matches[1:] + [None], strict=False):  # [None] alone when no header
        body = (m.group(2) + text[m.end() : nxt.start() if nxt else len(text)]).strip()
        out.setdefault(m.group(1).upper(), body)
    return out


def actor_answer(action: str, reason: str = "This is the next step.") -> str:
    """A well-formed actor answer (every field of :data:`BASE_FIELDS`) whose ACTION is ``action``,
    highlighting the ids it acts on: what scripted LLMs in tests and benchmarks reply."""
    acts_on = "" if action.startswith(("stop", "note")) else ",".join(re.findall(r"^\w+ \[(\w+)\]", action))
    return (
        f"INTERACTION HISTORY SUMMARY:\nSo far on track.\nOBSERVATION DESCRIPTION:\nThe page shows what is "
        f"needed.\nREASON:\n{reason}\nACTION:\n{action}\nOBSERVATION HIGHLIGHT:\n{acts_on}"
    )


def clean_action(text: str) -> str:
    """The ACTION field without the code fences or backticks models like to add."""
    text = re.sub(r"^```[a-z]*\s*|\s*```$", "", text.strip())
    return text.strip().strip("`").strip()


def highlight_ids(text: str) -> list[str]:
    """The OBSERVATION HIGHLIGHT ids: comma-separated tokens that are all digits, in the model's order."""
    return [tok for tok in (t.strip().strip("[]`'\"") for t in (text or "").split(",")) if tok.isdigit()]


_CANDIDATE = re.compile(r"^\s*-\s*(reason|action)\s*:\s*(.*)$", re.I)


def parse_candidates(text: str) -> list[tuple[str, str]]:
    """ACTION CANDIDATES items (the judge variant): ``- reason: [...]`` then ``- action: [...]``; returns
    (reason, action) pairs; an item without an action is dropped. Continuation lines join the item."""
    items: list[dict[str, str]] = []
    key = None
    for line in (text or "").splitlines():
        m = _CANDIDATE.match(line)
        if m:
            key = m.group(1).lower()
            if key == "reason" or not items or "action" in items[-1]:
                items.append({})
            items[-1][key] = m.group(2)
        elif key is not None and line.strip():
            items[-1][key] += "\n" + line
    return [(_unbracket(i.get("reason", "")), _unbracket(i["action"])) for i in items if i.get("action", "").strip()]


def _unbracket(text: str) -> str:
    """Strip the one pair of brackets the candidate format puts around a text (``[click [3]]``)."""
    text = text.strip()
    return text[1:-1].strip() if text.startswith("[") and text.endswith("]") else text


def user_message(sections: list[tuple[str, str]]) -> str:
    """The user message: ``NAME:\\ncontent\\n`` per non-empty section, in the given order."""
    return "".join(f"{name}:\n{content}\n" for name, content in sections if content and content.strip())
