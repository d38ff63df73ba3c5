"""Task sets a study can run: the local suite, real WebArena, MiniWoB++, or any list of env ids.

A task set is written as a short spec so it fits on a command line and in the study manifest:

    local                      every local task
    local:site=shopping        local tasks of one site (multi-site tasks count for each of their sites)
    local:template=3           local tasks of one intent template (the local id)
    local:webarena_template=46 local tasks that instantiate WebArena's intent template 46
    local:sample               a fixed, stratified sample of 30 tasks: one per (site, eval type) pair, topped up
                               one per site; what `webarena-gym demo` runs by default (a few minutes)
    local:sample=7             the same draw cut to 7 tasks, spread over the sites (one each here)
    webarena                   the 812 real tasks
    webarena:site=gitlab       real tasks of one site
    webarena:template=323      real tasks of one intent template (webarena_template= is the same there)
    webarena:dev               one random task per intent template, fixed seed (our stand-in for AgentOccam's
                               unpublished 190-task dev set; see docs/methods/agentoccam.md)
    webarena:lite              the 165 WebArena-Lite tasks (webarena-lite/<id>, corrected configurations)
    webarena-lite:site=map     WebArena-Lite tasks of one site (template= works too)
    webarena-verified          the 812 WebArena-Verified tasks (webarena-verified/<id>, the installed package's)
    webarena-verified:hard     its 258-task hard subset; webarena-verified:site=gitlab, :template= as above
    miniwob                    the 125 MiniWoB++ tasks (BrowserGym's), 10 steps each unless --max-steps
    miniwob:click-test         one MiniWoB++ task; miniwob:click-test,click-button for several
    webarena/310,webarena/local.3,miniwob/click-test   an explicit list of env ids
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

DEFAULT_TASKS = "local"  # what `compare` evaluates when no --tasks is given
DEV_SUBSET_SEED = 2024  # fixed so every study that asks for "webarena:dev" gets the same tasks
SAMPLE_SEED = 28  # fixed so every "local:sample" study (the demo's) runs the same tasks
SAMPLE_SIZE = 30  # a first run shows every site and eval type in a few minutes (about 60 baseline episodes)


@dataclass(frozen=True)
class TaskInfo:
    """What a study needs to know about one task to schedule it and to group its results."""

    env_id: str
    task_id: int
    sites: tuple[str, ...]
    template_id: int
    eval_types: tuple[str, ...]
    depends_on: tuple[str, ...] = field(default=())  # env ids that must finish first (real WebArena only)
    webarena_template: int | None = None  # WebArena's intent template id; None for a local-only task
    max_steps: int | None = None  # the suite's own step budget (MiniWoB++: BrowserGym's 10); None: the policy's

    @property
    def site_group(self) -> str:
        """The column a task counts in for per-site tables: its site, or "multisite"."""
        return self.sites[0] if len(self.sites) == 1 else "multisite"


def _info(prefix: str, config: dict, webarena_template: int | None, depends_on: tuple[str, ...] = ()) -> TaskInfo:
    return TaskInfo(
        env_id=f"{prefix}{config['task_id']}",
        task_id=int(config["task_id"]),
        sites=tuple(config["sites"]),
        template_id=int(config["intent_template_id"]),
        eval_types=tuple(config["eval"]["eval_types"]),
        depends_on=depends_on,
        webarena_template=webarena_template,
    )


def _webarena_depends_on(prefix: str) -> dict[int, tuple[str, ...]]:
    """BrowserGym's `depends_on` ordering of WebArena's state-changing tasks, as env ids under ``prefix``."""
    data = resources.files("webarena_gym.envs") / "data"
    deps: dict[int, tuple[str, ...]] = {}
    with (data / "webarena_metadata.csv").open() as fh:
        for row in csv.DictReader(fh):
            names = [d for d in row["depends_on"].split() if d]
            deps[int(row["task_id"])] = tuple(prefix + d.split(".", 1)[1] for d in names)
    return deps


@cache
def real_tasks() -> tuple[TaskInfo, ...]:
    """The 812 WebArena tasks with BrowserGym's `depends_on` ordering of state-changing tasks."""
    data = resources.files("webarena_gym.envs") / "data"
    configs = json.loads((data / "test.raw.json").read_text())
    deps = _webarena_depends_on("webarena/")
    return tuple(_info("webarena/", c, int(c["intent_template_id"]), deps.get(int(c["task_id"]), ())) for c in configs)


