"""The conformance model: a scripted LLM that knows one local task's reference solution and nothing else.

It reads element ids only off the page text its prompt shows (``[12] link 'Cart'`` or ``link [12]
'Cart'``), works out how far the task has got from what the prompt says was done before, and answers
with the next reference step in the method's own format (:mod:`.formats`). When the prompt does not
show what the next step needs, its answer says so and ends the episode: the :class:`Finding` is the
result, there is no fallback to the environment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from webarena_gym.envs.local.reference import PLACEHOLDERS
from webarena_gym.llm import Script
from webarena_gym.llm.messages import Message

# The causes a non-conforming episode is filed under (the matrix's table groups by them).
LACKS_ELEMENT = "observation lacks the element"
NO_GRAMMAR = "grammar cannot express the action"
METHOD_LOGIC = "method logic"
LACKS_HISTORY = "prompt lacks the history"  # what was done cannot be told from what the prompt shows
HARNESS_BUG = "harness bug"
NEEDS_URL = "needs a URL no page shows"  # the task is marked so (registry.needs_typed_url): counted apart
GIVE_UP = "cannot continue"  # how the model's answer to the user opens when it cannot go on

ELEMENT_UNITS = ("click", "fill", "select_option")  # the units that act on an element of the page

_QUOTED = r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\""""
# WebArena's tree text puts the id first (``[12] link 'Cart'``), AgentOccam's after the role
# (``link [12] 'Cart'``); AgentOccam folds menus into one string of ``[31] 'Beauty'`` items (no role).
_ID_FIRST = re.compile(rf"\[(\d+)\] (\w+) (?:{_QUOTED})")
_ROLE_FIRST = re.compile(rf"(?<![\w\]])(\w+) \[(\d+)\] (?:{_QUOTED})")
_ROLELESS = re.compile(rf"\[(\d+)\] (?:{_QUOTED})")
# A folded dropdown or menu: ``combobox "Period: [117] 'Day'; [118] 'Month'"`` (the container has no id).
_FOLDED = re.compile(r'(\w+) "(?:([^"\[]*?): )?\[\d+\]')
# A dropdown folded into a table row's cell loses its role: ``row "| Carrier 1: [132] 'DHL'; ... | ..."``.
_CELL_FOLDED = re.compile(r"\| ([^|\"\[\]]+?): \[\d+\]")


@dataclass(frozen=True)
class Element:
    bid: str
    role: str  # "" when the text gives none (a folded menu item)
    name: str
    at: int  # position in the page text: document order


@dataclass(frozen=True)
class Finding:
    """Why the model could not go on: one of the causes above and what exactly was missing."""

    cause: str
    detail: str


