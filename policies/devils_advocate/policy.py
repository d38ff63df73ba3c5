"""The Devil's Advocate policy class (see the package docstring for the method and the decisions)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from webarena_gym.envs.registration import is_local
from webarena_gym.llm import CallSettings, Message
from webarena_gym.llm.tokens import count_message_tokens
from webarena_gym.policies.base import Decision, EnvHandle, Info, Obs, Policy, TaskSpec, build_llm, register_policy
from webarena_gym.policies.devils_advocate import text as T
from webarena_gym.policies.react import truncate_tokens
from webarena_gym.policies.search_tree import SearchTree
from webarena_gym.wrappers.actions.grammar import Command, parse_command

ROLES = ("plan", "action", "remedy", "align", "task_check", "subtask_check", "element_map", "answer", "summarize")
REMEDY_MODES = ("chained", "independent")
HISTORY_MODES = ("append_all", "branch_only")
RETRY_TRIGGERS = ("self", "oracle")
CAP_SCOPES = ("task", "trial")
PLAN_EXHAUSTED = ("backtrack", "end_trial")
ALWAYS_COUNTED = (
    "backtracks",
    "element_maps",
    "summaries",
    "remedies_dropped",
    "unusable_replies",
    "ambiguous_verdicts",
)


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _page(obs: Obs) -> tuple[str, str]:
    return str(obs.get("url") or ""), str(obs.get("text") or "")


@dataclass(frozen=True)
class Screen:
    """A state S_t as the method records it (Alg. 1): the page's URL and observation, the search-tree
    node it is, and the history entries on the branch that reached it (``history_mode="branch_only"``)."""

    url: str
    text: str
    node: int
    path: tuple[int, ...] = ()

    def same_as(self, other: Screen) -> bool:
        """The same URL and the same observation up to whitespace (the paper leaves equality open)."""
        return self.url == other.url and _normalise(self.text) == _normalise(other.text)


@dataclass(frozen=True)
class Entry:
    """A stack entry (state, action, subtask index) of Alg. 1; ``action=None`` is a trial's seed entry."""

    screen: Screen
    action: str | None
    subtask: int | None
    origin: str = "seed"  # "first attempt" | "remedy <r>"

    def brief(self) -> dict[str, Any]:
        return {"action": self.action, "subtask": self.subtask, "origin": self.origin, "url": self.screen.url}


@dataclass
class TrialRecord:
    """One trial as the policy's state and the trajectory's trial notes record it."""

    index: int  # 1-based
    plan: list[str]
    restore_method: str | None  # how the trial began: None for the first, else the restore's method
    site_data: str  # what that restore did to the sites' data
    actions: int = 0
    outcome: str = ""
    answer: str | None = None


def _choose(name: str, value: str, options: tuple[str, ...]) -> str:
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
    return value


