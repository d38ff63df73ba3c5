"""ReAct: WebArena's chain-of-thought baseline agent (the row every comparison starts from;
docs/methods/react.md).

Per step one LLM call: system prompt (role, the enabled WebArena actions, the homepage and the page of
site accounts, rules), two worked examples, then one user message with OBSERVATION / URL / OBJECTIVE /
PREVIOUS ACTION. The model reasons, then ends with "In summary, the next action I will perform is"
and the action in triple backticks, which is sent to the env in the ``webarena`` preset's grammar
(``click [id]``, ``stop [answer]`` ...). PREVIOUS ACTION describes an element action the way
WebArena's runner does, by the element's line in the observation it was chosen on ("click [12] where
[12] is link 'Cart'").

Defaults are WebArena's runner settings: temperature 1.0, top_p 0.9, max_tokens 384, observation cut
to 1920 tokens, 30 steps, early stop after 3 consecutive unparseable answers or 3 identical actions in
a row; the step budget's end answers "Early stop: ..." too. An unparseable answer sends nothing to
the browser; the reason is fed back through PREVIOUS ACTION on the next step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from webarena_gym.llm import CallSettings, Message
from webarena_gym.policies.base import (
    Decision,
    EnvHandle,
    Obs,
    Policy,
    TaskSpec,
    build_llm,
    example_action,
    register_policy,
)

PROMPTS = Path(__file__).parent / "prompts"
ANSWER_PHRASE = "In summary, the next action I will perform is"
_FENCED = re.compile(r"```(.*?)```", re.S)
_PHRASE = re.compile(re.escape(ANSWER_PHRASE), re.I)
_COMMAND = re.compile(r"^\s*([a-z_]+)")
# The full WebArena action set, in prompt order; a preset enables a subset.
WEBARENA_ACTIONS = (
    "click",
    "type",
    "hover",
    "press",
    "scroll",
    "new_tab",
    "tab_focus",
    "close_tab",
    "goto",
    "go_back",
    "go_forward",
    "stop",
)


class ActionParseError(ValueError):
    """The model's answer has no usable action; the message is what the model is told next step."""


