"""The local suite's tasks and reference solutions, read from ``tasks/<site>.json`` and ``solutions/<site>.json``.

Task files use WebArena's JSON format (a list of task objects); a missing site file simply contributes
no tasks, so the suite grows as sites land.

A task that instantiates one of WebArena's intent templates carries WebArena's ``intent_template_id``
and its ``intent_template`` text word for word, so local and real results line up template by template.
A task that instantiates none keeps a local template id of ``LOCAL_TEMPLATE_BASE`` or more: that range
is the marker, and :func:`webarena_template_id` maps it to ``None``.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

LOCAL_DIR = Path(__file__).resolve().parent
TASKS_DIR = LOCAL_DIR / "tasks"
SOLUTIONS_DIR = LOCAL_DIR / "solutions"
WEBARENA_TASKS = LOCAL_DIR.parent / "data" / "test.raw.json"

# Local-only template ids start here (WebArena's own ids run up to 6100).
LOCAL_TEMPLATE_BASE = 10000

# The keys of a WebArena task object (test.raw.json), the only ones a local task may have.
TASK_KEYS = frozenset(
    {
        "sites",
        "task_id",
        "require_login",
        "storage_state",
        "start_url",
        "geolocation",
        "intent_template",
        "instantiation_dict",
        "intent",
        "require_reset",
        "eval",
        "intent_template_id",
    }
)
EVAL_KEYS = frozenset(
    {
        "eval_types",
        "reference_answers",
        "reference_url",
        "program_html",
        "string_note",
        "reference_answer_raw_annotation",
        "url_note",
    }
)


@functools.lru_cache(maxsize=1)
def _tasks() -> tuple[dict[str, Any], ...]:
    tasks: list[dict[str, Any]] = []
    for path in sorted(TASKS_DIR.glob("*.json")):
        tasks.extend(json.loads(path.read_text()))
    ids = [task["task_id"] for task in tasks]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate local task ids: {duplicates}")
    return tuple(sorted(tasks, key=lambda task: task["task_id"]))


def load_tasks() -> list[dict[str, Any]]:
    """Every local task (fresh copies, sorted by id)."""
    return json.loads(json.dumps(_tasks()))


def get_task(task_id: int) -> dict[str, Any]:
    for task in _tasks():
        if task["task_id"] == task_id:
            return json.loads(json.dumps(task))
    raise KeyError(f"no local task {task_id}")


def webarena_template_id(task: dict[str, Any]) -> int | None:
    """The WebArena intent template a local task instantiates, or None for a local-only task."""
    template = int(task["intent_template_id"])
    return None if template >= LOCAL_TEMPLATE_BASE else template


@functools.lru_cache(maxsize=1)
def webarena_templates() -> dict[int, tuple[str, ...]]:
    """WebArena's intent template texts by id, as in ``test.raw.json``, most used first.

    Some ids carry several wordings there (template 42: "Show me the path and travel time from ..." and
    "Show me the route and driving time from ..."); a local task may use any of them.
    """
    counts: dict[int, Counter[str]] = {}
    for t in json.loads(WEBARENA_TASKS.read_text()):
        counts.setdefault(int(t["intent_template_id"]), Counter())[t["intent_template"]] += 1
    return {tid: tuple(text for text, _ in c.most_common()) for tid, c in counts.items()}


def task_ids(site: str | None = None, template: int | None = None, webarena_template: int | None = None) -> list[int]:
    """Ids of the tasks that use ``site`` (among others), come from intent template ``template`` and/or
    instantiate WebArena's intent template ``webarena_template``."""
    return [
        task["task_id"]
        for task in _tasks()
        if (site is None or site in task["sites"])
        and (template is None or task["intent_template_id"] == template)
        and (webarena_template is None or webarena_template_id(task) == webarena_template)
    ]


def site_group(task: dict[str, Any]) -> str:
    """The row a task counts in for coverage: its site, or "multi-site"."""
    return task["sites"][0] if len(task["sites"]) == 1 else "multi-site"


