"""WebArena-Verified's tasks, read from the installed ``webarena_verified`` package's own dataset files
(never copied here), as configs the env runs on the real sites.

A Verified task keeps WebArena's id, sites and start pages; its intent is the revised one (it states the
answer's format) and its checks are the package's (``eval``: a list of ``AgentResponseEvaluator`` and
``NetworkEventEvaluator`` configs). :func:`env_config` gives the env a WebArena-shaped config: the
Verified intent and start pages, WebArena's original ``eval`` block (so ``evaluator="webarena"`` still
scores it), and the Verified task itself under ``"verified"`` for ``evaluator="webarena-verified"``.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

N_VERIFIED_TASKS = 812
_DATASET = "assets/dataset/webarena-verified.json"
_HARD = "assets/dataset/subsets/webarena-verified-hard.json"


def _asset(path: str) -> Any:
    try:
        root = resources.files("webarena_verified")
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "WebArena-Verified tasks need the webarena-verified package (the 'verified' extra; scripts/setup.sh "
            "installs it)",
            name="webarena_verified",
        ) from exc
    return json.loads((root / path).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def verified_tasks() -> tuple[dict, ...]:
    """The package's 812 tasks, by id."""
    return tuple(sorted(_asset(_DATASET), key=lambda task: task["task_id"]))


def verified_task(task_id: int) -> dict:
    """A fresh copy of Verified task ``task_id`` in the package's form (placeholders not replaced)."""
    return json.loads(json.dumps(verified_tasks()[task_id]))


@functools.lru_cache(maxsize=1)
def hard_task_ids() -> tuple[int, ...]:
    """The package's hard subset (258 tasks)."""
    return tuple(sorted(int(i) for i in _asset(_HARD)["task_ids"]))


def eval_types(task: dict) -> tuple[str, ...]:
    """The kinds of check a Verified task has, in order, each once."""
    return tuple(dict.fromkeys(check["evaluator"] for check in task["eval"]))


def task_type(task: dict) -> str:
    """What the task mainly asks: ``retrieve``, ``mutate`` or ``navigate`` (its expected response's)."""
    for check in task["eval"]:
        if check["evaluator"] == "AgentResponseEvaluator":
            return str(check["expected"]["task_type"]).lower()
    return "retrieve"


def env_config(task_id: int, webarena_config: dict) -> dict:
    """The env's config of Verified task ``task_id``: ``webarena_config`` (WebArena's task of the same id)
    with the Verified intent, start pages and revision, and the Verified task under ``"verified"``."""
    from .task import START_URL_SEPARATOR

    task = verified_task(task_id)
    return {
        **webarena_config,
        "intent": task["intent"],
        "start_url": START_URL_SEPARATOR.join(task["start_urls"]),
        "sites": list(task["sites"]),
        "revision": task["revision"],
        "verified": task,
    }
