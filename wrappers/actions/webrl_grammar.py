"""Strict parser for the WebRL / WebArena-Lite action grammar that Plan-and-Act's executor writes
(plan_and_act.md §2.2-§2.3).

An action is one call, optionally preceded by comment lines that the model uses as its memory::

    # Element: the REPORTS section in the left sidebar
    do(action="Click", element="7")

    # Note: Distance: 29km. Time: 0:34.
    exit(message="The estimated driving time is 0:34.")

The functions: ``do(action=..., element=..., argument=...)``, ``exit(message=...)``, ``go_backward()``
and ``go_forward()``. ``do``'s actions are :data:`DO_ACTIONS` ("Search" is typing plus Enter).

The text is scanned, never evaluated: arguments are string literals (single, double or triple quotes,
with Python's backslash escapes), integers (an element id written as a number) or ``None`` (an absent
argument); anything else raises :class:`WebRLActionError`, the only exception :func:`parse_webrl` raises,
with a message written for the model and a correct example.

Decisions where the reference parser (an ``ast`` parse of the text from the first call on) is loose
or silent, each a documented choice:
* text before the call that is not a comment is ignored, as the reference ignores it (untrained models
  often announce the action first); text after the call is an error, except comment lines and the
  stray ``}`` of the paper's printed examples; a second call is an error (one action per step);
* ``do`` takes keyword arguments only (its parameter order is not fixed across the prompts);
  ``exit`` also takes its message as the one positional argument;
* action names match case-insensitively and with any spacing (``"scroll  down"``), as in the reference;
* a string may span several lines (an answer listing items); the reference rejected that;
* an ``element`` on an action that uses none (a scroll) and an ``argument`` on one that uses none are
  ignored, as the reference ignores them; missing ones an action needs are errors.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

DO_ACTIONS = (
    "Click", "Right Click", "Type", "Search", "Hover", "Scroll Up", "Scroll Down", "Press Enter", "Switch Tab",
    "Select Dropdown Option", "Wait",
)  # fmt: skip
FUNCTIONS = ("do", "exit", "go_backward", "go_forward")
COMMANDS = (*DO_ACTIONS, "exit", "go_backward", "go_forward")  # the names a preset enables
NEEDS_ELEMENT = frozenset({"Click", "Right Click", "Type", "Search", "Hover", "Select Dropdown Option"})
NEEDS_ARGUMENT = frozenset({"Type", "Search", "Select Dropdown Option", "Switch Tab"})
USES_ELEMENT = NEEDS_ELEMENT | {"Press Enter"}
EXAMPLE = 'do(action="Click", element="12")'

_CANONICAL = {" ".join(name.lower().split()): name for name in DO_ACTIONS}
_PARAMETERS = {"do": ("action", "element", "argument"), "exit": ("message",), "go_backward": (), "go_forward": ()}
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "0": "\0", "\n": ""}


class WebRLActionError(ValueError):
    """The text is not one valid, enabled WebRL action here; the message is meant for the model."""


@dataclass(frozen=True)
class WebRLAction:
    """One parsed action: ``function`` is do/exit/go_backward/go_forward, ``action`` the canonical do()
    action name, ``comments`` the ``#`` lines around the call (the model's notes), in order."""

    function: str
    action: str | None = None
    element: str | None = None
    argument: str | None = None
    message: str | None = None
    comments: tuple[str, ...] = ()

    @property
    def command(self) -> str:
        """The name a preset enables: the do() action, or the function."""
        return self.action if self.function == "do" and self.action else self.function

    def call(self) -> str:
        """The canonical call, comments left out (what repeat checks compare)."""
        if self.function == "exit":
            return f"exit(message={_quote(self.message or '')})"
        if self.function != "do":
            return f"{self.function}()"
        parts = [f"action={_quote(self.action or '')}"]
        if self.element is not None and self.action in USES_ELEMENT:
            parts.append(f"element={_quote(self.element)}")
        if self.argument is not None and self.action in NEEDS_ARGUMENT:
            parts.append(f"argument={_quote(self.argument)}")
        return f"do({', '.join(parts)})"

    def text(self) -> str:
        """Comments and call, as the model's history shows the action."""
        return "\n".join([*self.comments, self.call()])


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def parse_webrl(text: str, allowed: Collection[str] | None = None) -> WebRLAction:
    """Parse one action; ``allowed`` restricts the command names (:data:`COMMANDS`; None = all)."""
    if not isinstance(text, str):
        raise WebRLActionError(f"the action must be text, got {type(text).__name__}")
    comments: list[str] = []
    lines = text.splitlines(keepends=True)
    offset = 0
    for line in lines:
        stripped = line.strip()
        if _call_name(stripped) is not None:
            offset += len(line) - len(line.lstrip())
            break
        if stripped.startswith("#"):
            comments.append(stripped)
        offset += len(line)
    else:
        raise WebRLActionError(
            f'no action found: write one call on its own line, such as `{EXAMPLE}` or `exit(message="...")`'
        )
    function = _call_name(text[offset:].split("\n", 1)[0].strip())
    assert function is not None
    scanner = _Scanner(text, offset + len(function))
    arguments = scanner.arguments(function)
    comments += scanner.trailer()
    action = _build(function, arguments, tuple(comments))
    if allowed is not None and action.command not in allowed:
        raise WebRLActionError(f"{action.command!r} is not available here. Available actions: {', '.join(allowed)}")
    return action


def _call_name(line: str) -> str | None:
    for name in FUNCTIONS:
        if line.startswith(name) and line[len(name) :].lstrip(" \t").startswith("("):
            return name
    return None


