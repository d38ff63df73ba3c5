"""A scripted-LLM answer source for tests and benchmarks: a "model" that knows the reference solution."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from policies.base import Decision, EnvHandle, Obs, Policy, TaskSpec
from policies.baselines import ReferenceReplay


class ReferenceOracle:
    """A scripted-LLM answer source for tests and benchmarks: each call answers with the local task's
    next reference step, as a bracketed command wrapped by ``render`` into the policy's output format.

    It reads the page the policy was given (``attach`` hooks the policy's ``reset``/``act``), like a
    model that knows the solution. Use it as a :class:`llm.Script` item:
    ``Script({"actor": [oracle] * n})``. ``wrong_answer`` replaces the final answer (failure tests).
    """

    def __init__(self, task_id: int, preset: str, render: Callable[[str], str], wrong_answer: str | None = None):
        from envs.local.registry import load_solution
        from wrappers.presets import PRESETS

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
