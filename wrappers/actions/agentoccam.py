"""AgentOccam's action space as a Gymnasium wrapper over any BrowserGym environment (docs/methods/agentoccam.md).

``step(command)`` takes the bracketed grammar of :mod:`wrappers.actions.grammar` and runs the matching
BrowserGym high-level action(s). Invalid text never reaches the browser: the previous observation
comes back with ``last_action_error`` set and ``info["action_error"]``; no env step is taken.

Decisions on the reference implementation's execution of commands:
- ``click`` on an option of a collapsed native ``<select>`` becomes ``select_option(<select>, <label>)``
  (the reference tried role/name locators first and fell back to selecting on the parent; in
  BrowserGym's tree such options sit under an internal ``MenuListPopup`` node, so we know up
  front which one works). Options of ARIA listboxes/menus and of open ``<select multiple>`` lists
  are clicked like any element.
- ``type`` is ``fill`` (which replaces the value, i.e. the reference's clear-then-type) followed by
  ``press(id, 'Enter')`` when the flag is 1. The pair runs as one env step when the env's BrowserGym
  action set accepts multi-actions, else as two consecutive env steps (stopping at the first error).
- ``type`` into a collapsed native ``<select>`` picks the option Chromium's type-ahead lands on, as
  WebArena's type does there: its click opens the list, its keystrokes move the highlight (each key to
  the next option it begins, a run of keys to the first option the run begins, case aside) and its
  Enter commits it. A fill cannot set a ``<select>``, and in WebArena's viewport tree a collapsed list
  shows no options to click, so this is how an agent there sets one. The choice is committed with or
  without the Enter flag (WebArena leaves it highlighted, uncommitted, without it); text the option
  landed on does not start with is an invalid action (WebArena's keys would have changed nothing, or
  moved the list part way).
- ``go_back`` keeps the reference's guard: it never lands on ``about:blank`` (nothing earlier in the
  tab): ``WebArenaEnv`` blocks that page and returns the tab, a plain BrowserGym env is stepped forward
  again; either way ``last_action_error`` says there is no earlier page.
- ``go_home`` opens ``info["site_urls"]["homepage"]`` from the env's reset (a full URL: the
  reference's hard-coded homepage lacked a scheme), offered only for multi-site tasks.
- ``goto`` must stay on the task's sites (when the env reports them); the env guards as well.
- ids are checked exactly against the ids the current observation shows (see :func:`page_ids`),
  never as substrings.
- invalid commands cost no env step; bounding re-queries is the policy's/rollout loop's job.
- the reference's scroll-into-view before element actions is not needed: Playwright's actions
  scroll their target into view; its fixed 5 s sleeps are the env's load-state waits.
- ``prune``'s return to the URL where the resumed plan started is the policy's move (via its
  handle's ``goto``); the wrapper only hands the command back in ``info``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from webarena_gym.wrappers.actions.browser import BrowserCommands, page_ids
from webarena_gym.wrappers.actions.browser import call as _call
from webarena_gym.wrappers.actions.grammar import Command, InvalidActionError, parse_action

MEMORY_COMMANDS = frozenset({"note", "branch", "prune"})
WEBARENA_COMMANDS = (
    "click", "type", "hover", "press", "scroll", "new_tab", "tab_focus", "close_tab",
    "goto", "go_back", "go_forward", "stop",
)  # fmt: skip
AGENTOCCAM_COMMANDS = ("click", "type", "stop", "note", "go_back", "go_home", "branch", "prune")
_ID_COMMANDS = frozenset({"click", "type", "hover"})
_MULTISITE_ONLY = frozenset({"go_home"})


@dataclass(frozen=True)
class ActionConfig:
    """Which commands are enabled; ``go_home`` is dropped per episode on single-site tasks."""

    commands: tuple[str, ...] = AGENTOCCAM_COMMANDS


class AgentOccamActions(BrowserCommands):
    """Text commands in, BrowserGym actions out; see the module docstring for the semantics.

    Args:
        env: a BrowserGym-style env (usually under an observation wrapper that adds ``obs["text"]``).
        config: the enabled commands (a preset's).

    Example::

        env = AgentOccamActions(AgentOccamObservation(envs.make("webarena/local.0")))
        obs, info = env.reset(seed=0)          # info["commands"]: the commands enabled for this task
        obs, reward, terminated, truncated, info = env.step("click [12]")
    """

    multi_site_only = _MULTISITE_ONLY
    error_type = InvalidActionError

    def __init__(self, env: gym.Env, config: ActionConfig = ActionConfig()) -> None:
        super().__init__(env, config.commands)
        self.config = config

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        self.require_reset()
        try:
            commands = parse_action(action, self.commands)
            browser = [c for c in commands if c.name not in MEMORY_COMMANDS]
            if len(browser) > 1:
                names = ", ".join(c.name for c in browser)
                raise InvalidActionError(f"one browser command per step, got {len(browser)} ({names})")
            plan = self.translate(browser[0]) if browser else []
        except InvalidActionError as error:
            return self.stay(action, f"Invalid action: {error}", {"action_error": str(error)})
        memory = [{"name": c.name, "args": list(c.args)} for c in commands if c.name in MEMORY_COMMANDS]
        extra: dict[str, Any] = {"browser_action": None}
        if memory:
            extra |= {"memory_action": memory[-1], "memory_actions": memory}
        if not plan:
            return self.stay(action, "", extra)
        obs, reward, terminated, truncated, info = self.run(plan, go_back=browser[0].name == "go_back")
        info.update(extra | {"browser_action": info["browser_action"]})
        return obs, reward, terminated, truncated, info

    def answer_in(self, action: str) -> str | None:
        """The answer a ``stop [...]`` command delivers; None for any other (or an invalid) command."""
        try:
            commands = parse_action(action, self.commands)
        except InvalidActionError:
            return None
        return next((c.args[0] for c in commands if c.name == "stop"), None)

    # -- translation ---------------------------------------------------------------------------

    def translate(self, command: Command) -> list[str]:
        """BrowserGym action strings for one browser command (validated against the current obs)."""
        obs = self._obs or {}
        name, args = command.name, command.args
        if name in _ID_COMMANDS and args[0] not in page_ids(obs):
            raise InvalidActionError(f"element [{args[0]}] is not on the current page")
        if name == "click":
            select = _native_select(obs, args[0])
            if select is not None:
                return [_call("select_option", select[0], select[1])]
            return [_call("click", args[0])]
        if name == "type":
            options = _native_options(obs, args[0])
            if options is not None:
                return [_call("select_option", args[0], _type_ahead(options, args[0], args[1]))]
            actions = [_call("fill", args[0], args[1])]
            return actions + ([_call("press", args[0], "Enter")] if args[2] == "1" else [])
        if name == "hover":
            return [_call("hover", args[0])]
        if name == "stop":
            return [_call("send_msg_to_user", args[0])]
        if name == "go_home":
            home = self._site_urls.get("homepage")
            if not home:
                raise InvalidActionError("go_home is not available: this task has no homepage")
            return [_call("goto", home)]
        if name == "goto":
            self.check_url(args[0])
            return [_call("goto", args[0])]
        if name == "scroll":
            height = self.viewport_height()
            return [_call("scroll", 0, height if args[0] == "down" else -height)]
        if name == "press":
            return [self.press(args[0])]
        if name == "tab_focus":
            index = int(args[0])
            self.check_tab(index)
            return [_call("tab_focus", index)]
        simple = {"go_back": "go_back", "go_forward": "go_forward", "new_tab": "new_tab", "close_tab": "tab_close"}
        return [_call(simple[name])]


def _tree_node(obs: dict[str, Any], bid: str) -> tuple[dict[Any, dict[str, Any]], dict[str, Any] | None]:
    """The raw AX tree's nodes by node id, and the node carrying ``bid`` (None if none does)."""
    nodes = (obs.get("axtree_object") or {}).get("nodes") or []
    return {n.get("nodeId"): n for n in nodes}, next((n for n in nodes if n.get("browsergym_id") == bid), None)


def _native_select(obs: dict[str, Any], bid: str) -> tuple[str, str] | None:
    """(select id, option label) when ``bid`` is an option of a collapsed native <select>."""
    by_id, node = _tree_node(obs, bid)
    if node is None or _role(node) != "option":
        return None
    label = str((node.get("name") or {}).get("value") or "")
    in_popup = False
    parent = by_id.get(node.get("parentId"))
    while parent is not None:
        in_popup = in_popup or _role(parent) == "MenuListPopup"
        if parent.get("browsergym_id"):
            return (str(parent["browsergym_id"]), label) if in_popup else None
        parent = by_id.get(parent.get("parentId"))
    return None


def _native_options(obs: dict[str, Any], bid: str) -> tuple[list[str], int] | None:
    """The option labels of ``bid`` and the index of the chosen one when it is a collapsed native
    <select> (its options sit in a ``MenuListPopup`` below it); None for any other element."""
    by_id, node = _tree_node(obs, bid)
    if node is None or _role(node) != "combobox":
        return None
    popups = [by_id.get(child) for child in node.get("childIds") or ()]
    popup = next((p for p in popups if p is not None and _role(p) == "MenuListPopup"), None)
    if popup is None:
        return None
    labels: list[str] = []
    chosen = 0
    stack = list(reversed(popup.get("childIds") or ()))  # depth first, in page order (optgroups)
    while stack:
        child = by_id.get(stack.pop())
        if child is None:
            continue
        if _role(child) == "option":
            if any(
                p.get("name") == "selected" and (p.get("value") or {}).get("value")
                for p in child.get("properties") or ()
            ):
                chosen = len(labels)
            labels.append(str((child.get("name") or {}).get("value") or ""))
        stack.extend(reversed(child.get("childIds") or ()))
    return labels, chosen


def _type_ahead(options: tuple[list[str], int], bid: str, text: str) -> str:
    """The option Chromium's type-ahead lands on when ``text`` is typed into the list, key by key: a
    key starts the search after the chosen option (the same key again cycles through the options it
    begins), a longer run of keys searches from the chosen option on, for the run typed so far."""
    labels, chosen = options
    run, repeating, prefix = "", "", ""
    for key in text.casefold():
        run += key
        if key == repeating:
            prefix, start = key, chosen + 1
        else:
            prefix, start = run, chosen + (len(run) == 1)
            repeating = key if len(run) == 1 else ""
        for offset in range(len(labels)):
            index = (start + offset) % len(labels)
            if labels[index].strip().casefold().startswith(prefix):
                chosen = index
                break
    if not labels or not labels[chosen].strip().casefold().startswith(prefix.strip()):
        raise InvalidActionError(_no_option(labels, bid, text))
    return labels[chosen]


def _no_option(labels: list[str], bid: str, text: str) -> str:
    """The error of a text no option starts with: the options that contain it first (a value such as
    'yjlou' for 'Yi-Jie Lou (yjlou)', which a long list would show only far down, past where a prompt
    cuts an error), then every option in page order."""
    wanted = text.strip().casefold()
    containing = [repr(label) for label in labels if wanted and wanted in label.casefold()]
    found = f"{', '.join(containing)} {'contains' if len(containing) == 1 else 'contain'} it; " if containing else ""
    listed = ", ".join(repr(label) for label in labels)
    return f"no option of the dropdown [{bid}] starts with {text!r}; {found}its options are {listed}"


def _role(node: dict[str, Any]) -> str:
    return str((node.get("role") or {}).get("value") or "")
