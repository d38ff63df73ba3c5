"""``WebArenaEnv``: a BrowserGym ``BrowserEnv`` made fast and safe enough for WebArena studies.

One environment for every task of the project: WebArena's (real or local sites) and MiniWoB++'s. As in
BrowserGym, the env takes a task class (``task_entrypoint``, an :class:`envs.task.EnvTask`) and the task
knows its sites, setup and validation; the env owns the browser, the episode and its budget.

The env composes its parts, each in its own module: the browser lease (:mod:`envs.browser`), the URL
guard (:mod:`envs.url_guard`), page extraction (:mod:`envs.extraction`), snapshots
(:mod:`envs.snapshot`), the action set (:mod:`envs.action_set`) and the task with its evaluator
(:mod:`envs.task`). This module holds the episode: reset, step, goto, snapshot/restore, close.

What differs from plain BrowserGym, and why:
- one Chromium per environment, reused across resets (a fresh context per episode), and handed on
  to the next environment of the process at ``close()``: a launch costs more than a whole episode;
- no chat browser when headless, no ``slow_mo``, no fixed pre-observation sleep (load states instead);
- ``obs_mode="axtree"`` skips the DOM snapshot and the screenshot, the two costliest extractions, and
  ``"dom"`` the screenshot only (for observations that read no pixels);
- the evaluator runs once, when the agent answers or the step budget runs out, never on every step (a
  task that ends by itself, as MiniWoB++'s do, is asked after each action through a cheap check);
- navigation off the task's sites is blocked, whatever the scheme (:mod:`envs.url_guard`), so an
  agent cannot look answers up elsewhere or run a page of its own; uploads come only from
  ``upload_dir``; an action is parsed once (:mod:`envs.action_parser`: calls with literal arguments
  and nothing else), those calls are checked and only their re-serialisation runs, so no text the
  checks could not read reaches BrowserGym's executor; an action longer than :data:`MAX_ACTION_CHARS`
  is refused before any parser sees it;
- element actions wait ``action_timeout_ms`` (3 s), not BrowserGym's 500 ms, which a click's own
  navigation outlasts on a busy machine; ``force_actions=True`` (an RL speed option, never a default)
  skips Playwright's actionability waits, clicks at the element's point and types into a text field it
  selected in one evaluation, ``fast_reset=True``
  (likewise) starts the next episode on the last one's tab when its task can (MiniWoB++: an in-page
  reset) instead of in a fresh context, and
  ``fast_steps=True`` (likewise) settles and reads a step that left one tab and navigated nothing in two
  round trips (marks, focused element, title and the task's state in one evaluation, then the AX tree)
  instead of about six; any navigation (also one the page only asked for), tab, frame or guard event
  takes the default path;
- the first start tab is the active one (as in WebArena), whichever tab loaded last;
- ``snapshot()``/``restore()`` for search policies, exact when the site host can snapshot its data (the
  exact path cleans and reuses the browser context instead of opening a new one);
- a crashed browser, a killed Playwright driver or a browser call that does not return (every call
  is bounded, see :mod:`envs.playwright_patches`) ends the episode with the same "browser died"
  error instead of an exception or a hang, and the next reset relaunches what died;
- sites that stopped answering, or a judge that could not be reached, make the evaluation an error
  of the episode (``info["error"]``), not a score of 0.
"""

from __future__ import annotations

import copy
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import gymnasium as gym
import numpy as np
import playwright.sync_api
from browsergym.core.action.base import execute_python_code
from browsergym.core.chat import Chat
from browsergym.core.env import BrowserEnv

from . import page_state
from .action_parser import ActionSyntaxError, canonical, parse_action
from .action_set import (
    DEFAULT_ACTION_TIMEOUT_MS,
    BrowserActionSpace,
    compiled_action,
    default_action_set,
    execute_compiled,
)
from .bgym import legacy_goal
from .browser import BrowserLease, HeadlessChat
from .evaluation.evaluator import EvalOptions, infeasible_answer
from .extraction import OBS_MODES, ObsMode, PageExtractor, observation_space, page_changed, unmark
from .navigation import LEAVING_FLAG, LEAVING_SCRIPT, NavigationWatch
from .network import NetworkRecorder
from .playwright_patches import BrowserCallTimeout, TargetClosedError
from .sites import SiteHost, SiteHostFactory, origin
from .snapshot import EnvSnapshot, HistoryEntry, TabOrigins, clean_context, open_tabs, reload_in_place
from .task import EnvTask, WebArenaTask, answer_from_chat
from .url_guard import UrlGuard

logger = logging.getLogger(__name__)

DialogResponse = Literal["dismiss", "accept"]
DEFAULT_MAX_EPISODE_STEPS = 30  # WebArena's budget
# BrowserGym's action parser (which still reads the re-serialised calls) is quadratic in the length of
# its input (100,000 characters took 19 s, 10,000 take about half a second); answers and typed texts
# stay far below this.
MAX_ACTION_CHARS = 10_000
_UPLOADS = ("upload_file", "mouse_upload_file")  # BrowserGym's actions that read local files
# The evaluators an env can score with: WebArena's, AgentOccam's rectified one (its relaxed fuzzy
# grader and joined fuzzy lists here; its corrected task labels are applied when a real task is made,
# see envs.registration), or WebArena-Verified's package (tasks with a Verified form, envs.verified).
EVALUATORS = {
    "webarena": EvalOptions(),
    "agentoccam": EvalOptions.agentoccam(),
    "webarena-verified": EvalOptions(scorer="webarena-verified"),
}
# Eval types a look-ahead can check without reading pages of the sites (see evaluate_now).
STATE_FREE_EVAL_TYPES = ("string_match", "url_match")
GREETING = "Hi! I am your UI assistant, I can perform web tasks for you. What can I help you with?"
# Tells BrowserGym which tab the user is looking at (Playwright has no notion of an active page).
_ACTIVATION_EVENTS = (
    "focus", "focusin", "load", "pageshow", "mousemove", "mouseup", "mousedown",
    "wheel", "keyup", "keydown", "input", "touchstart", "touchend",
)  # fmt: skip
# ``fast_steps``: only the events that make a tab active (it loads or is shown, BrowserGym's tab actions'
# pageshow, the window's own focus). The element and input events above come from the env's actions on the
# active tab (one action a step, on ``self.page``), which they only activate again, at three to five pings
# (each a round trip through Python) a click.
_TAB_ACTIVATION_EVENTS = ("load", "pageshow")
_WINDOW_FOCUS = " window.addEventListener('focus', (event) => { if (event.target === window) ping(); });"


