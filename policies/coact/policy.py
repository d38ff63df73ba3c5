"""The CoAct policy class: its state machine behind one env action per ``act`` call
(see the package docstring for the method and every decision on what the paper leaves open)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from webarena_gym.llm import CallSettings, LLMCall, Message
from webarena_gym.policies.base import Decision, EnvHandle, Obs, Policy, TaskSpec, build_llm, register_policy
from webarena_gym.policies.coact.text import (
    CHECK_WORDS,
    DECIDE_WORDS,
    MalformedOutput,
    Phase,
    PlanStep,
    examples,
    global_system,
    local_system,
    open_tabs,
    parse_collation,
    parse_decision,
    parse_global_plan,
    parse_local_plan,
    reask,
    render_global_plan,
    render_local_plan,
    user_content,
)
from webarena_gym.policies.react import budget_spent_answer, describe_action, truncate_tokens

GLOBAL = "global_planner"  # call role of the global planning agent (its own model and settings)
LOCAL = "local_agent"  # call role of the local execution agent
GLOBAL_MAX_TOKENS = 1024
LOCAL_MAX_TOKENS = 384

SearchFn = Callable[[str, str], "str | Sequence[str] | None"]

# Modes of the state machine. Asking for a local plan is split into HANDOFF
# (the exchange is counted) and LOCAL_PLAN (the call), and the GP's answer to a request into DECIDE,
# GLOBAL_REVISE and LOCAL_REPLAN, so that the limits are checked between any two LLM calls: a force
# stop never pays for a call whose result it throws away.
START, HANDOFF, LOCAL_PLAN, EXECUTING = "start", "handoff", "local_plan", "executing"
CHECK_PASS, CHECK_FALSE, DECIDE = "pass_check", "false_check", "decide"
GLOBAL_REVISE, LOCAL_REPLAN, DONE = "global_revise", "local_replan", "done"


@dataclass
class Executed:
    """One action sent to the env, with what came of it (filled in at the next decision)."""

    action: str
    plan_version: int
    phase: int  # 1-based
    url: str = ""
    error: str | None = None
    described: str = ""  # WebArena's description of the action on the page it was sent from

    def line(self) -> str:
        outcome = f"failed: {self.error}" if self.error else f"done; the page is now {self.url or '(unknown)'}"
        return f"{self.action} -> {outcome}"


@dataclass
class CoActState:
    """Everything the two agents know during an episode (the reasoning state, recorded every decision)."""

    mode: str = START
    plan: list[Phase] = field(default_factory=list)
    plan_version: int = 0
    phase: int = 0  # index into ``plan``
    local_plan: list[PlanStep] = field(default_factory=list)
    queue: list[PlanStep] = field(default_factory=list)  # the local plan's steps not yet run
    exec_log: list[Executed] = field(default_factory=list)  # the current local plan's executed actions
    history: list[Executed] = field(default_factory=list)  # every executed action of the episode
    exception: dict[str, str] | None = None  # {"action", "error"} of the failed step, for false_check
    sent: Executed | None = None  # sent last decision; its result is read off the next observation
    previous_action: str = "None"
    la_reasons: str = ""  # the local agent's reasons of its last check (revise / request)
    gp_reasons: str = ""  # the global planner's reasons of its last decide
    replan_call: str = "revise"  # LOCAL_REPLAN: "revise" (own reasons) or "overruled" (the GP's)
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # checks and decisions, in order
    calls: list[dict[str, Any]] = field(default_factory=list)  # trace of every LLM call
    decisions: int = 0
    exchanges: int = 0
    local_revisions: int = 0
    phase_revisions: dict[int, int] = field(default_factory=dict)  # phase index -> revisions (this plan)
    global_replans: int = 0
    parse_failures: int = 0  # malformed answers in a row (WebArena's early stop)
    malformed: int = 0  # malformed answers in the whole episode
    knowledge: list[str] = field(default_factory=list)
    search_error: str | None = None
    finished: dict[str, Any] | None = None

    def counters(self) -> dict[str, int]:
        return {
            "decisions": self.decisions,
            "env_steps": len(self.history),
            "exchanges": self.exchanges,
            "local_revisions": self.local_revisions,
            "global_replans": self.global_replans,
            "llm_calls": len(self.calls),
            "malformed_answers": self.malformed,
            "force_stops": int((self.finished or {}).get("end") == "force stop"),
            "early_stops": int((self.finished or {}).get("end") == "early stop"),
        }


def resolve_search(search: SearchFn | str | None) -> SearchFn | None:
    """A knowledge-search function given as a callable or as ``"package.module:function"`` (so a study's
    JSON configuration can name one); the name is imported, never evaluated."""
    if search is None or callable(search):
        return search
    module, _, name = str(search).partition(":")
    if not module or not name:
        raise ValueError(f"search must be a callable or 'package.module:function', got {search!r}")
    fn = getattr(importlib.import_module(module), name, None)
    if not callable(fn):
        raise ValueError(f"search {search!r} does not name a function")
    return fn


@register_policy("coact")
@register_policy("coact_fs", force_stop=True)
@register_policy("coact_fs_search", force_stop=True, search_step=True)
class CoActPolicy(Policy):
    """CoAct: a global planning agent and a local execution agent (see the package docstring)."""

    preset = "webarena"

    def __init__(
        self,
        *,
        temperature: float = 1.0,
        top_p: float = 0.9,
        max_obs_tokens: int | None = 1920,
        max_steps: int = 30,
        parse_failure_th: int = 3,
        repeat_th: int = 3,
        force_stop: bool = False,
        fs_limit: int = 10,
        max_rounds: int = 20,
        max_local_revisions: int = 3,
        max_global_replans: int = 3,
        max_reasks: int = 1,
        collation_overrides_answer: bool = False,
        search_step: bool = False,
        search: SearchFn | str | None = None,
        search_max_words: int = 100,
        n_local_agents: int = 1,
        examples: bool = True,
        preset: str = "webarena",
        actions: list[str] | None = None,
        **llm_options: Any,
    ):
        if n_local_agents != 1:
            raise ValueError("CoAct runs one local agent (the paper's experiments and prompts use one)")
        for name, value in (("fs_limit", fs_limit), ("max_rounds", max_rounds)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.preset = preset
        self.max_steps = max_steps
        self.max_obs_tokens = max_obs_tokens
        self.parse_failure_th = parse_failure_th
        self.repeat_th = repeat_th
        self.force_stop = force_stop
        self.fs_limit = fs_limit
        self.max_rounds = max_rounds
        self.max_local_revisions = max_local_revisions
        self.max_global_replans = max_global_replans
        self.max_reasks = max_reasks
        self.collation_overrides_answer = collation_overrides_answer
        self.search_step = search_step
        self.search = resolve_search(search)
        self._search_name = search if isinstance(search, str) or search is None else _qualname(search)
        self.search_max_words = search_max_words
        self.n_local_agents = n_local_agents
        self.examples = examples
        self._actions = tuple(actions) if actions else None
        self.llm = build_llm(
            {
                # The authors' code: 384 for every call; here 1024 for the planner (its plans and collation run longer).
                # Per role: global_planner_max_tokens=..., local_agent_model=... (build_llm's role options).
                GLOBAL: CallSettings(temperature=temperature, top_p=top_p, max_tokens=GLOBAL_MAX_TOKENS),
                LOCAL: CallSettings(temperature=temperature, top_p=top_p, max_tokens=LOCAL_MAX_TOKENS),
            },
            **llm_options,
        )
        self.task: TaskSpec | None = None
        self.s = CoActState()

    # -- configuration and state -----------------------------------------------------------------------

    @property
    def spec(self) -> TaskSpec:
        """The task of the episode under way."""
        assert self.task is not None, "reset() first"
        return self.task

    @property
    def actions(self) -> tuple[str, ...]:
        """The page operations the local agent may plan: the task's enabled commands, stop included,
        in WebArena's prompt order; ``actions=`` given at construction wins (as for ReAct)."""
        from webarena_gym.policies.react import WEBARENA_ACTIONS

        if self._actions is not None:
            return self._actions
        enabled = set(self.task.commands if self.task is not None else ()) | {"stop"}
        return tuple(a for a in (*WEBARENA_ACTIONS, "go_home") if a in enabled)

    def config(self) -> dict[str, Any]:
        return {
            "llm": self.llm.describe(),
            "roles": {"global_planner": GLOBAL, "local_agent": LOCAL},
            "max_obs_tokens": self.max_obs_tokens,
            "max_steps": self.max_steps,
            "parse_failure_th": self.parse_failure_th,
            "repeat_th": self.repeat_th,
            "force_stop": self.force_stop,
            "fs_limit": self.fs_limit,
            "max_rounds": self.max_rounds,
            "max_local_revisions": self.max_local_revisions,
            "max_global_replans": self.max_global_replans,
            "max_reasks": self.max_reasks,
            "collation_overrides_answer": self.collation_overrides_answer,
            "search_step": self.search_step,
            "search": self._search_name if self.search_step else None,
            "search_note": self._search_note(),
            "search_max_words": self.search_max_words,
            "n_local_agents": self.n_local_agents,
            "examples": self.examples,
            "actions": list(self.actions),
        }

    def _search_note(self) -> str:
        if not self.search_step:
            return "no search step (CoAct without search-engine knowledge)"
        if self.search is None:
            return "search step on, but no search function is configured (offline default): no knowledge is added"
        return f"search step on: {self._search_name} supplies passages of at most {self.search_max_words} words"

    def reset(self, task: TaskSpec) -> None:
        self.task = task
        self.s = CoActState()

    def forced_stop_answer(self, budget: str) -> str:
        """Without force stop, a spent budget ends CoAct as WebArena's runner ends it (its early-stop
        message); with force stop the last step's collation has answered already (an interactions
        budget spent before that also gets the early-stop message: there is no page left to collate on)."""
        return budget_spent_answer(self.spec, budget)

    def state(self) -> dict[str, Any]:
        s = self.s
        return {
            "mode": s.mode,
            "global_plan": [asdict(p) for p in s.plan],
            "plan_version": s.plan_version,
            "phase": s.phase + 1,
            "local_plan": [step.action or step.text for step in s.local_plan],
            "queue": [step.action or step.text for step in s.queue],
            "exec_log": [asdict(e) for e in s.exec_log],
            "exception": s.exception,
            "counters": s.counters(),
            "parse_failures": s.parse_failures,
            "phase_revisions": {str(k + 1): v for k, v in s.phase_revisions.items()},
            "calls": [f"{c['agent']}.{c['call']}" for c in s.calls],
            "outcomes": s.outcomes,
            "knowledge": s.knowledge,
            "search_error": s.search_error,
            "finished": s.finished,
        }

    # -- acting ----------------------------------------------------------------------------------------

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        s = self.s
        s.decisions += 1
        first_call = len(s.calls)
        calls: list[LLMCall] = []
        self._observe(obs)
        while True:
            if s.mode == DONE:  # asked again after answering: answer again
                answer = (s.finished or {}).get("answer", "")
                return self._decision(f"stop [{answer}]", "already answered", calls, first_call)
            reason = self._limit_reason()
            if reason:
                return self._finish(obs, calls, first_call, reason, forced=True)
            if s.mode == START:
                s.plan = self._global_plan(obs, calls, "global_plan")
                s.plan_version, s.mode = 1, HANDOFF
            elif s.mode == HANDOFF:
                if s.phase >= len(s.plan):
                    return self._finish(obs, calls, first_call, "every phase of the global plan passed its check")
                s.exchanges += 1  # the global planner hands a phase to the local agent
                s.mode = LOCAL_PLAN
            elif s.mode == LOCAL_PLAN:
                self._local_plan(obs, calls, "local_plan")
            elif s.mode == LOCAL_REPLAN:
                if s.replan_call == "revise":
                    s.local_revisions += 1
                    s.phase_revisions[s.phase] = s.phase_revisions.get(s.phase, 0) + 1
                self._local_plan(obs, calls, s.replan_call)
            elif s.mode == EXECUTING:
                if s.exception is not None:
                    s.mode = CHECK_FALSE
                elif not s.queue:
                    s.mode = CHECK_PASS
                else:
                    step = s.queue.pop(0)
                    if step.action is None:  # a plan line that cannot run is an execution exception
                        s.exception = {"action": step.text.strip() or "(empty line)", "error": str(step.error)}
                        continue
                    if step.answer is not None:
                        reason = "the local agent issued stop"
                        return self._finish(obs, calls, first_call, reason, la_answer=step.answer)
                    return self._send(step.action, obs, calls, first_call)
            elif s.mode in (CHECK_PASS, CHECK_FALSE):
                self._check(obs, calls, s.mode)
            elif s.mode == DECIDE:
                self._decide(obs, calls)
            elif s.mode == GLOBAL_REVISE:
                s.plan = self._global_plan(obs, calls, "revise")
                s.global_replans += 1
                s.plan_version += 1
                s.phase, s.phase_revisions, s.mode = 0, {}, HANDOFF  # phase 1 of the new plan, as the authors' code

    def _observe(self, obs: Obs) -> None:
        """Read the result of the action sent last decision off the observation it led to."""
        s = self.s
        sent, s.sent = s.sent, None
        if sent is None:
            return
        error = str(obs.get("last_action_error") or "").strip() or None
        sent.url, sent.error = str(obs.get("url", "")), error
        described = sent.described or sent.action
        s.previous_action = described if error is None else f"{described} (it failed: {error[:300]})"
        if error is not None:
            s.exception = {"action": sent.action, "error": error}

    def _limit_reason(self) -> str | None:
        """Why the dialogue must end now, if it must (checked before every LLM call and action)."""
        s = self.s
        if self.parse_failure_th and s.parse_failures >= self.parse_failure_th:
            return f"{s.parse_failures} malformed model answers in a row"
        if self.repeat_th and _repeated([e.action for e in s.history], self.repeat_th):
            return f"same action repeated {self.repeat_th} times"
        if self.force_stop and s.exchanges > self.fs_limit:
            return f"force stop: {s.exchanges} exchanges between the agents (limit {self.fs_limit})"
        if s.exchanges > self.max_rounds:
            return f"round limit: {s.exchanges} exchanges between the agents (limit {self.max_rounds})"
        if self.force_stop and s.decisions >= self.spec.budget.decisions:
            return f"force stop: the last of the {self.spec.budget.decisions} steps of the budget"
        return None

    def _send(self, action: str, obs: Obs, calls: list[LLMCall], first_call: int) -> Decision:
        s = self.s
        entry = Executed(
            action, s.plan_version, s.phase + 1, described=describe_action(action, str(obs.get("text") or ""))
        )
        s.sent = entry
        s.exec_log.append(entry)
        s.history.append(entry)
        n, done = len(s.local_plan), len(s.local_plan) - len(s.queue)
        thought = f"phase {s.phase + 1} of {len(s.plan)} ({s.plan[s.phase].subtask}): action {done} of {n}"
        return self._decision(action, thought, calls, first_call)

    def _decision(self, action: str, thought: str, calls: list[LLMCall], first_call: int) -> Decision:
        s = self.s
        parsed = {
            "action": action,
            "calls": [f"{c['agent']}.{c['call']}" for c in s.calls[first_call:]],
            "plan_version": s.plan_version,
            "phase": s.phase + 1,
            "local_plan": [step.action or step.text for step in s.local_plan],
            "counters": s.counters(),
        }
        return Decision(action=action, thought=thought, parsed=parsed, llm_calls=list(calls))

    def _finish(
        self,
        obs: Obs,
        calls: list[LLMCall],
        first_call: int,
        reason: str,
        *,
        forced: bool = False,
        la_answer: str | None = None,
    ) -> Decision:
        """End the dialogue: the collation answers, unless the local agent answered (its answer
        stands unless ``collation_overrides_answer``) or a limit ended CoAct without force stop (then the
        episode ends the WebArena way: an early-stop message, no collation)."""
        s = self.s
        summary, final = "", None
        if forced and not self.force_stop:
            answer = f"Early stop: {reason}"
        else:
            summary, final = self._collation(obs, calls, reason, la_answer)
            if la_answer is not None and not (self.collation_overrides_answer and final):
                answer = la_answer
            else:
                answer = final or "N/A"
        answer = " ".join(answer.split())
        s.mode = DONE
        end = "answer" if not forced else "force stop" if self.force_stop else "early stop"
        s.finished = {"reason": reason, "end": end, "forced": forced, "answer": answer, "local_answer": la_answer}
        s.finished |= {"collation_answer": final, "collation": summary}
        action = f"stop [{answer}]"
        s.history.append(Executed(action, s.plan_version, s.phase + 1))
        return self._decision(action, summary or reason, calls, first_call)

    # -- the LLM calls ---------------------------------------------------------------------------------

    def _ask(
        self,
        role: str,
        call: str,
        messages: list[Message],
        parse: Callable[[str], Any],
        reask_key: str,
        calls: list[LLMCall],
    ) -> Any:
        """One request with at most ``max_reasks`` re-asks; ``None`` when every answer was malformed
        (the caller takes the fallback path). Every answer is traced."""
        s = self.s
        agent = "global" if role == GLOBAL else "local"
        malformed: list[str] = []
        trace = {
            "agent": role,
            "call": call,
            "plan_version": s.plan_version,
            "phase": s.phase + 1,
            "malformed": malformed,
        }
        s.calls.append(trace)
        for attempt in range(self.max_reasks + 1):
            completion = self.llm.complete(role, messages)
            calls.append(completion.call)
            try:
                value = parse(completion.text)
            except MalformedOutput as exc:
                s.parse_failures += 1
                s.malformed += 1
                malformed.append(str(exc))
                if self.parse_failure_th and s.parse_failures >= self.parse_failure_th:
                    break  # WebArena's early stop follows; no point in asking again
                messages = [
                    *messages,
                    {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": reask(agent, reask_key, str(exc))},
                ]
                continue
            s.parse_failures = 0
            trace["reasks"] = attempt
            return value
        trace["reasks"] = len(malformed) - 1
        trace["failure_path"] = True
        return None

    def _messages(
        self, role: str, system: str, obs: Obs, objective: str, sections: Sequence[tuple[str, str]], shots: bool = False
    ) -> list[Message]:
        """System message, the local plan's examples when ``shots``, then the template and ``sections``
        over the observation cut to ``max_obs_tokens`` tokens of the role's model."""
        observation = truncate_tokens(str(obs.get("text") or ""), self.max_obs_tokens, self.llm.model_for(role))
        tabs = open_tabs(obs)
        if tabs:  # WebArena's observation: the tabs, a blank line, the tree
            observation = f"{tabs}\n\n{observation}"
        user = user_content(observation, str(obs.get("url", "")), objective, self.s.previous_action, sections)
        return [
            {"role": "system", "content": system},
            *(examples() if shots else []),
            {"role": "user", "content": user},
        ]

    def _global_plan(self, obs: Obs, calls: list[LLMCall], call: str) -> list[Phase]:
        """``global_plan`` or the planner's ``revise``; the failure path is one phase, the task itself."""
        s = self.s
        sections: list[tuple[str, str]] = []
        if call == "revise":
            sections += [
                ("PREVIOUS GLOBAL PLAN", render_global_plan(s.plan)),
                ("LOCAL AGENT REQUEST REASONS", s.la_reasons),
                ("DECISION REASONS", s.gp_reasons),
            ]
        knowledge = self._knowledge(obs)
        if knowledge:
            sections.append(("SEARCH KNOWLEDGE", "\n".join(f"- {k}" for k in knowledge)))
        messages = self._messages(GLOBAL, global_system(call), obs, self.spec.goal, sections)
        phases = self._ask(GLOBAL, call, messages, parse_global_plan, "reask_plan", calls)
        if phases is None:
            phases = [Phase(self.spec.goal, "the task is completed")]
        s.calls[-1]["phases"] = len(phases)
        return phases

    def _local_plan(self, obs: Obs, calls: list[LLMCall], call: str) -> None:
        """``local_plan``, or the local agent's ``revise`` / ``overruled``; a plan with no readable
        action line becomes an execution exception (the fallback for plan lines)."""
        s = self.s
        phase = s.plan[s.phase]
        sections = [("OVERALL TASK", self.spec.goal), ("EXPECTED STATE", phase.expected_state)]
        reasons = ""
        if call != "local_plan":
            reasons = s.la_reasons if call == "revise" else s.gp_reasons
            sections += [("PREVIOUS LOCAL PLAN", render_local_plan(s.local_plan)), self._results_section()]
        system = local_system(call, self.actions, reasons)
        shots = call == "local_plan" and self.examples
        messages = self._messages(LOCAL, system, obs, phase.subtask, sections, shots=shots)
        steps = self._ask(LOCAL, call, messages, partial(parse_local_plan, commands=self.actions), "reask_plan", calls)
        s.local_plan, s.queue, s.exec_log, s.exception = list(steps or []), list(steps or []), [], None
        if steps is None:
            s.exception = {"action": "(the whole local plan)", "error": "no action could be read from the local plan"}
        s.calls[-1]["actions"] = [step.action or step.text for step in s.local_plan]
        s.mode = EXECUTING

    def _results_section(self) -> tuple[str, str]:
        """EXECUTION EXCEPTIONS when the current local plan hit one, else EXECUTION RESULTS."""
        s = self.s
        done = [e for e in s.exec_log if e.error is None]
        listing = "\n".join(f"{i}. {e.line()}" for i, e in enumerate(done, 1)) or "(none)"
        if s.exception is None:
            return "EXECUTION RESULTS", listing
        failed = s.exception
        return "EXECUTION EXCEPTIONS", (
            f"Failed action: {failed['action']}\nError: {failed['error']}\nActions carried out before it:\n{listing}"
        )

    def _check(self, obs: Obs, calls: list[LLMCall], call: str) -> None:
        """``pass_check`` / ``false_check`` against the phase's expected state; then move on, revise the
        local plan (at most ``max_local_revisions`` times per phase, then a request) or send a request."""
        s = self.s
        phase = s.plan[s.phase]
        allowed = ("move", "revise", "request") if call == CHECK_PASS else ("revise", "request")
        sections = [("OVERALL TASK", self.spec.goal), ("EXPECTED STATE", phase.expected_state)]
        sections += [("LOCAL PLAN", render_local_plan(s.local_plan)), self._results_section()]
        messages = self._messages(LOCAL, local_system(call, self.actions), obs, phase.subtask, sections)
        read = partial(parse_decision, allowed=allowed, words=CHECK_WORDS)
        parsed = self._ask(LOCAL, call, messages, read, "reask_check", calls)
        decision, reasons = parsed or ("revise", "")  # an unusable check counts as revise
        outcome = {"plan_version": s.plan_version, "phase": s.phase + 1, "check": call, "decision": decision}
        if decision == "revise" and s.phase_revisions.get(s.phase, 0) >= self.max_local_revisions:
            decision = outcome["capped_to"] = "request"
        s.calls[-1]["decision"] = decision
        s.outcomes.append(outcome | {"reasons": reasons})
        s.la_reasons = reasons
        if decision == "move":
            s.phase += 1
            s.mode = HANDOFF
        elif decision == "revise":
            s.replan_call, s.mode = "revise", LOCAL_REPLAN
        else:
            s.exchanges += 1  # the local agent's request reaches the global planner
            s.mode = DECIDE

    def _decide(self, obs: Obs, calls: list[LLMCall]) -> None:
        """The planner's ``decide`` on a request: revise the global plan (at most ``max_global_replans``
        times, then overrule) or overrule with its reasons as the local agent's suggestions."""
        s = self.s
        sections = [
            ("CURRENT GLOBAL PLAN", render_global_plan(s.plan)),
            ("CURRENT PHASE", f"{s.phase + 1} of {len(s.plan)}: {s.plan[s.phase].subtask}"),
        ]
        messages = self._messages(GLOBAL, global_system("decide", s.la_reasons), obs, self.spec.goal, sections)
        parsed = self._ask(
            GLOBAL,
            "decide",
            messages,
            partial(parse_decision, allowed=("revise", "overrule"), words=DECIDE_WORDS),
            "reask_decide",
            calls,
        )
        decision, reasons = parsed or ("overrule", "")  # an unusable decision counts as overrule
        outcome = {"plan_version": s.plan_version, "phase": s.phase + 1, "check": "decide", "decision": decision}
        if decision == "revise" and s.global_replans >= self.max_global_replans:
            decision = outcome["capped_to"] = "overrule"
        s.calls[-1]["decision"] = decision
        s.outcomes.append(outcome | {"reasons": reasons})
        s.gp_reasons = reasons
        s.exchanges += 1  # the global planner's answer reaches the local agent
        if decision == "revise":
            s.mode = GLOBAL_REVISE
        else:
            s.replan_call, s.mode = "overruled", LOCAL_REPLAN

    def _collation(self, obs: Obs, calls: list[LLMCall], reason: str, la_answer: str | None) -> tuple[str, str | None]:
        """The planner's ``collation`` over the plan and what was carried out: (summary, final answer)."""
        s = self.s
        sections = [
            ("GLOBAL PLAN", render_global_plan(s.plan)),
            ("EXECUTION SUMMARY", self._summary(reason, la_answer)),
        ]
        messages = self._messages(GLOBAL, global_system("collation"), obs, self.spec.goal, sections)
        parsed = self._ask(GLOBAL, "collation", messages, parse_collation, "reask_collation", calls)
        summary, final = parsed or ("", None)
        s.calls[-1]["answer"] = final
        return summary, final

    def _summary(self, reason: str, la_answer: str | None) -> str:
        s = self.s
        passed = min(s.phase, len(s.plan))
        lines = [
            f"Why the work stopped: {reason}.",
            f"Progress: {passed} of the {len(s.plan)} phases of global plan version {s.plan_version} passed.",
            "Actions carried out, in order:",
            *(f"{i}. (plan {e.plan_version}, phase {e.phase}) {e.line()}" for i, e in enumerate(s.history, 1)),
        ]
        if not s.history:
            lines.append("(none)")
        if s.outcomes:
            lines.append("Checks and decisions:")
            lines += [
                f"- plan {o['plan_version']}, phase {o['phase']}, {o['check']}: {o.get('capped_to', o['decision'])}"
                + (f" ({_clip(o['reasons'])})" if o["reasons"] else "")
                for o in s.outcomes
            ]
        if la_answer is not None:
            lines.append(f"The local agent's answer: {la_answer}")
        return "\n".join(lines)

    def _knowledge(self, obs: Obs) -> list[str]:
        """The search step of the "+ search engine" variant: passages about the task's website, each cut
        to ``search_max_words`` words; a failing search adds nothing and is recorded."""
        s = self.s
        if not self.search_step or self.search is None:
            return []
        try:
            found = self.search(self.spec.goal, str(obs.get("url", "")))
        except Exception as exc:  # a broken search function must not end the episode
            s.search_error = f"{type(exc).__name__}: {exc}"
            return []
        passages = [found] if isinstance(found, str) else list(found or [])
        s.knowledge = [" ".join(str(p).split()[: self.search_max_words]) for p in passages if str(p).strip()]
        return s.knowledge


def _repeated(actions: list[str], k: int) -> bool:
    """WebArena's repeat rule: the last ``k`` actions identical, or a typing action ``k`` times anywhere."""
    if not actions:
        return False
    last = actions[-1]
    if last.startswith("type"):
        return actions.count(last) >= k
    recent = actions[-k:]
    return len(recent) == k and len(set(recent)) == 1


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _qualname(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"