def coverage() -> list[dict[str, Any]]:
    """Per site group (then "all"): WebArena templates instantiated, tasks linked to them, local-only
    tasks, and the eval types the linked tasks use (with how many tasks use each), next to WebArena's own
    template and task counts."""
    real: dict[str, dict[str, set[int]]] = {}
    for t in json.loads(WEBARENA_TASKS.read_text()):
        counts = real.setdefault(site_group(t), {"templates": set(), "tasks": set()})
        counts["templates"].add(int(t["intent_template_id"]))
        counts["tasks"].add(int(t["task_id"]))
    rows = []
    groups = sorted({site_group(t) for t in _tasks()} | set(real), key=lambda g: (g == "multi-site", g))
    for group in [*groups, "all"]:
        mine = [t for t in _tasks() if group in ("all", site_group(t))]
        linked = [t for t in mine if webarena_template_id(t) is not None]
        theirs = [v for g, v in real.items() if group in ("all", g)]
        rows.append(
            {
                "site": group,
                "templates": len({t["intent_template_id"] for t in linked}),
                "linked_tasks": len(linked),
                "local_only_tasks": len(mine) - len(linked),
                "eval_types": sorted({e for t in linked for e in t["eval"]["eval_types"]}),
                "eval_type_tasks": dict(Counter(e for t in linked for e in t["eval"]["eval_types"]).most_common()),
                "webarena_templates": len(set().union(*(v["templates"] for v in theirs))) if theirs else 0,
                "webarena_tasks": sum(len(v["tasks"]) for v in theirs),
            }
        )
    return rows


@functools.lru_cache(maxsize=1)
def _solutions() -> dict[int, tuple[dict[str, Any], ...]]:
    solutions: dict[int, tuple[dict[str, Any], ...]] = {}
    for path in sorted(SOLUTIONS_DIR.glob("*.json")):
        for key, steps in json.loads(path.read_text()).items():
            solutions[int(key)] = tuple(steps)
    return solutions


def load_solutions() -> dict[int, list[dict[str, Any]]]:
    """Reference solution per task id: a list of steps (see :mod:`envs.local.reference`)."""
    return {task_id: [dict(step) for step in steps] for task_id, steps in _solutions().items()}


def load_solution(task_id: int) -> list[dict[str, Any]]:
    """The reference solution of one task (a fresh copy; :func:`load_solutions` copies every task's)."""
    return [dict(step) for step in _solutions()[task_id]]


@functools.lru_cache(maxsize=1)
def _goto_free() -> dict[int, tuple[dict[str, Any], ...] | str]:
    entries: dict[int, tuple[dict[str, Any], ...] | str] = {}
    for path in sorted((SOLUTIONS_DIR / "goto_free").glob("*.json")):
        for key, entry in json.loads(path.read_text()).items():
            entries[int(key)] = entry if isinstance(entry, str) else tuple(entry)
    return entries


def uses_goto(steps: Sequence[Mapping[str, Any]]) -> bool:
    return any(step.get("action") == "goto" for step in steps)


def goto_free_solution(task_id: int) -> list[dict[str, Any]] | None:
    """A reference path any action space can take: clicks, typing, selection, key presses, ``go_back``
    and (on multi-site tasks) ``go_home``. It is the reference solution itself when that has no ``goto``,
    else the path kept beside it in ``solutions/goto_free/``; None for a task that needs a URL the pages
    never show (:func:`needs_typed_url` says which) or whose path is not written yet."""
    steps = _solutions()[task_id]
    if not uses_goto(steps):
        return [dict(step) for step in steps]
    entry = _goto_free().get(task_id)
    return None if entry is None or isinstance(entry, str) else [dict(step) for step in entry]


def needs_typed_url(task_id: int) -> str | None:
    """Why the task cannot be done without typing a URL that no page shows (None when it can)."""
    entry = _goto_free().get(task_id)
    return entry if isinstance(entry, str) else None
