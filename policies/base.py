"""The policy interface every method implements, and the registry that builds them by name.

A policy maps the current (wrapped) observation to one action per *decision*; the rollout loop
(``experiments.rollout``) owns the episode and the environment. Methods that need more than
observe-act get a controlled :class:`EnvHandle` for the duration of ``act``:

* several actions in one decision: ``handle.step(action)`` for all but the last, return the last as
  ``Decision.action`` -- or keep a queue and return one per ``act`` call (CoAct's local plan);
* backtracking to an earlier page (Devil's Advocate): ``handle.goto(url)``;
* restoring an earlier state (Plan-MCTS): ``token = handle.snapshot()`` ... ``handle.restore(token)``;
  a fresh attempt from the start of the episode is ``handle.restore(handle.initial)``;
* scoring "what if the episode ended now with this answer" (``handle.evaluate``), only for policies
  whose configuration allows it (:meth:`Policy.allows_lookahead`); every use is recorded and reported;
* marking the end of a trial of a multi-trial method (``handle.end_trial``), which the loop scores for
  the report only: the policy never sees that verdict.

Budgets (:class:`Budget`, in :attr:`TaskSpec.budget` and ``handle.budget``): the *decision* budget
of the executed path (WebArena's 30 steps: the number of ``act`` calls) and the *interaction* budget
(every env action the policy causes, explored and undone ones included, and the actions a restore by
replay runs again; restores and gotos are counted apart). A handle call never truncates the episode:
when a budget is spent it raises :class:`BudgetExhausted`, which the policy catches and answers from. The
*LLM* budgets (calls, tokens, cost: the ``max_llm_*`` options of :func:`build_llm`) are enforced by the
LLM layer for every role: a spent one raises :class:`llm.LLMBudgetExhausted` out of the policy's next
call, and the loop ends the episode as at its other budgets. When the loop itself stops the episode at a
spent budget, the answer scored is :meth:`Policy.forced_stop_answer`. An answer sent through
``handle.step`` never ends the episode either: the handle holds it back and returns it in
``info["answer"]``; only ``Decision.action`` delivers the final answer.

Every handle call is recorded in the trajectory by the rollout loop; policies never hold the browser.
A decision may carry no action (``Decision.action=None``): nothing is sent to the browser, the step is
recorded with its error, and the policy is asked again on the same page (WebArena's "none" action).

To add a method: write ``policies/<name>.py`` with a :class:`Policy` subclass decorated with
:func:`register_policy`, plus its prompts in ``policies/prompts/``. The registry imports every module
of this package on first lookup, so nothing else needs editing.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from webarena_gym.llm import LLM, CallSettings, LLMCall, LLMLimits, Script
from webarena_gym.llm.client import DEFAULT_MAX_REPLY_CHARS

Obs = dict[str, Any]
Info = dict[str, Any]
DEFAULT_MAX_STEPS = 30  # WebArena's decision budget


@dataclass(frozen=True)
class Budget:
    """The budgets of one episode: ``decisions`` on the executed path, ``interactions`` (None: no cap)
    over every env action the policy causes, and the LLM limits its calls run under."""

    decisions: int = DEFAULT_MAX_STEPS
    interactions: int | None = None
    llm: LLMLimits = field(default_factory=LLMLimits)

    def limit(self, which: str) -> tuple[int | float | None, str]:
        """The limit of budget ``which`` and its unit, for a method's stop message."""
        if which in ("decisions", "interactions"):
            return getattr(self, which), _BUDGET_UNITS[which]
        return getattr(self.llm, which), _BUDGET_UNITS[which]


_BUDGET_UNITS = {
    "decisions": "steps",
    "interactions": "browser actions",
    "llm_calls": "LLM calls",
    "llm_tokens": "LLM tokens",
    "llm_cost": "USD of LLM calls",
}


