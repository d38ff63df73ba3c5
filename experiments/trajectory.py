"""The trajectory record of one episode: a versioned JSON document, its schema and AgentLab's summary.

One file per episode (``trajectory.json``, screenshots as ``step_<i>.png`` and images the policy sent to
a model as ``images/<sha256>.png`` next to it) holds everything needed to audit a run: per step the
URL, the text observation the policy saw, the action, the parsed model output, every LLM call
(messages, responses, tokens, cost, latency), the environment-handle calls a policy made, errors and
timings; at the end the reward, the evaluator's details and totals.

Schema 2.0 adds the episode's budgets and what was used of them (``budget``, ``counters``,
``budget_exhausted``), look-ahead evaluations the policy saw (``lookahead``, ``oracle_assisted``), the
trials of a multi-trial method with their report-only verdicts (``trials``) and a search method's tree
(``tree``). Documents of schema 1.0 still load (:func:`upgrade`). Bump ``SCHEMA_VERSION`` whenever a
field changes meaning or disappears.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from webarena_gym.llm.budget import LLM_BUDGETS
from webarena_gym.llm.files import write_atomic
from webarena_gym.llm.redaction import REDACTED, redact, redacted_json

SCHEMA_VERSION = "2.0"
KNOWN_VERSIONS = ("1.0", "2.0")

# -- scrubbing: trajectories never carry credentials ------------------------------------------------

_SECRET_KEY = re.compile(r"(api[_-]?key|secret|token|password|passwd|authorization|auth|credential)", re.I)
# keys about model tokens, not credentials: counts, and the sampled tokens of llm.logprobs
_TOKEN_COUNT_KEYS = {
    "prompt_tokens",
    "completion_tokens",
    "max_tokens",
    "total_tokens",
    "tokens",
    "token_ids",
    "prompt_token_ids",
}


def scrub(value: Any) -> Any:
    """Copy of ``value`` with credential-like keys and credential values replaced by ``<redacted>``.

    Applied to recorded configuration (policy options, env kwargs): token *counts* are kept. (Every
    file is redacted again as it is written, see :mod:`llm.redaction`.)
    """
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            secret = isinstance(k, str) and _SECRET_KEY.search(k) and k not in _TOKEN_COUNT_KEYS
            out[k] = REDACTED if secret and v not in (None, "") and not isinstance(v, (int, float, bool)) else scrub(v)
        return out
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return redact(value)
    return value


def jsonable(value: Any) -> Any:
    """Best-effort conversion to JSON types (numpy scalars/arrays, sets, dataclasses, objects -> repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return jsonable(asdict(value))
    if hasattr(value, "tolist"):
        return jsonable(value.tolist())
    if hasattr(value, "item"):
        try:
            return value.item()
        except Exception:
            pass
    return repr(value)


# -- records -------------------------------------------------------------------------------------------


@dataclass
class HandleCall:
    """One environment-handle operation a policy made during a decision."""

    op: str  # snapshot | restore | goto | step | evaluate | end_trial
    arg: str | None = None
    url: str | None = None  # URL after the operation
    info: dict[str, Any] = field(default_factory=dict)  # restore_method, action_error, reward ...
    error: str | None = None
    elapsed_s: float = 0.0


@dataclass
class StepRecord:
    index: int
    url: str
    observation: str  # obs["text"]: what the policy read
    action: str | None
    thought: str = ""
    parsed: dict[str, Any] = field(default_factory=dict)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    handle_calls: list[dict[str, Any]] = field(default_factory=list)
    policy_state: dict[str, Any] = field(default_factory=dict)
    decision_error: str | None = None  # the policy's own error (unparseable output ...)
    action_error: str | None = None  # the environment's verdict on the action (last_action_error)
    browser_action: str | None = None  # what the wrappers actually ran
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    timings: dict[str, float] = field(default_factory=dict)  # act_s, env_s, llm_s
    screenshot: str | None = None  # file name next to the trajectory


NETWORK_FILE = "network.har"  # beside trajectory.json: the episode's requests, for WebArena-Verified's checks
_COMMAND_NAME = re.compile(r"[A-Za-z_]+")

COUNTERS = (
    "decisions",  # act calls: the executed path's decision budget
    "interactions",  # env actions the policy caused (Decision.action and handle.step), undone ones included
    "restores",
    "gotos",
    "replayed_actions",  # actions a replay restore re-ran (real sites); also counted in interactions
    "lookahead_calls",
    "intercepted_answers",  # answers a handle step held back
)


@dataclass
class Trajectory:
    env_id: str
    policy: dict[str, Any]  # name, preset, config (scrubbed)
    seed: int
    max_steps: int
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    task: dict[str, Any] = field(default_factory=dict)
    reset_info: dict[str, Any] = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    evaluation: dict[str, Any] | None = None
    err_msg: str | None = None
    stack_trace: str | None = None
    error_source: str | None = None  # policy | llm | env
    # llm: provider | configuration | script (the LLM error's kind); env: browser | sites | evaluator
    error_kind: str | None = None
    forced_stop: bool = False  # a budget ran out; the rollout ended the episode with Policy.forced_stop_answer
    # {"decisions": N, "interactions": M or None}, and when set "llm_calls", "llm_tokens", "llm_cost": limit or None
    budget: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    # the budget that ended the episode: "decisions" | "interactions" | an LLM budget (llm.LLM_BUDGETS)
    budget_exhausted: str | None = None
    oracle_assisted: bool = False  # the policy was allowed to ask the evaluator during the episode
    lookahead: list[dict[str, Any]] = field(default_factory=list)  # the look-ahead verdicts the policy saw
    trials: list[dict[str, Any]] = field(default_factory=list)  # a multi-trial method's trials
    tree: dict[str, Any] | None = None  # a search method's tree (policies.search_tree.SearchTree.to_dict)
    final_policy_state: dict[str, Any] = field(default_factory=dict)
    started_at: str = ""
    finished_at: str = ""
    timings: dict[str, float] = field(default_factory=dict)  # reset_s, total_s
    # WebArena-Verified's final-answer step (policies.final_answer.FinalAnswer.to_dict), None without a contract
    final_answer: dict[str, Any] | None = None
    schema_version: str = SCHEMA_VERSION
    images: dict[str, bytes] = field(default_factory=dict, repr=False)  # sha256 -> bytes, saved as files
    network: dict[str, Any] | None = field(default=None, repr=False)  # the HAR 1.2 trace, saved as network.har

    def __post_init__(self) -> None:
        if not self.budget:
            self.budget = {"decisions": self.max_steps, "interactions": None}

    # -- derived ---------------------------------------------------------------------------------

    @property
    def success(self) -> bool:
        return self.reward >= 1.0

    @property
    def infrastructure_error(self) -> bool:
        """The infrastructure, not the policy, ended or left unjudged this episode: the model provider
        or its configuration (the policy's calls or the judge's), the browser, the sites or the
        evaluator. Studies count such an episode as an error (not a failure) and retry it; a policy's
        own failure (its bug, a call it may not make, a scripted LLM that ran out) stays a failure."""
        return self.error_source in ("llm", "env") and self.error_kind != "script"

    def llm_calls(self) -> list[dict[str, Any]]:
        return [c for s in self.steps for c in s.llm_calls]

    def stats(self) -> dict[str, float]:
        """Totals and maxima over the episode (AgentLab reports them as ``stats.*``)."""
        calls = self.llm_calls()
        fresh = [c for c in calls if not c.get("cached")]
        costs = [c.get("cost") for c in fresh]
        known = [c for c in costs if c is not None]
        prompt = [c.get("prompt_tokens", 0) for c in calls]
        return {
            "cum_steps": float(len(self.steps)),
            "cum_llm_calls": float(len(calls)),
            "cum_cached_llm_calls": float(len(calls) - len(fresh)),
            "cum_llm_errors": float(sum(1 for c in calls if c.get("error"))),
            "cum_prompt_tokens": float(sum(prompt)),
            "cum_completion_tokens": float(sum(c.get("completion_tokens", 0) for c in calls)),
            "max_prompt_tokens": float(max(prompt, default=0)),
            "cum_cost": float(sum(known)),
            "cost_unknown_calls": float(len(costs) - len(known)),
            "cum_llm_latency_s": float(sum(c.get("latency_s", 0.0) for c in calls)),
            "cum_act_s": float(sum(s.timings.get("act_s", 0.0) for s in self.steps)),
            "cum_env_s": float(sum(s.timings.get("env_s", 0.0) for s in self.steps)),
            "cum_handle_calls": float(sum(len(s.handle_calls) for s in self.steps)),
            "cum_interactions": float(self.counters.get("interactions", 0)),
            "cum_restores": float(self.counters.get("restores", 0)),
            "cum_gotos": float(self.counters.get("gotos", 0)),
            "cum_replayed_actions": float(self.counters.get("replayed_actions", 0)),
            "cum_lookahead_calls": float(self.counters.get("lookahead_calls", 0)),
            "n_trials": float(len(self.trials)),
            "cum_decision_errors": float(sum(1 for s in self.steps if s.decision_error)),
            "cum_action_errors": float(sum(1 for s in self.steps if s.action_error)),
            "total_s": float(self.timings.get("total_s", 0.0)),
        }

    def role_stats(self) -> dict[str, dict[str, float]]:
        """Per call role (actor, planner, judge ...): calls, prompt and completion tokens, and known cost."""
        out: dict[str, dict[str, float]] = {}
        for call in self.llm_calls():
            row = out.setdefault(
                str(call.get("role")), {"calls": 0.0, "prompt_tokens": 0.0, "completion_tokens": 0.0, "cost": 0.0}
            )
            row["calls"] += 1
            row["prompt_tokens"] += call.get("prompt_tokens", 0)
            row["completion_tokens"] += call.get("completion_tokens", 0)
            if not call.get("cached") and call.get("cost") is not None:
                row["cost"] += call["cost"]
        return out

    def command_counts(self) -> dict[str, int]:
        """How often each command was decided on, over the steps' actions (a multi-command ACTION
        counts each of its commands): the action-frequency table AgentOccam's paper prints."""
        from webarena_gym.wrappers.actions.grammar import split_commands

        counts: dict[str, int] = {}
        for step in self.steps:
            for command in split_commands(step.action or ""):
                name = _COMMAND_NAME.match(command)
                if name:
                    counts[name.group()] = counts.get(name.group(), 0) + 1
        return counts

    def observation_tokens(self) -> list[int]:
        """GPT-2 tokens of what each step showed the model: the last user message of the step's first
        LLM call (objective, plans, history and page for AgentOccam; page, URL, objective and previous
        action for ReAct), or the observation text when the step called no LLM. AgentOccam's paper
        counts "observation tokens per step" with GPT-2's tokenizer and does not define them further;
        the per-step input without the fixed instruction and examples is our reading."""
        from webarena_gym.llm.tokens import gpt2_tokens

        counts = []
        for step in self.steps:
            text = step.observation
            if step.llm_calls:
                users = [m for m in step.llm_calls[0].get("messages") or () if m.get("role") == "user"]
                if users and isinstance(users[-1].get("content"), str):
                    text = users[-1]["content"]
            counts.append(gpt2_tokens(text))
        return counts

    def summary_info(self) -> dict[str, Any]:
        """AgentLab-compatible ``summary_info.json`` content (flat ``stats.*`` keys)."""
        summary: dict[str, Any] = {
            "n_steps": len(self.steps),
            "cum_reward": float(self.reward),
            "cum_raw_reward": float(self.reward),
            "err_msg": self.err_msg,
            "stack_trace": self.stack_trace,
            "terminated": bool(self.terminated),
            "truncated": bool(self.truncated),
        }
        summary.update({f"stats.{k}": v for k, v in self.stats().items()})
        return summary

    # -- (de)serialisation -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k not in ("images", "network")}
        data = jsonable(data)
        data["steps"] = [share_replies(step) for step in data["steps"]]
        data["summary"] = self.summary_info()
        return data

    def save(self, directory: str | Path) -> Path:
        """Write ``images/``, ``network.har`` (a recorded trace), ``summary_info.json`` and ``trajectory.json``
        into ``directory``; returns the last.

        Each file is written atomically and ``trajectory.json`` last, so its presence means the whole
        record is on disk; a failed write raises ``OSError``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        if self.images:
            (directory / "images").mkdir(exist_ok=True)
            for digest, data in self.images.items():
                write_atomic(directory / "images" / f"{digest}.png", data)
        if self.network is not None:
            write_atomic(directory / NETWORK_FILE, redacted_json(self.network, indent=1))
        write_atomic(directory / "summary_info.json", redacted_json(self.summary_info(), indent=1))
        path = directory / "trajectory.json"
        write_atomic(path, redacted_json(self.to_dict(), indent=1))
        return path

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        data = upgrade(data)
        validate(data)
        data = {k: v for k, v in data.items() if k != "summary"}
        data["steps"] = [expand_replies(s) for s in data.get("steps", [])]
        data["steps"] = [StepRecord(**s) for s in data.get("steps", [])]
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path) -> Trajectory:
        path = Path(path)
        if path.is_dir():
            path = path / "trajectory.json"
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))


# -- each model reply stored once -------------------------------------------------------------------

# Fields of a step that repeat (part of) a model reply; shorter copies cost less than a pointer.
_REPLY_FIELDS = ("thought", "parsed", "policy_state")
_SHARED_MIN_CHARS = 200


def share_replies(step: dict[str, Any]) -> dict[str, Any]:
    """A written step in which every copy of (a part of) a model reply in its thought, parsed fields or
    policy state is replaced by ``""`` plus a pointer in ``reply_refs`` into the call holding the reply:
    a runaway reply is stored once, not once per field that repeats it."""
    replies = [
        (i, j, text)
        for i, call in enumerate(step.get("llm_calls") or ())
        for j, text in enumerate(call.get("responses") or ())
        if len(text) >= _SHARED_MIN_CHARS
    ]
    if not replies:
        return step
    refs: list[dict[str, Any]] = []

    def share(value: Any, path: list[str | int]) -> Any:
        if isinstance(value, dict):
            return {k: share(v, [*path, k]) for k, v in value.items()}
        if isinstance(value, list):
            return [share(v, [*path, n]) for n, v in enumerate(value)]
        if isinstance(value, str) and len(value) >= _SHARED_MIN_CHARS:
            for i, j, text in replies:
                start = text.find(value)
                if start >= 0:
                    refs.append({"path": path, "call": i, "response": j, "start": start, "end": start + len(value)})
                    return ""
        return value

    shared = {k: share(v, [k]) if k in _REPLY_FIELDS else v for k, v in step.items()}
    if refs:
        shared["reply_refs"] = refs
    return shared


def expand_replies(step: dict[str, Any]) -> dict[str, Any]:
    """The step as recorded: each ``reply_refs`` pointer replaced by the reply text it points to (the
    inverse of :func:`share_replies`; readers of ``trajectory.json`` call it before using a step)."""
    refs = step.get("reply_refs")
    if not refs:
        return step
    step = json.loads(json.dumps({k: v for k, v in step.items() if k != "reply_refs"}))
    for ref in refs:
        try:
            text = step["llm_calls"][ref["call"]]["responses"][ref["response"]][ref["start"] : ref["end"]]
            *parents, last = ref["path"]
            holder = step
            for key in parents:
                holder = holder[key]
            holder[last] = text
        except (KeyError, IndexError, TypeError, ValueError):  # a damaged pointer: that field stays empty
            continue
    return step


# -- schema --------------------------------------------------------------------------------------------

_STR_OR_NULL = {"type": ["string", "null"]}
_OBJ = {"type": "object"}
_NUM = {"type": "number"}

LLM_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "role",
        "model",
        "messages",
        "responses",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "latency_s",
        "cached",
        "error",
    ],
    "properties": {
        "role": {"type": "string"},
        "model": {"type": "string"},
        "messages": {"type": "array", "items": {"type": "object", "required": ["role", "content"]}},
        "responses": {"type": "array", "items": {"type": "string"}},
        "prompt_tokens": {"type": "integer", "minimum": 0},
        "completion_tokens": {"type": "integer", "minimum": 0},
        "cost": {"type": ["number", "null"]},
        "latency_s": _NUM,
        "cached": {"type": "boolean"},
        "error": _STR_OR_NULL,
    },
}

STEP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "index",
        "url",
        "observation",
        "action",
        "thought",
        "parsed",
        "llm_calls",
        "handle_calls",
        "decision_error",
        "action_error",
        "reward",
        "terminated",
        "truncated",
        "timings",
        "screenshot",
    ],
    "properties": {
        "index": {"type": "integer", "minimum": 0},
        "url": {"type": "string"},
        "observation": {"type": "string"},
        "action": _STR_OR_NULL,
        "thought": {"type": "string"},
        "parsed": _OBJ,
        "llm_calls": {"type": "array", "items": LLM_CALL_SCHEMA},
        "handle_calls": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["op", "error"],
                "properties": {
                    "op": {"enum": ["snapshot", "restore", "goto", "step", "evaluate", "end_trial"]},
                    "error": _STR_OR_NULL,
                },
            },
        },
        "policy_state": _OBJ,
        "decision_error": _STR_OR_NULL,
        "action_error": _STR_OR_NULL,
        "browser_action": _STR_OR_NULL,
        "reward": _NUM,
        "terminated": {"type": "boolean"},
        "truncated": {"type": "boolean"},
        "timings": {"type": "object", "additionalProperties": _NUM},
        "screenshot": _STR_OR_NULL,
        "reply_refs": {
            "type": "array",
            "items": {"type": "object", "required": ["path", "call", "response", "start", "end"]},
        },
    },
}

TRAJECTORY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "webarena-gym trajectory",
    "type": "object",
    "required": [
        "schema_version",
        "env_id",
        "policy",
        "seed",
        "max_steps",
        "task",
        "steps",
        "reward",
        "terminated",
        "truncated",
        "evaluation",
        "err_msg",
        "stack_trace",
        "budget",
        "counters",
        "trials",
        "tree",
        "summary",
    ],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "env_id": {"type": "string"},
        "policy": {"type": "object", "required": ["name", "preset"]},
        "seed": {"type": "integer"},
        "max_steps": {"type": "integer", "minimum": 0},
        "env_kwargs": _OBJ,
        "task": _OBJ,
        "reset_info": _OBJ,
        "steps": {"type": "array", "items": STEP_SCHEMA},
        "reward": _NUM,
        "terminated": {"type": "boolean"},
        "truncated": {"type": "boolean"},
        "evaluation": {"type": ["object", "null"]},
        "err_msg": _STR_OR_NULL,
        "stack_trace": _STR_OR_NULL,
        "error_source": {"enum": ["policy", "llm", "env", None]},
        "error_kind": {"enum": ["provider", "configuration", "script", "browser", "sites", "evaluator", None]},
        "forced_stop": {"type": "boolean"},
        "budget": {
            "type": "object",
            "required": ["decisions", "interactions"],
            "properties": {"decisions": {"type": "integer"}, "interactions": {"type": ["integer", "null"]}},
        },
        "counters": {
            "type": "object",
            "required": list(COUNTERS),
            "additionalProperties": {"type": "integer", "minimum": 0},
        },
        "budget_exhausted": {"enum": ["decisions", "interactions", *LLM_BUDGETS, None]},
        "oracle_assisted": {"type": "boolean"},
        "lookahead": {"type": "array", "items": _OBJ},
        "trials": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["index", "start_step", "end_step", "answer", "outcome", "score"],
                "properties": {"score": {"type": ["number", "null"]}},
            },
        },
        "tree": {
            "type": ["object", "null"],
            "properties": {"nodes": {"type": "array", "items": _OBJ}, "final_path": {"type": "array"}},
        },
        "final_policy_state": _OBJ,
        "started_at": {"type": "string"},
        "finished_at": {"type": "string"},
        "timings": _OBJ,
        "summary": {
            "type": "object",
            "required": ["n_steps", "cum_reward", "err_msg", "stack_trace", "terminated", "truncated"],
        },
    },
}


class TrajectoryValidationError(ValueError):
    pass


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A document of any known schema version, in the current version's shape.

    1.0 had no budgets, counters, trials or tree: the decision budget was ``max_steps``, the interaction
    count is the executed steps with a browser action plus the handle's steps, and the rest is empty.
    """
    version = data.get("schema_version")
    if version not in KNOWN_VERSIONS:
        raise TrajectoryValidationError(f"unknown trajectory schema version {version!r} (known: {KNOWN_VERSIONS})")
    if version == SCHEMA_VERSION:
        return data
    steps = data.get("steps") or []
    calls = [c for s in steps for c in s.get("handle_calls") or []]
    counters = dict.fromkeys(COUNTERS, 0)
    counters["decisions"] = len(steps)
    counters["interactions"] = sum(1 for s in steps if s.get("browser_action")) + sum(
        1 for c in calls if c.get("op") == "step" and not c.get("error")
    )
    counters["restores"] = sum(1 for c in calls if c.get("op") == "restore" and not c.get("error"))
    counters["gotos"] = sum(1 for c in calls if c.get("op") == "goto" and not c.get("error"))
    return {
        **data,
        "schema_version": SCHEMA_VERSION,
        "budget": {"decisions": data.get("max_steps", 0), "interactions": None},
        "counters": counters,
        "budget_exhausted": None,
        "oracle_assisted": False,
        "lookahead": [],
        "trials": [],
        "tree": None,
    }


def validate(data: dict[str, Any]) -> None:
    """Raise :class:`TrajectoryValidationError` unless ``data`` matches :data:`TRAJECTORY_SCHEMA`."""
    import jsonschema

    try:
        jsonschema.validate(data, TRAJECTORY_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "<root>"
        raise TrajectoryValidationError(f"trajectory invalid at {where}: {exc.message}") from None
