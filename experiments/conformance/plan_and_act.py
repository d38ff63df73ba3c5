"""Plan-and-Act's answer formats for the conformance model: the planner's and replanner's ``## Step N``
plans and the executor's WebRL calls, each with or without the CoT tags the prompt asks for.

The executor's page is simplified HTML (``<a id="10">My Account</a>``): the model reads each element's
role and accessible name off the markup as a reader of the prompt would (the tag or its ``role``; the
``aria-label``, the text, a ``<label>`` next to a field, ``title`` or ``placeholder``), and the ids only
from the ``id`` attributes there. Progress is what the prompts list as done: the executor's earlier
rounds, the replanner's ``- Action k:`` blocks. The planners write one plan step per reference step
left, naming its element by role and name (they see no ids).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from webarena_gym.experiments.conformance.model import (
    GIVE_UP,
    Element,
    Responder,
    Stuck,
    Unit,
    find_element,
    message_text,
    option_element,
)
from webarena_gym.llm.messages import Message
from webarena_gym.policies.plan_and_act.prompts import ACTION_TAGS, PLAN_TAGS
from webarena_gym.wrappers.actions.webrl_grammar import WebRLAction

# The implicit ARIA role of a tag (an <input> by its type); an explicit ``role`` wins.
_TAG_ROLES = {
    "a": "link", "button": "button", "select": "combobox", "textarea": "textbox",
    "summary": "DisclosureTriangle",  # Chromium's role for a <details> element's summary
}  # fmt: skip
_INPUT_ROLES = {
    "search": "searchbox", "checkbox": "checkbox", "radio": "radio", "number": "spinbutton", "submit": "button",
    "button": "button", "reset": "button", "image": "button", "range": "slider",
}  # fmt: skip
_FIELDS = frozenset({"input", "select", "textarea"})
_VOID = frozenset({"input", "img", "br", "hr", "area", "source", "track", "wbr", "col", "embed"})
# The bracketed command (:func:`model.command`) each WebRL action stands in for.
_STANDS_FOR = {"Click": "click", "Type": "type", "Search": "type", "Press Enter": "press", "exit": "stop",
               "go_backward": "go_back"}  # fmt: skip
_ROUND = re.compile(r"^(?:## )?Round \d+$", re.M)
_PAST_ACTION = re.compile(r"^- Action \d+:$", re.M)
_WORD = re.compile(r"\W")


@dataclass(eq=False)
class _Node:
    tag: str
    attrs: dict[str, str]
    at: int
    text: list[str] = field(default_factory=list)
    label: _Node | None = None  # the <label> around the field, else the one before it (a box's: after it)


class _PageReader(HTMLParser):
    """The elements of a simplified-HTML page in document order, with their text and labels."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.nodes: list[_Node] = []
        self.open: list[_Node] = []
        self.last_label: _Node | None = None
        self.unlabelled_box: _Node | None = None  # a radio or checkbox whose label is still to come

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, {k: v or "" for k, v in attrs}, len(self.nodes))
        self.nodes.append(node)
        if tag == "img" and node.attrs.get("alt"):
            self._text(node.attrs["alt"])
        if tag in _FIELDS:
            around = next((n for n in reversed(self.open) if n.tag == "label"), None)
            box = around is None and tag == "input" and node.attrs.get("type") in ("radio", "checkbox")
            node.label = around or (None if box else self.last_label)
            self.last_label, self.unlabelled_box = None, node if box else None
        if tag not in _VOID:
            self.open.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i].tag == tag:
                if tag == "label" and self.unlabelled_box is not None:  # a box's label follows it
                    self.unlabelled_box.label, self.unlabelled_box = self.open[i], None
                elif tag == "label":
                    self.last_label = self.open[i]
                del self.open[i:]
                return

    def handle_data(self, data: str) -> None:
        self._text(data)

    def _text(self, text: str) -> None:
        for node in self.open:
            node.text.append(text)


def _words(parts: list[str]) -> str:
    return " ".join(" ".join(parts).split())


def _role(node: _Node) -> str:
    if node.attrs.get("role"):
        return node.attrs["role"].split()[0]
    if node.tag == "input":
        return _INPUT_ROLES.get(node.attrs.get("type", "text"), "textbox")
    if "contenteditable" in node.attrs:
        return "textbox"
    return _TAG_ROLES.get(node.tag, node.tag)  # a tag without a role keeps its name: it matches no reference role


def _name(node: _Node) -> str:
    """The accessible name as the markup shows it: aria-label, then a field's label or an element's
    text, then title, placeholder, a button's value."""
    attrs = node.attrs
    own = _words(node.text) if node.tag not in _FIELDS else ""
    label = _words(node.label.text) if node.label is not None else ""
    button_value = attrs.get("value", "") if _role(node) == "button" else ""
    for name in (attrs.get("aria-label"), label, own, attrs.get("title"), attrs.get("placeholder"), button_value):
        if name:
            return " ".join(name.split())
    return ""


def html_elements(page: str) -> list[Element]:
    """Every element the page shows with an id, and each dropdown's options right after it (an option
    carries its dropdown's id: it is chosen through the dropdown)."""
    reader = _PageReader()
    reader.feed(page)
    reader.close()
    out: list[Element] = []
    dropdown: Element | None = None
    for node in reader.nodes:
        if node.tag == "option" and dropdown is not None:
            out.append(Element(dropdown.bid, "option", _words(node.text), node.at))
        elif "id" in node.attrs:
            out.append(Element(node.attrs["id"], _role(node), _name(node), node.at))
            dropdown = out[-1] if node.tag == "select" else None
    return out