def _build(function: str, arguments: dict[str, str | None], comments: tuple[str, ...]) -> WebRLAction:
    if function == "exit":
        return WebRLAction("exit", message=arguments.get("message") or "", comments=comments)
    if function != "do":
        return WebRLAction(function, comments=comments)
    name = arguments.get("action")
    if not name:
        raise WebRLActionError(f"do() needs action=..., e.g. `{EXAMPLE}`; actions: {', '.join(DO_ACTIONS)}")
    action = _CANONICAL.get(" ".join(name.lower().split()))
    if action is None:
        raise WebRLActionError(f"unknown action {name!r}; do() actions are: {', '.join(DO_ACTIONS)}")
    element, argument = arguments.get("element"), arguments.get("argument")
    if action in NEEDS_ELEMENT:
        if not element:
            raise WebRLActionError(f'"{action}" needs element="<id>" (an id shown in the HTML), e.g. `{EXAMPLE}`')
        _check_id(element)
    elif action in USES_ELEMENT and element:
        _check_id(element)
    if action in NEEDS_ARGUMENT and argument is None:
        raise WebRLActionError(
            f'"{action}" needs argument="...", e.g. `do(action="{action}", element="12", argument="blue shoes")`'
        )
    if action == "Switch Tab" and not (argument or "").strip().isdigit():
        raise WebRLActionError(f'"Switch Tab" needs the tab number as argument, e.g. argument="1"; got {argument!r}')
    return WebRLAction(
        "do",
        action=action,
        element=element if action in USES_ELEMENT else None,
        argument=argument if action in NEEDS_ARGUMENT else None,
        comments=comments,
    )


def _check_id(element: str) -> None:
    """Element ids are BrowserGym's: digits, prefixed by letters inside frames ("a12")."""
    if not (element.isascii() and element.isalnum() and element[-1].isdigit()):
        raise WebRLActionError(f'element must be an id shown in the HTML, such as "12"; got {element!r}')


class _Scanner:
    """Reads the argument list of one call and what follows it."""

    def __init__(self, text: str, pos: int) -> None:
        self.text, self.pos = text, pos

    def error(self, what: str) -> WebRLActionError:
        near = self.text[self.pos : self.pos + 30]
        return WebRLActionError(f"{what} at {near!r}; write the call plainly, e.g. `{EXAMPLE}`")

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def arguments(self, function: str) -> dict[str, str | None]:
        self.skip_space()
        assert self.peek() == "("
        self.pos += 1
        values: dict[str, str | None] = {}
        parameters = _PARAMETERS[function]
        positional = 0
        while True:
            self.skip_space()
            if self.peek() == ")":
                self.pos += 1
                return values
            name = self.identifier()
            self.skip_space()
            if name is not None and self.peek() == "=":
                self.pos += 1
                self.skip_space()
            elif name is not None:
                raise self.error(f"unexpected name {name!r}")
            else:
                if not parameters:
                    raise WebRLActionError(f"{function}() takes no arguments; write `{function}()`")
                if function != "exit" or positional:
                    raise self.error(f'{function}() takes keyword arguments only, like action="Click"')
                name, positional = "message", 1
            if name not in parameters:
                accepted = ", ".join(parameters) or "none"
                raise WebRLActionError(f"{function}() has no parameter {name!r} (parameters: {accepted})")
            if name in values:
                raise WebRLActionError(f"{function}() got {name!r} twice")
            values[name] = self.literal()
            self.skip_space()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != ")":
                raise self.error("expected ',' or ')'")

    def identifier(self) -> str | None:
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isascii() and self.text[self.pos].isalnum()
                                             or self.text[self.pos] == "_"):  # fmt: skip
            self.pos += 1
        word = self.text[start : self.pos]
        if word == "None" or word[:1].isdigit():
            self.pos = start  # a literal, not a name
            return None
        return word or None

    def literal(self) -> str | None:
        char = self.peek()
        if char in ("'", '"'):
            return self.string()
        start = self.pos
        if char == "-":
            self.pos += 1
        while self.peek().isascii() and self.peek().isdigit():
            self.pos += 1
        if self.pos > start and self.text[start : self.pos] != "-":
            return self.text[start : self.pos]
        self.pos = start
        if self.text.startswith("None", self.pos):
            self.pos += 4
            return None
        raise self.error('expected a quoted string such as "blue shoes"')

    def string(self) -> str:
        quote = self.text[self.pos]
        triple = self.text.startswith(quote * 3, self.pos)
        delimiter = quote * 3 if triple else quote
        self.pos += len(delimiter)
        out: list[str] = []
        while True:
            if self.pos >= len(self.text):
                raise WebRLActionError(f"a string is not closed: add the missing {quote}")
            if self.text.startswith(delimiter, self.pos):
                self.pos += len(delimiter)
                return "".join(out)
            char = self.text[self.pos]
            if char == "\\" and self.pos + 1 < len(self.text):
                nxt = self.text[self.pos + 1]
                out.append(_ESCAPES.get(nxt, "\\" + nxt))
                self.pos += 2
            else:
                out.append(char)
                self.pos += 1

    def trailer(self) -> list[str]:
        """Comment lines after the call; a stray ``}`` is dropped, anything else is an error."""
        rest = self.text[self.pos :]
        comments = []
        for i, line in enumerate(rest.split("\n")):
            stripped = line.strip()
            if i == 0:
                stripped = stripped.lstrip("}").strip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                comments.append(stripped)
            elif _call_name(stripped) is not None:
                raise WebRLActionError("one action per step: write a single call")
            else:
                raise WebRLActionError(f"unexpected text after the action: {stripped[:40]!r}; write only the call")
        return comments
