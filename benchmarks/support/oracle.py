"""A scripted-LLM answer source for tests and benchmarks: a "model" that knows the reference solution."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any

from webarena_gym.policies.base import Decision, EnvHandle, Obs, Policy, TaskSpec
from webarena_gym.policies.baselines import ReferenceReplay

_CALL = re.compile(r"^(\w+)\((.*)\)$", re.S)


class ReferenceOracle:
    """A scripted-LLM answer source for tests and benchmarks: each call answers with the local task's
    next reference step, as a bracketed command wrapped by ``render`` into the policy's output format.

    It reads the page the policy was given (``attach`` hooks the policy's ``reset``/``act``), like a
    model that knows the solution. Use it as a :class:`llm.Script` item:
    ``Script({"actor": [oracle] * n})``. ``wrong_answer`` replaces the final answer (failure tests).
    """

    def __init__(self, task_id: int, preset: str, render: Callable[[str], str], wrong_answer: str | None = None):
        from webarena_gym.envs.local.registry import load_solution
        from webarena_gym.wrappers.presets import PRESETS

        self.solution = load_solution(task_id)
        self.actions = PRESETS[preset].actions
        self.render = render
        self.wrong_answer = wrong_answer
        self.replay = ReferenceReplay(self.solution, {})
        self.obs: Obs = {}

    def attach(self, policy: Policy) -> Policy:
        reset, act = policy.reset, policy.act

        def watched_reset(task: TaskSpec) -> None:
            self.replay = ReferenceReplay(self.solution, task.site_urls)
            reset(task)

        def watched_act(obs: Obs, handle: EnvHandle) -> Decision:
            self.obs = obs
            return act(obs, handle)

        policy.reset, policy.act = watched_reset, watched_act  # type: ignore[method-assign]
        return policy

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        command = self.replay.next_command(self.obs, self.actions)
        if self.wrong_answer is not None and command.startswith("stop"):
            command = f"stop [{self.wrong_answer}]"
        return self.render(command)


class WebRLOracle(ReferenceOracle):
    """A scripted executor: the task's next reference step in the WebRL grammar, read off the page the
    policy was given (``fill`` + Enter is one ``Search``; ``select_option`` a dropdown choice by label)."""

    def __init__(self, task_id: int, cot: bool, wrong_answer: str | None = None) -> None:
        super().__init__(task_id, "agentoccam", str, wrong_answer=wrong_answer)
        self.cot = cot

    def __call__(self, messages: list[dict]) -> str:
        from webarena_gym.envs.local.reference import to_browsergym

        steps, i = self.replay.steps, self.replay.cursor
        match = _CALL.match(to_browsergym(steps[i], self.obs, self.replay.urls))
        assert match, steps[i]
        name = match.group(1)
        args: tuple[Any, ...] = ast.literal_eval(f"({match.group(2)},)") if match.group(2) else ()
        used = 1
        if name == "click":
            action = f'# Element: the target of the next step\ndo(action="Click", element="{args[0]}")'
        elif name == "fill":
            nxt = steps[i + 1] if i + 1 < len(steps) else {}
            enter = nxt.get("action") == "press" and nxt.get("value") == "Enter"
            used = 2 if enter else 1
            text = json.dumps(args[1], ensure_ascii=False)
            action = f'do(action="{"Search" if enter else "Type"}", element="{args[0]}", argument={text})'
        elif name == "select_option":
            action = f'do(action="Select Dropdown Option", element="{args[0]}", argument={json.dumps(args[1])})'
        elif name == "send_msg_to_user":
            answer = self.wrong_answer if self.wrong_answer is not None else args[0]
            action = f"# Note: the answer is on this page\nexit(message={json.dumps(answer)})"
        else:
            raise AssertionError(f"no WebRL form for reference step {name}")
        self.replay.cursor += used
        if self.cot:
            return f"The next step of the plan.\n[Start of Action]\n{action}\n[End of Action]"
        return action
