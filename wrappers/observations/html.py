"""The simplified-HTML observation of WebRL / WebArena-Lite, as Plan-and-Act's models read it
(docs/methods/plan_and_act.md).

``SimplifiedHTMLObservation`` adds three keys to BrowserGym's observation dict:

* ``obs["text"]``: the page as simplified HTML in which every interactive element carries its element
  id (``<a id="42">Reports</a>``): what an executor reads and what ``element="42"`` refers to;
* ``obs["text_no_ids"]``: the same page with every ``id`` attribute removed (:func:`strip_ids`): what a
  planner reads, so plans talk about the page and never about element ids;
* ``obs["text_tree"]``: the :class:`HtmlPage` behind both (shown ids, element facts such as a
  dropdown's options, and :meth:`HtmlPage.snippet`, the short excerpt an executor history keeps).

Both texts cover the full page, not only the viewport, and start with the dialog lines every text
observation of this project starts with. The page comes from BrowserGym's DOM snapshot, so the env must
run in ``obs_mode="dom"`` or ``"full"`` (the ``plan_and_act`` preset sets ``"dom"``).

How the page is simplified, and where that follows the released code or decides what it leaves open:

* dropped: ``script``, ``style``, ``noscript``, ``template``, ``head`` and ``footer`` (the released cleaner
  removes footers), elements without a layout box (``display: none``, hidden inputs) and
  ``aria-hidden="true"`` subtrees; the options of a kept ``<select>`` stay although Chromium gives
  the options of a closed dropdown no box;
* attributes: only the released cleaner's list (``alt``, ``aria-label``, ``aria-description``, ``aria-expanded``,
  ``checked``, ``contenteditable``, ``data-label``, ``data-status``, ``data-testid``, ``data-text``,
  ``data-value``, ``label``, ``name``, ``placeholder``, ``role``, ``selected``, ``title``, ``type``,
  ``value``, plus ``aria-selected``/``aria-checked``, the ARIA forms of its selected and checked states,
  so a custom tab or checkbox shows its state), with the live state of form fields (typed values,
  checked boxes, chosen options) taken from the snapshot rather than the markup;
  ``role="presentation"``/``"none"`` is left out;
* ids: BrowserGym's element ids (``bid``), shown only on interactive elements: links, buttons, form
  fields, ``summary``, elements with an interactive ARIA role, editable elements, and elements the
  browser reports as clickable (a click listener). WebRL numbers the elements it labels 0, 1, 2, ...
  on every page; BrowserGym's ids are stable while an element lives, so no id table is needed between
  the model and the browser, and the executor's ``element="..."`` goes straight to BrowserGym;
* wrapper tags (``div``, ``span``, ``p``, ``b``, ``i``, ``em``, ``strong``, ``small``, ``u``, ``font``,
  ``section``, ``article``, ``header``, ``main``, ``center``, ``h1``-``h6``, as the released cleaner lists) that
  carry no kept attribute and no id disappear when they hold only text or a single child, and their
  text joins the surrounding text; one that groups several children keeps its tag. Structural tags
  (lists, tables, forms, ``nav``, ``label``) always keep theirs. Empty elements without an id vanish;
* layout: one element per line, indented one space per level (the released code's "prettified" page); an
  element whose content is only text stays on one line, which keeps pages short.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html import escape
from typing import Any

import gymnasium as gym
from browsergym.core.spaces import Anything, Unicode

from webarena_gym.wrappers.forwarding import ForwardsEnvCalls
from webarena_gym.wrappers.observations import dialog_lines

KEPT_ATTRIBUTES = (
    "role", "type", "name", "title", "alt", "placeholder", "aria-label", "aria-description", "aria-expanded",
    "aria-selected", "aria-checked", "label", "value", "checked", "selected", "contenteditable",
    "data-label", "data-status", "data-testid", "data-text", "data-value",
)  # fmt: skip
DROPPED_TAGS = ("script", "style", "noscript", "template", "head", "footer")
WRAPPER_TAGS = (
    "div", "span", "p", "b", "i", "em", "strong", "small", "u", "font", "section", "article", "header", "main",
    "center", "h1", "h2", "h3", "h4", "h5", "h6",
)  # fmt: skip
INTERACTIVE_TAGS = frozenset({"a", "button", "input", "select", "textarea", "summary"})
INTERACTIVE_ROLES = frozenset(
    {
        "button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option",
        "combobox", "textbox", "searchbox", "switch", "slider", "spinbutton", "treeitem", "listbox",
    }
)  # fmt: skip
VOID_TAGS = frozenset({"input", "img", "br", "hr", "area", "source", "track", "wbr", "col", "embed"})
PLACEHOLDER = "** Simplified html **"  # WebRL's stand-in for a page that is no longer shown

_ID_ATTRIBUTE = re.compile(r'(<[a-z][a-z0-9-]*) id="[^"]*"')
_SPACES = re.compile(r"\s+")
_BROWSERGYM_MARK = re.compile(r"^browsergym_id_\S*\s?")
_SKIPPED_ROLES = ("presentation", "none")
_ELEMENT, _TEXT, _CDATA, _FRAGMENT = 1, 3, 4, 11


def strip_ids(html: str) -> str:
    """The page without element ids: every ``id="..."`` attribute removed (the released code's ``strip_annotation``).

    Ids are always the first attribute of a tag and ``<`` never appears unescaped in text, so only ids
    are touched; this is exactly how ``obs["text_no_ids"]`` is made from the page of ``obs["text"]``.
    """
    return _ID_ATTRIBUTE.sub(r"\1", html)


@dataclass(frozen=True)
class HTMLConfig:
    """What the simplification keeps (defaults: the released cleaner's, see the module docstring)."""

    kept_attributes: tuple[str, ...] = KEPT_ATTRIBUTES
    dropped_tags: tuple[str, ...] = DROPPED_TAGS
    wrapper_tags: tuple[str, ...] = WRAPPER_TAGS


@dataclass(eq=False)
class Element:
    """One element of the simplified page; ``children`` are elements and text runs in page order."""

    tag: str
    bid: str | None  # shown as id="..." (interactive elements only)
    attrs: list[tuple[str, str]]
    children: list[Element | str] = field(default_factory=list)
    parent: Element | None = None

    def walk(self) -> Iterator[Element]:
        stack: list[Element] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed([c for c in node.children if isinstance(c, Element)]))


@dataclass(frozen=True)
class Option:
    """One option of a native dropdown: its visible label, its value, whether it is chosen."""

    label: str
    value: str
    selected: bool


@dataclass(frozen=True)
class ElementInfo:
    """What an action wrapper needs to know about an element the page shows with an id."""

    tag: str
    role: str = ""
    options: tuple[Option, ...] = ()  # a native <select>'s options, in page order


class HtmlPage:
    """A simplified page: its HTML with ids, the ids it shows, facts per id, and history snippets."""

    def __init__(self, root: Element, infos: dict[str, ElementInfo]) -> None:
        self.root = root
        self.infos = infos
        self.ids: frozenset[str] = frozenset(infos)
        self._by_id = {node.bid: node for node in root.walk() if node.bid is not None}
        self._html: str | None = None

    def __repr__(self) -> str:
        return f"HtmlPage({len(self.ids)} ids)"

    @property
    def html(self) -> str:
        """The page with element ids (without the dialog lines the observation adds)."""
        if self._html is None:
            self._html = "\n".join(_render(self.root, 0))
        return self._html

    def snippet(self, bid: str | None, siblings: int = 5, descendants: int = 5, depth: int = 3) -> str:
        """The short view of the page an executor history keeps for a past round (as the released code does): the
        chain of ancestors of element ``bid`` from ``<body>`` down, its parent's other children (up to
        ``siblings`` on each side) and the element itself, each cut to ``descendants`` descendant nodes and
        ``depth`` levels. Without an element (a scroll, an answer) or for an id the page does not show,
        the stand-in line WebRL uses for old pages."""
        node = self._by_id.get(bid) if bid is not None else None
        if node is None or node.parent is None:
            return PLACEHOLDER
        chain: list[Element] = []
        up: Element | None = node.parent
        while up is not None and up.tag != "html":
            chain.append(up)
            up = up.parent
        chain.reverse()
        kin = [c for c in node.parent.children if isinstance(c, Element)]
        at = kin.index(node)
        shown = kin[max(0, at - siblings) : at + siblings + 1]
        lines: list[str] = []
        for level, ancestor in enumerate(chain):
            lines.append(" " * level + _open_tag(ancestor))
        inner = len(chain)
        for sibling in shown:
            budget = [descendants]
            lines.extend(_render(sibling, inner, max_depth=depth, budget=budget))
        for level in range(len(chain) - 1, -1, -1):
            lines.append(" " * level + f"</{chain[level].tag}>")
        return "\n".join(lines)


def _attrs(attrs: Iterable[tuple[str, str]], bid: str | None) -> str:
    parts = [f'id="{escape(bid)}"'] if bid is not None else []
    parts += [name if value == "" else f'{name}="{escape(value)}"' for name, value in attrs]
    return "".join(f" {p}" for p in parts)


def _open_tag(node: Element) -> str:
    return f"<{node.tag}{_attrs(node.attrs, node.bid)}>"


def _render(node: Element, level: int, *, max_depth: int | None = None, budget: list[int] | None = None) -> list[str]:
    """Lines of ``node`` at indentation ``level``; ``max_depth``/``budget`` (descendants left) cut snippets."""
    pad = " " * level
    if node.tag in VOID_TAGS and not node.children:
        return [f"{pad}{_open_tag(node)[:-1]}/>"]
    if all(isinstance(c, str) for c in node.children):
        text = " ".join(escape(c, quote=False) for c in node.children)  # type: ignore[arg-type]
        return [f"{pad}{_open_tag(node)}{text}</{node.tag}>"]
    lines = [pad + _open_tag(node)]
    cut = False
    for child in node.children:
        if budget is not None:
            if budget[0] <= 0 or (max_depth is not None and max_depth <= 0):
                cut = True
                break
            budget[0] -= 1
        if isinstance(child, str):
            lines.append(f"{pad} {escape(child, quote=False)}")
        else:
            deeper = None if max_depth is None else max_depth - 1
            lines.extend(_render(child, level + 1, max_depth=deeper, budget=budget))
    if cut:
        lines.append(f"{pad} ...")
    lines.append(f"{pad}</{node.tag}>")
    return lines


class _Snapshot:
    """Read access to one document of BrowserGym's DOM snapshot (CDP ``DOMSnapshot.captureSnapshot``)."""

    def __init__(self, dom: dict[str, Any], index: int) -> None:
        self.strings: list[str] = dom["strings"]
        doc = dom["documents"][index]
        nodes = doc["nodes"]
        self.nodes = nodes
        self.count = len(nodes["nodeName"])
        self.children: list[list[int]] = [[] for _ in range(self.count)]
        for i, parent in enumerate(nodes["parentIndex"]):
            if parent >= 0:
                self.children[parent].append(i)
        self.laid_out = set(doc.get("layout", {}).get("nodeIndex", ()))
        self.clickable = set(nodes.get("isClickable", {}).get("index", ()))
        self.checked = set(nodes.get("inputChecked", {}).get("index", ()))
        self.option_selected = set(nodes.get("optionSelected", {}).get("index", ()))
        self.input_value = self._rare_strings("inputValue")
        self.text_value = self._rare_strings("textValue")
        self.pseudo = set(nodes.get("pseudoType", {}).get("index", ()))
        frames = nodes.get("contentDocumentIndex", {})
        self.frames = dict(zip(frames.get("index", ()), frames.get("value", ()), strict=False))

    def _rare_strings(self, key: str) -> dict[int, str]:
        data = self.nodes.get(key) or {}
        return {i: self.string(v) for i, v in zip(data.get("index", ()), data.get("value", ()), strict=False)}

    def string(self, index: int) -> str:
        return self.strings[index] if index >= 0 else ""

    def name(self, i: int) -> str:
        return self.string(self.nodes["nodeName"][i]).lower()

    def value(self, i: int) -> str:
        return self.string(self.nodes["nodeValue"][i])

    def attributes(self, i: int) -> dict[str, str]:
        raw = self.nodes["attributes"][i]
        return {self.string(raw[k]): self.string(raw[k + 1]) for k in range(0, len(raw), 2)}


class _Builder:
    """Builds the simplified tree of one DOM snapshot (see the module docstring for the rules)."""

    def __init__(self, dom: dict[str, Any], config: HTMLConfig) -> None:
        self.dom = dom
        self.config = config
        self.kept = frozenset(config.kept_attributes)
        self.dropped = frozenset(config.dropped_tags)
        self.wrappers = frozenset(config.wrapper_tags)
        self.infos: dict[str, ElementInfo] = {}

    def page(self) -> HtmlPage:
        root = Element("html", None, [])
        if self.dom.get("documents"):
            doc = _Snapshot(self.dom, 0)
            body = next((i for i in range(doc.count) if doc.name(i) == "body"), None)
            if body is not None:
                root.children = self.parts(doc, body, in_select=False)
        for child in root.children:
            if isinstance(child, Element):
                child.parent = root
        return HtmlPage(root, self.infos)

    def parts(self, doc: _Snapshot, i: int, in_select: bool) -> list[Element | str]:
        """What node ``i`` contributes to its parent: nothing, text, its element, or its children."""
        kind = doc.nodes["nodeType"][i]
        if kind in (_TEXT, _CDATA):
            text = _SPACES.sub(" ", doc.value(i)).strip()
            return [text] if text else []
        if kind == _FRAGMENT:  # a shadow root: its content belongs to the host
            return self.content(doc, i, in_select)
        if kind != _ELEMENT or i in doc.pseudo:
            return []
        tag = doc.name(i)
        attributes = doc.attributes(i)
        if tag in self.dropped or attributes.get("aria-hidden") == "true":
            return []
        option = in_select and tag in ("option", "optgroup")
        if tag != "body" and i not in doc.laid_out and not option:
            return []
        children = self.content(doc, i, in_select or tag == "select")
        if i in doc.frames:
            children += self.parts(_Snapshot(self.dom, doc.frames[i]), 0, False) if doc.frames[i] >= 0 else []
        attrs = self.attributes(doc, i, tag, attributes)
        if option:  # an option's value equal to its label says nothing more
            label = " ".join(c for c in children if isinstance(c, str))
            attrs = [a for a in attrs if a != ("value", label)]
        bid = attributes.get("bid")
        role = attributes.get("role", "")
        interactive = bid is not None and not option and self.interactive(doc, i, tag, attributes)
        if interactive:
            assert bid is not None
            self.infos[bid] = ElementInfo(tag, role, self.options(children) if tag == "select" else ())
        element = Element(tag, bid if interactive else None, attrs, children)
        if tag == "body" or interactive or attrs or option:
            return [self.adopt(element)]
        if not children:
            return []
        if tag in self.wrappers and (len(children) == 1 or all(isinstance(c, str) for c in children)):
            return children
        return [self.adopt(element)]

    def content(self, doc: _Snapshot, i: int, in_select: bool) -> list[Element | str]:
        parts: list[Element | str] = []
        for child in doc.children[i]:
            for part in self.parts(doc, child, in_select):
                if isinstance(part, str) and parts and isinstance(parts[-1], str):
                    parts[-1] = f"{parts[-1]} {part}"
                else:
                    parts.append(part)
        if doc.name(i) == "textarea" and i in doc.text_value:
            return [doc.text_value[i]] if doc.text_value[i] else []
        return parts

    def attributes(self, doc: _Snapshot, i: int, tag: str, attributes: dict[str, str]) -> list[tuple[str, str]]:
        values = {k: v for k, v in attributes.items() if k not in ("checked", "selected", "value")}
        # the live state of form fields, not the markup's defaults; password values stay hidden
        if tag == "input" and attributes.get("type") != "password":
            live = doc.input_value.get(i, attributes.get("value"))
            if live is not None:
                values["value"] = live
        elif tag == "option" and "value" in attributes:
            values["value"] = attributes["value"]
        if i in doc.checked:
            values["checked"] = ""
        if i in doc.option_selected:
            values["selected"] = ""
        kept = []
        for name in self.config.kept_attributes:
            value = values.get(name)
            if value is None:
                continue
            value = _BROWSERGYM_MARK.sub("", _SPACES.sub(" ", value)).strip() if name != "value" else value
            if name == "role" and value in _SKIPPED_ROLES:
                continue
            if value or name in ("checked", "selected", "contenteditable"):
                kept.append((name, value))
        return kept

    @staticmethod
    def interactive(doc: _Snapshot, i: int, tag: str, attributes: dict[str, str]) -> bool:
        if tag in INTERACTIVE_TAGS:
            return not (tag == "a" and "href" not in attributes and i not in doc.clickable)
        if attributes.get("role") in INTERACTIVE_ROLES:
            return True
        if attributes.get("contenteditable") in ("", "true", "plaintext-only"):
            return True
        return i in doc.clickable

    @staticmethod
    def options(children: list[Element | str]) -> tuple[Option, ...]:
        found = []
        for child in children:
            if not isinstance(child, Element):
                continue
            for node in child.walk():
                if node.tag == "option":
                    label = " ".join(c for c in node.children if isinstance(c, str))
                    attrs = dict(node.attrs)
                    found.append(Option(label, attrs.get("value", label), "selected" in attrs))
        return tuple(found)

    @staticmethod
    def adopt(element: Element) -> Element:
        for child in element.children:
            if isinstance(child, Element):
                child.parent = element
        return element


def simplify_dom(dom_object: dict[str, Any], config: HTMLConfig = HTMLConfig()) -> HtmlPage:
    """The simplified page of BrowserGym's ``dom_object`` (see the module docstring)."""
    return _Builder(dom_object or {}, config).page()


class SimplifiedHTMLObservation(ForwardsEnvCalls, gym.ObservationWrapper):
    """Adds ``obs["text"]`` (simplified HTML with ids), ``obs["text_no_ids"]`` and ``obs["text_tree"]``.

    Args:
        env: a BrowserGym-style env in ``obs_mode="dom"`` or ``"full"`` (its observations carry ``dom_object``).
        config: what the simplification keeps (:class:`HTMLConfig`).

    Example::

        env = SimplifiedHTMLObservation(envs.make("webarena/local.0", obs_mode="dom"))
        obs, info = env.reset(seed=0)
        print(obs["text"])           # <html> <body> ... <a id="42">Orders</a> ...
        print(obs["text_no_ids"])    # the same page without ids, for a planner
    """

    def __init__(self, env: gym.Env, config: HTMLConfig = HTMLConfig()) -> None:
        super().__init__(env)
        self.config = config
        space = env.observation_space
        if isinstance(space, gym.spaces.Dict):
            self.observation_space = gym.spaces.Dict(
                {**space.spaces, "text": Unicode(), "text_no_ids": Unicode(), "text_tree": Anything()}
            )

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        page = simplify_dom(observation.get("dom_object") or {}, self.config)
        dialogs = dialog_lines(observation)
        return {
            **observation,
            "text": dialogs + page.html,
            "text_no_ids": dialogs + strip_ids(page.html),
            "text_tree": page,
        }
