"""Gymnasium ids for every task: ``webarena/<id>`` (real sites), ``webarena-lite/<id>`` (WebArena-Lite on the
real sites), ``webarena-verified/<id>`` (WebArena-Verified on the real sites, from the installed package's
dataset, see :mod:`envs.verified`), ``webarena/local.<id>`` (local suite) and ``miniwob/<task>`` (MiniWoB++,
e.g. ``miniwob/click-test``).

Registration reads no task file and imports nothing heavy: ids are known up front (the real suites) or
read from small JSON files (the local suite's tasks, MiniWoB++'s task names), and each entry point loads
its task on demand.

WebArena-Lite (``envs/data/test_webarena_lite.raw.json``) is VisualAgentBench's human-verified subset of
165 WebArena tasks with corrected evaluation configurations. Its ids are the subset's own numbering
(0-164, the ``task_id`` of its file, which VisualAgentBench's runs and Plan-and-Act's use); each config
names the WebArena task it corrects in ``old_task_id`` (BrowserGym's ``webarenalite.<n>`` ids use that
one). The configs are read as shipped and scored by the same evaluator as every other task.
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym

NAMESPACE = "webarena"
LITE_NAMESPACE = "webarena-lite"
VERIFIED_NAMESPACE = "webarena-verified"
LOCAL_PREFIX = f"{NAMESPACE}/local."  # ids of the embedded suite
MINIWOB_NAMESPACE = "miniwob"
REAL_TASKS_FILE = Path(__file__).resolve().parent / "data" / "test.raw.json"
LITE_TASKS_FILE = Path(__file__).resolve().parent / "data" / "test_webarena_lite.raw.json"
N_REAL_TASKS = 812
N_LITE_TASKS = 165
STEP_LIMIT_KWARG = "episode_step_limit"  # gym.make keeps max_episode_steps for its TimeLimit wrapper

logger = logging.getLogger(__name__)
Suite = Literal["real", "lite", "verified", "local", "miniwob"]


def is_local(env_id: str) -> bool:
    """Whether ``env_id`` is a task of the embedded suite, whose reset restores pristine site data (the
    real WebArena sites keep what an episode changed until their containers are recreated)."""
    return env_id.startswith(LOCAL_PREFIX)


@functools.lru_cache(maxsize=1)
def _real_tasks() -> tuple[dict, ...]:
    tasks = json.loads(REAL_TASKS_FILE.read_text())
    return tuple(sorted(tasks, key=lambda task: task["task_id"]))


def real_task_config(task_id: int) -> dict:
    """A fresh copy of WebArena task ``task_id`` (placeholders not yet replaced)."""
    return json.loads(json.dumps(_real_tasks()[task_id]))


@functools.lru_cache(maxsize=1)
def _lite_tasks() -> tuple[dict, ...]:
    tasks = json.loads(LITE_TASKS_FILE.read_text())
    return tuple(sorted(tasks, key=lambda task: task["task_id"]))


def lite_task_config(task_id: int) -> dict:
    """A fresh copy of WebArena-Lite task ``task_id`` (0-164; placeholders not yet replaced)."""
    return json.loads(json.dumps(_lite_tasks()[task_id]))


def _local_tasks() -> list[dict]:
    """The local suite's tasks, or none while that suite is not installed."""
    try:
        from .local import registry
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(__package__ + ".local"):
            return []
        raise
    return registry.load_tasks()


def task_config(env_id: str) -> dict:
    """The raw config (placeholders not replaced) of a WebArena, WebArena-Lite, WebArena-Verified or local
    env id, as its env reads it; ValueError for any other id."""
    prefix, _, number = env_id.rpartition("/")
    if env_id.startswith(LOCAL_PREFIX):
        return local_task_config(int(env_id[len(LOCAL_PREFIX) :]))
    if prefix == LITE_NAMESPACE and number.isdigit():
        return lite_task_config(int(number))
    if prefix == VERIFIED_NAMESPACE and number.isdigit():
        from .verified import env_config

        return env_config(int(number), real_task_config(int(number)))
    if prefix == NAMESPACE and number.isdigit():
        return real_task_config(int(number))
    raise ValueError(f"{env_id} is not a WebArena-style task (local, webarena, webarena-lite or webarena-verified)")


def local_task_config(task_id: int, verified_required: bool = False) -> dict:
    """A local task's raw config, with its WebArena-Verified form under ``"verified"`` when it has one and
    the package is installed (:mod:`envs.local.verified`); ``verified_required`` raises instead of leaving
    it out (the task is to be scored by the package)."""
    from .evaluation.verified import package_version
    from .local.registry import get_task
    from .local.verified import MissingVerifiedForm, verified_form

    config = get_task(task_id)
    if package_version() is None and not verified_required:
        return config  # (required: the package's dataset reader says what to install)
    try:
        form = verified_form(config)
    except MissingVerifiedForm:
        if verified_required:
            raise
        return config
    return {**config, "verified": form} if form is not None else config