def _activation_script(events: tuple[str, ...], more: str = "") -> str:
    """The document-start script that tells the env (``browsergym_page_activated``) its tab became active."""
    return (
        "(() => { const ping = () => window.browsergym_page_activated(); ping();"
        f" for (const name of {list(events)!r}) window.addEventListener(name, ping, {{capture: true}});"
        " document.addEventListener('visibilitychange', () => {"
        f" if (document.visibilityState === 'visible') ping(); }}, {{capture: true}});{more} }})();"
    )


_ACTIVATION_SCRIPT = _activation_script(_ACTIVATION_EVENTS)
_CLEAR_LEAVING = f"() => {{ window.{LEAVING_FLAG} = null; }}"
_TAB_ACTIVATION_SCRIPT = _activation_script(_TAB_ACTIVATION_EVENTS, _WINDOW_FOCUS)


class EpisodeError(RuntimeError):
    """The browser cannot continue this episode (crashed or closed)."""


class ActionRefused(ValueError):
    """The env refused to run an action; the message is the ``last_action_error``."""


def _text(value: Any) -> str:
    """An answer argument as text (a call without it answers the empty string)."""
    return "" if value is None else str(value)


def evaluation_error(evaluation: dict) -> dict[str, Any]:
    """``info`` entries for an evaluation that could not judge the episode (sites down, judge
    unreachable, evaluator failure): the rollout records them as the episode's error."""
    if not evaluation.get("error"):
        return {}
    return {
        "error": str(evaluation["error"]),
        "error_source": evaluation.get("error_source", "env"),
        "error_kind": evaluation.get("error_kind", "evaluator"),
    }


# Reads of one observation when navigations keep starting under it (a page that keeps redirecting
# itself is shown as it is after these).
_OBSERVE_TRIES = 3
# Seeds an env draws for the task when ``reset`` gets none (Gymnasium's rule: reproducible after one seed).
_MAX_TASK_SEED = 2**31 - 1


@dataclass
class _Episode:
    seed: int | None = None
    step_count: int = 0
    over: bool = False
    history: list[HistoryEntry] = field(default_factory=list)
    last_obs: dict | None = None
    dialogs: list[str] = field(default_factory=list)  # JavaScript dialogs of the current action