@cache
def verified_tasks() -> tuple[TaskInfo, ...]:
    """The 812 WebArena-Verified tasks (the installed package's dataset), ordered as WebArena's; their eval
    types are the package's checks (``AgentResponseEvaluator``, ``NetworkEventEvaluator``)."""
    from webarena_gym.envs.verified import eval_types
    from webarena_gym.envs.verified import verified_tasks as dataset

    deps = _webarena_depends_on("webarena-verified/")
    return tuple(
        TaskInfo(
            env_id=f"webarena-verified/{t['task_id']}",
            task_id=int(t["task_id"]),
            sites=tuple(t["sites"]),
            template_id=int(t["intent_template_id"]),
            eval_types=eval_types(t),
            depends_on=deps.get(int(t["task_id"]), ()),
            webarena_template=int(t["intent_template_id"]),
        )
        for t in dataset()
    )


@cache
def lite_tasks() -> tuple[TaskInfo, ...]:
    """The 165 WebArena-Lite tasks, ordered like their WebArena originals (BrowserGym's WebArena-Lite
    metadata, keyed by WebArena id, mapped to the Lite ids)."""
    data = resources.files("webarena_gym.envs") / "data"
    configs = json.loads((data / "test_webarena_lite.raw.json").read_text())
    lite_id = {int(c["old_task_id"]): int(c["task_id"]) for c in configs}
    deps: dict[int, tuple[str, ...]] = {}
    with (data / "webarena_lite_metadata.csv").open() as fh:
        for row in csv.DictReader(fh):
            names = [int(d.split(".", 1)[1]) for d in row["depends_on"].split() if d]
            deps[int(row["task_id"])] = tuple(f"webarena-lite/{lite_id[n]}" for n in names if n in lite_id)
    return tuple(
        _info("webarena-lite/", c, int(c["intent_template_id"]), deps.get(int(c["old_task_id"]), ())) for c in configs
    )


@cache
def local_tasks() -> tuple[TaskInfo, ...]:
    from webarena_gym.envs.local.registry import load_tasks, webarena_template_id

    return tuple(_info("webarena/local.", c, webarena_template_id(c)) for c in load_tasks())


@cache
def miniwob_tasks() -> tuple[TaskInfo, ...]:
    """MiniWoB++'s tasks; ids are their places in the sorted list, each task its own template."""
    from webarena_gym.envs.miniwob import EVAL_TYPE, MAX_STEPS, SITE, task_names

    return tuple(
        TaskInfo(f"miniwob/{name}", index, (SITE,), index, (EVAL_TYPE,), max_steps=MAX_STEPS)
        for index, name in enumerate(task_names())
    )


def _miniwob_subset(names: str) -> list[TaskInfo]:
    by_name = {t.env_id.split("/", 1)[1]: t for t in miniwob_tasks()}
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        raise ValueError(f"unknown MiniWoB++ tasks: {', '.join(unknown)} (list them with: webarena-gym tasks miniwob)")
    return [by_name[n] for n in wanted]


def _filter(tasks: tuple[TaskInfo, ...], key: str, value: str) -> list[TaskInfo]:
    if key == "site":
        return [t for t in tasks if value in t.sites or (value == "multisite" and len(t.sites) > 1)]
    if key == "template":
        return [t for t in tasks if t.template_id == int(value)]
    if key == "webarena_template":
        return [t for t in tasks if t.webarena_template == int(value)]
    raise ValueError(f"unknown task-set filter {key!r} (use site=, template= or webarena_template=)")


