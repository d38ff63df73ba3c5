"""Strict parser for the bracketed command grammar of WebArena and AgentOccam (docs/methods/agentoccam.md).

A command is a name followed by bracketed arguments: ``click [12]``, ``type [7] [blue shoes] [0]``,
``stop [N/A: the store has no such order]``. Each command has a fixed argument schema; short
arguments (ids, flags, keys, URLs) end at their first ``]``. A free-text argument (content, answer,
intent, reason) may itself contain brackets: it is closed by the right-most ``]`` after which the
rest of the command still parses, and a trailing ``[0]``/``[1]`` after ``type``'s content is always
the Enter flag (``type [3] [a [1]]`` types ``a [1]``; ``type [3] [a] [1] [0]`` types ``a] [1``
without Enter). Anything that does not fit raises :class:`InvalidActionError` with a message
written for the LLM; no other exception escapes :func:`parse_command` or :func:`parse_action`.

Decisions on the reference code's parsing:
- brackets are required around every argument, also for ``note`` and ``stop`` (the reference
  accepted bare text); a bare ``stop`` is the empty answer;
- ids are compared exactly against the page (the wrapper's job), never as substrings;
- ``goto`` takes only a URL: the reference's ignored new-tab flag is not part of the grammar.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import Enum


class InvalidActionError(ValueError):
    """The action text is not a valid, enabled command here; the message is meant for the LLM."""


class Kind(Enum):
    """What an argument may contain; TEXT is the only kind that may hold brackets."""

    ID = "id"
    INT = "integer"
    FLAG = "0 or 1"
    DIRECTION = "down or up"
    KEY = "key combination"
    URL = "url"
    TEXT = "text"


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    default: str | None = None  # not None => the argument may be omitted

    @property
    def optional(self) -> bool:
        return self.default is not None


@dataclass(frozen=True)
class CommandSpec:
    name: str
    params: tuple[Param, ...]

    @property
    def syntax(self) -> str:
        return " ".join([self.name, *(f"[{p.name}]" for p in self.params)])


def _spec(name: str, *params: Param) -> CommandSpec:
    return CommandSpec(name, params)


COMMAND_SPECS: dict[str, CommandSpec] = {
    spec.name: spec
    for spec in (
        _spec("click", Param("id", Kind.ID)),
        _spec(
            "type",
            Param("id", Kind.ID),
            Param("content", Kind.TEXT),
            Param("press_enter_after=0|1", Kind.FLAG, default="1"),
        ),
        _spec("go_back"),
        _spec("go_home"),
        _spec("note", Param("content", Kind.TEXT)),
        _spec("stop", Param("answer", Kind.TEXT, default="")),
        _spec("branch", Param("parent_plan_id", Kind.INT), Param("new_subplan_intent", Kind.TEXT)),
        _spec("prune", Param("resume_plan_id", Kind.INT), Param("reason", Kind.TEXT)),
        # The original WebArena set (WebArena's prompt syntax). The
        # "reduced actions" ablation row advertises `scroll [down/up] [reason]`, hence the optional reason.
        _spec("scroll", Param("down|up", Kind.DIRECTION), Param("reason", Kind.TEXT, default="")),
        _spec("hover", Param("id", Kind.ID)),
        _spec("press", Param("key_comb", Kind.KEY)),
        _spec("new_tab"),
        _spec("tab_focus", Param("tab_index", Kind.INT)),
        _spec("close_tab"),
        _spec("goto", Param("url", Kind.URL)),
        _spec("go_forward"),
    )
}


@dataclass(frozen=True)
class Command:
    """One parsed command; ``args`` are in schema order with defaults filled in."""

    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return " ".join([self.name, *(f"[{a}]" for a in self.args)])


def parse_command(text: str, allowed: Collection[str] | None = None) -> Command:
    """Parse exactly one command; ``allowed`` restricts the command names (None = all known)."""
    if not isinstance(text, str):
        raise InvalidActionError(f"the action must be text, got {type(text).__name__}")
    body = text.strip()
    if not body:
        raise InvalidActionError("the action is empty; write one command such as `click [12]`")
    end = 0
    while end < len(body) and (body[end].isalnum() or body[end] == "_"):
        end += 1
    name = body[:end]
    available = ", ".join(allowed if allowed is not None else COMMAND_SPECS)
    if not name:
        raise InvalidActionError(
            f"an action starts with a command name, got {_clip(body)!r}. Available actions: {available}"
        )
    spec = COMMAND_SPECS.get(name)
    if spec is None or (allowed is not None and name not in allowed):
        what = "unknown action" if spec is None else "action not available here"
        raise InvalidActionError(f"{what} {name!r}. Available actions: {available}")
    if end < len(body) and not (body[end] == "[" or body[end].isspace()):
        raise InvalidActionError(f"unexpected {body[end]!r} after {name!r}; the syntax is `{spec.syntax}`")
    try:
        values = _parse_args(body, end, spec.params)
    except InvalidActionError as error:
        raise InvalidActionError(f"{error} (the syntax is `{spec.syntax}`)") from None
    return Command(name, tuple(value for value, _ in values))


def split_commands(text: str) -> list[str]:
    """Split a multi-line ACTION into commands: a line starting with ``<known name>[`` (or a bare
    known name) starts a new command, every other line continues the previous one, as AgentOccam split
    a multi-line ACTION."""
    chunks: list[list[str]] = []
    for line in text.splitlines():
        if _starts_command(line.lstrip()) or not chunks:
            chunks.append([line])
        else:
            chunks[-1].append(line)
    return [joined for chunk in chunks if (joined := "\n".join(chunk).strip())]


def parse_action(text: str, allowed: Collection[str] | None = None) -> list[Command]:
    """Parse one or several commands (see :func:`split_commands`)."""
    if not isinstance(text, str):
        raise InvalidActionError(f"the action must be text, got {type(text).__name__}")
    parts = split_commands(text)
    if not parts:
        raise InvalidActionError("the action is empty; write one command such as `click [12]`")
    return [parse_command(part, allowed) for part in parts]


def _starts_command(line: str) -> bool:
    for name in COMMAND_SPECS:
        if line.startswith(name):
            rest = line[len(name) :].lstrip(" \t")
            if rest.startswith("[") or not rest:
                return True
    return False


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _parse_args(text: str, pos: int, params: tuple[Param, ...]) -> list[tuple[str, bool]]:
    """Recursive descent over the schema; returns (value, given explicitly) per parameter.

    Backtracks only over where a TEXT argument ends, preferring the reading that gives every later
    argument explicitly, then the right-most closing bracket.
    """
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if not params:
        if pos < len(text):
            raise InvalidActionError(f"unexpected text after the last argument: {_clip(text[pos:])!r}")
        return []
    param, rest = params[0], params[1:]
    if pos == len(text):
        missing = [p for p in params if not p.optional]
        if missing:
            raise InvalidActionError(f"missing argument [{missing[0].name}]")
        return [(p.default or "", False) for p in params]
    if text[pos] != "[":
        raise InvalidActionError(f"expected '[' to open argument [{param.name}], got {_clip(text[pos:])!r}")
    start = pos + 1
    if param.kind is not Kind.TEXT:
        close = text.find("]", start)
        if close < 0:
            raise InvalidActionError(f"argument [{param.name}] has no closing ']'")
        value = _check(param, text[start:close].strip())
        return [(value, True), *_parse_args(text, close + 1, rest)]
    fallback: list[tuple[str, bool]] | None = None
    first_error: InvalidActionError | None = None
    close = len(text)
    while (close := text.rfind("]", start, close)) >= 0:
        try:
            tail = _parse_args(text, close + 1, rest)
        except InvalidActionError as error:
            first_error = first_error or error
            continue
        parsed = [(text[start:close], True), *tail]
        if all(given for _, given in tail):
            return parsed
        fallback = fallback or parsed
    if fallback is not None:
        return fallback
    raise first_error or InvalidActionError(f"argument [{param.name}] has no closing ']'")


def _check(param: Param, value: str) -> str:
    """Validate a short argument; returns its canonical form."""
    kind = param.kind
    ok = bool(value)
    if kind is Kind.ID:
        # BrowserGym ids are digits, prefixed by letters inside iframes ("a12").
        ok = ok and value.isascii() and value.isalnum() and value[-1].isdigit()
    elif kind is Kind.INT:
        ok = ok and value.isascii() and value.isdigit()
    elif kind is Kind.FLAG:
        value = value.removeprefix("press_enter_after=").strip()
        ok = value in ("0", "1")
    elif kind is Kind.DIRECTION:
        ok = value in ("down", "up")
    elif kind in (Kind.KEY, Kind.URL):
        ok = ok and not any(ch.isspace() for ch in value)
    if not ok:
        raise InvalidActionError(f"[{param.name}] must be {kind.value}, got {_clip(value)!r}")
    return value