class Stuck(Exception):
    """The prompt does not show what the next reference step needs."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(f"{finding.cause}: {finding.detail}")
        self.finding = finding


def page_elements(text: str) -> list[Element]:
    """Every element with an id the page text shows, in document order."""
    found: dict[int, Element] = {}
    for pattern, bid_at, role_at in ((_ID_FIRST, 1, 2), (_ROLE_FIRST, 2, 1)):
        for m in pattern.finditer(text):
            name = m.group(3) if m.group(3) is not None else m.group(4)
            found[m.start()] = Element(m.group(bid_at), m.group(role_at), _unescape(name), m.start())
    for m in _FOLDED.finditer(text):
        found.setdefault(m.start(), Element("", m.group(1), _unescape(m.group(2) or ""), m.start()))
    for m in _CELL_FOLDED.finditer(text):  # no role shown: it stands for any, as a folded item does
        found.setdefault(m.start(), Element("", "", _unescape(m.group(1)), m.start()))
    seen = {e.bid for e in found.values()}
    item: re.Match[str] | None = _ROLELESS.search(text)
    while item is not None:
        name = item.group(2) if item.group(2) is not None else item.group(3)
        if name.startswith("["):  # an element whose text is a fold: its items are inside the quotes
            item = _ROLELESS.search(text, item.start() + 1)
            continue
        if item.group(1) not in seen:
            found[item.start()] = Element(item.group(1), "", _unescape(name), item.start())
        item = _ROLELESS.search(text, item.end())
    return [found[at] for at in sorted(found)]


def _unescape(name: str) -> str:
    return " ".join(re.sub(r"\\(.)", r"\1", name).split())


def find_element(
    elements: Sequence[Element], role: str, name: str, nth: int = 0, allow_folded: bool = False
) -> Element:
    """The ``nth`` element with this role and name, by the reference's rule (exact name, else a
    case-insensitive substring), else by its words alone (the observation cleaned the name's symbols
    away); a folded item without a role stands for any role. A folded container
    has no id of its own: only its items can be acted on (``allow_folded`` finds it to pick an item)."""
    wanted = " ".join(name.split())
    same_role = [e for e in elements if e.role in (role, "")]
    exact = [e for e in same_role if e.name == wanted]
    matches = (
        exact
        or [e for e in same_role if wanted.lower() in e.name.lower()]
        or [e for e in same_role if words(wanted) and words(wanted) in words(e.name)]
    )
    if len(matches) <= nth or (not matches[nth].bid and not allow_folded):
        raise Stuck(Finding(LACKS_ELEMENT, f"the page in the prompt shows no {role} named {name!r}"))
    return matches[nth]


def words(text: str) -> str:
    """The words of a name, lower-cased: how it reads once an observation has cleaned its symbols
    away (AgentOccam shows ``Series X|S`` as ``Series X S``)."""
    return " ".join(re.findall(r"\w+", text.lower()))


def option_element(elements: Sequence[Element], owner: Element, choice: str) -> Element:
    """The option of the dropdown ``owner`` that ``choice`` names: the options (or folded items) listed
    right after it."""
    after = [e for e in elements if e.at > owner.at]
    options: list[Element] = []
    for element in after:
        if element.role not in ("option", ""):
            if options:
                break
            continue
        options.append(element)
    wanted = " ".join(choice.split())
    word = re.compile(rf"(?<![\w.-]){re.escape(wanted)}(?![\w.-])", re.I)
    rules: tuple[Callable[[str], Any], ...] = (
        lambda label: label == wanted,
        lambda label: label.lower() == wanted.lower(),
        word.search,
        lambda label: words(label) == words(wanted),
    )
    for rule in rules:
        hits = [o for o in options if rule(o.name)]
        if len(hits) == 1:
            return hits[0]
    raise Stuck(Finding(LACKS_ELEMENT, f"the page in the prompt shows no option {choice!r} of [{owner.bid}]"))


@dataclass(frozen=True)
class Unit:
    """One command's worth of reference steps (a ``fill`` and the ``press Enter`` after it are one ``type``)."""

    steps: tuple[Mapping[str, Any], ...]

    @property
    def kind(self) -> str:
        return str(self.steps[0]["action"])

    @property
    def target(self) -> Mapping[str, Any]:
        return self.steps[0].get("target") or {}


def units(steps: Sequence[Mapping[str, Any]]) -> list[Unit]:
    out, i = [], 0
    while i < len(steps):
        step, nxt = steps[i], steps[i + 1] if i + 1 < len(steps) else {}
        enter = (
            step["action"] == "fill"
            and nxt.get("action") == "press"
            and nxt.get("target") == step.get("target")
            and nxt.get("value") == "Enter"
        )
        out.append(Unit((step, nxt) if enter else (step,)))
        i += 2 if enter else 1
    return out


# "type [21] [chairs] [1] where [21] is textbox 'Search' required: False": verb, id, arguments, the line.
_DESCRIBED = re.compile(r"^(\w+) \[(\d+)\](.*?)(?: where \[\d+\] is (\w+) (['\"])(.*?)\5(?:\s.*)?)?\s*$", re.S)


def describes(action: str, unit: Unit) -> bool:
    """Whether ``action``, written as WebArena describes an executed one (``click [10] where [10] is
    link 'My Account'``), carries out ``unit`` (the reference's role and name rule)."""
    m = _DESCRIBED.match(action)
    verb = m.group(1) if m else action.split(" ", 1)[0]
    target = unit.target
    if unit.kind in ("goto", "go_back"):
        return verb == unit.kind
    if unit.kind == "go_home":  # a goto to the homepage where the grammar has no go_home
        return verb in ("go_home", "goto")
    if m is None or m.group(4) is None:
        return False
    role, name = m.group(4), " ".join(m.group(6).split()).lower()
    wanted = " ".join(str(target.get("name", "")).split()).lower()
    same = role == target.get("role") and (wanted == name or wanted in name)
    if unit.kind == "select_option":  # the option clicked, or its label (which has the value) typed into the dropdown
        value = str(unit.steps[0].get("value", "")).lower()
        return (verb == "click" and role == "option" and value in name) or (
            verb == "type" and same and value in m.group(3).lower()
        )
    if unit.kind == "fill":
        return verb == "type" and same and typed(str(unit.steps[0].get("value", "")), m.group(3))
    return verb == unit.kind and same


