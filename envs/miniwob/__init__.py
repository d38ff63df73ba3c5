"""MiniWoB++ in this project's environment: BrowserGym's task definitions on the ``miniwob`` package's pages,
served from 127.0.0.1 by a server the environment starts (no network).

- :class:`envs.miniwob.host.MiniWoBSiteHost`: a :class:`envs.sites.SiteHost` for one site, ``miniwob``: a
  static HTTP server (a thread of the env's process, on a free port of 127.0.0.1) over the HTML that
  PyPI's ``miniwob`` package ships. The URL guard lets the agent reach that origin and nothing else.
- :class:`envs.miniwob.task.MiniWoBTask`: one MiniWoB++ task as an :class:`envs.task.EnvTask`. Setup, goal
  and reward are BrowserGym's (``browsergym-miniwob``): the page's problem is drawn from the reset seed, so a seed
  reproduces an episode; the reward is 1 when MiniWoB's raw reward is positive, else 0; the episode's
  clock is BrowserGym's ``episode_max_time`` (1,000,000 ms). The task ends by itself (the page says
  done), checked after every action; the clock running out is reported as a truncation.

Defaults that follow BrowserGym's MiniWoB++ benchmark: 10 steps per episode, the goal as the page's
utterance, the human display (goal, timer, last reward) removed from the page.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

SITE = "miniwob"
TASKS_FILE = Path(__file__).resolve().parents[1] / "data" / "miniwob_tasks.json"
# BrowserGym's defaults: AbstractMiniwobTask(episode_max_time=1_000_000) and its MiniWoB++ benchmark's
# max_steps=10 (browsergym-experiments, benchmark "miniwob").
EPISODE_MAX_TIME_MS = 1_000_000
MAX_STEPS = 10
EVAL_TYPE = "miniwob"  # what reports list as the task's eval type


# Tasks whose page keeps state across episodes that MiniWoB's episode start does not regenerate (widget
# ids and states of jQuery UI, scroll offsets, canvases, focus), so an in-page reset would not give the
# problem a fresh page gets: found by comparing an in-page reset after random clicks and typing with a
# fresh page for the same seed, on every task; the siblings of a task found are listed too, and the
# tasks BrowserGym marks nondeterministic.
_KEEPS_STATE = frozenset({
    "book-flight", "book-flight-nodelay", "click-collapsible", "click-collapsible-nodelay",
    "click-collapsible-2", "click-collapsible-2-nodelay", "click-menu", "click-menu-2", "click-tab",
    "click-tab-2", "click-tab-2-easy", "click-tab-2-medium", "click-tab-2-hard", "copy-paste", "copy-paste-2",
    "navigate-tree", "scroll-text", "scroll-text-2", "search-engine", "use-colorwheel", "use-colorwheel-2",
    "use-slider", "use-slider-2", "use-spinner",
})  # fmt: skip


@functools.cache
def _task_list() -> dict[str, Any]:
    return json.loads(TASKS_FILE.read_text())


def task_names() -> list[str]:
    """The 125 MiniWoB++ tasks BrowserGym defines, sorted (e.g. ``click-test``)."""
    return list(_task_list()["tasks"])


def is_nondeterministic(task: str) -> bool:
    """Whether BrowserGym marks ``task`` nondeterministic (its page is not a function of the seed)."""
    return task in _task_list()["nondeterministic"]


def keeps_state(task: str) -> bool:
    """Whether an episode of ``task`` must start on a freshly loaded page (an in-page reset would carry
    state of the last episode into the next problem)."""
    return task in _KEEPS_STATE or is_nondeterministic(task)


def html_root() -> Path:
    """The ``html`` folder of the ``miniwob`` package (found without importing it: its import registers
    Gymnasium ids of its own under ``miniwob/``, which would clash with this project's)."""
    spec = importlib.util.find_spec("miniwob")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        root = Path(location) / "html"
        if (root / "miniwob").is_dir() and (root / "core" / "core.js").is_file():
            return root
    from webarena_gym.envs.sites import SitesUnavailableError

    raise SitesUnavailableError(
        "MiniWoB++ needs the pages of the PyPI package `miniwob` (pip install miniwob==1.1.0; "
        "the project pins it, see pyproject.toml)"
    )