class WebArenaEnv(BrowserEnv):
    """A WebArena task as a Gymnasium environment (contract: docs/design.md, "envs")."""

    metadata: dict[str, Any] = {"render_modes": []}
    page_history: dict[playwright.sync_api.Page, None]  # BrowserGym's tab order, most recent last

    def __init__(
        self,
        task_entrypoint: type[EnvTask] = WebArenaTask,
        task_kwargs: dict | None = None,
        *,
        env_id: str | None = None,
        headless: bool = True,
        obs_mode: ObsMode = "full",
        max_episode_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
        dialog_response: DialogResponse = "dismiss",
        judge_model: str | None = None,
        judge_mock: Any = None,
        judge_options: dict[str, Any] | None = None,
        upload_dir: str | os.PathLike[str] | None = None,
        evaluator: str = "webarena",
        action_mapping: Any = None,
        action_timeout_ms: int = DEFAULT_ACTION_TIMEOUT_MS,
        force_actions: bool = False,
        fast_reset: bool = False,
        fast_steps: bool = False,
        resource_origins: tuple[str, ...] = (),
        slow_mo: int = 0,
        pre_observation_delay: float = 0.0,
        keep_browser: bool = True,
        record_network: bool = False,
        **browser_kwargs: Any,
    ) -> None:
        if obs_mode not in OBS_MODES:
            raise ValueError(f"obs_mode must be one of {', '.join(map(repr, OBS_MODES))}, not {obs_mode!r}")
        if max_episode_steps is not None and max_episode_steps < 1:
            raise ValueError("max_episode_steps must be at least 1 (or None: no limit of the env's own)")
        if dialog_response not in ("dismiss", "accept"):
            raise ValueError(f"dialog_response must be 'dismiss' or 'accept', not {dialog_response!r}")
        if evaluator not in EVALUATORS:
            raise ValueError(f"evaluator must be one of {', '.join(EVALUATORS)}, not {evaluator!r}")
        if browser_kwargs.pop("use_raw_page_output", False):
            raise ValueError("use_raw_page_output is not supported by WebArenaEnv")
        task_kwargs = dict(task_kwargs or {})
        host = task_kwargs.pop("host", None)
        if host is None:
            raise ValueError("task_kwargs needs 'host' (a SiteHost factory) beside the task's own arguments")
        super().__init__(
            task_entrypoint=task_entrypoint,
            task_kwargs=task_kwargs,
            headless=headless,
            slow_mo=slow_mo,
            action_mapping=action_mapping or default_action_set(action_timeout_ms, force=force_actions).to_python_code,
            pre_observation_delay=pre_observation_delay,
            **browser_kwargs,
        )
        self.env_id = env_id
        # The default set maps an action the same way every time, so its compiled code is reused.
        self._reuse_compiled = action_mapping is None
        # RL only: a reset restarts the task on the last episode's tab when the task can (EnvTask.restart)
        # instead of opening a fresh context and page, which LLM episodes get.
        self.fast_reset = fast_reset
        # RL only: a step that navigated nothing on the one tab is read in one evaluation (_observe_quiet).
        self.fast_steps = fast_steps
        self.action_timeout_ms = action_timeout_ms
        self.obs_mode: ObsMode = obs_mode
        self.max_episode_steps = max_episode_steps
        self.dialog_response: DialogResponse = dialog_response
        self.judge_model = judge_model
        self.judge_mock = judge_mock
        self.judge_options = dict(judge_options or {})
        self.upload_dir = os.path.realpath(upload_dir) if upload_dir is not None else None
        # Origins besides the task's sites that may serve sub-resources (never be navigated to): none by
        # default, so no page of the sites can send data elsewhere; the real WebArena map needs its tile
        # and routing servers here.
        self.resource_origins = tuple(sorted({origin(url) for url in resource_origins}))
        # False: close() stops this env's Chromium instead of parking it for the next env of the process
        # (vectorised sub-envs in worker processes, which exit without running exit handlers).
        self.keep_browser = keep_browser
        self.evaluator = evaluator
        # Off by default (a trace costs memory and a round trip per request at the end); on by default for
        # webarena-verified/<id>, whose evaluator reads it (envs.registration).
        self.record_network = record_network
        self._network: NetworkRecorder | None = None
        self.observation_space = observation_space()
        self.action_space = BrowserActionSpace()
        self._host_factory: SiteHostFactory = host
        self._host: SiteHost | None = None
        self._lease = BrowserLease(headless, slow_mo, self.pw_chromium_kwargs)
        self._extractor = PageExtractor(obs_mode, self.tags_to_mark)
        self._guard = UrlGuard(())
        self._navigations = NavigationWatch()
        self._tabs_pinned = False  # True while the env itself decides the active tab (see _focus_tab)
        self._tab_origins = TabOrigins()  # which tabs an exact restore may reload in place
        self._episode = _Episode()
        self.task: EnvTask | None = None

    # ------------------------------------------------------------------ public API

    @property
    def browser(self) -> playwright.sync_api.Browser | None:
        """The leased Chromium (BrowserGym's attribute name), None before the first reset."""
        lease = self.__dict__.get("_lease")
        return lease.browser if lease is not None else None

    @browser.setter
    def browser(self, value: None) -> None:
        # BrowserEnv's constructor sets it to None; the lease owns the browser from then on.
        if value is not None:
            raise AttributeError("the browser belongs to the env's BrowserLease")

    @property
    def host(self) -> SiteHost:
        if self._host is None:
            self._host = self._host_factory()
        return self._host

    @property
    def task_config(self) -> dict:
        """The task as data (WebArena: its JSON, placeholders replaced once a reset has resolved the site
        URLs; MiniWoB++: its name and settings)."""
        return self.task.config if self.task is not None else dict(self.task_kwargs.get("config") or {})

    @property
    def step_count(self) -> int:
        return self._episode.step_count

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        if self.task is None:
            return ()
        return tuple(sorted({origin(url) for url in self.task.site_urls.values()}))

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start an episode. ``seed`` seeds the task (MiniWoB++ draws its problem from it); without one the
        task seed is drawn from the env's generator, so one seeded reset makes the following ones
        reproducible too (Gymnasium's convention; vector envs' automatic resets rely on it)."""
        gym.Env.reset(self, seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(_MAX_TASK_SEED))
        if self.fast_reset and (restarted := self._restart_in_page(seed)) is not None:
            return restarted
        self._close_episode()
        try:
            # Fail fast (missing variables, dead servers) before any browser is launched.
            self.host.prepare()
            self.task = self._new_task(seed)
            self._tabs_pinned = True
            self._network = NetworkRecorder() if self.record_network else None
            self._open_context()
            self.page = self.context.new_page()
            goal, task_info = self.task.setup(page=self.page)
        except Exception:
            # Leave nothing running (missing variables, unreachable sites, a failed login).
            self._close_episode()
            self._lease.close()
            self._lease.release()
            raise
        self._start_chat([{"type": "text", "text": goal}] if isinstance(goal, str) else list(goal or []))
        self._episode = _Episode(seed=seed)
        self._settle()
        self._focus_tab(0)  # WebArena starts on the first of its start tabs
        return self._observe(), self._reset_info(task_info, seed)

    def step(self, action: str) -> tuple[dict, float, bool, bool, dict]:
        if self.task is None or self.context is None:
            raise RuntimeError("call reset() before step()")
        if self._episode.over:
            return self._error_transition("the episode has ended; call reset() to start a new one")
        try:
            return self._step(action)
        except (playwright.sync_api.Error, EpisodeError) as exc:
            return self._broken_transition(exc)

    def goto(self, url: str) -> tuple[dict, dict]:
        """Controlled navigation of the active tab (a search policy's checkpoint); counts no step."""
        if self.task is None or self.context is None:
            raise RuntimeError("call reset() before goto()")
        try:
            self._run(lambda: self._navigate(url), f"goto({url!r})")
            self._episode.history.append(HistoryEntry("goto", url, self.page.url))
            obs = self._observe()
        except (playwright.sync_api.Error, EpisodeError) as exc:
            obs, _, _, _, info = self._broken_transition(exc)
            return obs, info
        return obs, {"url": self.page.url, "step": self._episode.step_count}

    def end_episode(self, answer: str = "") -> tuple[dict, float, bool, bool, dict]:
        """End the episode now and score it as if the agent had answered ``answer``: truncated, not
        terminated. A study's rollout loop calls it when a budget of its own runs out."""
        if self.task is None or self.context is None:
            raise RuntimeError("call reset() before end_episode()")
        if self._episode.over:
            return self._error_transition("the episode has ended; call reset() to start a new one")
        try:
            self._require_browser()
            self._episode.over = True
            evaluation = self._evaluate_answer(answer)
            obs = self._observe()
        except (playwright.sync_api.Error, EpisodeError) as exc:
            return self._broken_transition(exc)
        info = {"evaluation": evaluation, "step": self._episode.step_count, **evaluation_error(evaluation)}
        return obs, float(evaluation["score"]), False, True, info

    def evaluate_now(self, answer: str) -> dict:
        """What the evaluator would say if the episode ended now with ``answer``; the episode goes on.

        Where the site host can snapshot its data (the local suite), the full evaluation runs and the
        site data is put back afterwards (``"method": "exact"``), so even a check with a side effect
        leaves no trace; the browser's pages are not touched. Elsewhere only the checks that read no
        page run (``string_match``, ``url_match``; ``"method": "partial"``, ``details["partial"]``).
        """
        if self.task is None or self.context is None:
            raise RuntimeError("call reset() before evaluate_now()")
        self._require_browser()
        token = self.host.snapshot_state()
        page, history = self.page, self.page_history.copy()
        try:
            if token is None:
                evaluation = self.task.evaluate(
                    self.page, answer, last_url=self.page.url, only=STATE_FREE_EVAL_TYPES, network=self._requests()
                )
            else:
                evaluation = self._evaluate_answer(answer)
        finally:
            if token is not None:
                self.host.restore_state(token)
            self.page, self.page_history = page, history
        return {**evaluation, "method": "exact" if token is not None else "partial"}

    def network_trace(self) -> dict | None:
        """The episode's requests so far as a HAR 1.2 document (:mod:`envs.network`); None unless recorded."""
        return self._network.har() if self._network is not None else None

    def answer_in(self, action: str) -> str | None:
        """The answer ``action`` would deliver (``send_msg_to_user`` / ``report_infeasible``), else None.

        The rollout's handle asks the outermost layer of a wrapped env (each action wrapper answers for
        its own grammar), so an exploring policy's answer can be held back instead of ending the episode.
        """
        if len(action) > MAX_ACTION_CHARS:
            return None
        try:
            calls = parse_action(action)
        except ActionSyntaxError:  # not an action at all: the step refuses it, nothing is delivered
            return None
        for call in calls:
            if call.name == "send_msg_to_user":
                return _text(call.argument(0, "text"))
            if call.name == "report_infeasible":
                return infeasible_answer(_text(call.argument(0, "reason")))
        return None

    def snapshot(self) -> EnvSnapshot:
        """Capture the episode: site data (if the site host can), cookies/storage, tabs with their page
        state, counters, history, and what the last observation showed (to check a restore against)."""
        if self.task is None or self.context is None:
            raise RuntimeError("call reset() before snapshot()")
        self._require_browser()
        pages = self.context.pages
        last = self._episode.last_obs or {}
        return EnvSnapshot(
            seed=self._episode.seed,
            site_state=self.host.snapshot_state(),
            storage_state=self.context.storage_state(),
            tab_urls=tuple(page.url for page in pages),
            active_tab=pages.index(self.page) if self.page in pages else 0,
            step_count=self._episode.step_count,
            history=tuple(self._episode.history),
            chat_messages=tuple(copy.deepcopy(self.chat.messages)),
            goal_object=tuple(copy.deepcopy(self.goal_object)),
            page_states=tuple(page_state.capture(page) for page in pages),
            shown=page_state.fingerprint_items(last.get("axtree_object") or {}),
        )

    def restore(self, snap: EnvSnapshot) -> tuple[dict, dict]:
        """Bring back ``snap``: exactly when it holds site data, else reset + replay; then each tab's
        page state, and a check of the restored observation against the snapshot's.

        The replay re-runs every recorded action (a replay that skipped actions would lose their
        effects on the sites) and checks the URL checkpoint after each one, navigating back to it
        when the page drifted; ``info["replay_mismatches"]`` counts those repairs.
        ``info["restore_exact"]`` says whether the restored page shows what the snapshot's last
        observation showed and every piece of page state went back; if not,
        ``info["restore_differences"]`` lists what differs (bounded).
        """
        info = self._restore_exact(snap) if snap.exact else self._restore_by_replay(snap)
        self._episode.step_count = snap.step_count
        self._episode.history = list(snap.history)
        self.chat.messages = copy.deepcopy(list(snap.chat_messages))
        if info["restore_method"] == "replay":
            self._settle()  # (an exact restore's tabs have loaded: each goto waited for its load event)
        unrestored = self._restore_page_states(snap)
        self._focus_tab(snap.active_tab)
        obs = self._observe()
        info.update(self._restore_check(snap, obs, unrestored))
        return obs, {"env_id": self.env_id, **self._task.task_info(), **info, "step": snap.step_count}

    def close(self) -> None:
        self._close_episode()
        self._lease.close(keep=self.keep_browser)
        if self._host is not None:
            try:
                self._host.close()
            finally:
                self._host = None
        self._lease.release()

    # ------------------------------------------------------------------ episode pieces

    def _reset_info(self, task_info: dict, seed: int) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            **task_info,
            "task_info": task_info,
            "seed": seed,
            "max_episode_steps": self.max_episode_steps,
            "evaluator": self.evaluator,
            "record_network": self.record_network,
            "browser_version": self.browser.version if self.browser is not None else None,
        }

    def _restart_in_page(self, seed: int) -> tuple[dict, dict] | None:
        """``fast_reset``: the next episode on the one tab the last episode of this env left, when its task
        can start there (:meth:`EnvTask.restart`); None (nothing changed) when it cannot."""
        if self.task is None or self.context is None or self._network is not None or not self._lease.alive():
            return None
        if self.context.pages != [self.page]:
            return None
        task = self._new_task(seed)
        mark = self._navigations.mark()
        reads: list[dict] = []  # the page as each of the task's evaluations left it: the last one is now

        def evaluate(script: str, arg: Any) -> Any:
            result, read = self._extractor.evaluate_read(self.page, script, arg, task.state_script)
            reads.append(read)
            return result

        try:
            restarted = task.restart(self.page, evaluate)
        except playwright.sync_api.Error as exc:
            logger.debug("in-page reset failed, opening a fresh page: %s", exc)
            restarted = None
        if restarted is None:
            task.teardown()
            return None
        self.task.teardown()
        self.task = task
        goal, task_info = restarted
        self.chat.close()
        self._start_chat([{"type": "text", "text": goal}])
        self._episode = _Episode(seed=seed)
        quick = None
        if self._quiet(mark) and (quick := self._observe_quiet(reads[-1] if reads else None)) is None:
            self._settle()
        return quick[0] if quick is not None else self._observe(), self._reset_info(task_info, seed)

    def _new_task(self, seed: int | None) -> EnvTask:
        return self.task_entrypoint(
            seed=seed, host=self.host, judge_model=self.judge_model, judge_mock=self.judge_mock,
            judge_options=self.judge_options, eval_options=EVALUATORS[self.evaluator], **self.task_kwargs,
        )  # fmt: skip

    def _open_context(self, storage_state: dict | None = None) -> None:
        """A fresh browser context (cookies, storage, tabs) on the reused browser, guarded."""
        viewport = self.viewport or self._task.viewport
        context_kwargs = {
            "viewport": viewport,
            "locale": self.locale or self._task.locale,
            "timezone_id": self.timezone_id or self._task.timezone_id,
            "record_video_dir": f"{self.record_video_dir}/task_video" if self.record_video_dir else None,
            "record_video_size": viewport if self.record_video_dir else None,
            **self.pw_context_kwargs,  # the caller's settings win
        }
        if storage_state is not None:
            context_kwargs["storage_state"] = storage_state
        try:
            self.context = self._lease.ensure().new_context(**context_kwargs)
        except playwright.sync_api.Error:  # died since the last episode without us noticing
            self._lease.mark_dead()
            self.context = self._lease.ensure().new_context(**context_kwargs)
        self.context.set_default_timeout(self.timeout or self._task.timeout)
        self.context.expose_binding(
            "browsergym_page_activated", lambda source: self._activate_page_from_js(source["page"])
        )
        self.context.add_init_script(_TAB_ACTIVATION_SCRIPT if self.fast_steps else _ACTIVATION_SCRIPT)
        if self.fast_steps:
            self.context.add_init_script(LEAVING_SCRIPT)
        self.context.on("page", self._on_page)
        if self._network is not None:
            self._network.attach(self.context)
        self._guard = UrlGuard(self.allowed_origins, self.resource_origins)
        self._guard.install(self.context)
        self._navigations = NavigationWatch()
        self._navigations.install(self.context)
        self.page_history = {}

    def _start_chat(self, goal_object: list[dict]) -> None:
        self.goal_object = goal_object
        viewport = self.viewport or self._task.viewport
        chat_class = HeadlessChat if self.headless else Chat
        self.chat = chat_class(
            headless=self.headless,
            chat_size=(500, max(viewport["height"], 800)),
            record_video_dir=self.record_video_dir,
        )
        self.chat.add_message(role="assistant", msg=GREETING)
        for message in goal_object:
            if message["type"] == "text":
                self.chat.add_message(role="user", msg=message["text"])
            else:
                image = message["image_url"]
                self.chat.add_message(role="user_image", msg=image["url"] if isinstance(image, dict) else image)
        self.start_time = time.time()
        self.last_action = ""
        self.last_action_error = ""
        self.infeasible_message_received = False

    def _step(self, action: str) -> tuple[dict, float, bool, bool, dict]:
        self._require_browser()
        episode = self._episode
        episode.step_count += 1
        info, send_message, report_infeasible = self.pre_step()
        messages_before = len(self.chat.messages)

        label = action if len(action) <= MAX_ACTION_CHARS else action[:200] + "..."
        quiet = self._run(lambda: self._execute(action, send_message, report_infeasible), label)
        info["action_exec_stop"] = time.time()
        # A task that ended by itself (MiniWoB++) has its verdict already; its own clock running out
        # is a truncation.
        quick = self._observe_quiet() if quiet else None
        if quiet and quick is None:  # the fast read found the action's navigation after all
            self._after_action()
        state = quick[1] if quick is not None else None
        if self._guard.blocked:  # what the URL guard refused during this action (also in last_action_error)
            info["blocked_navigation"] = list(self._guard.blocked)
        if self._guard.blocked_requests:  # sub-resources of other origins the pages asked for
            info["blocked_requests"] = list(self._guard.blocked_requests)
        episode.history.append(HistoryEntry("step", action, self.page.url))
        answer = answer_from_chat(self.chat.messages) if len(self.chat.messages) > messages_before else None
        outcome = None
        if answer is None:
            outcome = self._task.check_state(self.page, state) if quick is not None else self._task.check(self.page)
        obs = quick[0] if quick is not None else self._observe()
        timed_out = bool(outcome and outcome.get("timed_out"))
        limit = self.max_episode_steps
        out_of_steps = answer is None and outcome is None and limit is not None and episode.step_count >= limit
        reward = 0.0
        info["step"] = episode.step_count
        evaluation = outcome
        if answer is not None or out_of_steps:
            evaluation = self._evaluate_answer(answer or "", state)
        if evaluation is not None:
            episode.over = True
            reward = float(evaluation["score"])
            info["evaluation"] = evaluation
            info.update(evaluation_error(evaluation))
        terminated = answer is not None or (outcome is not None and not timed_out)
        return obs, reward, terminated, out_of_steps or timed_out, info

    def _execute(self, action: str, send_message: Any, report_infeasible: Any) -> None:
        """Run a BrowserGym action string on the active page: exactly the calls :meth:`_checked` accepted."""
        calls = self._checked(action)
        if self._reuse_compiled:
            execute_compiled(compiled_action(self.action_mapping, calls), self.page, send_message, report_infeasible)
            return
        code = self.action_mapping(calls) if self.action_mapping else calls
        execute_python_code(
            code, self.page, send_message_to_user=send_message, report_infeasible_instructions=report_infeasible
        )

    def _checked(self, action: str) -> str:
        """The canonical calls of ``action`` (what runs), or :class:`ActionRefused`: too long to parse, not
        calls only (:mod:`envs.action_parser`), a ``goto`` off the sites, an upload from outside
        ``upload_dir``."""
        if len(action) > MAX_ACTION_CHARS:
            raise ActionRefused(
                f"the action is {len(action):,} characters long; actions are limited to {MAX_ACTION_CHARS:,} "
                "characters (shorten the text)"
            )
        try:
            calls = parse_action(action)
        except ActionSyntaxError as exc:
            raise ActionRefused(f"Invalid action: {exc}") from exc
        for call in calls:
            refused = None
            if call.name == "goto":
                url = call.argument(0, "url")
                refused = self._guard.check(url) if isinstance(url, str) else None
            elif call.name in _UPLOADS:
                refused = self._upload_refusal(call.argument(1 if call.name == "upload_file" else 2, "file"))
            if refused is not None:
                raise ActionRefused(refused)
        return canonical(calls)

    def _upload_refusal(self, files: Any) -> str | None:
        """An upload may only read regular files inside ``upload_dir`` (symbolic links resolved)."""
        paths = files if isinstance(files, list) else [files]
        if not paths:
            return None  # an empty list clears the file input
        if self.upload_dir is None:
            return "file uploads are disabled in this environment (no upload directory is allowed)"
        for path in paths:
            real = os.path.realpath(str(path))
            if os.path.commonpath([real, self.upload_dir]) != self.upload_dir or not os.path.isfile(real):
                name = os.path.basename(str(path))
                return f"cannot upload {name!r}: uploads come only from the allowed upload directory"
        return None

    def _navigate(self, url: str) -> None:
        """The active tab to ``url``, if it is on the task's sites."""
        blocked = self._guard.check(url)
        if blocked is not None:
            raise ActionRefused(blocked)
        self.page.goto(url)

    def _run(self, operation, label: str) -> bool:
        """Run one browser operation as the agent's action: errors and blocked navigations -> last_action_error.
        True when it was quiet (:meth:`_quiet`): nothing to settle, the page can be read at once."""
        self.last_action = label
        if self._guard.bring_back(self.context):  # a tab that reached an error page after the last action
            self._settle()
        self._guard.begin_action()
        mark = self._navigations.mark()
        self._episode.dialogs.clear()
        try:
            operation()
            self.last_action_error = ""
        except ActionRefused as exc:
            self.last_action_error = str(exc)
        except playwright.sync_api.Error as exc:
            if not self._lease.alive() or isinstance(exc, BrowserCallTimeout):
                raise EpisodeError(f"the browser died during {label}: {exc}") from exc
            self.last_action_error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - unknown/malformed actions are the agent's error, not ours
            self.last_action_error = f"{type(exc).__name__}: {exc}"
        self._guard.await_new_tabs()
        self._guard.await_error_pages()
        if self._quiet(mark):
            self._active_page_check()
            return True
        self._after_action()
        return False

    def _after_action(self) -> None:
        """Settle what an action started: load states, the tabs the URL guard blocked or brought back, and
        the guard's error for the action."""
        self._settle()
        if self._guard.blocked and self._guard.close_blocked_tabs(self.context, wait=self._guard.blocked_popups > 0):
            self._active_page_check()
        if self._guard.bring_back(self.context):
            self._settle()
        self.last_action_error = self._guard.error() or self.last_action_error
        if self.fast_steps:
            self._clear_leaving()

    def _clear_leaving(self) -> None:
        """Clear the active page's :data:`LEAVING_FLAG`, which a navigation that left the page where it was
        (blocked, answered without a document) would leave set for the next fast read to wait on."""
        try:
            self.page.evaluate(_CLEAR_LEAVING)
        except playwright.sync_api.Error as exc:  # navigating or closed: a new document starts without it
            logger.debug("clearing the leaving flag of %s: %s", self.page.url, exc)

    def _quiet(self, mark: tuple[int, int]) -> bool:
        """``fast_steps``: whether what ran since ``mark`` left nothing to settle. The one tab is the active
        one (no other tab's activation to wait for), no navigation began or committed (no load state to
        wait for), and the URL guard blocked nothing and saw no failed navigation (nothing to report,
        close or bring back)."""
        return (
            self.fast_steps
            and not self.pre_observation_delay
            and self.context.pages == [self.page]
            and self._navigations.quiet_since(mark)
            and not (self._guard.blocked or self._guard.blocked_popups or self._guard.failed)
        )

    def _observe_quiet(self, done: dict | None = None) -> tuple[dict, Any] | None:
        """``fast_steps``: the observation of a quiet page (:meth:`_quiet`) and what the task's
        :attr:`EnvTask.state_script` returned, read together (:meth:`PageExtractor.read`; ``done``: the read
        an in-page reset made already). None when the page has frames, asked for a navigation or one began
        while it was read: the caller then settles the page, and the default path reads it."""
        mark = self._navigations.mark()
        try:
            read = self._extractor.read(self.page, self._task.state_script, done)
        except playwright.sync_api.Error as exc:
            if not page_changed(exc) or not self._lease.alive():
                raise
            logger.debug("the page changed while it was read, reading it the default way: %s", exc)
            read = None
        leaving = read is not None and read[3]
        if leaving:  # a navigation the page asked for, whose request may not have been seen yet
            self._navigations.await_start(self.page, mark, self.action_timeout_ms)
        if read is None or leaving or not self._quiet(mark):
            return None
        page_obs, title, state, _ = read
        obs = self._observation(page_obs, (title,))
        self._episode.last_obs = obs
        return obs, state

    def _evaluate_answer(self, answer: str, state: Any = None) -> dict:
        """Run the evaluator on ``answer`` and the current pages; the active page/tab history stay.
        ``state``: what the task's :attr:`EnvTask.state_script` returned just now (a fast step's read),
        which scores the episode without reading the pages when the task can (:meth:`EnvTask.evaluate_state`)."""
        evaluation = self._task.evaluate_state(self.page, answer, state)
        if evaluation is not None:
            return evaluation
        page, history = self.page, self.page_history.copy()
        for open_page in self.context.pages:  # the evaluator reads HTML: no bid marks in it
            unmark(open_page)
        evaluation = self._task.evaluate(self.page, answer, last_url=self.page.url, network=self._requests())
        self.page, self.page_history = page, history
        return evaluation

    def _requests(self) -> list[dict]:
        return self._network.entries() if self._network is not None else []

    def _settle(self) -> None:
        """Wait for load states (never a fixed sleep) and fix up which tab is active."""
        if self.pre_observation_delay:
            time.sleep(self.pre_observation_delay)
        self.context.cookies()  # a round trip that lets queued page-activation callbacks run
        self._wait_dom_loaded()
        if self._guard.blocked_popups:
            self._guard.close_blocked_tabs(self.context)
        self._active_page_check()

    def _observe(self) -> dict:
        """The observation of a settled page: read again (a few times at most) when a navigation began
        or committed while it was read, so an action whose effect is a navigation shows its new page."""
        for tries_left in reversed(range(_OBSERVE_TRIES)):
            started = self._navigations.started
            try:
                obs = self._get_obs()
            except playwright.sync_api.Error as exc:
                if tries_left == 0 or not page_changed(exc) or not self._lease.alive():
                    raise
                logger.debug("the page changed while it was read, reading it again: %s", exc)
            else:
                if tries_left == 0 or self._navigations.started == started:
                    break
            self._settle()
        self._episode.last_obs = obs
        return obs

    def _wait_dom_loaded(self) -> None:
        """BrowserGym's wait for each tab's DOM, after the navigations in flight have committed."""
        self._navigations.wait(self.context.pages)
        super()._wait_dom_loaded()

    def _get_obs(self) -> dict:
        page_obs = self._extractor.extract(self.page, self._wait_dom_loaded)
        return self._observation(page_obs, tuple(page.title() for page in self.context.pages))

    def _observation(self, page_obs: dict, titles: tuple[str, ...]) -> dict:
        """The observation: ``page_obs`` (:class:`PageExtractor`), the tabs' ``titles`` and the episode's fields."""
        pages = self.context.pages
        return {
            "chat_messages": tuple(copy.deepcopy(self.chat.messages)),
            "goal": legacy_goal(self.goal_object),
            "goal_object": tuple(copy.deepcopy(self.goal_object)),
            "open_pages_urls": tuple(page.url for page in pages),
            "open_pages_titles": titles,
            "active_page_index": np.asarray([pages.index(self.page)], dtype=np.int64),
            "url": self.page.url,
            **page_obs,
            "last_action": self.last_action,
            "last_action_error": self.last_action_error,
            "dialogs": tuple(self._episode.dialogs),
            "elapsed_time": np.asarray([time.time() - self.start_time], dtype=np.float64),
        }

    # ------------------------------------------------------------------ restore

    def _restore_exact(self, snap: EnvSnapshot) -> dict:
        if self.task is None:
            self.host.prepare()
            self.task = self._new_task(snap.seed)
        self.host.restore_state(snap.site_state)
        self._tabs_pinned = True
        if self.context is not None and self._lease.alive() and snap.reusable_context:
            if self.chat is not None:
                self.chat.close()
            cookies = snap.storage_state.get("cookies", [])
            first = self._reload_tabs(snap.tab_urls, cookies)
            if first is None:
                first = clean_context(self.context, self.allowed_origins, cookies)
                open_tabs(self.context, first, snap.tab_urls)
            self.page_history = {}
        else:
            self._close_episode(keep_task=True)
            self._open_context(storage_state=snap.storage_state)
            first = self.context.new_page()
            open_tabs(self.context, first, snap.tab_urls)
        self._start_chat(list(copy.deepcopy(snap.goal_object)))
        self.page = first
        self._episode = _Episode(seed=snap.seed)
        return {"restore_method": "exact"}

    def _reload_tabs(self, urls: tuple[str, ...], cookies: list[dict]) -> playwright.sync_api.Page | None:
        """The open tabs reloaded in place with ``urls`` (see :func:`envs.snapshot.reload_in_place`); None
        when a tab the snapshot needs cannot be reused, or would not leave its page."""
        needed = self.context.pages[: max(1, len(urls))]
        if not needed or not all(self._tab_origins.reusable(page) for page in needed):
            return None
        try:
            return reload_in_place(
                self.context, urls, self.allowed_origins, cookies, self._tab_origins, self._extractor.sessions
            )
        except playwright.sync_api.Error as exc:
            if not self._lease.alive():
                raise
            logger.debug("reloading the tabs in place failed, opening new ones: %s", exc)
            return None

    def _restore_page_states(self, snap: EnvSnapshot) -> list[str]:
        """Write each tab's page state back (:func:`envs.page_state.apply`); what could not be."""
        unrestored = []
        for index, (page, state) in enumerate(zip(self.context.pages, snap.page_states, strict=False)):
            if state is None:
                continue
            if page.url != snap.tab_urls[index]:
                unrestored.append(f"tab {index} shows {page.url}, not the snapshot's page")
                continue
            unrestored += [f"tab {index}: {what}" for what in page_state.apply(page, state)]
        return unrestored

    @staticmethod
    def _restore_check(snap: EnvSnapshot, obs: dict, unrestored: list[str]) -> dict:
        """``restore_exact`` and, when false, ``restore_differences``: the restored observation's page
        against the snapshot's last observation, and the page state that did not go back."""
        shown = page_state.fingerprint_items(obs.get("axtree_object") or {})
        differences = page_state.differences(snap.shown, shown) if snap.shown else []
        differences += unrestored[: page_state.MAX_DIFFERENCES]
        return {"restore_exact": not differences, **({"restore_differences": differences} if differences else {})}

    def _restore_by_replay(self, snap: EnvSnapshot) -> dict:
        self.reset(seed=snap.seed)
        mismatches = 0
        for entry in snap.history:
            if entry.kind == "goto":
                self._run(lambda url=entry.value: self._navigate(url), f"goto({entry.value!r})")
            else:
                self._extractor.mark(self.page)
                self._replay_action(entry.value)
            if entry.url and self.page.url != entry.url:
                mismatches += 1
                self._run(lambda url=entry.url: self._navigate(url), f"goto({entry.url!r})")
        replayed = sum(1 for entry in snap.history if entry.kind == "step")
        return {"restore_method": "replay", "replay_mismatches": mismatches, "replayed_actions": replayed}

    def _replay_action(self, action: str) -> None:
        def noop(text: str) -> None:
            """Answers are not replayed: a snapshot's chat log is restored as recorded."""

        self._run(lambda: self._execute(action, noop, noop), action)  # refused actions stay refused

    # ------------------------------------------------------------------ tabs

    def _focus_tab(self, index: int) -> None:
        """Make tab ``index`` active, whatever the tabs' own activation pings said.

        Opening start tabs (or a snapshot's tabs) makes every tab ping "activated" on load; a ping
        that reached Python after ``bring_to_front`` used to make the last-loaded tab active. Pings
        are ignored while tabs are pinned, and one evaluation per tab drains those still in flight
        (a tab's binding calls arrive before its evaluation's result) before the pin is lifted.
        """
        pages = self.context.pages
        for page in pages:
            try:
                page.evaluate("0")
            except playwright.sync_api.Error as exc:  # a crashed or closing tab has no pings to drain
                logger.debug("draining activation pings failed: %s", exc)
        self._tabs_pinned = False
        if pages:
            self.page = pages[min(max(index, 0), len(pages) - 1)]
            self.page.bring_to_front()
            # every tab is known (closing the active one falls back to another), this one most recent
            self.page_history = {page: None for page in pages if page != self.page}
            self.page_history[self.page] = None

    def _on_page(self, page: playwright.sync_api.Page) -> None:
        page.on("dialog", self._on_dialog)
        self._tab_origins.watch(page)

    def _activate_page_from_js(self, page: playwright.sync_api.Page) -> None:
        if not self._tabs_pinned:
            super()._activate_page_from_js(page)

    def _on_dialog(self, dialog: playwright.sync_api.Dialog) -> None:
        """A JavaScript alert/confirm/prompt: answer it as configured and show it in the observation.

        ``"dismiss"`` is what WebArena's and BrowserGym's browsers did (Playwright dismisses dialogs no
        one handles), so results stay comparable; unlike them, the agent now sees that it happened.
        """
        response = self.dialog_response
        text = f"{dialog.type} {dialog.message!r} ({'accepted' if response == 'accept' else 'dismissed'})"
        self._episode.dialogs.append(text)
        try:
            if response == "accept":
                dialog.accept()
            else:
                dialog.dismiss()
        except playwright.sync_api.Error as exc:  # the page went away with its dialog
            logger.debug("answering a dialog failed: %s", exc)

    # ------------------------------------------------------------------ lifecycle and failures

    def _require_browser(self) -> None:
        if not self._lease.alive():
            raise EpisodeError("the browser is not running (it crashed or was closed)")

    @property
    def _task(self) -> EnvTask:
        """The episode's task: the episode pieces run only between reset() and the episode's end."""
        if self.task is None:
            raise RuntimeError("no task: call reset() first")
        return self.task

    def _close_episode(self, keep_task: bool = False) -> None:
        """Close the episode's chat and context (not the browser); safe on a dead browser."""
        if self.task is not None and not keep_task:
            self.task.teardown()
            self.task = None
        for resource in (self.chat, self.context):
            if resource is not None:
                try:
                    resource.close()
                except Exception as exc:  # noqa: BLE001 - a crashed browser cannot close cleanly
                    logger.debug("closing %s failed: %s", type(resource).__name__, exc)
        self._extractor.forget()
        self.chat = None
        self.context = None
        self.page = None
        self.page_history = {}

    def _error_transition(self, message: str, **info: Any) -> tuple[dict, float, bool, bool, dict]:
        obs = copy.deepcopy(self._episode.last_obs) if self._episode.last_obs is not None else {}
        obs["last_action_error"] = message
        return obs, 0.0, False, True, {"error": message, **info}

    def _broken_transition(self, exc: Exception) -> tuple[dict, float, bool, bool, dict]:
        """The browser failed under the episode: end it (truncated, no evaluation) with a clear error.

        A call that timed out while the lease finds Chromium alive and answering means the page is hung
        by the agent's own action (a script that never yields): that ends the episode as the agent's
        failure, not as an infrastructure error that reports leave out and ``--resume`` would re-run
        forever. A killed driver or a killed or stopped Chromium fails the lease's check: a browser error."""
        self._episode.over = True
        timed_out = isinstance(exc, BrowserCallTimeout) or isinstance(exc.__cause__, BrowserCallTimeout)
        if timed_out and self._lease.alive(probe=True):
            message = f"the page stopped answering after the agent's action ({exc}); the episode ends as failed"
            logger.info("episode ended: %s", message)
            obs = copy.deepcopy(self._episode.last_obs) if self._episode.last_obs is not None else {}
            obs["last_action_error"] = message
            return obs, 0.0, True, False, {"page_hung": message, "step": self._episode.step_count}
        crashed = (
            not self._lease.alive()
            or isinstance(exc, (TargetClosedError, EpisodeError, BrowserCallTimeout))
            or "crashed" in str(exc).lower()
        )
        if crashed:  # the disconnect may not have reached us yet: the next reset starts a new browser
            self._lease.mark_dead()
        reason = "the browser died (crashed, was killed or stopped answering)" if crashed else f"the page failed: {exc}"
        logger.warning("episode ended: %s (%s)", reason, exc)
        return self._error_transition(
            f"{reason}; the episode cannot continue (call reset() to relaunch)",
            browser_dead=crashed,
            error_source="env",
            error_kind="browser",
        )