def typed(value: str, arguments: str, after: str = "") -> bool:
    """Whether a type command's ``arguments`` carry the reference's ``value`` in brackets (followed by
    ``after``), a site placeholder in it standing for any address (the one the prompt showed)."""
    pattern = re.escape(value)
    for placeholder in PLACEHOLDERS:
        pattern = pattern.replace(re.escape(placeholder), r"https?://[^/\s\]]+")
    return re.search(rf"\[{pattern}\]{re.escape(after)}", arguments) is not None


def command(
    unit: Unit,
    page: str,
    url: str,
    offered: set[str],
    sites: Sequence[str],
    addresses: Mapping[str, str] | None = None,
    errors: str = "",
    homepage: str = "",
) -> str:
    """The bracketed command for ``unit`` on the page text ``page`` (ids read off that text only).

    ``offered`` is the command set the prompt lists; ``url`` the page's address as the prompt gives
    it (a ``goto`` to the task's own site is resolved against it); ``addresses`` the sites' addresses
    a prompt lists, by site; ``errors`` the action errors the prompt shows (a dropdown's options an
    error listed); ``homepage`` the homepage's address a prompt names (``go_home`` is a ``goto`` to it
    where the grammar has no ``go_home``)."""
    kind, target = unit.kind, unit.target
    if kind in ("send_msg_to_user", "report_infeasible"):
        text = str(unit.steps[0].get("text", ""))
        answer = text if kind == "send_msg_to_user" else (f"N/A: {text}" if text else "N/A")
        return _offered(f"stop [{answer}]", offered)
    if kind == "go_home" and "go_home" not in offered and homepage:
        return _offered(f"goto [{homepage}]", offered)
    if kind in ("go_back", "go_home"):
        return _offered(kind, offered)
    if kind == "goto":
        _offered("goto", offered)
        return f"goto [{urljoin(url, _fill_sites(str(unit.steps[0].get('url', '')), url, sites, addresses))}]"
    elements = page_elements(page)
    role, name, nth = str(target.get("role", "")), str(target.get("name", "")), int(target.get("nth", 0))
    element = find_element(elements, role, name, nth, allow_folded=kind == "select_option")
    if kind == "click":
        return _offered(f"click [{element.bid}]", offered)
    if kind == "fill":
        value = _fill_sites(str(unit.steps[0].get("value", "")), url, sites, addresses)
        return _offered(f"type [{element.bid}] [{value}] [{1 if len(unit.steps) == 2 else 0}]", offered)
    if kind == "select_option":
        listed = listed_options(errors, element.bid)
        return select_command(elements, element, str(unit.steps[0].get("value", "")), offered, listed)
    if kind == "press":
        return _offered(f"press [{unit.steps[0].get('value', '')}]", offered)
    raise Stuck(Finding(NO_GRAMMAR, f"reference action {kind!r} has no command"))


def shows_target(unit: Unit, page: str) -> bool:
    """Whether the page shows the element ``unit`` acts on (a unit without one needs no scrolling)."""
    if unit.kind not in ELEMENT_UNITS:
        return True
    target = unit.target
    try:
        find_element(
            page_elements(page),
            str(target.get("role", "")),
            str(target.get("name", "")),
            int(target.get("nth", 0)),
            allow_folded=unit.kind == "select_option",
        )
    except Stuck:
        return False
    return True


def _field_line(command: str, page: str) -> str:
    """The page line of the element ``command`` acts on (``[197] textbox 'City' value: ...``)."""
    bid = re.match(r"\w+ \[(\d+)\]", command)
    line = re.search(rf"^\s*\[{bid.group(1)}\] .*$", page, re.M) if bid else None
    return line.group(0) if line else ""


def is_field(unit: Unit) -> bool:
    """Whether ``unit`` sets a form field, whose state the page shows."""
    return unit.kind in ("fill", "select_option") or str(unit.target.get("role")) in ("radio", "checkbox")


def shows_done(unit: Unit, command: str, page: str) -> bool:
    """Whether the page shows ``unit``'s effect: the typed or chosen value, the radio checked."""
    line = _field_line(command, page)
    if unit.kind in ("fill", "select_option"):
        return f"value: {unit.steps[0].get('value', '')}" in line
    return is_field(unit) and "checked: true" in line.lower()


def shows_undone(unit: Unit, command: str, page: str) -> bool:
    """Whether the page shows that ``unit`` was not carried out: its radio unchecked (a click always
    checks a radio; a checkbox's click may uncheck it, and a prefilled or reset field proves nothing)."""
    return str(unit.target.get("role")) == "radio" and "checked: false" in _field_line(command, page).lower()


