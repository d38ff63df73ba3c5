"""The policy interface every method implements, and the registry that builds them by name.

A policy maps the current (wrapped) observation to one action per *decision*; the rollout loop
(``experiments.rollout``) owns the episode and the environment. Methods that need more than
observe-act get a controlled :class:`EnvHandle` for the duration of ``act``:

* several actions in one decision (CoAct's local plan): ``handle.step(action)`` for all but the last,
  return the last as ``Decision.action`` -- or keep a queue and return one per ``act`` call;
* backtracking to an earlier page (Devil's Advocate): ``handle.goto(url)``;
* restoring an earlier state (Plan-MCTS): ``token = handle.snapshot()`` ... ``handle.restore(token)``;
  a fresh attempt from the start of the episode is ``handle.restore(handle.initial)``.

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
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from llm import LLM, CallSettings, LLMCall, Script

Obs = dict[str, Any]
Info = dict[str, Any]


@dataclass(frozen=True)
class TaskSpec:
    """What a policy may know about the task (never its evaluation)."""

    env_id: str
    task_id: int | str
    goal: str
    sites: tuple[str, ...] = ()
    start_url: str = ""
    multi_site: bool = False
    homepage_url: str | None = None
    site_urls: dict[str, str] = field(default_factory=dict)  # site -> base URL (fills URL placeholders)

    @classmethod
    def from_reset(cls, env_id: str, obs: Obs, info: Info) -> TaskSpec:
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
    """A handle operation failed (dead browser, unknown snapshot, episode already over)."""


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
        """The episode ended during this decision (a handle step terminated or truncated it)."""
        ...

    def snapshot(self) -> str:
        """Save the current state; returns an opaque, JSON-serialisable token."""
        ...

    def restore(self, token: str) -> tuple[Obs, Info]:
        """Go back to a saved state; ``info["restore_method"]`` is ``"exact"`` or ``"replay"``."""
        ...

    def goto(self, url: str) -> tuple[Obs, Info]:
        """Navigate the active tab to ``url`` (the task's sites only); counts no step."""
        ...

    def step(self, action: str) -> StepResult:
        """Run one extra action in the preset's grammar; counts as an environment step.

        An answer (``stop [...]``) sent here ends the episode and runs the evaluator: search policies
        should return their final answer as ``Decision.action`` instead.
        """
        ...


class Policy(ABC):
    """Base class of every method. Subclasses set ``name`` and ``preset`` and implement the three methods.

    ``preset`` names the wrappers preset (``wrappers.presets.PRESETS``) whose observations and action
    grammar the policy speaks. ``max_steps`` is the method's decision budget (the rollout default).
    """

    name: str = "policy"
    preset: str = "webarena"
    max_steps: int = 30
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

    def llms(self) -> list[LLM]:
        """The LLM clients this policy calls (the rollout restarts their per-episode sample counters)."""
        return [v for v in vars(self).values() if isinstance(v, LLM)]


def build_llm(
    roles: dict[str, CallSettings],
    *,
    model: str | None = None,
    cache_dir: str | None = None,
    retries: int = 4,
    timeout: float = 120.0,
    script: Script | dict[str, list[Any]] | None = None,
    backoff_s: float = 2.0,
    llm: LLM | None = None,
) -> LLM:
    """The LLM a policy uses: ``llm`` as given, else one built from the common policy options."""
    if llm is not None:
        for role, settings in roles.items():
            llm.roles.setdefault(role, settings)
        return llm
    if isinstance(script, dict):
        script = Script(script)
    return LLM(model, roles, cache_dir=cache_dir, retries=retries, timeout=timeout, script=script, backoff_s=backoff_s)


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
    import policies

    for module in pkgutil.iter_modules(policies.__path__):
        if module.name not in {"base", "llm"} and not module.name.startswith("_"):
            importlib.import_module(f"policies.{module.name}")
    _DISCOVERED = True


def available_policies() -> list[str]:
    _discover()
    return sorted(_REGISTRY)


def policy_class(name: str) -> type[Policy]:
    _discover()
    if name not in _REGISTRY:
        raise KeyError(f"unknown policy {name!r}; available: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name][0]


def make_policy(name: str, **config: Any) -> Policy:
    """Build a registered policy; ``config`` overrides the variant's defaults."""
    cls = policy_class(name)
    policy = cls(**{**_REGISTRY[name][1], **config})
    policy.name = name  # the variant name, not just the class's default
    return policy
