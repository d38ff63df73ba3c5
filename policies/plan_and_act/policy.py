"""The Plan-and-Act policy: a planner, a replanner and an executor, each its own LLM role.

Per decision (docs/methods/plan_and_act.md): on the first step the planner writes a plan from the task and the
page without element ids; on every later step (dynamic replanning) the replanner rewrites it from the
earlier plans, the actions so far and the current page without ids; then the executor chooses one WebRL
action from the task, the newest plan, its earlier rounds (old pages replaced) and the current page with
ids. ``exit(message=...)`` delivers the answer.

Switches, with their defaults: ``use_planner`` (off: the executor alone, Table 1's "No
Planner" row), ``dynamic_replanning`` (off: one plan for the whole episode), ``cot`` (the released CoT
prompts with tagged answers; off: the paper's prompts), ``executor_history`` ("placeholder": old pages
become WebRL's ``** Simplified html **``; "snippet": they shrink to the acted-on element's neighbourhood;
default: the style's own, placeholder without CoT and snippet with it), temperature 0 for every role,
30 steps, 3 re-asks per call, an early stop after 5 repeats of one action, and bounded ``max_tokens``
per role (planner and replanner 4096, executor 1024 with CoT, 512 without).

Decisions where the paper leaves gaps, next to what they concern:
* unusable answers: each call is re-asked up to ``max_retries`` times, each re-ask appending the bad answer
  and a corrective message with a correct example; when they are spent the episode ends as the released
  runner ends it, with ``exit(message="Early stop: ...")`` naming the role (so a separate
  three-parse-failures threshold never comes into play);
* the executor's action is also checked against the current page before it is sent (element ids shown,
  dropdown options), and a failure there takes the same re-ask path;
* repeats: before asking the executor, an action repeated ``repeat_th`` times in a row (a ``Type`` of the
  same text ``repeat_th`` times anywhere) ends the episode with ``exit(message="Early stop: ...")``;
* the action sent and kept in the executor's history is the parsed action in canonical form (comment
  lines, then the call), so the history never carries the model's stray text.

What the training-data pipeline needs is recorded per decision in ``Decision.parsed`` (the step record):
the plan written at that step (text, steps, reasoning, role, the SHA-256 of the id-free page it saw), the
executor's raw answer, reasoning, action, the SHA-256 of the page it saw (the step's observation) and that
page's history snippet (so snippet-style executor data needs no re-crawl, whatever ``executor_history``);
``state()`` indexes every plan version and every round.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from webarena_gym.llm import CallSettings, LLMCall, Message
from webarena_gym.policies.base import Decision, EnvHandle, Obs, Policy, TaskSpec, build_llm, register_policy
from webarena_gym.policies.plan_and_act import prompts
from webarena_gym.policies.plan_and_act.parsing import (
    AnswerFormatError,
    ParsedAction,
    ParsedPlan,
    parse_action,
    parse_plan,
)
from webarena_gym.wrappers.actions.webrl import check_on_page
from webarena_gym.wrappers.actions.webrl_grammar import WebRLAction, WebRLActionError
from webarena_gym.wrappers.observations.html import PLACEHOLDER, strip_ids

HISTORY_MODES = ("placeholder", "snippet")
ROLES = ("planner", "replanner", "executor")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Round:
    """One executor round: what it saw (hash, URL), what it did, and its history page (placeholder/snippet)."""

    step: int
    action: str  # comments + canonical call, as sent and as the history shows it
    call: str  # the canonical call alone (repeat checks)
    reasoning: str
    page: str  # what later rounds show instead of the full page
    html_sha256: str
    plan_version: int | None


@dataclass
class PlanVersion:
    version: int
    step: int
    role: str  # "planner" | "replanner"
    html_sha256: str
    chars: int


@dataclass
class PlanAndActState:
    plans: list[str] = field(default_factory=list)  # every plan version's text, in order
    versions: list[PlanVersion] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)
    retries: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    early_stop: str | None = None


class RetriesSpent(Exception):
    """A role gave no usable answer within its re-asks; ``calls`` are every attempt's."""

    def __init__(self, role: str, error: str, calls: list[LLMCall]) -> None:
        super().__init__(f"the {role} gave no usable answer after {len(calls)} attempts ({error})")
        self.role, self.calls = role, calls