def _env_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    if STEP_LIMIT_KWARG in kwargs:
        kwargs["max_episode_steps"] = kwargs.pop(STEP_LIMIT_KWARG)
    return kwargs


def _overridden(config: dict, task_overrides: dict[str, Any] | None) -> dict:
    """The task config with some of its keys replaced: a variant of the task on the same sites and start
    pages (a synthetic query is the task's config with another ``intent`` and no evaluator of its own)."""
    if not task_overrides:
        return config
    unknown = sorted(set(task_overrides) - set(config) - {"eval"})
    if unknown:
        raise ValueError(f"task_overrides names keys the task config does not have: {', '.join(unknown)}")
    return {**config, **json.loads(json.dumps(task_overrides))}


def make_real_env(
    task_id: int, lite: bool = False, task_overrides: dict[str, Any] | None = None, **kwargs: Any
) -> gym.Env:
    """Entry point of ``webarena/<task_id>`` and ``webarena-lite/<task_id>``: the task on the self-hosted
    sites (``WA_*`` variables).

    ``evaluator="agentoccam"`` also applies AgentOccam's corrected labels to a WebArena task (its intent
    too, where a correction fixes a typo there), so the agent and the evaluator read the same task.
    WebArena-Lite's configurations are its own corrections and are left as shipped. ``task_overrides``
    then replaces keys of the task config (see :func:`_overridden`).
    """
    from .env import WebArenaEnv
    from .evaluation.corrections import apply_agentoccam_corrections
    from .sites import RealSiteHost, sites_in_config

    config = lite_task_config(task_id) if lite else real_task_config(task_id)
    if kwargs.get("evaluator") == "agentoccam" and not lite:
        config = apply_agentoccam_corrections(config)
    config = _overridden(config, task_overrides)
    host = functools.partial(RealSiteHost, sites_in_config(config))
    env_id = f"{LITE_NAMESPACE if lite else NAMESPACE}/{task_id}"
    return WebArenaEnv(task_kwargs={"config": config, "host": host}, env_id=env_id, **_env_kwargs(kwargs))


def make_verified_env(task_id: int, task_overrides: dict[str, Any] | None = None, **kwargs: Any) -> gym.Env:
    """Entry point of ``webarena-verified/<task_id>``: the Verified task on the self-hosted sites, scored by
    the package's evaluator and recording the episode's network trace unless told otherwise
    (``evaluator="webarena"`` scores WebArena's original checks of the same task)."""
    from .env import WebArenaEnv
    from .sites import RealSiteHost, sites_in_config
    from .verified import env_config

    config = _overridden(env_config(task_id, real_task_config(task_id)), task_overrides)
    kwargs.setdefault("evaluator", "webarena-verified")
    kwargs.setdefault("record_network", True)
    host = functools.partial(RealSiteHost, sites_in_config(config))
    env_id = f"{VERIFIED_NAMESPACE}/{task_id}"
    return WebArenaEnv(task_kwargs={"config": config, "host": host}, env_id=env_id, **_env_kwargs(kwargs))


def make_local_env(task_id: int, task_overrides: dict[str, Any] | None = None, **kwargs: Any) -> gym.Env:
    """Entry point of ``webarena/local.<task_id>``: the task on the embedded Flask sites (AgentOccam's
    label corrections concern WebArena's tasks; ``evaluator="agentoccam"`` still grades with its
    relaxed fuzzy grader; ``task_overrides``: see :func:`_overridden`)."""
    from .env import WebArenaEnv
    from .local.host import LocalSiteHost

    config = local_task_config(task_id, verified_required=kwargs.get("evaluator") == "webarena-verified")
    config = _overridden(config, task_overrides)
    host = functools.partial(LocalSiteHost, tuple(config["sites"]))
    return WebArenaEnv(
        task_kwargs={"config": config, "host": host},
        env_id=f"{NAMESPACE}/local.{task_id}",
        **_env_kwargs(kwargs),
    )


def make_miniwob_env(task: str, episode_max_time_ms: int | None = None, **kwargs: Any) -> gym.Env:
    """Entry point of ``miniwob/<task>``: the MiniWoB++ task on pages served from 127.0.0.1 by the env.

    ``max_episode_steps`` defaults to BrowserGym's MiniWoB++ budget (10); ``episode_max_time_ms`` is the
    page's own clock (BrowserGym's 1,000,000 ms unless given).
    """
    from .env import WebArenaEnv
    from .miniwob import EPISODE_MAX_TIME_MS, MAX_STEPS
    from .miniwob.host import MiniWoBSiteHost
    from .miniwob.task import MiniWoBTask

    kwargs = _env_kwargs(kwargs)
    kwargs.setdefault("max_episode_steps", MAX_STEPS)
    task_kwargs = {
        "task": task,
        "host": MiniWoBSiteHost,
        "episode_max_time_ms": episode_max_time_ms or EPISODE_MAX_TIME_MS,
    }
    return WebArenaEnv(
        task_entrypoint=MiniWoBTask, task_kwargs=task_kwargs, env_id=f"{MINIWOB_NAMESPACE}/{task}", **kwargs
    )