def dev_subset(tasks: tuple[TaskInfo, ...], seed: int = DEV_SUBSET_SEED) -> list[TaskInfo]:
    """One task per intent template, drawn with a fixed seed, in task-id order."""
    rng = random.Random(seed)
    by_template: dict[int, list[TaskInfo]] = {}
    for t in tasks:
        by_template.setdefault(t.template_id, []).append(t)
    picked = [rng.choice(group) for _, group in sorted(by_template.items())]
    return sorted(picked, key=lambda t: t.task_id)


def stratified_sample(tasks: tuple[TaskInfo, ...], size: int = SAMPLE_SIZE, seed: int = SAMPLE_SEED) -> list[TaskInfo]:
    """``size`` tasks drawn with a fixed seed, in task-id order: one per (site, eval types) pair first, the
    sites taking turns, then more per site in turns. Any size spreads over the sites (7 tasks: one per
    site); the default also covers every kind of check, so a short run exercises the whole product."""
    rng = random.Random(seed)
    by_pair: dict[tuple[str, tuple[str, ...]], list[TaskInfo]] = {}
    for t in tasks:
        by_pair.setdefault((t.site_group, tuple(sorted(t.eval_types))), []).append(t)
    firsts: dict[str, list[TaskInfo]] = {}
    for (site, _), group in sorted(by_pair.items()):
        firsts.setdefault(site, []).append(rng.choice(group))
    chosen = {t.env_id for picks in firsts.values() for t in picks}
    rest = {site: [t for t in tasks if t.site_group == site and t.env_id not in chosen] for site in firsts}
    for group in rest.values():
        rng.shuffle(group)
    order = [*_in_turns(list(firsts.values())), *_in_turns(list(rest.values()))]
    return sorted(order[:size], key=lambda t: t.task_id)


def _in_turns(groups: list[list[TaskInfo]]) -> list[TaskInfo]:
    """The first of every group, then the second of every group, and so on."""
    longest = max((len(g) for g in groups), default=0)
    return [g[i] for i in range(longest) for g in groups if i < len(g)]


def resolve(spec: str) -> list[TaskInfo]:
    """Turn a task-set spec into the tasks it names (see the module docstring)."""
    spec = spec.strip()
    if "/" in spec:
        wanted = [s.strip() for s in spec.split(",") if s.strip()]
        known = {t.env_id: t for t in (*real_tasks(), *lite_tasks(), *local_tasks(), *miniwob_tasks())}
        if any(e.startswith("webarena-verified/") for e in wanted):
            known.update((t.env_id, t) for t in verified_tasks())
        missing = [e for e in wanted if e not in known]
        if missing:
            raise ValueError(f"unknown env ids: {', '.join(missing)}")
        return [known[e] for e in wanted]
    if spec == "webarena:lite":
        return list(lite_tasks())
    suite, _, filt = spec.partition(":")
    if suite == "miniwob":
        return _miniwob_subset(filt) if filt else list(miniwob_tasks())
    if suite == "local":
        tasks = local_tasks()
    elif suite == "webarena":
        tasks = real_tasks()
    elif suite == "webarena-lite":
        tasks = lite_tasks()
    elif suite == "webarena-verified":
        tasks = verified_tasks()
    else:
        raise ValueError(
            f"unknown task set {spec!r}: use local[...], webarena[...], webarena:lite, webarena-lite[...], "
            "webarena-verified[...], miniwob[...] or a list of env ids"
        )
    if not filt:
        return list(tasks)
    if filt == "dev":
        return dev_subset(tasks)
    if filt == "hard" and suite == "webarena-verified":
        from webarena_gym.envs.verified import hard_task_ids

        hard = set(hard_task_ids())
        return [t for t in tasks if t.task_id in hard]
    if filt == "sample" or filt.startswith("sample="):
        size = filt.partition("=")[2]
        if size and not (size.isdigit() and int(size) > 0):
            raise ValueError(f"task set {spec!r}: sample= takes a number of tasks, e.g. {suite}:sample=5")
        return stratified_sample(tasks, int(size) if size else SAMPLE_SIZE)
    key, _, value = filt.partition("=")
    return _filter(tasks, key.strip(), value.strip())