def _tree_text(elements: list[Element]) -> str:
    """The elements as the model's tree text (``[12] link 'Cart'``), which :func:`model.command` reads."""
    return "\n".join(f"[{e.bid}] {_WORD.sub('', e.role)} '{_escaped(e.name)}'" for e in elements)


def _escaped(name: str) -> str:
    return name.replace("\\", "\\\\").replace("'", "\\'")


def _offered(prompt: str, unit: Unit) -> set[str]:
    """The bracketed commands the executor prompt's WebRL list can stand in for, for ``unit``: the listed
    ``do`` actions (``one of "Click", ...`` or ``1. Click: ...``) and functions (``exit(message)`` ...).
    A dropdown choice needs "Select Dropdown Option", a fill with Enter "Search"."""
    listed = set(re.findall(r"^\d+\. ([\w ]+): `", prompt, re.M))
    for line in re.findall(r"one of (.*)\.$", prompt, re.M):
        listed.update(re.findall(r'"([^"]+)"', line))
    listed.update(re.findall(r"^(exit|go_backward|go_forward)\(", prompt, re.M))
    if unit.kind == "select_option":
        listed = {"Click"} if "Select Dropdown Option" in listed else set()
    elif unit.kind == "fill":
        listed &= {"Search" if len(unit.steps) == 2 else "Type"}
    return {_STANDS_FOR[name] for name in listed if name in _STANDS_FOR}


def step_text(unit: Unit) -> str:
    """One plan step for a reference unit, naming its element by role and name (no ids)."""
    step, target = unit.steps[0], unit.target
    nth = int(target.get("nth", 0))
    element = f"the {target.get('role', '')} '{target.get('name', '')}'" + (f" (match {nth + 1})" if nth else "")
    value = str(step.get("value", ""))
    texts = {
        "click": f"Click {element}",
        "fill": f"Type '{value}' into {element}" + (" and press Enter" if len(unit.steps) == 2 else ""),
        "select_option": f"Choose '{value}' in {element}",
        "press": f"Press {value} in {element}",
        "goto": f"Open the address {step.get('url', '')}",
        "go_back": "Go back to the previous page",
        "send_msg_to_user": f"Answer '{step.get('text', '')}'",
        "report_infeasible": f"Report that the task cannot be done: {step.get('text', '')}",
    }
    return texts.get(unit.kind, f"Carry out the reference step {unit.kind}")


class PlanAndActResponder(Responder):
    """The planner and replanner write the reference steps still to come as the plan (the replanner
    counts the ``- Action k:`` blocks its prompt lists as done); the executor counts its earlier rounds
    and carries out the next step on the page of the current round. CoT or not is read off the prompt
    (whether it asks for the tags)."""

    roles = ("planner", "replanner", "executor")

    def answer(self, role: str, messages: list[Message]) -> str:
        if role == "executor":
            return self._execute(messages)
        done = len(_PAST_ACTION.findall(message_text(messages[-1]))) if role == "replanner" else 0
        left = self.model.units[done:]
        steps = [f"Step: {step_text(u)}." for u in left] or ["Step: Stop: every reference step is done."]
        plan = "\n".join(
            f"## Step {i}\nReasoning: {done + i - 1} of the task's actions come before this one.\n{s}"
            for i, s in enumerate(steps, 1)
        )
        if PLAN_TAGS[0] not in "\n".join(message_text(m) for m in messages):
            return plan
        return f"The previous actions show {done} steps done.\n{PLAN_TAGS[0]}\n{plan}\n{PLAN_TAGS[1]}"

    def _execute(self, messages: list[Message]) -> str:
        current = max(i for i, m in enumerate(messages) if m.get("role") == "user" and _ROUND.search(message_text(m)))
        done = sum(1 for m in messages[:current] if m.get("role") == "assistant")
        prompt = "\n".join(message_text(m) for m in messages[: current + 1])
        try:
            action, reason = self._action(done, message_text(messages[current]), prompt), "The next step of the plan."
        except Stuck as stuck:
            action = WebRLAction("exit", message=f"{GIVE_UP}: {stuck.finding.cause}").text()
            reason = f"I cannot go on: {stuck}."
        if ACTION_TAGS[0] not in prompt:
            return action
        return f"{reason}\n{ACTION_TAGS[0]}\n{action}\n{ACTION_TAGS[1]}"

    def _action(self, done: int, page: str, prompt: str) -> str:
        """Reference unit ``done`` as a WebRL call on ``page`` (the ids come from its markup)."""
        unit = self.model.units[min(done, len(self.model.units) - 1)]
        elements = html_elements(page)
        command = self.model.next_command(done, _tree_text(elements), "", _offered(prompt, unit))
        verb, _, rest = command.partition(" ")
        if verb == "stop":
            return WebRLAction("exit", message=rest[1:-1]).text()
        if verb == "go_back":
            return WebRLAction("go_backward").text()
        if verb == "press":
            return WebRLAction("do", "Press Enter").text()
        note = (f"# Element: {step_text(Unit(unit.steps[:1]))}",)
        typed = re.fullmatch(r"type \[(\d+)\] \[(.*)\] \[([01])\]", command, re.S)
        if typed:
            action = "Search" if typed.group(3) == "1" else "Type"
            return WebRLAction("do", action, typed.group(1), typed.group(2), comments=note).text()
        bid = command[len("click [") : -1]
        if unit.kind == "select_option":
            target = unit.target
            owner = find_element(elements, str(target["role"]), str(target["name"]), int(target.get("nth", 0)), True)
            label = option_element(elements, owner, str(unit.steps[0].get("value", ""))).name
            return WebRLAction("do", "Select Dropdown Option", bid, label, comments=note).text()
        return WebRLAction("do", "Click", bid, comments=note).text()