def _miniwob_tasks() -> list[str]:
    from .miniwob import task_names

    return task_names()


def _entry(factory: str) -> str:
    """A factory as Gymnasium's ``module:name`` entry point (a spec with one can be written as JSON)."""
    return f"{__name__}:{factory}"


def register_all() -> None:
    """Register every id (idempotent). Every spec is nondeterministic: live websites are."""
    for task_id in range(N_REAL_TASKS):
        env_id = f"{NAMESPACE}/{task_id}"
        if env_id not in gym.registry:
            gym.register(
                env_id, entry_point=_entry("make_real_env"), kwargs={"task_id": task_id}, nondeterministic=True
            )
    for task_id in range(N_LITE_TASKS):
        env_id = f"{LITE_NAMESPACE}/{task_id}"
        if env_id not in gym.registry:
            gym.register(
                env_id,
                entry_point=_entry("make_real_env"),
                kwargs={"task_id": task_id, "lite": True},
                nondeterministic=True,
            )
    for task_id in range(N_REAL_TASKS):  # Verified keeps WebArena's 812 ids
        env_id = f"{VERIFIED_NAMESPACE}/{task_id}"
        if env_id not in gym.registry:
            gym.register(
                env_id, entry_point=_entry("make_verified_env"), kwargs={"task_id": task_id}, nondeterministic=True
            )
    for task in _local_tasks():
        env_id = f"{NAMESPACE}/local.{task['task_id']}"
        if env_id not in gym.registry:
            gym.register(
                env_id, entry_point=_entry("make_local_env"), kwargs={"task_id": task["task_id"]}, nondeterministic=True
            )
    from .miniwob import is_nondeterministic

    for name in _miniwob_tasks():
        env_id = f"{MINIWOB_NAMESPACE}/{name}"
        if env_id not in gym.registry:
            gym.register(
                env_id,
                entry_point=_entry("make_miniwob_env"),
                kwargs={"task": name},
                nondeterministic=is_nondeterministic(name),
            )


def default_max_steps(env_id: str) -> int:
    """The step budget a task's suite gives an episode: BrowserGym's 10 for MiniWoB++, WebArena's 30 else."""
    if env_id.startswith(f"{MINIWOB_NAMESPACE}/"):
        from .miniwob import MAX_STEPS

        return MAX_STEPS
    from .env import DEFAULT_MAX_EPISODE_STEPS

    return DEFAULT_MAX_EPISODE_STEPS


def make(env_id: str, **kwargs: Any) -> gym.Env:
    """``gym.make`` after registration, with ``max_episode_steps`` given to the environment itself.

    ``gym.make(id, max_episode_steps=n)`` would only add Gymnasium's ``TimeLimit`` wrapper, which
    truncates without running the evaluator; here the environment counts steps and evaluates the
    last one.
    """
    register_all()
    if "max_episode_steps" in kwargs:
        kwargs[STEP_LIMIT_KWARG] = kwargs.pop("max_episode_steps")
    return gym.make(env_id, **kwargs)


def list_env_ids(suite: Suite = "real", site: str | None = None, template: int | None = None) -> list[str]:
    """Env ids of one suite, optionally only tasks using ``site`` and/or from intent template ``template``
    (MiniWoB++ tasks have neither: ``suite="miniwob"`` lists them all)."""
    if suite == "miniwob":
        return [f"{MINIWOB_NAMESPACE}/{name}" for name in _miniwob_tasks()]
    if suite == "real":
        tasks, prefix = _real_tasks(), f"{NAMESPACE}/"
    elif suite == "lite":
        tasks, prefix = _lite_tasks(), f"{LITE_NAMESPACE}/"
    elif suite == "verified":
        from .verified import verified_tasks

        tasks, prefix = verified_tasks(), f"{VERIFIED_NAMESPACE}/"
    elif suite == "local":
        tasks, prefix = tuple(_local_tasks()), f"{NAMESPACE}/local."
    else:
        raise ValueError(f"suite must be 'real', 'lite', 'verified', 'local' or 'miniwob', not {suite!r}")
    return [
        f"{prefix}{task['task_id']}"
        for task in tasks
        if (site is None or site in task["sites"]) and (template is None or task["intent_template_id"] == template)
    ]
