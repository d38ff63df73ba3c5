"""The local suite's tasks and reference solutions, read from ``tasks/<site>.json`` and ``solutions/<site>.json``.

Task files use WebArena's JSON format (a list of task objects); a missing site file simply contributes
no tasks, so the suite grows as sites land.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

LOCAL_DIR = Path(__file__).resolve().parent
TASKS_DIR = LOCAL_DIR / "tasks"
SOLUTIONS_DIR = LOCAL_DIR / "solutions"

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


def task_ids(site: str | None = None, template: int | None = None) -> list[int]:
    """Ids of the tasks that use ``site`` (among others) and/or come from intent template ``template``."""
    return [
        task["task_id"]
        for task in _tasks()
        if (site is None or site in task["sites"]) and (template is None or task["intent_template_id"] == template)
    ]


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
