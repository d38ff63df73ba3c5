"""AgentOccam (agentoccam.md): one LLM call per step on the aligned observation/action spaces, with a
branch/prune plan tree, pivotal-node history, and the optional judge variant.

Per step (card §1.4): build the prompt (system: instruction with the output fields and the enabled
commands; user: OBJECTIVE, PREVIOUS PLANS, INTERACTION HISTORY, CURRENT OBSERVATION, empty sections
left out), call the actor, parse the fields, validate the ACTION against the page (re-ask with a
penalty sentence when invalid), store the page's pivotal-node highlight, update the plan tree
(``branch``/``prune``/``note``; ``prune`` navigates back through ``handle.goto``), and hand the
command to the ``agentoccam`` action wrapper. ``note``/``branch``/``prune`` are browser no-ops there
but still count as steps (card §7.3). The judge variant (§6.3) asks the actor for all suitable
actions and lets a ``judge`` call pick one.

Switches for the ablation rows the policy controls (§10.2): ``planning`` (branch/prune and the plan
tree) and ``history`` (interaction history and its summary field); the preset follows them unless
given. Every [C] number is a default: temperature 0.5, top_p 0.95, 20 steps, history window 3,
pivotal highlights < 30 nodes and < 200 words.

Decisions on the card's §12 quirks and gaps:
* invalid-action re-asks are bounded (``max_reasks``, [C]: unbounded); when spent, the decision sends
  nothing, the failure becomes a note on the active plan and the next step asks again;
* ids are validated exactly against the ids the page shows (the action wrapper's ``page_ids``),
  not as substrings of the observation text;
* a new plan's id is the largest id so far + 1 ([C]: active id + 1, which can reuse the id of a
  pruned node); ids therefore stay unique;
* ``prune`` hides the later siblings of the resumed plan *with* their subtrees ([C] hid only the
  sibling nodes), so an abandoned branch disappears entirely;
* the STEP input section is not rendered (as in [C]'s effective prompts; the final-step warning
  carries the budget);
* an action the env reports as failed (``last_action_error``) is noted on the active plan, the
  generalisation of [C]'s "invalid syntax after execution" note;
* the judge's shuffle is seeded per episode (``judge_seed`` and the task id), not once per process,
  so an episode replays the same way whatever ran before it;
* a prune may not be combined with a browser command in one ACTION (its page changes first), and at
  most one browser command runs per step (the action wrapper's rule).
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from policies.base import Decision, EnvHandle, EnvHandleError, Obs, Policy, TaskSpec, build_llm, register_policy
from policies.llm import LLM, CallSettings, LLMCall, Message, Script
from wrappers.grammar import Command, InvalidActionError, parse_action

PROMPTS = Path(__file__).parent / "prompts"
PLANNING_COMMANDS = ("branch", "prune")
_MEMORY = frozenset({"note", "branch", "prune"})
_ID_COMMANDS = frozenset({"click", "type", "hover"})


@cache
def _specs() -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(field header -> description, command name -> (grammar, description)) from agentoccam_specs.txt."""
    fields: dict[str, str] = {}
    commands: dict[str, tuple[str, str]] = {}
    for line in (PROMPTS / "agentoccam_specs.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, head, text = line.split(" | ", 2)
        text = text.replace("\\n", "\n")
        if kind == "field":
            fields[head] = text
        else:
            commands[head.split(" ", 1)[0]] = (head, text)
    return fields, commands


@cache
def _texts() -> dict[str, str]:
    """The fixed prompt texts (instructions, injections) from agentoccam_prompts.txt."""
    parts = re.split(r"^=== (\w+) ===\n", (PROMPTS / "agentoccam_prompts.txt").read_text(), flags=re.M)
    return {parts[i]: parts[i + 1].rstrip("\n") for i in range(1, len(parts) - 1, 2)}


# -- output fields ---------------------------------------------------------------------------------

BASE_FIELDS = ("INTERACTION HISTORY SUMMARY", "OBSERVATION DESCRIPTION", "REASON", "ACTION", "OBSERVATION HIGHLIGHT")
JUDGE_FIELDS = ("INTERACTION HISTORY SUMMARY", "OBSERVATION DESCRIPTION", "ACTION CANDIDATES", "OBSERVATION HIGHLIGHT")
_ALL_HEADERS = sorted(set(BASE_FIELDS) | set(JUDGE_FIELDS) | {"PLAN PROGRESS ASSESSMENT", "ACTION ASSESSMENT",
                                                              "ACTION SELECTION"}, key=len, reverse=True)
_HEADER = re.compile(r"^[ \t#*>]*(" + "|".join(map(re.escape, _ALL_HEADERS)) + r")[ \t*]*:[ \t*]*(.*)$", re.I | re.M)


def parse_fields(text: str) -> dict[str, str]:
    """Card §5.6: each header's text runs to the next header line or the end; missing fields are ``""``.

    Tolerant of markdown decoration around headers (``**ACTION:**``, ``### REASON:``) and of case.
    """
    out: dict[str, str] = {}
    matches = list(_HEADER.finditer(text or ""))
    for m, nxt in zip(matches, matches[1:] + [None]):
        body = (m.group(2) + text[m.end():nxt.start() if nxt else len(text)]).strip()
        out.setdefault(m.group(1).upper(), body)
    return out


def clean_action(text: str) -> str:
    """The ACTION field without the code fences or backticks models like to add."""
    text = re.sub(r"^```[a-z]*\s*|\s*```$", "", text.strip())
    return text.strip().strip("`").strip()


def highlight_ids(text: str) -> list[str]:
    """Card §3.1 step 1: comma-separated tokens that are all digits, in the model's order."""
    return [tok for tok in (t.strip().strip("[]`'\"") for t in (text or "").split(",")) if tok.isdigit()]


_CANDIDATE = re.compile(r"^\s*-\s*(reason|action)\s*:\s*(.*)$", re.I)


def parse_candidates(text: str) -> list[tuple[str, str]]:
    """ACTION CANDIDATES items (§6.3): ``- reason: [...]`` then ``- action: [...]``; returns
    (reason, action) pairs; an item without an action is dropped. Continuation lines join the item."""
    items: list[dict[str, str]] = []
    key = None
    for line in (text or "").splitlines():
        m = _CANDIDATE.match(line)
        if m:
            key = m.group(1).lower()
            if key == "reason" or not items or "action" in items[-1]:
                items.append({})
            items[-1][key] = m.group(2)
        elif key is not None and line.strip():
            items[-1][key] += "\n" + line
    return [(_unbracket(i.get("reason", "")), _unbracket(i["action"])) for i in items if i.get("action", "").strip()]


def _unbracket(text: str) -> str:
    """Strip the one pair of brackets the candidate format puts around a text (``[click [3]]``)."""
    text = text.strip()
    return text[1:-1].strip() if text.startswith("[") and text.endswith("]") else text


# -- plan tree -------------------------------------------------------------------------------------


class PlanError(ValueError):
    """A planning command names no visible plan."""


@dataclass
class PlanNode:
    id: int
    text: str
    level: int
    url: str
    step: int
    parent: int | None = None
    children: list[int] = field(default_factory=list)
    visible: bool = True
    notes: list[tuple[int, str]] = field(default_factory=list)  # (step index, text)
    resume_reasons: list[str] = field(default_factory=list)
    steps_taken: list[int] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"[{self.id}] {self.text}"


class PlanTree:
    """Card §3.2: the objective as root plan; ``branch`` adds a subplan and makes it active, ``prune``
    returns to an earlier plan (whose steps then include what was tried beneath it)."""

    def __init__(self, objective: str, url: str):
        self.nodes: dict[int, PlanNode] = {0: PlanNode(0, f'Find the solution to "{objective}"', 0, url, 0)}
        self.active_id = 0

    @property
    def active(self) -> PlanNode:
        return self.nodes[self.active_id]

    def _visible(self, plan_id: str | int) -> PlanNode:
        node = self.nodes.get(int(plan_id))
        if node is None or not node.visible:
            raise PlanError(f"there is no plan [{plan_id}] in PREVIOUS PLANS")
        return node

    def branch(self, parent_id: str | int, intent: str, url: str, step: int) -> PlanNode:
        parent = self._visible(parent_id)
        node = PlanNode(max(self.nodes) + 1, intent.strip(), parent.level + 1, url, step, parent=parent.id)
        self.nodes[node.id] = node
        parent.children.append(node.id)
        self.active_id = node.id
        return node

    def prune(self, plan_id: str | int, reason: str) -> PlanNode:
        node = self._visible(plan_id)
        former = self._subtree(node.id)
        steps = {n.step for n in former} | {s for n in former for s in n.steps_taken}
        for other in former[1:]:
            other.visible = False
        if node.parent is not None:
            siblings = self.nodes[node.parent].children
            for later in siblings[siblings.index(node.id) + 1:]:
                for hidden in self._subtree(later):
                    hidden.visible = False
        node.notes.clear()
        node.steps_taken = sorted(steps)
        node.resume_reasons.append(reason.strip())
        self.active_id = node.id
        return node

    def note(self, text: str, step: int) -> None:
        self.active.notes.append((step, text.strip()))

    def record(self, step: int) -> None:
        """A non-planning step belongs to the active plan's history."""
        self.active.steps_taken.append(step)

    def _subtree(self, plan_id: int) -> list[PlanNode]:
        out, stack = [], [plan_id]
        while stack:
            node = self.nodes[stack.pop()]
            out.append(node)
            stack.extend(reversed(node.children))
        return out

    def render(self) -> str:
        """PREVIOUS PLANS: visible plans in pre-order, one tab per level, notes under their plan."""
        lines: list[str] = []
        for node in self._subtree(0):
            if not node.visible:
                continue
            indent = "\t" * node.level
            line = f"{indent}[{node.id}] {'(Active Plan) ' if node.id == self.active_id else ''}{node.text}"
            if node.resume_reasons:
                reasons = " ".join(f"{i}. {r}" for i, r in enumerate(node.resume_reasons))
                line += f" # resumed {len(node.resume_reasons)} time(s); reasons: {reasons}"
            lines.append(line)
            lines += [f"{indent}Note {i} (step {step}): {text}" for i, (step, text) in enumerate(node.notes)]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"active": self.active_id, "nodes": [asdict(n) for n in self.nodes.values()]}


