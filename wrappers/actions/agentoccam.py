"""AgentOccam's action space as a Gymnasium wrapper over any BrowserGym environment (agentoccam.md §2).

``step(command)`` takes the bracketed grammar of :mod:`wrappers.actions.grammar` and runs the matching
BrowserGym high-level action(s). Invalid text never reaches the browser: the previous observation
comes back with ``last_action_error`` set and ``info["action_error"]``; no env step is taken.

Decisions on the reference execution (agentoccam.md §2.5, §12 item 11):
- ``click`` on an option of a collapsed native ``<select>`` becomes ``select_option(<select>, <label>)``
  (the reference tried role/name locators first and fell back to selecting on the parent; in
  BrowserGym's tree such options sit under an internal ``MenuListPopup`` node, so we know up
  front which one works). Options of ARIA listboxes/menus and of open ``<select multiple>`` lists
  are clicked like any element.
- ``type`` is ``fill`` (which replaces the value, i.e. the reference's clear-then-type) followed by
  ``press(id, 'Enter')`` when the flag is 1. The pair runs as one env step when the env's BrowserGym
  action set accepts multi-actions, else as two consecutive env steps (stopping at the first error).
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
from urllib.parse import urlsplit

import gymnasium as gym
from browsergym.core.spaces import Unicode

from wrappers.actions.grammar import Command, InvalidActionError, parse_action
from wrappers.forwarding import ForwardsEnvCalls

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


class AgentOccamActions(ForwardsEnvCalls, gym.Wrapper):
    """Text commands in, BrowserGym actions out; see the module docstring for the semantics.

    Args:
        env: a BrowserGym-style env (usually under an observation wrapper that adds ``obs["text"]``).
        config: the enabled commands (a preset's).

    Example::

        env = AgentOccamActions(AgentOccamObservation(envs.make("webarena/local.0")))
        obs, info = env.reset(seed=0)          # info["commands"]: the commands enabled for this task
        obs, reward, terminated, truncated, info = env.step("click [12]")
    """

    def __init__(self, env: gym.Env, config: ActionConfig = ActionConfig()) -> None:
        super().__init__(env)
        self.config = config
        self.commands: tuple[str, ...] = config.commands
        self.action_space = Unicode()
        self._obs: dict[str, Any] | None = None
        self._site_urls: dict[str, str] = {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._obs = obs
        self._site_urls = dict(info.get("site_urls") or {})
        multi_site = len(info.get("sites") or ()) > 1
        self.commands = tuple(c for c in self.config.commands if multi_site or c not in _MULTISITE_ONLY)
        info["commands"] = list(self.commands)
        return obs, info

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self._obs is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        try:
            commands = parse_action(action, self.commands)
            browser = [c for c in commands if c.name not in MEMORY_COMMANDS]
            if len(browser) > 1:
                names = ", ".join(c.name for c in browser)
                raise InvalidActionError(f"one browser command per step, got {len(browser)} ({names})")
            plan = self.translate(browser[0]) if browser else []
        except InvalidActionError as error:
            return self._stay(action, f"Invalid action: {error}", {"action_error": str(error)})
        memory = [{"name": c.name, "args": list(c.args)} for c in commands if c.name in MEMORY_COMMANDS]
        extra: dict[str, Any] = {"browser_action": None}
        if memory:
            extra |= {"memory_action": memory[-1], "memory_actions": memory}
        if not plan:
            return self._stay(action, "", extra)
        obs, reward, terminated, truncated, info = self._run(plan, go_back=browser[0].name == "go_back")
        info.update(extra | {"browser_action": info["browser_action"]})
        self._obs = obs
        return obs, reward, terminated, truncated, info

    def received(self, obs: dict[str, Any]) -> dict[str, Any]:
        """A page reached by a forwarded call (restore, goto): ids are checked against it from now on."""
        self._obs = obs
        return obs

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
            self._check_url(args[0])
            return [_call("goto", args[0])]
        if name == "scroll":
            height = self._viewport_height()
            return [_call("scroll", 0, height if args[0] == "down" else -height)]
        if name == "press":
            return [self._press(args[0])]
        if name == "tab_focus":
            index = int(args[0])
            n_tabs = len(obs.get("open_pages_urls") or ())
            if index >= n_tabs:
                raise InvalidActionError(f"there is no tab {index}; open tabs are 0..{n_tabs - 1}")
            return [_call("tab_focus", index)]
        simple = {"go_back": "go_back", "go_forward": "go_forward", "new_tab": "new_tab", "close_tab": "tab_close"}
        return [_call(simple[name])]

    def _check_url(self, url: str) -> None:
        target = urlsplit(url)
        if target.scheme not in ("http", "https", "file"):
            raise InvalidActionError(f"goto needs a full http(s) URL, got {url!r}")
        if not self._site_urls:
            return
        for base in self._site_urls.values():
            site = urlsplit(base)
            if (target.scheme, target.netloc) == (site.scheme, site.netloc) and target.path.startswith(site.path):
                return
        sites = ", ".join(sorted(self._site_urls.values()))
        raise InvalidActionError(f"goto may only open this task's sites ({sites})")

    def _press(self, key: str) -> str:
        if "keyboard_press" in _action_names(self.env):
            return _call("keyboard_press", key)
        focused = (self._obs or {}).get("focused_element_bid") or ""
        if not focused:
            raise InvalidActionError("press needs a focused element: click or type into an element first")
        return _call("press", focused, key)

    def _viewport_height(self) -> int:
        page = getattr(self.env.unwrapped, "page", None)
        size = getattr(page, "viewport_size", None) or {}
        return int(size.get("height") or 720)

    # -- execution -----------------------------------------------------------------------------

    def _run(self, plan: list[str], go_back: bool):
        """Run the actions of one command: as one env step if the env takes multi-actions."""
        if len(plan) > 1 and _accepts_multiaction(self.env):
            plan = ["\n".join(plan)]
        done: list[str] = []
        reward_sum = 0.0
        for action in plan:
            obs, reward, terminated, truncated, info = self.env.step(action)
            done.append(action)
            reward_sum += float(reward)
            if obs.get("last_action_error") or terminated or truncated:
                break
        blank = obs.get("url") == "about:blank"  # an env without a URL guard (plain BrowserGym) lands there
        if go_back and not (terminated or truncated) and (blank or "about:blank" in info.get("blocked_navigation", ())):
            if blank:
                obs, reward, terminated, truncated, info = self.env.step("go_forward()")
                done.append("go_forward()")
                reward_sum += float(reward)
            obs = dict(obs, last_action_error="go_back: there is no earlier page in this tab; stayed here")
        info["browser_action"] = "\n".join(done)
        return obs, reward_sum, terminated, truncated, info

    def _stay(self, action: str, error: str, info: dict[str, Any]):
        """No browser action: the previous observation again, with this action's error (if any)."""
        obs = dict(self._obs or {}, last_action=action, last_action_error=error)
        return obs, 0.0, False, False, dict(info, browser_action=None)


def page_ids(obs: dict[str, Any]) -> set[str]:
    """Element ids the agent may use now: exactly those its observation shows.

    The AgentOccam observation lists them (``text_tree.ids``); the vanilla WebArena text shows an
    id only at the start of an element's line (``[12] link 'Cart'``), so off-viewport elements stay
    unusable there, as in WebArena; with no text observation, every id of the raw tree counts.
    """
    tree = obs.get("text_tree")
    shown = getattr(tree, "ids", None)
    if shown is not None:
        return set(shown)
    text = obs.get("text")
    if isinstance(text, str):
        lines = (line.lstrip("\t") for line in text.splitlines())
        return {line[1:].split("]", 1)[0] for line in lines if line.startswith("[")}
    nodes = (obs.get("axtree_object") or {}).get("nodes") or []
    return {str(n["browsergym_id"]) for n in nodes if n.get("browsergym_id")}


def _native_select(obs: dict[str, Any], bid: str) -> tuple[str, str] | None:
    """(select id, option label) when ``bid`` is an option of a collapsed native <select>."""
    nodes = (obs.get("axtree_object") or {}).get("nodes") or []
    by_id = {n.get("nodeId"): n for n in nodes}
    node = next((n for n in nodes if n.get("browsergym_id") == bid), None)
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


def _role(node: dict[str, Any]) -> str:
    return str((node.get("role") or {}).get("value") or "")


def _call(function: str, *args: str | int) -> str:
    """A BrowserGym call string; repr() literals are what BrowserGym's parser reads back."""
    return f"{function}({', '.join(repr(a) for a in args)})"


def _action_set(env: gym.Env) -> Any:
    mapping = getattr(env.unwrapped, "action_mapping", None)
    return getattr(mapping, "__self__", None)


def _accepts_multiaction(env: gym.Env) -> bool:
    return bool(getattr(_action_set(env), "multiaction", False))


def _action_names(env: gym.Env) -> frozenset[str]:
    return frozenset(getattr(_action_set(env), "action_set", None) or ())