@cache
def _action_specs() -> dict[str, tuple[str, str]]:
    """command -> (group, line) from prompts/react_actions.txt."""
    specs = {}
    for line in (PROMPTS / "react_actions.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, group, text = line.split("|", 2)
            specs[name] = (group, text)
    return specs


@cache
def _examples() -> tuple[Message, ...]:
    messages: list[Message] = []
    for chunk in re.split(r"^=== (user|assistant) ===\n", (PROMPTS / "react_examples.txt").read_text(), flags=re.M)[1:]:
        if chunk in ("user", "assistant"):
            messages.append({"role": chunk, "content": ""})
        else:
            messages[-1]["content"] = chunk.strip()
    return tuple(messages)


def render_actions(actions: list[str] | tuple[str, ...]) -> str:
    """The enabled commands grouped as in WebArena's prompt (page, tabs, URL, completion)."""
    specs = _action_specs()
    unknown = [a for a in actions if a not in specs]
    if unknown:
        raise ValueError(f"no ReAct description for action(s) {unknown}")
    lines: list[str] = []
    group = None
    for name in specs:  # file order fixes the grouping
        if name not in actions:
            continue
        if specs[name][0] != group:
            group = specs[name][0]
            lines.append(f"{group}:")
        lines.append(f"- {specs[name][1]}")
    return "\n".join(lines)


def system_prompt(actions: list[str] | tuple[str, ...], homepage_url: str | None) -> str:
    """The instruction with the enabled actions; WebArena's prompt also names the homepage and its
    page of site accounts (``password.html``), on every task."""
    homepage = ""
    if homepage_url:
        home = homepage_url.rstrip("/")
        homepage = "\n" + texts()["homepage"].format(homepage=home, passwords=f"{home}/password.html") + "\n"
    return texts()["system"].format(actions=render_actions(actions), homepage=homepage)


@cache
def texts() -> dict[str, str]:
    """The fixed prompt texts of prompts/react_system.txt (``=== name ===`` sections)."""
    parts = re.split(r"^=== (\w+) ===\n", (PROMPTS / "react_system.txt").read_text(), flags=re.M)
    return {parts[i]: parts[i + 1].rstrip("\n") for i in range(1, len(parts) - 1, 2)}


def user_message(observation: str, url: str, objective: str, previous_action: str) -> str:
    return f"OBSERVATION:\n{observation}\nURL: {url}\nOBJECTIVE: {objective}\nPREVIOUS ACTION: {previous_action}"


_ELEMENT_ACTION = re.compile(r"^(click|hover|type)\s*\[\s*([^\]\s]+)\s*\]")


def describe_action(action: str, observation: str) -> str:
    """PREVIOUS ACTION as WebArena's runner writes it: an element action names the element by its line
    in the observation it was chosen on (``click [12] where [12] is link 'Cart'``); an id that line
    cannot be found for is said to match no element. Other actions are given as written."""
    match = _ELEMENT_ACTION.match(action.strip())
    if not match:
        return action
    name, bid = match.groups()
    element = element_line(observation, bid)
    if element is None:
        return texts()["no_element"].format(action=name, id=bid)
    return f"{action.strip()} where [{bid}] is {element}"


def element_line(observation: str, bid: str) -> str | None:
    """The observation's line for element ``bid`` without the id: WebArena's ``[12] link 'Cart'`` and
    AgentOccam's ``link [12] 'Cart'`` both give ``link 'Cart'``."""
    token = f"[{bid}]"
    for line in observation.splitlines():
        line = line.strip()
        if line.startswith(token + " "):
            return line[len(token) + 1 :]
        role, _, rest = line.partition(" ")
        if rest == token or rest.startswith(token + " "):
            return f"{role} {rest[len(token) + 1 :]}".rstrip()
    return None


def budget_spent_answer(task: TaskSpec, budget: str) -> str:
    """WebArena's runner answers the end of the step budget (``"decisions"``, ``"interactions"`` or an LLM budget) as it
    answers its other early stops: ``Early stop: reached the maximum of 30 steps``."""
    limit, unit = task.budget.limit(budget)
    return f"Early stop: {texts()['budget_spent'].format(limit=limit, unit=unit)}"


def parse_answer(text: str, actions: list[str] | tuple[str, ...], example: str = "stop [N/A]") -> tuple[str, str]:
    """Return (reasoning, action) from a model answer, or raise :class:`ActionParseError`.

    The action is the first triple-backtick block after the answer phrase; without the phrase, the
    last block in the answer (WebArena's splitter convention); its command must be an enabled one.
    ``example`` is a concrete action the error message shows (never a placeholder a model would copy).
    """
    phrases = list(_PHRASE.finditer(text))
    phrase = phrases[-1] if phrases else None
    tail = text[phrase.end() :] if phrase else text
    blocks = _FENCED.findall(tail)
    if not blocks:
        raise ActionParseError(
            f"no action found: end the answer with the phrase and one action in triple backticks, "
            f'for example "{ANSWER_PHRASE} ```{example}```"'
        )
    action = (blocks[0] if phrase else blocks[-1]).strip()
    reasoning = text[: phrase.start()].strip() if phrase else text[: text.rfind("```" + blocks[-1])].strip()
    match = _COMMAND.match(action)
    if not match or match.group(1) not in actions:
        raise ActionParseError(
            f"{action!r} is not an available action; use one of: {', '.join(actions)} (for example ```{example}```)"
        )
    return reasoning, action


def truncate_tokens(text: str, max_tokens: int | None, model: str) -> str:
    """Cut ``text`` to ``max_tokens`` tokens of the model's tokenizer (litellm's bundled ones, offline)."""
    if not max_tokens:
        return text
    from webarena_gym.llm.tokens import litellm_module

    litellm = litellm_module()
    tokens = litellm.encode(model=model, text=text)
    return text if len(tokens) <= max_tokens else litellm.decode(model=model, tokens=list(tokens[:max_tokens]))


@dataclass
class ReActState:
    actions: list[str] = field(default_factory=list)  # actions sent to the env, in order
    previous_action: str = "None"  # what the next user message says (the last action, described)
    parse_failures: int = 0  # consecutive
    early_stops: int = 0  # 1 once a WebArena early-stop rule ended the episode (reported in the counters)


@register_policy("react")
class ReActPolicy(Policy):
    """WebArena's CoT agent on the vanilla ``webarena`` preset."""

    preset = "webarena"

    def __init__(
        self,
        *,
        temperature: float = 1.0,
        top_p: float = 0.9,
        max_tokens: int = 384,
        max_obs_tokens: int | None = 1920,
        max_steps: int = 30,
        parse_failure_th: int = 3,
        repeat_th: int = 3,
        examples: bool = True,
        preset: str = "webarena",
        actions: list[str] | None = None,
        **llm_options: Any,
    ):
        self.preset = preset
        self.max_steps = max_steps
        self.max_obs_tokens = max_obs_tokens
        self.parse_failure_th = parse_failure_th
        self.repeat_th = repeat_th
        self.examples = examples
        self._actions = tuple(actions) if actions else None
        self.llm = build_llm(
            {"actor": CallSettings(temperature=temperature, top_p=top_p, max_tokens=max_tokens)}, **llm_options
        )
        self.task: TaskSpec | None = None
        self.s = ReActState()

    @property
    def actions(self) -> tuple[str, ...]:
        """The commands this task enables (the action wrapper's, from the task spec), stop included,
        in the prompt's order; ``actions=`` given at construction wins."""
        if self._actions is not None:
            return self._actions
        enabled = set(self.task.commands if self.task is not None else ()) | {"stop"}
        return tuple(a for a in _action_specs() if a in enabled)

    def config(self) -> dict[str, Any]:
        return {
            "llm": self.llm.describe(),
            "max_obs_tokens": self.max_obs_tokens,
            "max_steps": self.max_steps,
            "parse_failure_th": self.parse_failure_th,
            "repeat_th": self.repeat_th,
            "examples": self.examples,
            "actions": list(self.actions),
        }

    def reset(self, task: TaskSpec) -> None:
        self.task = task
        self.s = ReActState()
        self._system = system_prompt(self.actions, task.homepage_url)

    def state(self) -> dict[str, Any]:
        return {
            "actions": list(self.s.actions),
            "previous_action": self.s.previous_action,
            "parse_failures": self.s.parse_failures,
            "counters": {"early_stops": self.s.early_stops},
        }

    def messages(self, obs: Obs) -> list[Message]:
        assert self.task is not None, "reset() first"
        observation = truncate_tokens(str(obs.get("text") or ""), self.max_obs_tokens, self.llm.model)
        previous = self.s.previous_action
        error = obs.get("last_action_error")
        if error and self.s.actions and not self.s.parse_failures:
            previous = f"{previous} (it failed: {str(error).strip()[:300]})"
        return [
            {"role": "system", "content": self._system},
            *([dict(m) for m in _examples()] if self.examples else []),
            {"role": "user", "content": user_message(observation, str(obs.get("url", "")), self.task.goal, previous)},
        ]

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        why = self._early_stop_reason()
        if why:  # WebArena's runner checks before asking the model, and answers with the reason
            action = f"stop [Early stop: {why}]"
            self.s.actions.append(action)
            self.s.early_stops = 1
            return Decision(action=action, thought=f"early stop: {why}", parsed={"early_stop": why, "action": action})
        completion = self.llm.complete("actor", self.messages(obs))
        answer = completion.text
        try:
            reasoning, action = parse_answer(answer, self.actions, example_action(obs, self.actions))
        except ActionParseError as exc:
            self.s.parse_failures += 1
            self.s.previous_action = f"None (your last answer could not be used: {exc})"
            return Decision(
                action=None,
                thought=answer,
                parsed={"raw": answer},
                llm_calls=[completion.call],
                error=f"unparseable answer: {exc}",
            )
        self.s.parse_failures = 0
        self.s.actions.append(action)
        self.s.previous_action = describe_action(action, str(obs.get("text") or ""))
        return Decision(
            action=action,
            thought=reasoning,
            parsed={"reasoning": reasoning, "action": action, "raw": answer},
            llm_calls=[completion.call],
        )

    def forced_stop_answer(self, budget: str) -> str:
        assert self.task is not None, "reset() first"
        return budget_spent_answer(self.task, budget)

    def _early_stop_reason(self) -> str | None:
        """WebArena's early-stop rules: ``parse_failure_th`` unparseable answers in a row; the last
        ``repeat_th`` actions identical, or (for typing) the same typing action ``repeat_th`` times."""
        if self.parse_failure_th and self.s.parse_failures >= self.parse_failure_th:
            return f"failed to parse actions for {self.s.parse_failures} times"
        if not self.repeat_th or not self.s.actions:
            return None
        last = self.s.actions[-1]
        if last.startswith("type"):
            repeated = self.s.actions.count(last) >= self.repeat_th
        else:
            recent = self.s.actions[-self.repeat_th :]
            repeated = len(recent) == self.repeat_th and len(set(recent)) == 1
        return f"same action repeated {self.repeat_th} times" if repeated else None
