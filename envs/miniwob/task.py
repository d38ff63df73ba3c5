"""One MiniWoB++ task, as BrowserGym defines it, as a task of this project's environment."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Sequence
from typing import Any

import playwright.sync_api

from webarena_gym.envs.miniwob import EPISODE_MAX_TIME_MS, EVAL_TYPE, SITE, keeps_state
from webarena_gym.envs.task import EnvTask

# BrowserGym's episode start (its setup's seeded ``core.startEpisodeReal``) on a page that holds the task
# already, with what a fresh page would have besides the problem: nothing focused. Returns whether the
# problem is ready and the goal, so a ready one costs a single round trip.
_RESTART = """([seed, maxTime]) => {
  if (document.activeElement) document.activeElement.blur();
  Math.seedrandom(seed);
  core.EPISODE_MAX_TIME = maxTime;
  core.startEpisodeReal();
  return WOB_TASK_READY ? [true, core.getUtterance()] : [false, null];
}"""


# The page's reward state, as BrowserGym's validate reads it (its ``_get_info``); null on a page without it.
_STATE_KEYS = ("REWARD_GLOBAL", "RAW_REWARD_GLOBAL", "REWARD_REASON", "DONE_GLOBAL", "EPISODE_ID", "TASK_READY")
_STATE_SCRIPT = (
    f"() => typeof WOB_DONE_GLOBAL === 'undefined' ? null : [{', '.join(f'WOB_{key}' for key in _STATE_KEYS)}]"
)


@functools.cache
def _browsergym_tasks() -> dict[str, type]:
    from browsergym.miniwob import ALL_MINIWOB_TASKS

    return {cls.subdomain: cls for cls in ALL_MINIWOB_TASKS}


class MiniWoBTask(EnvTask):
    """One MiniWoB++ task (BrowserGym's definition) on a :class:`MiniWoBSiteHost`.

    Args:
        seed: the episode's seed; BrowserGym draws the page's random seed from it.
        host: the site host serving the pages.
        task: the task's name, e.g. ``"click-test"`` (see :func:`task_names`).
        episode_max_time_ms: MiniWoB's clock for the episode (BrowserGym's default).
        judge_model, judge_mock, judge_options: the env's judge settings; MiniWoB++ pages grade
            themselves, so unused.
    """

    state_script = _STATE_SCRIPT

    def __init__(
        self,
        seed: int | None,
        host: Any,
        task: str,
        episode_max_time_ms: int = EPISODE_MAX_TIME_MS,
        judge_model: str | None = None,
        judge_mock: Any = None,
        judge_options: Any = None,
        eval_options: Any = None,  # the env's evaluator choice: MiniWoB++ tasks score by the page's own reward
    ) -> None:
        super().__init__(seed)
        classes = _browsergym_tasks()
        if task not in classes:
            raise ValueError(f"unknown MiniWoB++ task {task!r}; known: {', '.join(sorted(classes))}")
        self.host = host
        self.name = task
        self.site_urls = {SITE: host.urls()[SITE]}
        self.inner = classes[task](
            seed=seed, base_url=f"{self.site_urls[SITE]}/miniwob/", episode_max_time=episode_max_time_ms
        )
        self.viewport = self.inner.viewport
        self.timeout = self.inner.timeout
        self.slow_mo = 0  # BrowserGym's 100 ms per Playwright call is for watching
        self.goal = ""
        self.config = {
            "task_id": task,
            "sites": [SITE],
            "start_url": self.inner.url,
            "intent": "",
            "eval": {"eval_types": [EVAL_TYPE]},
            "episode_max_time_ms": episode_max_time_ms,
        }

    @classmethod
    def get_task_id(cls) -> str:
        return "miniwob"

    def task_info(self) -> dict[str, Any]:
        return {
            "task_id": self.name,
            "sites": [SITE],
            "intent": self.goal,
            "intent_template_id": None,
            "eval_types": [EVAL_TYPE],
            "start_url": self.inner.url,
            "site_urls": dict(self.site_urls),
        }

    def setup(self, page: playwright.sync_api.Page) -> tuple[str, dict]:
        self.host.prepare()
        goal, _ = self.inner.setup(page)
        self.goal = str(goal)
        self.config["intent"] = self.goal
        return self.goal, self.task_info()

    def restart(self, page: playwright.sync_api.Page, evaluate: Callable[[str, Any], Any]) -> tuple[str, dict] | None:
        """The in-page reset: MiniWoB's own seeded episode start on the task's page, the seed drawn as
        BrowserGym's setup draws it, so the problem is the one a fresh page gets. A task that keeps state
        its episode start does not regenerate (:func:`envs.miniwob.keeps_state`) is loaded again in the
        same tab; a page elsewhere is not restarted."""
        if page.url != self.inner.url:
            return None
        if keeps_state(self.name):
            return self.setup(page)
        self.inner.page = page
        seed = self.inner.random.randint(0, 1000000)
        ready, utterance = evaluate(_RESTART, [seed, self.inner.episode_max_time])
        if not ready:  # read again once ready: the last evaluation's read is the first observation
            page.wait_for_function("() => WOB_TASK_READY")
            utterance = evaluate("() => core.getUtterance()", None)
        self.goal = str(utterance["utterance"] if isinstance(utterance, dict) else utterance)
        self.config["intent"] = self.goal
        return self.goal, self.task_info()

    def teardown(self) -> None:
        self.inner.teardown()

    def check(self, page: playwright.sync_api.Page) -> dict[str, Any] | None:
        reward, done, _, details = self.inner.validate(page, [])
        if not done:
            return None
        return self._verdict(reward, details)

    def check_state(self, page: playwright.sync_api.Page, state: Any) -> dict[str, Any] | None:
        """:meth:`check` with the page's reward state read already: BrowserGym's validate rules (its
        verdict on a page that is not the task's, no reward before done, reward = raw reward > 0)."""
        details = self._details(page, state)
        if details is None:
            return self.check(page)  # not the task's page: BrowserGym's own verdict
        if not details["DONE_GLOBAL"]:
            return None
        return self._verdict(float(details["RAW_REWARD_GLOBAL"] > 0), details)

    def evaluate_state(self, page: playwright.sync_api.Page, answer: str, state: Any) -> dict[str, Any] | None:
        """:meth:`evaluate` with the page's reward state read already (None off the task's page)."""
        details = self._details(page, state)
        if details is None:
            return None
        reward = float(details["RAW_REWARD_GLOBAL"] > 0) if details["DONE_GLOBAL"] else 0.0
        return self._verdict(reward, details, answer)

    def _details(self, page: playwright.sync_api.Page, state: Any) -> dict[str, Any] | None:
        """The reward state read on the task's page, by name; None for a state from anywhere else."""
        if state is None or page != self.inner.page or page.url != self.inner.url:
            return None
        return dict(zip(_STATE_KEYS, state, strict=True))

    def evaluate(
        self,
        page: playwright.sync_api.Page,
        answer: str,
        last_url: str | None = None,
        only: Collection[str] | None = None,
        network: Sequence[dict] = (),
    ) -> dict[str, Any]:
        """The page's own verdict now (an answer does not change it: MiniWoB++ grades what was done)."""
        try:
            reward, done, _, details = self.inner.validate(page, [])
        except playwright.sync_api.Error as exc:
            return {"score": 0.0, "answer": answer, "details": {}, "error": f"{type(exc).__name__}: {exc}"}
        return self._verdict(reward if done else 0.0, details, answer)

    def _verdict(self, reward: float, details: dict, answer: str | None = None) -> dict[str, Any]:
        verdict: dict[str, Any] = {"score": float(reward), "details": {EVAL_TYPE: dict(details)}}
        if answer is not None:
            verdict["answer"] = answer
        if details.get("REWARD_REASON") == "timed out":
            verdict["timed_out"] = True
        return verdict
