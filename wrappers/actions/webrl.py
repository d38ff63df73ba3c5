"""The WebRL / WebArena-Lite action space (Plan-and-Act's executor) as a Gymnasium wrapper over any
BrowserGym environment (docs/methods/plan_and_act.md).

``step(text)`` takes one action of :mod:`wrappers.actions.webrl_grammar` (comment lines allowed) and runs
the matching BrowserGym action(s). Invalid text never reaches the browser: the previous observation
comes back with ``last_action_error`` set and ``info["action_error"]``; no env step is taken.

How each action runs (the WebArena-Lite harness's behaviour where it has one, otherwise a decision):

======================================  =====================================================================
``do(action="Click", element=e)``       ``click(e)``
``"Right Click"``                       ``click(e, 'right')``
``"Hover"``                             ``hover(e)``
``"Type"`` (``argument=t``)             ``fill(e, t)``: the field's old text is replaced, as the project's
                                        other type actions do
``"Search"``                            ``fill(e, t)`` then ``press(e, 'Enter')``, one env step when the env
                                        takes multi-actions
``"Select Dropdown Option"``            ``select_option(e, label)`` on a native ``<select>``; the argument is
                                        matched against the option labels the page shows: exactly, then
                                        ignoring case and spacing, then against the option values; no match,
                                        or an element that is not a ``<select>``, is an error naming the
                                        options (custom dropdowns are opened and picked with clicks)
``"Scroll Up"`` / ``"Scroll Down"``     ``scroll`` by one viewport height
``"Press Enter"``                       ``press(e, 'Enter')`` with an element, else Enter on the page
``"Switch Tab"`` (``argument=i``)       ``tab_focus(i)``
``"Wait"``                              ``noop(1000)``: a documented no-op of one second (the env already
                                        waits for page loads after every action)
``exit(message=m)``                     ``send_msg_to_user(m)``: the episode's answer (:meth:`answer_in`)
``go_backward()`` / ``go_forward()``    ``go_back()`` / ``go_forward()``; going back from the first page of
                                        a tab stays there and says so
======================================  =====================================================================

Anything else has no browser equivalent here and is an error with the list of available actions:
another function (the prompts' legacy ``quote``/``find_element`` functions, a self-defined one),
an unknown ``do`` action (such as "Switch Page"), an action the preset does not enable. Element ids are
checked exactly against the ids the observation shows (``obs["text_tree"].ids``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from webarena_gym.wrappers.actions.browser import BrowserCommands, StepResult, call, page_ids
from webarena_gym.wrappers.actions.webrl_grammar import (
    COMMANDS,
    NEEDS_ELEMENT,
    WebRLAction,
    WebRLActionError,
    parse_webrl,
)

WAIT_MS = 1000


@dataclass(frozen=True)
class WebRLActionConfig:
    """Which actions are enabled: names of :data:`wrappers.actions.webrl_grammar.COMMANDS`."""

    commands: tuple[str, ...] = COMMANDS


class WebRLActions(BrowserCommands):
    """WebRL actions in, BrowserGym actions out; see the module docstring for the semantics.

    Args:
        env: a BrowserGym-style env, usually under :class:`wrappers.observations.html.SimplifiedHTMLObservation`
            (whose ids the actions name and whose dropdown options "Select Dropdown Option" matches).
        config: the enabled actions (a preset's).

    Example::

        env = WebRLActions(SimplifiedHTMLObservation(envs.make("webarena/local.0", obs_mode="dom")))
        obs, info = env.reset(seed=0)          # info["commands"]: the actions enabled for this task
        obs, reward, terminated, truncated, info = env.step('do(action="Click", element="22")')
    """

    error_type = WebRLActionError

    def __init__(self, env: gym.Env, config: WebRLActionConfig = WebRLActionConfig()) -> None:
        unknown = [c for c in config.commands if c not in COMMANDS]
        if unknown:
            raise ValueError(f"unknown WebRL actions {unknown}; known: {', '.join(COMMANDS)}")
        super().__init__(env, config.commands)
        self.config = config

    def step(self, action: str) -> StepResult:
        self.require_reset()
        try:
            parsed = parse_webrl(action, self.commands)
            plan = self.translate(parsed)
        except WebRLActionError as error:
            return self.stay(action, f"Invalid action: {error}", {"action_error": str(error)})
        obs, reward, terminated, truncated, info = self.run(plan, go_back=parsed.function == "go_backward")
        info["webrl_action"] = parsed.call()
        return obs, reward, terminated, truncated, info

    def answer_in(self, action: str) -> str | None:
        """The answer an ``exit(...)`` delivers (``""`` without a message); None for any other or invalid text."""
        try:
            parsed = parse_webrl(action, self.commands)
        except WebRLActionError:
            return None
        return parsed.message if parsed.function == "exit" else None

    def translate(self, action: WebRLAction) -> list[str]:
        """BrowserGym action strings for one parsed action (validated against the current observation)."""
        if action.function == "exit":
            return [call("send_msg_to_user", action.message or "")]
        if action.function == "go_backward":
            return [call("go_back")]
        if action.function == "go_forward":
            return [call("go_forward")]
        name, element, argument = action.action, action.element, action.argument or ""
        label = check_on_page(action, self._obs or {})
        if name in NEEDS_ELEMENT:
            if element is None:  # the parser requires one; an action built by hand may lack it
                raise WebRLActionError(f'"{name}" needs element="<id>" (an id shown in the HTML)')
            if name == "Click":
                return [call("click", element)]
            if name == "Right Click":
                return [call("click", element, "right")]
            if name == "Hover":
                return [call("hover", element)]
            if name == "Type":
                return [call("fill", element, argument)]
            if name == "Search":
                return [call("fill", element, argument), call("press", element, "Enter")]
            if name == "Select Dropdown Option":
                return [call("select_option", element, label or argument)]
        if name in ("Scroll Up", "Scroll Down"):
            height = self.viewport_height()
            return [call("scroll", 0, height if name == "Scroll Down" else -height)]
        if name == "Press Enter":
            return [call("press", element, "Enter") if element is not None else self.press("Enter")]
        if name == "Switch Tab":
            self.check_tab(int(argument))
            return [call("tab_focus", int(argument))]
        if name == "Wait":
            return [call("noop", WAIT_MS)]
        raise WebRLActionError(f"{name!r} has no browser equivalent here")


def check_on_page(action: WebRLAction, obs: dict[str, Any]) -> str | None:
    """Check a parsed action against the page ``obs`` shows, without a browser; raises
    :class:`WebRLActionError` when it cannot run there. Returns the option label a dropdown selection
    picks (None for other actions). Policies call it to re-ask before anything is sent."""
    element = action.element
    if element is not None and element not in page_ids(obs):
        raise WebRLActionError(f'element "{element}" is not on the current page; use an id shown in the HTML')
    if action.action == "Select Dropdown Option":
        return option_label(obs, element, action.argument or "")
    return None


def option_label(obs: dict[str, Any], element: str | None, wanted: str) -> str:
    """The label of the option ``wanted`` names (see the module docstring for the matching order)."""
    infos = getattr(obs.get("text_tree"), "infos", None)
    if infos is None or element not in infos:
        return wanted  # no simplified page to check against: Playwright matches value or label
    info = infos[element]
    if info.tag != "select":
        raise WebRLActionError(
            f'element "{element}" is a <{info.tag}>, not a dropdown (<select>); click it to open it, then '
            "click the option"
        )
    squash = " ".join(wanted.split()).casefold()
    for matches in (
        lambda o: o.label == wanted,
        lambda o: " ".join(o.label.split()).casefold() == squash,
        lambda o: o.value == wanted,
    ):
        found = next((o for o in info.options if matches(o)), None)
        if found is not None:
            return found.label
    labels = ", ".join(repr(o.label) for o in info.options[:30])
    raise WebRLActionError(f'dropdown "{element}" has no option {wanted!r}; its options are: {labels}')