def select_command(
    elements: Sequence[Element], owner: Element, choice: str, offered: set[str], listed: Sequence[str] = ()
) -> str:
    """The command choosing ``choice`` in the dropdown ``owner``: a click on the option the page lists,
    else (a collapsed native list, whose options a viewport tree leaves out) its label typed into the
    dropdown, which WebArena's ``type`` picks by type-ahead. The reference may name an option by its
    value ('byteblaze' for 'Byte Blaze (@byteblaze)'): once an error has ``listed`` the options, the
    label that contains it is typed."""
    try:
        option = option_element(elements, owner, choice)
    except Stuck:
        if not owner.bid or "type" not in offered:
            raise
        if listed:
            label = next((o for o in listed if choice.casefold() in o.casefold()), None)
            if label is None:
                detail = f"the options listed for [{owner.bid}] include none like {choice!r}"
                raise Stuck(Finding(LACKS_ELEMENT, detail)) from None
            choice = label
        return f"type [{owner.bid}] [{choice}] [1]"
    return _offered(f"click [{option.bid}]", offered)


# The action error a typed text no option starts with gives (the action wrapper's): the options that
# contain the text, then every option, quoted.
_LISTED = re.compile(
    r"no option of the dropdown \[(\d+)\] starts with .*?; (?:(.*?) contains? it; )?its options are (.*)"
)


def listed_options(errors: str, bid: str) -> list[str]:
    """The options an action error in ``errors`` listed for the dropdown ``bid`` (none when no error did):
    those it says contain the typed text first."""
    for m in _LISTED.finditer(errors):
        if m.group(1) == bid:
            return [_unescape(a or b) for a, b in re.findall(_QUOTED, f"{m.group(2) or ''} {m.group(3)}")]
    return []


def _offered(text: str, offered: set[str]) -> str:
    name = text.split(" ", 1)[0]
    if name not in offered:
        raise Stuck(Finding(NO_GRAMMAR, f"the step needs {name!r}; the prompt offers {', '.join(sorted(offered))}"))
    return text


def _fill_sites(text: str, page_url: str, sites: Sequence[str], addresses: Mapping[str, str] | None) -> str:
    """Placeholders become the address the prompt lists for their site, else (the task's one site) the
    origin of the page the prompt shows; any other site's address is nowhere in the prompt."""
    for placeholder, site in PLACEHOLDERS.items():
        if placeholder not in text:
            continue
        if addresses and site in addresses:
            origin = addresses[site].rstrip("/")
        elif list(sites) == [site] and page_url:
            parts = urlsplit(page_url)
            origin = f"{parts.scheme}://{parts.netloc}"
        else:
            raise Stuck(Finding(LACKS_ELEMENT, f"the prompt shows no address of the {site} site"))
        text = text.replace(placeholder, origin)
    return text


def offered_commands(system: str) -> set[str]:
    """The commands a prompt's list offers (``- `click [id]`: ...`` or ``- click [id]: ...``), not the
    fields of an answer format it shows (``- reason: [...]``)."""
    return set(re.findall(r"^\s*- `?([a-z_]+)\b(?!: \[)", system, re.M))


def message_text(message: Message) -> str:
    """A message's text, its text parts joined (images left out)."""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def system_text(messages: list[Message]) -> str:
    """The system message's text ("" when the first message is not one)."""
    return message_text(messages[0]) if messages and messages[0].get("role") == "system" else ""


def section(text: str, header: str, ends: str = r"\n[A-Z][A-Z ]+:", after: str = r":[ \t]*\n?") -> str:
    """The body under ``header`` in ``text`` (the last such section) up to the next header (``ends``).
    By default the header is an all-caps ``HEADER:``; ``after`` is what follows the header's text on its
    line (``"\\n"`` for a header that is a line of its own, as ``### Subplan History ###``)."""
    starts = [m.end() for m in re.finditer(rf"^{re.escape(header)}{after}", text, re.M)]
    if not starts:
        return ""
    body = text[starts[-1] :]
    end = re.search(ends, body)
    return body[: end.start()] if end else body


def line_after(text: str, prefix: str, rest: bool = False) -> str:
    """What follows ``prefix`` on its line (with ``rest``: to the end of the text), or ""."""
    m = re.search(rf"^{re.escape(prefix)}(.*)$", text, re.M | (re.S if rest else 0))
    return m.group(1).strip() if m else ""


class Responder:
    """What a method family's format module provides: ``answer(role, messages)`` -> the model's reply."""

    roles: tuple[str, ...] = ()

    def __init__(self, model: ConformanceModel) -> None:
        self.model = model

    def answer(self, role: str, messages: list[Message]) -> str:
        raise NotImplementedError


