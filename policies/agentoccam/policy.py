"""The AgentOccam policy class (see the package docstring for the method and the decisions)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from webarena_gym.llm import CallSettings, LLMCall, Message
from webarena_gym.policies.agentoccam.memory import PlanError, PlanTree, StepRecord, render_history
from webarena_gym.policies.agentoccam.text import (
    BASE_FIELDS,
    JUDGE_FIELDS,
    clean_action,
    highlight_ids,
    parse_candidates,
    parse_fields,
    specs,
    texts,
    user_message,
)
from webarena_gym.policies.base import (
    Decision,
    EnvHandle,
    EnvHandleError,
    Obs,
    Policy,
    TaskSpec,
    build_llm,
    example_action,
    register_policy,
)
from webarena_gym.wrappers.actions.grammar import Command, InvalidActionError, parse_action

PLANNING_COMMANDS = ("branch", "prune")
_MEMORY = frozenset({"note", "branch", "prune"})
_ID_COMMANDS = frozenset({"click", "type", "hover"})


class ActionRejected(ValueError):
    """The ACTION cannot run here; ``key`` picks the re-ask sentence."""

    def __init__(self, message: str, key: str = "invalid_action"):
        super().__init__(message)
        self.key = key


@dataclass
class _Choice:
    """One usable answer of the actor (plus the judge's pick, for the judge variant)."""

    fields: dict[str, str]
    commands: list[Command]
    reason: str
    candidates: list[dict[str, str]] = field(default_factory=list)


@register_policy("agentoccam")
@register_policy("agentoccam_judge", judge=True, history_depth=None)
class AgentOccamPolicy(Policy):
    """AgentOccam, and AgentOccam + Judge with ``judge=True``. See the module docstring."""

    def __init__(
        self,
        *,
        temperature: float = 0.5,
        top_p: float = 0.95,
        max_tokens: int = 1024,  # [C] sets no cap; see the package docstring
        max_steps: int = 20,
        planning: bool = True,
        history: bool = True,
        judge: bool = False,
        history_depth: int | None = 3,
        pivotal_max_nodes: int = 30,
        highlight_max_words: int = 200,
        max_reasks: int = 3,
        judge_seed: int = 42,
        preset: str | None = None,
        **llm_options: Any,
    ):
        self.planning, self.history, self.judge = planning, history, judge
        self.preset = preset or ("agentoccam" if planning else "history" if history else "simplified_obs")
        self.max_steps = max_steps
        self.history_depth = history_depth
        self.pivotal_max_nodes = pivotal_max_nodes
        self.highlight_max_words = highlight_max_words
        self.max_reasks = max_reasks
        self.judge_seed = judge_seed
        settings = CallSettings(temperature=temperature, top_p=top_p, max_tokens=max_tokens)
        roles = {"actor": settings, **({"judge": settings} if judge else {})}
        self.llm = build_llm(roles, **llm_options)
        self.task: TaskSpec | None = None
        self.tree = PlanTree("", "")
        self.records: list[StepRecord] = []
        self.decisions = 0
        self.rng = random.Random(judge_seed)
        self._last_sent: str | None = None

    # -- configuration -----------------------------------------------------------------------------

    @property
    def fields(self) -> tuple[str, ...]:
        names = JUDGE_FIELDS if self.judge else BASE_FIELDS
        return tuple(f for f in names if self.history or f != "INTERACTION HISTORY SUMMARY")

    def commands(self) -> tuple[str, ...]:
        """The commands offered now: the task's (the action wrapper drops ``go_home`` on single-site
        tasks), in AgentOccam's order, planning commands only when planning is on."""
        enabled = set(self.task.commands if self.task is not None else ()) | {"stop"}
        return tuple(c for c in specs()[1] if c in enabled and (self.planning or c not in PLANNING_COMMANDS))

    def config(self) -> dict[str, Any]:
        return {
            "llm": self.llm.describe(),
            "max_steps": self.max_steps,
            "planning": self.planning,
            "history": self.history,
            "judge": self.judge,
            "history_depth": self.history_depth,
            "pivotal_max_nodes": self.pivotal_max_nodes,
            "highlight_max_words": self.highlight_max_words,
            "max_reasks": self.max_reasks,
            "judge_seed": self.judge_seed,
        }

    def reset(self, task: TaskSpec) -> None:
        self.task = task
        self.tree = PlanTree(task.goal, task.start_url)
        self.records = []
        self.decisions = 0
        self.rng = random.Random(f"{self.judge_seed}:{task.task_id}")
        self._last_sent = None
        self._system = self.system_prompt()

    def state(self) -> dict[str, Any]:
        return {
            "plan_tree": self.tree.to_dict() if self.planning else None,
            "steps": [r.public() for r in self.records],
            "decisions": self.decisions,
        }

    # -- prompts -----------------------------------------------------------------------------------

    def system_prompt(self) -> str:
        field_texts, grammar = specs()
        fields = "\n".join(f"{name}:\n{field_texts[name]}" for name in self.fields)
        commands = self.commands()

        def listing(names) -> str:
            return "\n".join(f"- {grammar[c][0]}: {grammar[c][1]}" for c in commands if c in names)

        navigation = listing([c for c in commands if c not in PLANNING_COMMANDS])
        rule = texts()["rule_candidates" if self.judge else "rule_single"]
        if self.planning:
            return texts()["system_planning"].format(
                fields=fields, planning=listing(PLANNING_COMMANDS), navigation=navigation, rule=rule
            )
        return texts()["system_flat"].format(fields=fields, navigation=navigation, rule=rule)

    def sections(self, obs: Obs, *, depth: int | None) -> list[tuple[str, str]]:
        """OBJECTIVE, PREVIOUS PLANS, INTERACTION HISTORY, CURRENT OBSERVATION, in this order."""
        assert self.task is not None, "reset() first"
        history = ""
        if self.history:
            steps = self.tree.active.steps_taken if self.planning else range(len(self.records))
            history = render_history(
                [self.records[i] for i in steps],
                _id_free(obs),
                depth=depth,
                max_words=self.highlight_max_words,
                show_plan=self.planning,
            )
        return [
            ("OBJECTIVE", self.task.goal),
            ("PREVIOUS PLANS", self.tree.render() if self.planning else ""),
            ("INTERACTION HISTORY", history),
            ("CURRENT OBSERVATION", str(obs.get("text") or "")),
        ]

    def messages(self, obs: Obs, extra: str = "") -> list[Message]:
        assert self.task is not None, "reset() first"
        system = self._system + extra
        budget = self.task.budget.decisions  # the episode's (a study's --max-steps), not self.max_steps
        if self.decisions == budget - 1:
            system += texts()["final_step"].format(max_steps=budget)
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": user_message(self.sections(obs, depth=self.history_depth))},
        ]

    def forced_stop_answer(self, budget: str) -> str:
        """AgentOccam's runner ended an episode past its step budget with a stop whose answer says the
        trajectory failed at the step beyond the maximum; the evaluator scores that answer."""
        assert self.task is not None, "reset() first"
        if budget == "decisions":
            limit = self.task.budget.decisions
            return texts()["forced_stop"].format(step=limit + 1, max_steps=limit)
        if budget == "interactions":
            return texts()["forced_stop_interactions"].format(limit=self.task.budget.interactions)
        llm_limit, unit = self.task.budget.limit(budget)  # an LLM budget (this project's, not the paper's)
        return texts()["forced_stop_llm"].format(limit=llm_limit, unit=unit)

    # -- acting ------------------------------------------------------------------------------------

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        assert self.task is not None, "reset() first"
        step = len(self.records)
        if step == 0 and obs.get("url"):  # the root plan starts on the page actually shown (normalised URL)
            self.tree.nodes[0].url = str(obs["url"])
        error = obs.get("last_action_error")
        if error and self._last_sent and self.planning:
            self.tree.note(texts()["failed_action_note"].format(action=self._last_sent, error=str(error)[:300]), step)
        self._last_sent = None
        calls: list[LLMCall] = []
        choice, failure = self._choose(obs, calls)
        self.decisions += 1
        if choice is None:
            if self.planning:
                self.tree.note(texts()["failed_action_note"].format(action="(no valid action)", error=failure), step)
            return Decision(
                action=None,
                llm_calls=calls,
                error=f"no valid action after re-asks: {failure}",
                parsed={"reasks": len(calls) - 1},
            )
        return self._apply(choice, obs, handle, calls, step)

    def _choose(self, obs: Obs, calls: list[LLMCall]) -> tuple[_Choice | None, str]:
        """Ask the actor (and the judge) until an answer is usable, re-asking at most ``max_reasks`` times."""
        extra, failure = "", ""
        for _ in range(self.max_reasks + 1):
            completion = self.llm.complete("actor", self.messages(obs, extra))
            calls.append(completion.call)
            fields = parse_fields(completion.text)
            try:
                if self.judge:
                    return self._judged(fields, obs, calls), ""
                action = clean_action(fields.get("ACTION", ""))
                return _Choice(fields, self.validate(action, obs), fields.get("REASON", "")), ""
            except ActionRejected as exc:
                failure = str(exc)
                offending = clean_action(fields.get("ACTION") or fields.get("ACTION CANDIDATES", "")) or "(empty)"
                example = example_action(obs, self.commands())
                extra = texts()[exc.key].format(action=offending[:300], error=failure, example=example)
        return None, failure

    def validate(self, action: str, obs: Obs) -> list[Command]:
        """Parse the ACTION and check it against the page and the enabled commands; raise
        :class:`ActionRejected` with a message for the model."""
        from webarena_gym.wrappers.actions.agentoccam import page_ids

        if not action:
            raise ActionRejected("the ACTION field is missing or empty")
        try:
            commands = parse_action(action, self.commands())
        except InvalidActionError as exc:
            raise ActionRejected(str(exc)) from None
        browser = [c for c in commands if c.name not in _MEMORY]
        if len(browser) > 1:
            raise ActionRejected(f"only one browser command per step, got {len(browser)}")
        if browser and any(c.name == "prune" for c in commands):
            raise ActionRejected("prune changes the page, so it cannot be combined with a browser command")
        shown = page_ids(obs)
        for c in browser:
            if c.name in _ID_COMMANDS and c.args[0] not in shown:
                raise ActionRejected(f"element [{c.args[0]}] is not in the current observation")
        for c in commands:
            if c.name == "note" and self._previous_note() == c.args[0].strip():
                raise ActionRejected("the same note as last time", key="repeated_note")
        return commands

    def _previous_note(self) -> str | None:
        for rec in reversed(self.records):
            for c in _safe_parse(rec.action):
                if c.name == "note":
                    return c.args[0].strip()
        return None

    def _judged(self, fields: dict[str, str], obs: Obs, calls: list[LLMCall]) -> _Choice:
        """Keep the valid candidates, shuffle, and let the judge pick among distinct actions."""
        valid = []
        for reason, action in parse_candidates(fields.get("ACTION CANDIDATES", "")):
            try:
                valid.append((reason, action, self.validate(action, obs)))
            except ActionRejected:
                continue
        if not valid:
            example = example_action(obs, self.commands())
            raise ActionRejected(
                f"ACTION CANDIDATES holds no valid item (an item's action line reads `- action: [{example}]`)"
            )
        self.rng.shuffle(valid)
        distinct: dict[str, tuple[str, list[Command]]] = {}
        for reason, _, commands in valid:
            distinct.setdefault(_canonical(commands), (reason, commands))
        keys = list(distinct)
        pick = 0
        if len(keys) > 1:
            pick = self._ask_judge(obs, [(k, distinct[k][0]) for k in keys], calls)
        reason, commands = distinct[keys[pick]]
        candidates = [{"action": k, "reason": distinct[k][0]} for k in keys]
        return _Choice(fields, commands, reason, candidates=candidates)

    def _ask_judge(self, obs: Obs, choices: list[tuple[str, str]], calls: list[LLMCall]) -> int:
        """The judge's ACTION SELECTION as an index into ``choices``; 0 when unusable."""
        listed = "\n\n".join(
            f"|\taction [{i}]:\n{a}\n|\treason for action [{i}]:\n{r}" for i, (a, r) in enumerate(choices)
        )
        body = user_message([*self.sections(obs, depth=None), ("ACTION CHOICES", listed)])
        completion = self.llm.complete(
            "judge",
            [
                {"role": "system", "content": texts()["judge_system"]},
                {"role": "user", "content": f"{texts()['judge_preamble']}\n{body}"},
            ],
        )
        calls.append(completion.call)
        number = re.search(r"\d+", parse_fields(completion.text).get("ACTION SELECTION", ""))
        index = int(number.group()) if number else -1
        return index if 0 <= index < len(choices) else 0

    def _apply(self, choice: _Choice, obs: Obs, handle: EnvHandle, calls: list[LLMCall], step: int) -> Decision:
        """Update the plan tree, navigate for ``prune``, record the step, and return the command."""
        url = str(obs.get("url", ""))
        page = obs.get("text_tree")
        ids = highlight_ids(choice.fields.get("OBSERVATION HIGHLIGHT", ""))
        highlight = page.pivotal(ids, max_nodes=self.pivotal_max_nodes) if page is not None and ids else ""
        action = _canonical(choice.commands)
        errors: list[str] = []
        planning_only = all(c.name in PLANNING_COMMANDS for c in choice.commands)
        for c in choice.commands:
            try:
                if c.name == "branch":
                    self.tree.branch(c.args[0], c.args[1], url, step)
                elif c.name == "prune":
                    back = self.tree.prune(c.args[0], c.args[1]).url
                    if back and back != url:
                        handle.goto(back)
                elif c.name == "note":
                    self.tree.note(c.args[0], step)
            except PlanError as exc:
                self.tree.note(texts()["invalid_plan_note"].format(action=str(c), error=exc), step)
                errors.append(str(exc))
            except EnvHandleError as exc:
                errors.append(f"prune could not return to the plan's page: {exc}")
        if not planning_only:
            self.tree.record(step)
        self.records.append(
            StepRecord(
                url=url,
                action=action,
                reason=choice.reason.strip(),
                description=choice.fields.get("OBSERVATION DESCRIPTION", "").strip(),
                highlight=highlight,
                plan=self.tree.active.label,
                plan_id=self.tree.active_id,
                page=_id_free(obs),
            )
        )
        if any(c.name not in _MEMORY for c in choice.commands):
            self._last_sent = action
        parsed = {
            **{k.lower().replace(" ", "_"): v for k, v in choice.fields.items()},
            "action": action,
            "highlight_ids": ids,
            "active_plan": self.tree.active.label,
            "reasks": sum(c.role == "actor" for c in calls) - 1,
        }
        if choice.candidates:
            parsed["candidates"] = choice.candidates
        return Decision(
            action=action, thought=choice.reason, parsed=parsed, llm_calls=calls, error="; ".join(errors) or None
        )


def _id_free(obs: Obs) -> str:
    tree = obs.get("text_tree")
    return tree.render(False) if tree is not None else str(obs.get("text") or "")


def _canonical(commands: list[Command]) -> str:
    return "\n".join(str(c) for c in commands)


def _safe_parse(action: str) -> list[Command]:
    try:
        return parse_action(action)
    except InvalidActionError:
        return []
