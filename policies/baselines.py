"""Non-LLM baselines that bracket every comparison: the reference solution (upper bound) and a
uniformly random agent (floor). Neither calls a model; their trajectories say so (``uses_llm=False``).

Both speak the bracketed command grammar of their wrappers preset (``click [id]``, ``type [id] [text] [1]``
...), so they run through exactly the same observation/action stack as the LLM policies.
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from webarena_gym.policies.base import Decision, EnvHandle, Obs, Policy, TaskSpec, register_policy

_CALL = re.compile(r"^(\w+)\((.*)\)$", re.S)


class ReferenceStepError(ValueError):
    """A reference step has no equivalent in the preset's grammar or on the current page."""


def _bracket(*parts: str) -> str:
    return " ".join([parts[0], *(f"[{p}]" for p in parts[1:])])


def _option_bid(obs: Obs, select_bid: str, choice: str) -> str:
    """The id of the option of the element ``select_bid`` (a <select>/listbox) that ``choice`` names.

    Reference steps give what BrowserGym's ``select_option`` takes, an option's label or its value;
    the page shows labels, so a value is matched as the label ignoring case, then as a whole word of
    it (value ``vinta`` -> label "Vinta Chen (@vinta)"). Each rule must single out one option.
    """
    nodes = (obs.get("axtree_object") or {}).get("nodes") or []
    by_id = {n.get("nodeId"): n for n in nodes}

    def owner(node: dict) -> str | None:
        parent = by_id.get(node.get("parentId"))
        while parent is not None and not parent.get("browsergym_id"):
            parent = by_id.get(parent.get("parentId"))
        return None if parent is None else str(parent["browsergym_id"])

    options = {
        str(n["browsergym_id"]): " ".join(str((n.get("name") or {}).get("value", "")).split())
        for n in nodes
        if (n.get("role") or {}).get("value") == "option" and n.get("browsergym_id") and owner(n) == select_bid
    }
    wanted = " ".join(choice.split())
    word = re.compile(rf"(?<![\w.-]){re.escape(wanted)}(?![\w.-])", re.I)
    for rule in (lambda label: label == wanted, lambda label: label.lower() == wanted.lower(), word.search):
        found = [bid for bid, label in options.items() if rule(label)]
        if len(found) == 1:
            return found[0]
    raise ReferenceStepError(f"no option {choice!r} under element [{select_bid}]")


def reference_command(
    steps: Sequence[Mapping[str, Any]], i: int, obs: Obs, actions: Sequence[str], urls: Mapping[str, str] | None = None
) -> tuple[str, int]:
    """Translate solution step ``i`` (resolved on ``obs`` by ``envs.local.reference.to_browsergym``) into
    the bracketed grammar; returns (command, number of steps consumed).

    A ``fill`` followed by ``press Enter`` on the same element becomes one ``type [id] [text] [1]``;
    ``select_option`` becomes a click on the option (the action wrapper selects it); ``report_infeasible``
    becomes ``stop [N/A: <reason>]``.
    """
    from webarena_gym.envs.local.reference import to_browsergym

    step = steps[i]
    match = _CALL.match(to_browsergym(step, obs, urls))
    assert match, "to_browsergym returns a call string"
    name, args = match.group(1), ast.literal_eval(f"({match.group(2)},)") if match.group(2) else ()
    args = [str(a) for a in args]
    if name == "fill":
        nxt = steps[i + 1] if i + 1 < len(steps) else {}
        enter = nxt.get("action") == "press" and nxt.get("target") == step.get("target") and nxt.get("value") == "Enter"
        return _bracket("type", args[0], args[1], "1" if enter else "0"), 2 if enter else 1
    if name == "click":
        command = _bracket("click", args[0])
    elif name == "select_option":
        command = _bracket("click", _option_bid(obs, args[0], args[1]))
    elif name == "press":
        command = _bracket("press", args[1])
    elif name == "goto":
        command = _bracket("goto", args[0])
    elif name == "go_back":
        command = "go_back"
    elif name == "send_msg_to_user":
        command = _bracket("stop", args[0])
    elif name == "report_infeasible":
        command = _bracket("stop", f"N/A: {args[0]}" if args[0] else "N/A")
    else:
        raise ReferenceStepError(f"reference action {name!r} has no bracketed equivalent")
    if command.split(" ", 1)[0] not in actions:
        raise ReferenceStepError(f"{command!r} needs {command.split(' ', 1)[0]!r}, which this preset does not offer")
    return command, 1


class ReferenceReplay:
    """Walks a reference solution step by step on live observations.

    When the previous command failed (``last_action_error``) and its step still resolves on the
    page, that step is issued again (at most ``max_retries`` times): a click that timed out under
    load is retried instead of the walk drifting out of step with the page.
    """

    def __init__(self, steps: Sequence[Mapping[str, Any]], urls: Mapping[str, str], max_retries: int = 2):
        self.steps, self.urls, self.max_retries = list(steps), dict(urls), max_retries
        self.cursor, self.retries = 0, 0
        self._last: int | None = None  # cursor of the last issued step

    @property
    def done(self) -> bool:
        return self.cursor >= len(self.steps)

    def skip(self) -> Mapping[str, Any]:
        """Consume the next step without issuing a command (the caller performs it another way)."""
        step = self.steps[self.cursor]
        self.cursor, self._last = self.cursor + 1, None
        return step

    def next_command(self, obs: Obs, actions: Sequence[str]) -> str:
        """The next bracketed command; raises SolutionStepError/ReferenceStepError if it cannot be built."""
        from webarena_gym.envs.local.reference import SolutionStepError

        if obs.get("last_action_error") and self._last is not None and self.retries < self.max_retries:
            try:
                command, used = reference_command(self.steps, self._last, obs, actions, self.urls)
            except (SolutionStepError, ReferenceStepError):
                pass  # the failed step's target is gone: it did take effect; go on
            else:
                self.retries += 1
                self.cursor = self._last + used
                return command
        start = self.cursor
        command, used = reference_command(self.steps, start, obs, actions, self.urls)
        self._last, self.cursor, self.retries = start, start + used, 0
        return command