class ConformanceModel:
    """The model entry point: one task's reference, one method family's responder, every role.

    ``finding`` is set when an answer had to say the prompt lacks something (the episode then fails), or
    while the model scrolls looking for an element;
    ``calls`` counts the calls per role. With ``faults`` > 0 about that share of the answers is replaced
    by a plausible wrong one (:mod:`.faults`)."""

    def __init__(self, task_id: int, method: str, sites: Sequence[str], faults: float = 0.0) -> None:
        from webarena_gym.envs.local import registry
        from webarena_gym.experiments.conformance.faults import Faults
        from webarena_gym.experiments.conformance.formats import responder

        self.units = units(registry.load_solution(task_id))
        goto_free = registry.goto_free_solution(task_id)
        self._goto_free = units(goto_free) if goto_free is not None else None
        self._needs_url = registry.needs_typed_url(task_id)
        self.sites = tuple(sites)
        self.responder = responder(method, self)
        self._said: Finding | None = None
        self._suspected: Finding | None = None
        self.calls: dict[str, int] = {}
        self.faults = Faults.seeded(faults, task_id, method)  # rate 0: every answer is the right one

    def script(self) -> Script:
        return Script({role: Script.forever(self._role(role)) for role in self.responder.roles})

    def _role(self, role: str) -> Callable[[list[Message]], str]:
        def answer(messages: list[Message]) -> str:
            self.calls[role] = self.calls.get(role, 0) + 1
            return self.faults.apply(self.responder.answer(role, messages), messages)

        return answer

    @property
    def finding(self) -> Finding | None:
        """The episode's finding: the first one said, else a suspicion still standing."""
        return self._said or self._suspected

    def record(self, finding: Finding) -> Finding:
        """Keep ``finding`` as the episode's (the first one said stands) and hand it back."""
        self._said = self._said or finding
        return finding

    def suspect(self, finding: Finding | None) -> None:
        """What the episode fails of unless a later answer clears it (None): a scroll looking for an
        element a prompt may show further down, where no prompt says how often it scrolled already."""
        self._suspected = finding

    def scroll_for(self, unit: Unit, page: str, offered: set[str]) -> bool:
        """Whether to scroll down for ``unit``: the viewport's page does not show its element and the prompt
        offers a scroll. The element is then suspected lacking until a view shows it; any other answer
        clears the suspicion."""
        if "scroll" in offered and not shows_target(unit, page):
            target = unit.target
            detail = f"no view of the page, scrolled down, showed the {target.get('role')} {target.get('name')!r}"
            self.suspect(Finding(LACKS_ELEMENT, detail))
            return True
        self.suspect(None)
        return False

    def _addresses_shown(self, url: str, addresses: Mapping[str, str] | None) -> bool:
        """Whether the prompt gives the address of every site the reference opens by ``goto``."""
        for unit in self.units:
            if unit.kind == "goto":
                try:
                    _fill_sites(str(unit.steps[0].get("url", "")), url, self.sites, addresses)
                except Stuck:
                    return False
        return True

    def possible_command(
        self, done: int, page: str, url: str, offered: set[str], errors: str = "", homepage: str = ""
    ) -> str | None:
        """The command for reference unit ``done`` if the prompt can carry it out, else None; a probe that
        records no finding."""
        if done >= len(self.units):
            return None
        try:
            return command(self.units[done], page, url, offered, self.sites, errors=errors, homepage=homepage)
        except Stuck:
            return None

    def next_command(
        self,
        done: int,
        page: str,
        url: str,
        offered: set[str],
        addresses: Mapping[str, str] | None = None,
        errors: str = "",
        homepage: str = "",
    ) -> str:
        """The command for reference unit ``done`` (the number the prompt shows as done), or raises
        :class:`Stuck` (recorded as the finding); ``addresses``, ``errors`` and ``homepage`` as for
        :func:`command`. A prompt that offers no ``goto``, or names the homepage but not a site the
        reference opens by address, has the model follow the task's goto-free path (chosen on the first
        step); a ``goto`` it still meets on a task marked as needing a URL no page shows is filed under
        :data:`NEEDS_URL`."""
        if done == 0 and self._goto_free is not None:
            if "goto" not in offered or (homepage and not self._addresses_shown(url, addresses)):
                self.units = self._goto_free  # the path every action space can take, from the homepage
        try:
            if done >= len(self.units):
                raise Stuck(Finding(METHOD_LOGIC, "the prompt shows every reference step done, yet asks again"))
            return command(self.units[done], page, url, offered, self.sites, addresses, errors, homepage)
        except Stuck as stuck:
            finding = stuck.finding
            if self._needs_url and self.units[min(done, len(self.units) - 1)].kind == "goto":
                finding = Finding(NEEDS_URL, self._needs_url)
            raise Stuck(self.record(finding)) from None