# -- per-step records and history ------------------------------------------------------------------


@dataclass
class StepRecord:
    """Card §3.4: what one executed step leaves for the history (``page`` is the id-free page)."""

    url: str
    action: str
    reason: str
    description: str
    highlight: str
    plan: str
    plan_id: int
    page: str = field(default="", repr=False)

    def public(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "page"}


def replayed_observation(record: StepRecord, current_page: str, max_words: int) -> str:
    """Card §3.4: placeholder if the page is unchanged, else the pivotal highlight when short enough,
    else the model's own description of that page."""
    if record.page and record.page == current_page:
        return _texts()["same_page"]
    if record.highlight and len(record.highlight.split()) < max_words:
        return record.highlight
    return record.description


def render_history(records: list[StepRecord], current_page: str, *, depth: int | None, max_words: int,
                   show_plan: bool) -> str:
    """The ``<step_k_interaction>`` blocks; only the last ``depth`` steps (None: all) replay pages."""
    blocks = []
    verbose_from = 0 if depth is None else len(records) - depth
    for k, rec in enumerate(records):
        observation = (replayed_observation(rec, current_page, max_words) if k >= verbose_from
                       else rec.description)
        lines = [f"<step_{k}_interaction>", "OBSERVATION:", observation]
        if show_plan and rec.plan_id != 0:
            lines += ["ACTIVE PLAN:", rec.plan]
        lines += ["REASON FOR ACTION:", rec.reason, "ACTION:", rec.action, f"</step_{k}_interaction>"]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def user_message(sections: list[tuple[str, str]]) -> str:
    """Card §5.5: ``NAME:\\ncontent\\n`` per non-empty section, in the given order."""
    return "".join(f"{name}:\n{content}\n" for name, content in sections if content and content.strip())


