"""What every text-command action wrapper shares, whatever its grammar: the page the ids are checked
against, the task's sites, running one command's BrowserGym actions as one env step, answering an
invalid command without touching the browser, and the browser facts commands need (viewport height,
key presses, the env's action set).

A grammar's wrapper subclasses :class:`BrowserCommands` and implements ``step`` (parse, translate,
then :meth:`BrowserCommands.run` or :meth:`BrowserCommands.stay`) and ``answer_in``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import gymnasium as gym
from browsergym.core.spaces import Unicode

from webarena_gym.wrappers.forwarding import ForwardsEnvCalls

StepResult = tuple[dict[str, Any], float, bool, bool, dict[str, Any]]


class BrowserCommands(ForwardsEnvCalls, gym.Wrapper):
    """Base of the text-command wrappers: ``commands`` enabled (those in ``multi_site_only`` only on
    tasks with several sites), the current observation, the task's site URLs, and the execution methods.

    These methods raise the grammar's own error type (``error_type``), whose message is meant for the LLM.
    """

    multi_site_only: frozenset[str] = frozenset()
    error_type: type[ValueError] = ValueError

    def __init__(self, env: gym.Env, commands: tuple[str, ...]) -> None:
        super().__init__(env)
        self.enabled = commands
        self.commands: tuple[str, ...] = commands
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
        self.commands = tuple(c for c in self.enabled if multi_site or c not in self.multi_site_only)
        info["commands"] = list(self.commands)
        return obs, info

    def received(self, obs: dict[str, Any]) -> dict[str, Any]:
        """A page reached by a forwarded call (restore, goto): ids are checked against it from now on."""
        self._obs = obs
        return obs

    def require_reset(self) -> None:
        if self._obs is None:
            raise gym.error.ResetNeeded("call reset() before step()")

    # -- execution -----------------------------------------------------------------------------

    def run(self, plan: list[str], go_back: bool = False) -> StepResult:
        """Run the BrowserGym actions of one command: as one env step if the env takes multi-actions,
        else one step each, stopping at the first error. ``go_back``: a back navigation to ``about:blank``
        (nothing earlier in the tab) stays on the page and says so: ``WebArenaEnv``'s URL guard blocks
        that page and keeps the tab, a plain BrowserGym env is stepped forward again."""
        if len(plan) > 1 and accepts_multiaction(self.env):
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
        self._obs = obs
        return obs, reward_sum, terminated, truncated, info

    def stay(self, action: str, error: str, info: dict[str, Any]) -> StepResult:
        """No browser action: the previous observation again, with this action's error (if any)."""
        obs = dict(self._obs or {}, last_action=action, last_action_error=error)
        return obs, 0.0, False, False, dict(info, browser_action=None)

    # -- browser facts -------------------------------------------------------------------------

    def press(self, key: str) -> str:
        """A key press: on the page when the action set has ``keyboard_press``, else on the focused element."""
        if "keyboard_press" in action_names(self.env):
            return call("keyboard_press", key)
        focused = (self._obs or {}).get("focused_element_bid") or ""
        if not focused:
            raise self.error_type("a key press needs a focused element: click or type into an element first")
        return call("press", focused, key)

    def viewport_height(self) -> int:
        page = getattr(self.env.unwrapped, "page", None)
        size = getattr(page, "viewport_size", None) or {}
        return int(size.get("height") or 720)

    def check_url(self, url: str) -> None:
        """``url`` must be a full http(s)/file URL on one of the task's sites (when the env reports them)."""
        target = urlsplit(url)
        if target.scheme not in ("http", "https", "file"):
            raise self.error_type(f"goto needs a full http(s) URL, got {url!r}")
        if not self._site_urls:
            return
        for base in self._site_urls.values():
            site = urlsplit(base)
            if (target.scheme, target.netloc) == (site.scheme, site.netloc) and target.path.startswith(site.path):
                return
        sites = ", ".join(sorted(self._site_urls.values()))
        raise self.error_type(f"goto may only open this task's sites ({sites})")

    def check_tab(self, index: int) -> None:
        n_tabs = len((self._obs or {}).get("open_pages_urls") or ())
        if index >= n_tabs:
            raise self.error_type(f"there is no tab {index}; open tabs are 0..{n_tabs - 1}")


def page_ids(obs: dict[str, Any]) -> set[str]:
    """Element ids the agent may use now: exactly those its observation shows.

    The AgentOccam and simplified-HTML observations list them (``text_tree.ids``); the vanilla WebArena
    text shows an id only at the start of an element's line (``[12] link 'Cart'``), so off-viewport
    elements stay unusable there, as in WebArena; with no text observation, every id of the raw tree counts.
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


def call(function: str, *args: str | int) -> str:
    """A BrowserGym call string; repr() literals are what BrowserGym's parser reads back."""
    return f"{function}({', '.join(repr(a) for a in args)})"


def _action_set(env: gym.Env) -> Any:
    mapping = getattr(env.unwrapped, "action_mapping", None)
    return getattr(mapping, "__self__", None)


def accepts_multiaction(env: gym.Env) -> bool:
    return bool(getattr(_action_set(env), "multiaction", False))


def action_names(env: gym.Env) -> frozenset[str]:
    return frozenset(getattr(_action_set(env), "action_set", None) or ())