@register_policy("devils_advocate")
@register_policy("devils_advocate_oracle", retry_on="oracle")
class DevilsAdvocatePolicy(Policy):
    """Devil's Advocate (anticipatory reflection); ``retry_on="oracle"`` is the look-ahead variant."""

    # The paper's observation is WebArena's viewport tree of a 1280x720 screen and its action space is
    # click/type/scroll/goto/go_back/go_forward: the ``webarena`` preset is the one that has
    # both (``reduced_actions`` lacks goto and go_forward, the full-page presets lack scroll). Its extra
    # commands (hover, press, tabs) are never offered; note_down is the policy's own (no browser action).
    preset = "webarena"

    def __init__(
        self,
        *,
        remedies: int = 2,
        remedy_mode: str = "chained",
        history_mode: str = "append_all",
        retry_on: str = "self",
        max_trials: int = 7,
        max_actions: int = 30,
        cap_scope: str = "task",
        plan_exhausted: str = "backtrack",
        context_tokens: int | None = 8192,
        max_reasks: int = 2,
        temperature: float = 1.0,
        max_tokens: int = 512,
        instructions: str = "",
        site_intros: dict[str, str] | None = None,
        preset: str = "webarena",
        **llm_options: Any,
    ):
        if remedies < 0 or max_trials < 1 or max_actions < 1 or max_reasks < 0:
            raise ValueError("remedies and max_reasks must be >= 0, max_trials and max_actions >= 1")
        self.remedies = int(remedies)
        self.remedy_mode = _choose("remedy_mode", remedy_mode, REMEDY_MODES)
        self.history_mode = _choose("history_mode", history_mode, HISTORY_MODES)
        self.retry_on = _choose("retry_on", retry_on, RETRY_TRIGGERS)
        self.cap_scope = _choose("cap_scope", cap_scope, CAP_SCOPES)
        self.plan_exhausted = _choose("plan_exhausted", plan_exhausted, PLAN_EXHAUSTED)
        self.max_trials, self.max_actions, self.max_reasks = int(max_trials), int(max_actions), int(max_reasks)
        self.context_tokens = context_tokens
        self.instructions = instructions
        self.intros = {**T.site_intros(), **(site_intros or {})}
        self.preset = preset
        # The paper's cap is on actions per task (30), across trials: that is the loop's
        # interaction budget. Every action is one decision, plus one decision for the final answer.
        self.max_interactions = self.max_actions * (self.max_trials if cap_scope == "trial" else 1)
        self.max_steps = self.max_interactions + 1
        settings = CallSettings(temperature=temperature, max_tokens=max_tokens)
        self.llm = build_llm({role: settings for role in ROLES}, **llm_options)
        self.task: TaskSpec | None = None
        self.commands: tuple[str, ...] = T.PROMPT_COMMANDS + T.UNLISTED_COMMANDS
        self.cap: int | None = self.max_actions
        self.trial_cap: int | None = None
        self.sites = self.website = ""
        self._fresh()

    def _fresh(self) -> None:
        self.trial = 0
        self.plan: list[str] = []
        self.trials: list[TrialRecord] = []
        self.failures: list[tuple[int, list[str], str]] = []  # (trial, plan, why) for {FAILED PLAN}
        self.history: list[T.Memo] = []  # append-only and kept across trials (Alg. 1)
        self.notes: list[str] = []  # note_down texts, kept across trials
        self.stack: list[Entry] = []
        self.screen: Screen | None = None
        self.subtask: int | None = None
        self.expand = False  # the last action was aligned: generate the next action and remedies here
        self.pending: Entry | None = None  # the action handed to the loop, judged on the next call
        self.actions = 0  # executed actions over all trials, note_down included
        self.trial_actions = 0
        self.summaries: dict[str, str] = {}
        # Always present (0 until they happen), so every run's report has the same columns.
        self.counters: Counter[str] = Counter(dict.fromkeys(ALWAYS_COUNTED, 0))
        self.tree: SearchTree | None = None

    # -- configuration -----------------------------------------------------------------------------

    def allows_lookahead(self) -> bool:
        return self.retry_on == "oracle"

    def config(self) -> dict[str, Any]:
        return {
            "llm": self.llm.describe(),
            "remedies": self.remedies,
            "remedy_mode": self.remedy_mode,
            "history_mode": self.history_mode,
            "retry_on": self.retry_on,
            "oracle_assisted": self.allows_lookahead(),
            "max_trials": self.max_trials,
            "max_actions": self.max_actions,
            "cap_scope": self.cap_scope,
            "plan_exhausted": self.plan_exhausted,
            "context_tokens": self.context_tokens,
            "max_reasks": self.max_reasks,
            "instructions": self.instructions,
            "preset": self.preset,
        }

    def reset(self, task: TaskSpec) -> None:
        self.task = task
        self._fresh()
        offered = set(task.commands) if task.commands else set(T.PROMPT_COMMANDS + T.UNLISTED_COMMANDS)
        self.commands = tuple(c for c in T.PROMPT_COMMANDS + T.UNLISTED_COMMANDS if c == T.NOTE or c in offered)
        budget = task.budget.interactions
        if self.cap_scope == "task":
            self.cap, self.trial_cap = (budget if budget is not None else self.max_actions), None
        else:
            self.cap, self.trial_cap = budget, self.max_actions
        self.sites = T.render_sites(task.site_urls, self.intros)
        self.website = (
            "\n".join(f"{self.intros.get(site, site)} ({task.site_urls.get(site, '')})" for site in task.sites)
            or task.start_url
        )

    def state(self) -> dict[str, Any]:
        return {
            "trial": self.trial,
            "plan": list(self.plan),
            "subtask": self.subtask,
            "stack": [e.brief() for e in self.stack],
            "history": [{"trial": m.trial, "text": m.text} for m in self.history],
            "notes": list(self.notes),
            "actions": self.actions,
            "trial_actions": self.trial_actions,
            "cap": self.cap,
            "trials": [asdict(t) for t in self.trials],
            "counters": dict(self.counters),  # the report's policy counters table shows these per task
        }

    def search_tree(self) -> SearchTree | None:
        return self.tree

    @property
    def goal(self) -> str:
        assert self.task is not None, "reset() first"
        return self.task.goal

    # -- the loop of Alg. 1, one executed action per decision ---------------------------------------

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        if self.task is None:
            raise RuntimeError("reset() first")
        if self.trial == 0:
            self._start_trial(obs, None)
        elif self.pending is not None:  # the loop ran our last action: lines 8-12 on its result
            entry, self.pending = self.pending, None
            decision = self._judge(entry, obs, handle)
            if decision is not None:
                return decision
        return self._advance(handle)

    def _advance(self, handle: EnvHandle) -> Decision:
        """Pop entries until one must run in the browser (or the episode must answer)."""
        while True:
            if self.expand:  # lines 14-18
                self.expand = False
                self._expand()
            if not self.stack:  # plan failure
                decision = self._plan_failed(handle)
                if decision is not None:
                    return decision
                continue
            entry = self.stack.pop()  # line 5
            if entry.action is None:  # line 7: the seed entry starts the first subtask
                self.subtask, self.expand = 0, True
                continue
            if why := self._out_of_budget(handle):
                return self._give_up(handle, why)
            if self.trial_cap is not None and self.trial_actions >= self.trial_cap:
                self.stack.clear()  # cap_scope="trial": this trial is over, the plan is revised
                continue
            entry = self._backtrack(entry, handle)  # line 6
            self.actions += 1
            self.trial_actions += 1
            action = entry.action or ""
            if T.command_name(action) == T.NOTE:  # runs here: nothing reaches the browser
                self.notes.append(action[len(T.NOTE) :].strip()[1:-1])
                decision = self._judge(entry, None, handle)
                if decision is not None:
                    return decision
                continue
            self.pending = entry
            return self._run(entry)

    def _run(self, entry: Entry) -> Decision:
        assert entry.subtask is not None
        step = self.plan[entry.subtask]
        return Decision(
            action=entry.action,
            thought=f"trial {self.trial}, step {entry.subtask + 1} of {len(self.plan)} ({step}): {entry.origin}",
            parsed={
                "trial": self.trial,
                "subtask": entry.subtask,
                "step": step,
                "origin": entry.origin,
                "action": entry.action,
                "stack": len(self.stack),
            },
        )

    def _judge(self, entry: Entry, obs: Obs | None, handle: EnvHandle) -> Decision | None:
        """Lines 8-12 for an executed action (``obs=None``: a note, the page did not change)."""
        assert self.tree is not None and entry.action is not None and entry.subtask is not None
        before, i = entry.screen, entry.subtask
        url, page = (before.url, before.text) if obs is None else _page(obs)
        error = None if obs is None else (obs.get("last_action_error") or None)
        node = self.tree.add(
            self.tree.nodes[before.node],
            label=entry.action,
            url=url,
            actions=[entry.action],
            notes={"trial": self.trial, "subtask": i, "origin": entry.origin},
        )
        shown = page + (f"\n(The action could not be carried out: {error})" if error else "")
        step, plan = self.plan[i], T.numbered(self.plan, "")

        def align(obs1: str, obs2: str) -> str:
            return T.align_prompt(step=step, plan=plan, action=entry.action or "", obs1=obs1, obs2=obs2)

        reply = self.llm.complete("align", self._messages("align", align, obs1=before.text, obs2=shown)).text
        description, verdict = T.parse_alignment(reply)
        if description is None:
            self.counters["missing_descriptions"] += 1
            description = f"{T.ALIGNMENT_LEAD} {entry.action} (the check gave no description)."
        if verdict is None:
            self.counters["ambiguous_verdicts"] += 1
        self.history.append(T.Memo(self.trial, description))
        self.screen = Screen(url, page, node.id, before.path + (len(self.history) - 1,))
        node.notes["description"] = description
        node.status = "expanded" if verdict else "failed"
        node.llm_calls = 1
        if not verdict:  # line 9 said NO: nothing is pushed, the next pop backtracks
            return None
        if self._met("task_check", self.goal):  # line 11: early stop
            node.status = "terminal"
            return self._finish(handle)
        if self._met("subtask_check", step):  # line 12
            i += 1
            if i >= len(self.plan):  # the plan ran out, the task is not done: a NO
                node.notes["plan_exhausted"] = True
                if self.plan_exhausted == "end_trial":
                    self.stack.clear()
                return None
        self.subtask, self.expand = i, True
        return None

    def _expand(self) -> None:
        """Lines 14-18: the action for the current subtask, then R remedies asked in the same
        conversation; remedies are pushed first, the first attempt last (it runs first)."""
        assert self.screen is not None and self.subtask is not None
        screen, i = self.screen, self.subtask

        def prompt(observation: str) -> str:
            return T.action_prompt(
                sites=self.sites,
                task=self.goal,
                plan=T.numbered(self.plan, ""),
                history=self._history(screen),
                step=self.plan[i],
                observation=observation,
                notes=T.numbered(self.notes, "None yet."),
                commands=T.render_commands(self.commands),
            )

        first, conversation = self._ask_action("action", self._messages("action", prompt, observation=screen.text))
        opening = conversation
        remedies: list[str | None] = []
        for _ in range(self.remedies):
            base = conversation if self.remedy_mode == "chained" else opening
            remedy, asked = self._ask_action("remedy", [*base, {"role": "user", "content": T.remedy_question()}])
            conversation = asked if self.remedy_mode == "chained" else conversation
            remedies.append(remedy)
        seen = {first}
        for r, remedy in enumerate(remedies, 1):
            if remedy is None or remedy in seen:  # unusable or a repeat: dropped
                self.counters["remedies_dropped"] += 1
                continue
            seen.add(remedy)
            self.stack.append(Entry(screen, remedy, i, f"remedy {r}"))
        if first is not None:
            self.stack.append(Entry(screen, first, i, "first attempt"))

    def _ask_action(self, role: str, messages: list[Message]) -> tuple[str | None, list[Message]]:
        """One action from the model, with bounded re-asks in the same conversation; None when every
        reply was unusable (such an action is a no-op, so it is simply not pushed)."""
        observation = self.screen.text if self.screen is not None else ""
        for attempt in range(self.max_reasks + 1):
            reply = self.llm.complete(role, messages).text
            messages = [*messages, {"role": "assistant", "content": reply}]
            try:
                return T.parse_action(reply, self.commands), messages
            except T.ReplyError as error:
                self.counters["unusable_replies"] += 1
                if attempt == self.max_reasks:
                    break
                example = T.example_action(observation, self.commands)
                messages.append({"role": "user", "content": T.reask_action(str(error), example)})
        return None, messages

    def _met(self, role: str, objective: str) -> bool:
        """G_completed for the task (``task_check``) or the current subtask (``subtask_check``)."""
        assert self.screen is not None
        screen = self.screen

        def prompt(observation: str) -> str:
            return T.completion_prompt(
                objective=objective,
                plan=T.numbered(self.plan, ""),
                history=self._history(screen),
                notes=T.numbered(self.notes, "None."),
                observation=observation,
            )

        verdict = T.parse_verdict(self.llm.complete(role, self._messages(role, prompt, observation=screen.text)).text)
        if verdict is None:
            self.counters["ambiguous_verdicts"] += 1
        return bool(verdict)

    # -- backtracking (Alg. 1) --------------------------------------------------------------------

    def _backtrack(self, entry: Entry, handle: EnvHandle) -> Entry:
        """Line 6: back to the entry's recorded URL through the handle (no step is counted), and the
        element its action names re-identified on the fresh page when the page differs."""
        assert self.screen is not None and entry.action is not None
        if self.screen.same_as(entry.screen):
            return entry
        obs, _ = handle.goto(entry.screen.url)
        url, page = _page(obs)
        self.counters["backtracks"] += 1
        action = entry.action
        if T.command_name(action) in T.ELEMENT_COMMANDS and _normalise(page) != _normalise(entry.screen.text):
            action = self._map_element(action, entry.screen.text, page)
        self.screen = Screen(url, page, entry.screen.node, entry.screen.path)
        return Entry(self.screen, action, entry.subtask, entry.origin)

    def _map_element(self, action: str, old: str, new: str) -> str:
        command = parse_command(action)
        element = command.args[0]

        def prompt(obs1: str, obs2: str) -> str:
            return T.map_prompt(element_id=element, obs1=obs1, obs2=obs2)

        reply = self.llm.complete("element_map", self._messages("element_map", prompt, obs1=old, obs2=new)).text
        self.counters["element_maps"] += 1
        mapped = T.parse_element_id(reply)
        if mapped is None:
            self.counters["unusable_replies"] += 1
            return action
        return str(Command(command.name, (mapped, *command.args[1:])))

    # -- trials -------------------------------------------------------------------------------------

    def _start_trial(self, obs: Obs, restored: Info | None) -> None:
        """A new episode of the method: the screen it starts from, a (revised) plan, the seed entry."""
        self.trial += 1
        url, page = _page(obs)
        if self.tree is None:
            self.tree = SearchTree.rooted(label="task", url=url)
        node = self.tree.add(self.tree.root, label=f"trial {self.trial}", url=url)
        self.screen = Screen(url, page, node.id)
        self.plan = self._make_plan(self.screen)
        node.notes["plan"] = list(self.plan)
        method = None if restored is None else str(restored.get("restore_method") or "unknown")
        self.trials.append(TrialRecord(self.trial, list(self.plan), method, self._site_data(restored)))
        self.stack = [Entry(self.screen, None, None)]  # Alg. 1, line 3: seeded at S_0
        self.subtask, self.expand, self.pending, self.trial_actions = None, False, None, 0

    def _site_data(self, restored: Info | None) -> str:
        if restored is None:
            return "as the episode's reset left it"
        if self.task is not None and is_local(self.task.env_id):
            return "pristine again (the local suite resets its site data)"
        return "not restored: real WebArena sites keep what earlier trials changed on the server"

    def _make_plan(self, screen: Screen) -> list[str]:
        """G_plan (Eq. 1; Eq. 10 on later trials, with the failed plans and the whole history)."""

        def prompt(start_screen: str) -> str:
            return T.plan_prompt(
                sites=self.sites,
                website=self.website,
                instructions=self.instructions,
                start_screen=start_screen,
                task=self.goal,
                failed_plans=T.render_failures(self.failures),
                history=T.render_review(self._history(None, empty="None: this is the first trial."), self.notes),
            )

        messages = self._messages("plan", prompt, start_screen=screen.text)
        for attempt in range(self.max_reasks + 1):
            reply = self.llm.complete("plan", messages).text
            try:
                return T.parse_plan(reply)
            except T.ReplyError as error:
                self.counters["unusable_replies"] += 1
                if attempt < self.max_reasks:
                    messages = [
                        *messages,
                        {"role": "assistant", "content": reply},
                        {"role": "user", "content": T.reask_plan(str(error))},
                    ]
        self.counters["plan_fallbacks"] += 1
        return [self.goal]  # no usable plan: the task itself is the one subtask

    def _plan_failed(self, handle: EnvHandle) -> Decision | None:
        why = "every action and remedy on the stack was tried without completing the task"
        if self.trial >= self.max_trials:
            return self._give_up(handle, f"{why}; no trial is left")
        if blocked := self._out_of_budget(handle):
            return self._give_up(handle, blocked)
        self._retry(handle, None, why)
        return None

    def _retry(self, handle: EnvHandle, answer: str | None, why: str) -> None:
        """End this trial as failed, restore the task's initial state and start the next one."""
        self._end_trial(handle, answer, f"failed: {why}")
        self.failures.append((self.trial, list(self.plan), why))
        obs, info = handle.restore(handle.initial)
        self._start_trial(obs, info)

    def _end_trial(self, handle: EnvHandle, answer: str | None, outcome: str) -> None:
        record = self.trials[-1]
        record.actions, record.outcome, record.answer = self.trial_actions, outcome, answer
        if record.restore_method is not None:
            outcome = f"{outcome} [began with a {record.restore_method} restore; site data {record.site_data}]"
        handle.end_trial(
            answer,
            outcome,
            trial=record.index,
            actions=record.actions,
            plan=record.plan,
            restore_method=record.restore_method,
            site_data=record.site_data,
        )

    def _finish(self, handle: EnvHandle) -> Decision | None:
        """Early stop (line 11): the answer; with ``retry_on="oracle"`` the evaluator may send the agent
        into another trial instead (a look-ahead the report marks)."""
        answer = self._answer()
        if self.retry_on == "oracle" and self.trial < self.max_trials and not self._out_of_budget(handle):
            verdict = handle.evaluate(answer)
            if float(verdict.get("score") or 0.0) < 1.0:
                self._retry(handle, answer, "the task was judged complete, but the evaluator rejected the result")
                return None
        self._end_trial(handle, answer, "finished: the task is judged complete")
        return self._deliver(answer, "the task is judged complete")

    def _give_up(self, handle: EnvHandle, why: str) -> Decision:
        """``give_up``: the answer for the current screen (an information task needs one; for any
        other the evaluator ignores it)."""
        answer = self._answer()
        self._end_trial(handle, answer, f"stopped: {why}")
        return self._deliver(answer, why)

    def _deliver(self, answer: str, why: str) -> Decision:
        if self.tree is not None and self.screen is not None:
            node = self.tree.nodes[self.screen.node]
            node.answer = answer
            self.tree.final_path = self.tree.path_to(node.id)
        return Decision(action=f"stop [{answer}]", thought=why, parsed={"trial": self.trial, "answer": answer})

    def _out_of_budget(self, handle: EnvHandle) -> str | None:
        """Why no further action may run: the paper's action cap (over all trials), or the loop's budgets
        (the next decision must then be the answer)."""
        if self.cap is not None and self.actions >= self.cap:
            return f"the {self.cap}-action cap is reached"
        use = handle.budget
        if use.interactions_left == 0:
            return "the interaction budget is spent"
        if use.decisions + 1 >= use.decision_limit:
            return "the decision budget is spent"
        return None

    def _answer(self) -> str:
        """G_answer: the text after ``###Answer``, with bounded re-asks; a reply that never
        carries the marker is used whole."""
        assert self.screen is not None
        screen = self.screen

        def prompt(observation: str) -> str:
            return T.answer_prompt(
                task=self.goal,
                history=self._history(screen),
                notes=T.numbered(self.notes, "None."),
                observation=observation,
            )

        messages = self._messages("answer", prompt, observation=screen.text)
        reply = ""
        for attempt in range(self.max_reasks + 1):
            reply = self.llm.complete("answer", messages).text
            answer = T.parse_answer(reply)
            if answer is not None:
                return answer
            self.counters["unusable_replies"] += 1
            if attempt < self.max_reasks:
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": T.reask_answer()},
                ]
        return " ".join(reply.split())

    # -- prompt inputs ------------------------------------------------------------------------------

    def _history(self, screen: Screen | None, empty: str = "None yet.") -> str:
        """ℋ as the prompts see it: everything (the default, as in Alg. 1; always for plan revision), or with
        ``history_mode="branch_only"`` only the descriptions on the branch that reached ``screen``."""
        if screen is None or self.history_mode == "append_all":
            return T.render_history(self.history, empty, self.trial)
        return T.render_history([self.history[k] for k in screen.path], empty, self.trial)

    def _messages(self, role: str, build: Callable[..., str], **screens: str) -> list[Message]:
        """The one user message of a call; when it would not fit the context budget with the reply, each
        observation in it is replaced by the summariser's shorter description."""
        messages: list[Message] = [{"role": "user", "content": build(**screens)}]
        if self.context_tokens is None or self._tokens(role, messages) <= self.context_tokens:
            return messages
        return [{"role": "user", "content": build(**{k: self._summary(v) for k, v in screens.items()})}]

    def _tokens(self, role: str, messages: list[Message]) -> int:
        reply = self.llm.settings(role).max_tokens or 0
        return count_message_tokens(self.llm.model_for(role), messages) + reply

    def _summary(self, observation: str) -> str:
        """The summariser (the project's own prompt: the paper gives none): one call per distinct page,
        cached for the episode; a tree too long even for the summariser is cut to fit first."""
        key = _normalise(observation)
        if key not in self.summaries:
            assert self.context_tokens is not None
            frame = [{"role": "user", "content": T.summary_prompt(task=self.goal, observation="")}]
            room = max(1, self.context_tokens - self._tokens("summarize", frame))
            tree = truncate_tokens(observation, room, self.llm.model_for("summarize"))
            prompt = T.summary_prompt(task=self.goal, observation=tree)
            reply = self.llm.complete("summarize", [{"role": "user", "content": prompt}]).text.strip()
            self.counters["summaries"] += 1
            self.summaries[key] = reply or tree
        return self.summaries[key]