@register_policy("reference")
class ReferencePolicy(Policy):
    """Replays the local task's reference solution (upper bound, no LLM). ``goto`` steps use the
    rollout's controlled navigation when the preset has no ``goto`` command (e.g. AgentOccam's).

    The default preset shows the full page with dropdown options folded in: an upper bound must reach
    every element, and WebArena's viewport view hides options and off-screen elements (with it, tasks
    that pick from a ``<select>`` or scroll fail).

    Under WebArena-Verified's response contract its final answer is the response the task's Verified form
    expects (:mod:`envs.local.verified`), in place of the solution's sentence.
    """

    uses_llm = False

    def __init__(self, *, preset: str = "agentoccam", max_steps: int = 30, max_misses: int = 2):
        self.preset = preset
        self.max_steps = max_steps
        self.max_misses = max_misses
        self.replay = ReferenceReplay([], {})
        self.commands: tuple[str, ...] = ()
        self.misses = 0
        self.response: str | None = None  # the contract's answer, when the task is scored by WebArena-Verified

    def config(self) -> dict[str, Any]:
        return {"preset": self.preset, "max_steps": self.max_steps, "llm": None}

    def reset(self, task: TaskSpec) -> None:
        from webarena_gym.envs.local.registry import load_solutions

        solutions = load_solutions()
        task_id = int(task.task_id)
        if task_id not in solutions:
            raise ReferenceStepError(f"local task {task_id} has no reference solution")
        self.replay = ReferenceReplay(solutions[task_id], task.site_urls)
        self.misses = 0
        self.commands = task.commands
        self.response = None
        if task.response_contract is not None:
            from webarena_gym.envs.local.verified import expected_response
            from webarena_gym.envs.registration import local_task_config

            form = local_task_config(task_id, verified_required=True)["verified"]
            self.response = json.dumps(expected_response(form))

    def state(self) -> dict[str, Any]:
        return {"cursor": self.replay.cursor, "n_reference_steps": len(self.replay.steps), "misses": self.misses}

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        from webarena_gym.envs.local.reference import SolutionStepError, fill_placeholders

        actions = self.commands
        if self.replay.done:
            return Decision(action="stop []", error="reference solution exhausted without an answer")
        step = self.replay.steps[self.replay.cursor]
        if step.get("action") == "goto" and "goto" not in actions:
            handle.goto(fill_placeholders(str(step.get("url", "")), self.replay.urls))
            self.replay.skip()
            return Decision(action=None, thought="reference step via controlled navigation", parsed={"step": step})
        try:
            command = self.replay.next_command(obs, actions)
        except (SolutionStepError, ReferenceStepError) as exc:
            self.misses += 1
            if self.misses >= self.max_misses:
                raise
            return Decision(action=None, parsed={"step": step}, error=f"reference step not resolvable yet: {exc}")
        self.misses = 0
        if self.response is not None and command.startswith("stop "):
            command = _bracket("stop", self.response)
        return Decision(action=command, thought="reference solution step", parsed={"step": step})


_TYPABLE = {"textbox", "searchbox", "combobox", "spinbutton"}
_ID_FREE = {"go_back": "go_back", "go_forward": "go_forward", "scroll": "scroll [down]", "go_home": "go_home"}


@register_policy("random")
class RandomPolicy(Policy):
    """Uniform over the actions valid on the current page (floor): a click on any shown element,
    typing a word of the goal into any shown text field, the enabled id-free moves, and answering."""

    uses_llm = False

    def __init__(self, *, preset: str = "webarena", max_steps: int = 30, seed: int = 0):
        self.preset = preset
        self.max_steps = max_steps
        self.seed = seed
        self.rng = random.Random(seed)
        self.words: list[str] = ["test"]
        self.commands: tuple[str, ...] = ()

    def config(self) -> dict[str, Any]:
        return {"preset": self.preset, "max_steps": self.max_steps, "seed": self.seed, "llm": None}

    def reset(self, task: TaskSpec) -> None:
        self.rng = random.Random(f"{self.seed}:{task.task_id}")
        self.words = re.findall(r"[A-Za-z]{3,}", task.goal) or ["test"]
        self.commands = task.commands

    def candidates(self, obs: Obs) -> list[str]:
        from webarena_gym.wrappers.actions.agentoccam import page_ids

        actions = self.commands
        text = str(obs.get("text") or "")
        shown = {bid for bid in page_ids(obs) if f"[{bid}]" in text}
        roles = {
            str(n["browsergym_id"]): (n.get("role") or {}).get("value")
            for n in (obs.get("axtree_object") or {}).get("nodes") or []
            if n.get("browsergym_id")
        }
        out = [f"click [{bid}]" for bid in sorted(shown)]
        if "type" in actions:
            out += [
                f"type [{bid}] [{self.rng.choice(self.words)}] [1]"
                for bid in sorted(shown)
                if roles.get(bid) in _TYPABLE
            ]
        out += [command for name, command in _ID_FREE.items() if name in actions]
        out.append("stop [N/A]")
        return out

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        options = self.candidates(obs)
        choice = self.rng.choice(options)
        return Decision(action=choice, thought="uniformly random valid action", parsed={"n_candidates": len(options)})