@register_policy("plan_and_act")
@register_policy("plan_and_act_dynamic", cot=False)
@register_policy("plan_and_act_static", dynamic_replanning=False, cot=False)
@register_policy("plan_and_act_no_planner", use_planner=False, dynamic_replanning=False, cot=False)
class PlanAndActPolicy(Policy):
    """Planner + executor with dynamic replanning and CoT (see the module docstring)."""

    preset = "plan_and_act"

    def __init__(
        self,
        *,
        use_planner: bool = True,
        dynamic_replanning: bool = True,
        cot: bool = True,
        executor_history: str | None = None,
        max_steps: int = 30,
        repeat_th: int = 5,
        max_retries: int = 3,
        temperature: float = 0.0,
        show_action_errors: bool = True,
        preset: str = "plan_and_act",
        **llm_options: Any,
    ) -> None:
        history = executor_history or ("snippet" if cot else "placeholder")
        if history not in HISTORY_MODES:
            raise ValueError(f"executor_history must be one of {HISTORY_MODES}, not {executor_history!r}")
        if dynamic_replanning and not use_planner:
            raise ValueError("dynamic_replanning needs use_planner=True (the replanner rewrites the planner's plan)")
        self.use_planner = use_planner
        self.dynamic_replanning = dynamic_replanning
        self.cot = cot
        self.executor_history = history
        self.max_steps = max_steps
        self.repeat_th = repeat_th
        self.max_retries = max_retries
        self.show_action_errors = show_action_errors
        self.preset = preset
        self.llm = build_llm(
            {
                "planner": CallSettings(temperature=temperature, max_tokens=4096),
                "replanner": CallSettings(temperature=temperature, max_tokens=4096),
                "executor": CallSettings(temperature=temperature, max_tokens=1024 if cot else 512),
            },
            **llm_options,
        )
        self.task: TaskSpec | None = None
        self.s = PlanAndActState()

    def config(self) -> dict[str, Any]:
        return {
            "llm": self.llm.describe(),
            "use_planner": self.use_planner,
            "dynamic_replanning": self.dynamic_replanning,
            "cot": self.cot,
            "executor_history": self.executor_history,
            "max_steps": self.max_steps,
            "repeat_th": self.repeat_th,
            "max_retries": self.max_retries,
            "show_action_errors": self.show_action_errors,
        }

    def reset(self, task: TaskSpec) -> None:
        self.task = task
        self.s = PlanAndActState()

    def state(self) -> dict[str, Any]:
        return {
            "plan_version": len(self.s.plans) - 1 if self.s.plans else None,
            "plan": self.s.plans[-1] if self.s.plans else None,
            "plan_versions": [asdict(v) for v in self.s.versions],
            "rounds": [{k: v for k, v in asdict(r).items() if k not in ("page", "reasoning")} for r in self.s.rounds],
            "retries": dict(self.s.retries),
            "early_stop": self.s.early_stop,
        }

    # -- acting --------------------------------------------------------------------------------

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        assert self.task is not None, "reset() first"
        step = len(self.s.rounds)
        why = self._repeated()
        if why:
            return self._stop(why, {})
        calls: list[LLMCall] = []
        parsed: dict[str, Any] = {"step": step}
        html = str(obs.get("text") or "")
        try:
            if self.use_planner and (step == 0 or self.dynamic_replanning):
                parsed["plan"] = self._plan(obs, step, calls)
            answer, action = self._execute(obs, html, calls)
        except RetriesSpent as spent:
            return self._stop(str(spent), parsed, calls + spent.calls, error=str(spent))
        text = action.action.text()
        snippet = self._snippet(obs, action)
        self.s.rounds.append(
            Round(
                step=step,
                action=text,
                call=action.action.call(),
                reasoning=action.reasoning,
                page=PLACEHOLDER if self.executor_history == "placeholder" else snippet,
                html_sha256=sha256(html),
                plan_version=len(self.s.plans) - 1 if self.s.plans else None,
            )
        )
        parsed["executor"] = {
            "raw": answer,
            "reasoning": action.reasoning,
            "action": text,
            "html_sha256": sha256(html),
            "url": str(obs.get("url", "")),
            "snippet": snippet,  # this page as a later round's history may show it (training data, either mode)
        }
        return Decision(action=text, thought=action.reasoning, parsed=parsed, llm_calls=calls)

    def _plan(self, obs: Obs, step: int, calls: list[LLMCall]) -> dict[str, Any]:
        """The planner (step 0) or the replanner (later steps): a new plan version."""
        assert self.task is not None
        page = str(obs.get("text_no_ids") or strip_ids(str(obs.get("text") or "")))
        if step == 0:
            role, messages = "planner", prompts.planner_messages(self.task.goal, page, self.cot)
        else:
            actions = [r.action for r in self.s.rounds]
            role = "replanner"
            messages = prompts.replanner_messages(self.task.goal, self.s.plans, actions, page, self.cot)
        _, plan = self._ask(role, messages, "plan", lambda text: parse_plan(text, self.cot), calls)
        assert isinstance(plan, ParsedPlan)
        self.s.plans.append(plan.text)
        self.s.versions.append(PlanVersion(len(self.s.plans) - 1, step, role, sha256(page), len(plan.text)))
        return {
            "version": len(self.s.plans) - 1,
            "role": role,
            "text": plan.text,
            "steps": [asdict(s) for s in plan.steps],
            "reasoning": plan.reasoning,
            "html_sha256": sha256(page),
        }

    def _execute(self, obs: Obs, html: str, calls: list[LLMCall]) -> tuple[str, ParsedAction]:
        assert self.task is not None
        history = [prompts.PastRound(r.page, r.action, r.reasoning) for r in self.s.rounds]
        error = str(obs.get("last_action_error") or "") if self.show_action_errors and self.s.rounds else ""
        messages = prompts.executor_messages(
            self.task.goal,
            self.task.commands,
            html,
            history,
            plan=self.s.plans[-1] if self.use_planner else None,
            cot=self.cot,
            dynamic=self.dynamic_replanning,
            error=error or None,
        )

        def parse(text: str) -> ParsedAction:
            action = parse_action(text, self.cot, self.task.commands if self.task else None)
            try:
                check_on_page(action.action, obs)
            except WebRLActionError as exc:
                raise AnswerFormatError(str(exc)) from None
            return action

        answer, action = self._ask("executor", messages, "action", parse, calls)
        assert isinstance(action, ParsedAction)
        return answer, action

    def _ask(
        self, role: str, messages: list[Message], kind: str, parse: Callable[[str], Any], calls: list[LLMCall]
    ) -> tuple[str, Any]:
        """Call ``role`` and parse; re-ask with the bad answer and a corrective message up to ``max_retries``."""
        mine: list[LLMCall] = []
        messages = list(messages)
        for attempt in range(self.max_retries + 1):
            completion = self.llm.complete(role, messages)
            mine.append(completion.call)
            try:
                result = parse(completion.text)
            except AnswerFormatError as error:
                if attempt == self.max_retries:
                    raise RetriesSpent(role, str(error), mine) from None
                self.s.retries[role] += 1
                messages += [
                    {"role": "assistant", "content": completion.text},
                    prompts.retry_message(kind, str(error), self.cot),
                ]
                continue
            calls.extend(mine)
            return completion.text, result
        raise AssertionError("unreachable")

    def _snippet(self, obs: Obs, action: ParsedAction) -> str:
        """This round's page cut to the acted-on element's neighbourhood (old pages are garbage-collected, as
        in the paper); the placeholder line when there is no page object or no element."""
        page = obs.get("text_tree")
        snippet = getattr(page, "snippet", None)
        return snippet(action.action.element) if snippet is not None else PLACEHOLDER

    def _repeated(self) -> str | None:
        """WebArena-Lite's early stop: the same action ``repeat_th`` times in a row, or (typing) the same
        text typed ``repeat_th`` times anywhere in the episode."""
        if not self.repeat_th or not self.s.rounds:
            return None
        calls = [r.call for r in self.s.rounds]
        last = calls[-1]
        if last.startswith('do(action="Type"'):
            repeated = calls.count(last) >= self.repeat_th
        else:
            recent = calls[-self.repeat_th :]
            repeated = len(recent) == self.repeat_th and len(set(recent)) == 1
        return f"the same action was repeated {self.repeat_th} times" if repeated else None

    def _stop(
        self, why: str, parsed: dict[str, Any], calls: list[LLMCall] | None = None, error: str | None = None
    ) -> Decision:
        """End the episode with an early-stop answer (the released runner's failure path)."""
        self.s.early_stop = why
        action = WebRLAction("exit", message=f"Early stop: {why}").call()
        return Decision(
            action=action,
            thought=f"early stop: {why}",
            parsed={**parsed, "early_stop": why, "action": action},
            llm_calls=list(calls or ()),
            error=error,
        )