# -- the policy ------------------------------------------------------------------------------------


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
        model: str | None = None,
        temperature: float = 0.5,
        top_p: float = 0.95,
        max_tokens: int | None = None,
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
        cache_dir: str | None = None,
        retries: int = 4,
        timeout: float = 120.0,
        script: Script | dict[str, list[Any]] | None = None,
        llm: LLM | None = None,
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
        self.llm = build_llm(roles, model=model, cache_dir=cache_dir, retries=retries, timeout=timeout,
                             script=script, llm=llm)
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
        """The commands offered now: the preset's, in the card's order; planning only when on;
        ``go_home`` only for multi-site tasks."""
        from wrappers.presets import PRESETS

        enabled = set(PRESETS[self.preset].actions) | {"stop"}
        multi = bool(self.task and self.task.multi_site)
        return tuple(c for c in _specs()[1] if c in enabled and (c != "go_home" or multi)
                     and (self.planning or c not in PLANNING_COMMANDS))

    def config(self) -> dict[str, Any]:
        return {"llm": self.llm.describe(), "max_steps": self.max_steps, "planning": self.planning,
                "history": self.history, "judge": self.judge, "history_depth": self.history_depth,
                "pivotal_max_nodes": self.pivotal_max_nodes, "highlight_max_words": self.highlight_max_words,
                "max_reasks": self.max_reasks, "judge_seed": self.judge_seed}

    def reset(self, task: TaskSpec) -> None:
        self.task = task
        self.tree = PlanTree(task.goal, task.start_url)
        self.records = []
        self.decisions = 0
        self.rng = random.Random(f"{self.judge_seed}:{task.task_id}")
        self._last_sent = None
        self._system = self.system_prompt()

    def state(self) -> dict[str, Any]:
        return {"plan_tree": self.tree.to_dict() if self.planning else None,
                "steps": [r.public() for r in self.records], "decisions": self.decisions}

    # -- prompts -----------------------------------------------------------------------------------

    def system_prompt(self) -> str:
        field_texts, specs = _specs()
        fields = "\n".join(f"{name}:\n{field_texts[name]}" for name in self.fields)
        commands = self.commands()

        def listing(names) -> str:
            return "\n".join(f"- {specs[c][0]}: {specs[c][1]}" for c in commands if c in names)

        navigation = listing([c for c in commands if c not in PLANNING_COMMANDS])
        rule = _texts()["rule_candidates" if self.judge else "rule_single"]
        if self.planning:
            return _texts()["system_planning"].format(fields=fields, planning=listing(PLANNING_COMMANDS),
                                                      navigation=navigation, rule=rule)
        return _texts()["system_flat"].format(fields=fields, navigation=navigation, rule=rule)

    def sections(self, obs: Obs, *, depth: int | None) -> list[tuple[str, str]]:
        """OBJECTIVE, PREVIOUS PLANS, INTERACTION HISTORY, CURRENT OBSERVATION (card §5.5)."""
        assert self.task is not None, "reset() first"
        history = ""
        if self.history:
            steps = self.tree.active.steps_taken if self.planning else range(len(self.records))
            history = render_history([self.records[i] for i in steps], _id_free(obs), depth=depth,
                                     max_words=self.highlight_max_words, show_plan=self.planning)
        return [("OBJECTIVE", self.task.goal),
                ("PREVIOUS PLANS", self.tree.render() if self.planning else ""),
                ("INTERACTION HISTORY", history),
                ("CURRENT OBSERVATION", str(obs.get("text") or ""))]

    def messages(self, obs: Obs, extra: str = "") -> list[Message]:
        system = self._system + extra
        if self.decisions == self.max_steps - 1:
            system += _texts()["final_step"].format(max_steps=self.max_steps)
        return [{"role": "system", "content": system},
                {"role": "user", "content": user_message(self.sections(obs, depth=self.history_depth))}]

    # -- acting ------------------------------------------------------------------------------------

    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        assert self.task is not None, "reset() first"
        step = len(self.records)
        if step == 0 and obs.get("url"):  # the root plan starts on the page actually shown (normalised URL)
            self.tree.nodes[0].url = str(obs["url"])
        error = obs.get("last_action_error")
        if error and self._last_sent and self.planning:
            self.tree.note(_texts()["failed_action_note"].format(action=self._last_sent, error=str(error)[:300]),
                           step)
        self._last_sent = None
        calls: list[LLMCall] = []
        choice, failure = self._choose(obs, calls)
        self.decisions += 1
        if choice is None:
            if self.planning:
                self.tree.note(_texts()["failed_action_note"].format(action="(no valid action)", error=failure),
                               step)
            return Decision(action=None, llm_calls=calls, error=f"no valid action after re-asks: {failure}",
                            parsed={"reasks": len(calls) - 1})
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
                offending = clean_action(fields.get("ACTION", "")) or "(empty)"
                extra = _texts()[exc.key].format(action=offending[:300], error=failure)
        return None, failure

    def validate(self, action: str, obs: Obs) -> list[Command]:
        """Parse the ACTION and check it against the page and the enabled commands; raise
        :class:`ActionRejected` with a message for the model."""
        from wrappers.action import page_ids

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
        """§6.3: keep the valid candidates, shuffle, and let the judge pick among distinct actions."""
        valid = []
        for reason, action in parse_candidates(fields.get("ACTION CANDIDATES", "")):
            try:
                valid.append((reason, action, self.validate(action, obs)))
            except ActionRejected:
                continue
        if not valid:
            fields["ACTION"] = fields.get("ACTION CANDIDATES", "")
            raise ActionRejected("ACTION CANDIDATES holds no valid `- action: [...]` item")
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
        """The judge's ACTION SELECTION as an index into ``choices``; 0 when unusable (§6.3)."""
        listed = "\n\n".join(f"|\taction [{i}]:\n{a}\n|\treason for action [{i}]:\n{r}"
                             for i, (a, r) in enumerate(choices))
        body = user_message([*self.sections(obs, depth=None), ("ACTION CHOICES", listed)])
        completion = self.llm.complete("judge", [
            {"role": "system", "content": _texts()["judge_system"]},
            {"role": "user", "content": f"{_texts()['judge_preamble']}\n{body}"}])
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
        action = "\n".join(str(c) for c in choice.commands)
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
                self.tree.note(_texts()["invalid_plan_note"].format(action=str(c), error=exc), step)
                errors.append(str(exc))
            except EnvHandleError as exc:
                errors.append(f"prune could not return to the plan's page: {exc}")
        if not planning_only:
            self.tree.record(step)
        self.records.append(StepRecord(url=url, action=action, reason=choice.reason.strip(),
                                       description=choice.fields.get("OBSERVATION DESCRIPTION", "").strip(),
                                       highlight=highlight, plan=self.tree.active.label,
                                       plan_id=self.tree.active_id, page=_id_free(obs)))
        if any(c.name not in _MEMORY for c in choice.commands):
            self._last_sent = action
        parsed = {**{k.lower().replace(" ", "_"): v for k, v in choice.fields.items()}, "action": action,
                  "highlight_ids": ids, "active_plan": self.tree.active.label, "reasks": sum(c.role == "actor" for c in calls) - 1}
        if choice.candidates:
            parsed["candidates"] = choice.candidates
        return Decision(action=action, thought=choice.reason, parsed=parsed, llm_calls=calls,
                        error="; ".join(errors) or None)


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