@dataclass(frozen=True)
class TaskSpec:
    """What a policy may know about the task (never its evaluation).

    ``commands`` are the commands the preset's action wrapper enables for this very task (``go_home``
    only on multi-site tasks, for instance), in the wrapper's order; ``budget`` is the episode's.
    """

    env_id: str
    task_id: int | str
    goal: str
    sites: tuple[str, ...] = ()
    start_url: str = ""
    multi_site: bool = False
    homepage_url: str | None = None
    site_urls: dict[str, str] = field(default_factory=dict)  # site -> base URL (fills URL placeholders)
    commands: tuple[str, ...] = ()
    budget: Budget = field(default_factory=Budget)
    # WebArena-Verified scoring: the final answer's form (``{"results_schema": ...}``), also stated in the goal
    response_contract: dict[str, Any] | None = None

    @classmethod
    def from_reset(cls, env_id: str, obs: Obs, info: Info, budget: Budget | None = None) -> TaskSpec:
        """Build from ``env.reset()``'s output (info keys are fixed in docs/design.md)."""
        sites = tuple(info.get("sites") or ())
        urls = info.get("site_urls") or {}
        return cls(
            env_id=env_id,
            task_id=info.get("task_id", env_id),
            goal=str(info.get("intent") or obs.get("goal") or ""),
            sites=sites,
            start_url=str(info.get("start_url") or obs.get("url") or ""),
            multi_site=len(sites) > 1,
            homepage_url=urls.get("homepage"),
            site_urls=dict(urls),
            commands=tuple(info.get("commands") or ()),
            budget=budget or Budget(),
            response_contract=info.get("response_contract"),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Decision:
    """One decision: the action to run (``None``: none) and what led to it."""

    action: str | None
    thought: str = ""
    parsed: dict[str, Any] = field(default_factory=dict)
    llm_calls: list[LLMCall] = field(default_factory=list)
    error: str | None = None


class EnvHandleError(RuntimeError):
    """A handle operation failed (dead browser, unknown snapshot, episode already over, not allowed)."""


class HandleUsageError(EnvHandleError):
    """The policy used the handle in a way it may not (an unknown snapshot, a call after the episode
    ended, a look-ahead its configuration does not allow): the policy's failure, not the environment's."""


class BudgetExhausted(HandleUsageError):
    """A budget of the episode is spent; ``budget`` names it (``"interactions"`` or ``"decisions"``).

    Nothing was sent to the browser. The policy should answer now (``Decision.action``).
    """

    def __init__(self, budget: str, message: str) -> None:
        super().__init__(message)
        self.budget = budget


@dataclass(frozen=True)
class BudgetUse:
    """How much of the episode's budgets is used, as ``handle.budget`` reports it."""

    decisions: int
    decision_limit: int
    interactions: int
    interaction_limit: int | None
    restores: int
    gotos: int

    @property
    def interactions_left(self) -> int | None:
        return None if self.interaction_limit is None else max(0, self.interaction_limit - self.interactions)


StepResult = tuple[Obs, float, bool, bool, Info]


@runtime_checkable
class EnvHandle(Protocol):
    """Controlled access to the environment inside one ``act`` call (implemented by the rollout loop).

    Observations returned here went through the same wrappers as the ones ``act`` receives.
    """

    @property
    def initial(self) -> str:
        """Snapshot token of the state right after ``reset`` (restore it to start over)."""
        ...

    @property
    def done(self) -> bool:
        """The episode ended during this decision (the browser died under a handle call)."""
        ...

    @property
    def budget(self) -> BudgetUse:
        """The episode's budgets and how much of them is used."""
        ...

    def snapshot(self) -> str:
        """Save the current state; returns an opaque, JSON-serialisable token."""
        ...

    def restore(self, token: str) -> tuple[Obs, Info]:
        """Go back to a saved state and return its observation (decide from it: it is the page as
        restored, which ``info["restore_exact"]`` says matches the snapshot's, and if not
        ``info["restore_differences"]`` what differs); ``info["restore_method"]`` is ``"exact"``,
        ``"replay"`` or ``"reset"``. A replay's actions (``info["replayed_actions"]``) count as
        interactions."""
        ...

    def goto(self, url: str) -> tuple[Obs, Info]:
        """Navigate the active tab to ``url`` (the task's sites only); counts no step."""
        ...

    def step(self, action: str) -> StepResult:
        """Run one extra action in the preset's grammar; counts as an interaction, not a decision.

        Raises :class:`BudgetExhausted` when the interaction budget is spent. An answer (``stop [...]``)
        is not sent: the observation stays, and ``info["answer"]`` holds it.
        """
        ...

    def evaluate(self, answer: str) -> dict[str, Any]:
        """Look-ahead: the evaluator's verdict (``score``, ``details``, ``method``) if the episode ended
        now with ``answer``; the episode goes on. Only when :meth:`Policy.allows_lookahead`."""
        ...

    def end_trial(self, answer: str | None = None, outcome: str = "", **notes: Any) -> None:
        """Mark the end of a trial (multi-trial methods); the loop scores it for the report only."""
        ...


class Policy(ABC):
    """Base class of every method. Subclasses set ``name`` and ``preset`` and implement ``reset``/``act``.

    ``preset`` names the wrappers preset (``wrappers.presets.PRESETS``) whose observations and action
    grammar the policy speaks. ``max_steps`` is the method's decision budget and ``max_interactions``
    its interaction budget (the rollout's defaults; a study may override both, and the policy then
    reads the episode's from :attr:`TaskSpec.budget`).
    """

    name: str = "policy"
    preset: str = "webarena"
    max_steps: int = DEFAULT_MAX_STEPS
    max_interactions: int | None = None
    uses_llm: ClassVar[bool] = True

    @abstractmethod
    def reset(self, task: TaskSpec) -> None:
        """Forget the previous episode and start on ``task``."""

    @abstractmethod
    def act(self, obs: Obs, handle: EnvHandle) -> Decision:
        """Choose the next action for ``obs``. May raise; the rollout loop records it and ends the episode."""

    def state(self) -> dict[str, Any]:
        """JSON-serialisable reasoning state (plans, notes, history) recorded after every decision."""
        return {}

    def config(self) -> dict[str, Any]:
        """JSON-serialisable configuration for the trajectory header (no credentials)."""
        return {}

    def forced_stop_answer(self, budget: str) -> str:
        """The answer the episode ends with when the rollout loop stops it because ``budget``
        (``"decisions"``, ``"interactions"`` or an LLM budget of :data:`llm.LLM_BUDGETS`) is spent; the
        evaluator scores it like any answer.
        Methods whose runner answered something there (WebArena's early-stop message, AgentOccam's
        failure message) say it here; the default is no answer."""
        return ""

    def allows_lookahead(self) -> bool:
        """Whether this configuration may ask the evaluator during an episode (an oracle-assisted run)."""
        return False

    def search_tree(self) -> Any:
        """The search tree built this episode (a :class:`policies.search_tree.SearchTree`), if any."""
        return None

    def llms(self) -> list[LLM]:
        """The LLM clients this policy calls (the rollout restarts their per-episode sample counters)."""
        return [v for v in vars(self).values() if isinstance(v, LLM)]


# -- re-asks -------------------------------------------------------------------------------------------

_SHOWN_ID = re.compile(r"\[(\d+)\]")


def example_action(obs: Obs, commands: Sequence[str]) -> str:
    """A concrete command that would run on this page, for a re-ask to show: small models copy a
    literal placeholder (``<action>``, ``[id]``) back word for word, a real example they adapt.

    A click on the first element id the observation shows, else a scroll, else an answer.
    """
    from webarena_gym.wrappers.actions.agentoccam import page_ids

    if "click" in commands:
        ids = page_ids(obs)
        first = next((m.group(1) for m in _SHOWN_ID.finditer(str(obs.get("text") or "")) if m.group(1) in ids), None)
        if first is not None:
            return f"click [{first}]"
    if "scroll" in commands:
        return "scroll [down]"
    return "stop [N/A]"


# -- LLM options shared by every method ----------------------------------------------------------------

COMMON_LLM_OPTIONS = (
    "model",
    "api_base",
    "cache_dir",
    "retries",
    "timeout",
    "script",
    "backoff_s",
    "max_reply_chars",
    "llm",
    "max_llm_calls",
    "max_llm_tokens",
    "max_llm_cost",
    "text_fallback",
    "request_options",
)
ROLE_SETTINGS = ("model", "temperature", "top_p", "max_tokens", "api_base")


def build_llm(
    roles: dict[str, CallSettings],
    *,
    model: str | None = None,
    api_base: str | None = None,
    cache_dir: str | None = None,
    retries: int = 4,
    timeout: float = 120.0,
    script: Script | dict[str, list[Any]] | None = None,
    backoff_s: float = 2.0,
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS,
    llm: LLM | None = None,
    max_llm_calls: int | None = None,
    max_llm_tokens: int | None = None,
    max_llm_cost: float | None = None,
    text_fallback: bool = True,
    request_options: dict[str, Any] | None = None,
    **role_options: Any,
) -> LLM:
    """The LLM a policy uses: ``llm`` as given, else one built from the common options.

    ``role_options`` set one role's setting: ``<role>_<setting>`` with a setting of
    :data:`ROLE_SETTINGS`, e.g. ``planner_model="openai/my-planner"`` or ``executor_max_tokens=512``
    (what ``--policy plan_and_act:planner_model=...`` passes). Any other keyword is an error that
    names the accepted ones, so a typo in a study's options never passes silently.

    ``max_llm_calls`` / ``max_llm_tokens`` (prompt + completion) / ``max_llm_cost`` (USD) are the
    episode's LLM budget over every role (``max_llm_tokens``, not ``max_tokens``: that name is the
    bound of one reply, ``<role>_max_tokens``). ``text_fallback``: see :class:`llm.LLM`.
    ``request_options`` go with every role's requests (``{"logprobs": True}`` for an RL trainer's
    rollouts).
    """
    limits = LLMLimits(
        llm_calls=None if max_llm_calls is None else int(max_llm_calls),
        llm_tokens=None if max_llm_tokens is None else int(max_llm_tokens),
        llm_cost=None if max_llm_cost is None else float(max_llm_cost),
    )
    roles = {role: settings.merged(**(request_options or {})) for role, settings in roles.items()}
    for key, value in role_options.items():
        role, setting = _split_role_option(key, roles)
        roles[role] = roles[role].merged(**{setting: value})  # api_base goes to the role's provider options
    if llm is not None:
        for role, settings in roles.items():
            llm.roles.setdefault(role, settings)
        if limits.any:
            llm.limits = limits
        return llm
    if isinstance(script, dict):
        script = Script(script)
    return LLM(
        model,
        roles,
        cache_dir=cache_dir,
        retries=retries,
        timeout=timeout,
        script=script,
        backoff_s=backoff_s,
        api_base=api_base,
        limits=limits,
        text_fallback=bool(text_fallback),
        max_reply_chars=max_reply_chars,
    )


def _split_role_option(key: str, roles: dict[str, CallSettings]) -> tuple[str, str]:
    for role in sorted(roles, key=len, reverse=True):
        prefix = f"{role}_"
        if key.startswith(prefix) and key[len(prefix) :] in ROLE_SETTINGS:
            return role, key[len(prefix) :]
    accepted = [f"{r}_{s}" for r in roles for s in ROLE_SETTINGS]
    raise TypeError(
        f"unknown option {key!r}; LLM options are {', '.join(COMMON_LLM_OPTIONS)} and per role {', '.join(accepted)}"
    )


# -- registry ----------------------------------------------------------------------------------------

_REGISTRY: dict[str, tuple[type[Policy], dict[str, Any]]] = {}
_DISCOVERED = False
_NAMED: set[type] = set()  # classes whose ``name`` the registry set (not their own class body)


def register_policy(name: str, **defaults: Any):
    """Class decorator: make ``cls`` available as ``make_policy(name)``; stack it to register variants
    of one class with different default options (e.g. ``agentoccam`` and ``agentoccam_judge``)."""

    def decorate(cls: type[Policy]) -> type[Policy]:
        if name in _REGISTRY and _REGISTRY[name][0] is not cls:
            raise ValueError(f"policy name {name!r} is already registered by {_REGISTRY[name][0].__name__}")
        _REGISTRY[name] = (cls, defaults)
        if "name" not in cls.__dict__ or cls in _NAMED:  # the outermost registration names the class
            cls.name = name
            _NAMED.add(cls)
        return cls

    return decorate


def _discover() -> None:
    """Import every module of the ``policies`` package once, so their decorators run."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    from webarena_gym import policies

    for module in pkgutil.iter_modules(policies.__path__):
        if module.name != "base" and not module.name.startswith("_"):
            importlib.import_module(f"{policies.__name__}.{module.name}")
    _DISCOVERED = True


def available_policies() -> list[str]:
    _discover()
    return sorted(_REGISTRY)


def policy_class(name: str) -> type[Policy]:
    _discover()
    if name not in _REGISTRY:
        raise KeyError(f"unknown policy {name!r}; available: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name][0]


def registered_defaults(name: str) -> dict[str, Any]:
    """The options a registered variant presets (e.g. ``judge=True`` for ``agentoccam_judge``)."""
    policy_class(name)
    return dict(_REGISTRY[name][1])


def make_policy(name: str, **config: Any) -> Policy:
    """Build a registered policy; ``config`` overrides the variant's defaults."""
    cls = policy_class(name)
    policy = cls(**{**_REGISTRY[name][1], **config})
    policy.name = name  # the variant name, not just the class's default
    return policy
