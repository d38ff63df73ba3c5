"""Tasks as the environment sees them (BrowserGym's task/env split), and WebArena's task.

:class:`EnvTask` is what :class:`envs.env.WebArenaEnv` needs from any task: the sites it runs on (a
:class:`SiteHost`, whose origins the URL guard allows), its setup (goal and start page), a per-step check
for tasks that end by themselves (MiniWoB++), and the evaluation of an answer. The environment decides
*when* an episode ends; the task knows *what* it is and how its end is scored.

:class:`WebArenaTask` is a WebArena task JSON (placeholders resolved) scored once, when the agent answers
or the step budget runs out, by WebArena's evaluator. MiniWoB++'s tasks are in :mod:`envs.miniwob`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any

import playwright.sync_api
from browsergym.core.task import AbstractBrowserTask

from .evaluation import verified
from .evaluation.evaluator import EvalOptions, Judge, evaluate, infeasible_answer
from .sites import SiteHost, SitesUnavailableError, replace_placeholders, sites_in_config

logger = logging.getLogger(__name__)

START_URL_SEPARATOR = " |AND| "
# Judge failures that say nothing about the agent's answer: the provider or its configuration failed.
JUDGE_OUTAGES = ("provider", "configuration")
ANSWER_ROLES = ("assistant", "infeasible")


def answer_from_chat(chat_messages: list[dict]) -> str | None:
    """The agent's final answer if its last chat message is one, else None.

    ``send_msg_to_user(text)`` gives ``text``; ``report_infeasible(reason)`` gives "N/A" followed by the
    reason (WebArena scores unachievable tasks by an exact "N/A" or by judging the stated reason). The
    first message is BrowserGym's greeting, never an answer.
    """
    if len(chat_messages) < 2 or chat_messages[-1]["role"] not in ANSWER_ROLES:
        return None
    last = chat_messages[-1]
    if last["role"] == "infeasible":
        return infeasible_answer(last["message"])
    return last["message"]


class EnvTask(AbstractBrowserTask):
    """A task of this project's environment, bound to the :class:`SiteHost` that serves its sites.

    Subclasses set ``host``, ``site_urls`` (site name -> base URL: the origins the agent may visit) and
    ``config`` (the task as data), and implement :meth:`setup`, :meth:`task_info` and :meth:`evaluate`.
    ``validate`` (BrowserGym's per-step hook) is derived from :meth:`check` and :meth:`evaluate`.
    """

    host: SiteHost
    site_urls: dict[str, str]
    config: dict
    # A page function whose result :meth:`check_state` judges: the env's ``fast_steps`` evaluates it in the
    # same page read as the observation, so :meth:`check` costs no round trip of its own.
    state_script = "() => null"

    @classmethod
    def get_task_id(cls) -> str:
        return "task"

    def task_info(self) -> dict[str, Any]:
        """What ``reset`` reports about the task in ``info`` (goal, sites, ids)."""
        raise NotImplementedError

    def restart(self, page: playwright.sync_api.Page, evaluate: Callable[[str, Any], Any]) -> tuple[str, dict] | None:
        """:meth:`setup` on the page a previous episode of the same task left, for the env's
        ``fast_reset``: the same goal and problem as a fresh page would get for this seed, without a new
        context and page. None when the task cannot start there (the env then opens a fresh page).
        ``evaluate(script, arg)`` runs a page function on ``page`` and reads the page with it
        (:meth:`envs.extraction.PageExtractor.evaluate_read`): the episode start goes through it, and the
        read of the last call is the episode's first observation, so nothing touches the page after it."""
        return None

    def check(self, page: playwright.sync_api.Page) -> dict[str, Any] | None:
        """After every action: the evaluation if the task has ended by itself, else None.

        WebArena tasks end only when the agent answers (None here); MiniWoB++ tasks end when the page
        says so. An evaluation is ``{"score", ...}`` as :meth:`evaluate` returns it, and may set
        ``"timed_out": True`` when the task's own clock ended the episode (a truncation, not a success
        or failure of the agent's).
        """
        return None

    def check_state(self, page: playwright.sync_api.Page, state: Any) -> dict[str, Any] | None:
        """:meth:`check`, given what :attr:`state_script` returned on ``page`` just now."""
        return self.check(page)

    def evaluate_state(self, page: playwright.sync_api.Page, answer: str, state: Any) -> dict[str, Any] | None:
        """:meth:`evaluate` from what :attr:`state_script` returned on ``page`` just now, for a task whose
        verdict is all in that state; None (the default) when the evaluation must read the pages."""
        return None

    def evaluate(
        self,
        page: playwright.sync_api.Page,
        answer: str,
        last_url: str | None = None,
        only: Collection[str] | None = None,
        network: Sequence[dict] = (),
    ) -> dict[str, Any]:
        """Score the episode ending now with ``answer``: ``{"score", "answer", "details", ...}``.
        ``network``: the episode's requests as HAR entries (:mod:`envs.network`), for checks that read them."""
        raise NotImplementedError

    def validate(self, page: playwright.sync_api.Page, chat_messages: list[dict]) -> tuple[float, bool, str, dict]:
        """BrowserGym's hook: done once the task ended by itself or the agent answered (then scored)."""
        outcome = self.check(page)
        if outcome is not None:
            return float(outcome["score"]), True, "", {"evaluation": outcome}
        answer = answer_from_chat(chat_messages)
        if answer is None:
            return 0.0, False, "", {}
        evaluation = self.evaluate(page, answer)
        return evaluation["score"], True, "", {"evaluation": evaluation}


class WebArenaTask(EnvTask):
    """A WebArena task config bound to a :class:`SiteHost`."""

    def __init__(
        self,
        seed: int | None,
        config: dict,
        host: SiteHost,
        judge_model: str | None = None,
        judge_mock: Any = None,
        judge_options: dict[str, Any] | None = None,
        eval_options: EvalOptions | None = None,
        timeout_ms: int = 10_000,
    ) -> None:
        super().__init__(seed)
        self.slow_mo = 0  # BrowserGym's default of 1 s per Playwright call is for human viewing
        self.timeout = timeout_ms
        self.host = host
        self.raw_config = config
        self.site_urls = {site: url for site, url in host.urls().items() if site in sites_in_config(config)}
        if "homepage" in host.urls():  # AgentOccam's go_home needs it, whatever the task's sites
            self.site_urls["homepage"] = host.urls()["homepage"]
        self.config: dict = replace_placeholders(config, host.urls())
        self.judge_model = judge_model  # None: the evaluator's default (WEBARENA_GYM_JUDGE_MODEL or WebArena's)
        self.judge_mock = judge_mock
        self.judge_options = dict(judge_options or {})  # Judge keywords: api_base, timeout, max_tokens ...
        self.eval_options = eval_options or EvalOptions()  # WebArena's evaluator unless told otherwise
        if self.verified and "verified" not in config:
            raise ValueError(
                f"task {config.get('task_id')} has no WebArena-Verified form; evaluator 'webarena-verified' scores "
                "webarena-verified/<id> tasks"
            )

    @property
    def verified(self) -> bool:
        """Whether WebArena-Verified's package scores this task (its response contract applies)."""
        return self.eval_options.scorer == "webarena-verified"

    @property
    def response_contract(self) -> dict[str, Any] | None:
        """The structured answer the task expects (``results_schema``), None when a free text answer is
        scored (WebArena's evaluator)."""
        if not self.verified:
            return None
        return {"results_schema": verified.results_schema(self.raw_config["verified"])}

    @classmethod
    def get_task_id(cls) -> str:
        return "webarena"

    @property
    def start_urls(self) -> list[str]:
        return [url.strip() for url in self.config["start_url"].split(START_URL_SEPARATOR) if url.strip()]

    def task_info(self) -> dict[str, Any]:
        config = self.config
        return {
            "task_id": config.get("task_id"),
            "sites": list(config.get("sites", [])),
            "intent": config["intent"],
            "intent_template_id": config.get("intent_template_id"),
            "eval_types": list(config.get("eval", {}).get("eval_types", [])),
            "start_url": config["start_url"],
            "site_urls": dict(self.site_urls),
            "response_contract": self.response_contract,
        }

    def setup(self, page: playwright.sync_api.Page) -> tuple[str, dict]:
        self.host.prepare()
        self.host.reset_state()
        if self.config.get("require_login", True):
            self.host.login(page.context, self.config.get("sites", []))
        urls = self.start_urls
        page.goto(urls[0])
        for url in urls[1:]:
            page.context.new_page().goto(url)
        goal = self.config["intent"]
        contract = self.response_contract
        if contract is not None:  # the answer's form is part of the goal every policy reads
            goal = f"{goal}\n\n{verified.response_instruction(contract['results_schema'])}"
        return goal, self.task_info()

    def evaluate(
        self,
        page: playwright.sync_api.Page,
        answer: str,
        last_url: str | None = None,
        only: Collection[str] | None = None,
        network: Sequence[dict] = (),
    ) -> dict[str, Any]:
        """Score ``answer`` and the final page with WebArena's evaluator, or ``answer`` and ``network`` with
        WebArena-Verified's (:attr:`verified`): ``{"score", "details"}``.

        Never raises. When the evaluation could not judge the agent's work, the result says why in
        ``error``, with ``error_source`` / ``error_kind``: the sites stopped answering before the
        evaluation (``"env"`` / ``"sites"``), the judge could not be reached or is misconfigured
        (``"llm"`` / ``"provider"`` or ``"configuration"``), or the evaluator itself failed (``"env"`` /
        ``"evaluator"``). Such a score of 0 is not a verdict, and studies count the episode as an error.
        ``only``: see :func:`envs.evaluation.evaluate`.
        """
        try:
            self.host.check()
        except SitesUnavailableError as exc:
            return {
                "score": 0.0, "answer": answer, "details": {},
                "error": f"the task's sites stopped answering before the evaluation: {exc}",
                "error_source": "env", "error_kind": "sites",
            }  # fmt: skip
        if self.verified:
            return self._evaluate_verified(answer, network, last_url or page.url)
        try:
            judge = Judge(self.judge_model, mock_response=self.judge_mock, **self.judge_options)
            result = evaluate(
                self.config,
                page,
                answer,
                judge=judge,
                last_url=last_url or page.url,
                urls=self.host.urls(),
                options=self.eval_options,
                only=only,
            )
        except Exception as exc:  # noqa: BLE001 - reported, not a verdict
            return self._evaluator_failed("evaluation", answer, exc)
        out = {"score": float(result.score), "answer": answer, "details": result.details}
        judge_failure = next(
            (f for f in result.details.get("judge", {}).get("failures", []) if f["kind"] in JUDGE_OUTAGES), None
        )
        if judge_failure is not None:
            out.update(error=judge_failure["error"], error_source="llm", error_kind=judge_failure["kind"])
        return out

    def _evaluator_failed(self, what: str, answer: str, exc: Exception) -> dict[str, Any]:
        """An evaluator that raised gives no verdict: an env error the report counts apart, not a score."""
        logger.warning("%s of task %s failed: %s", what, self.config.get("task_id"), exc)
        return {
            "score": 0.0, "answer": answer, "details": {}, "error": f"{type(exc).__name__}: {exc}",
            "error_source": "env", "error_kind": "evaluator",
        }  # fmt: skip

    def _evaluate_verified(self, answer: str, network: Sequence[dict], final_url: str) -> dict[str, Any]:
        """The package's verdict on the response and the requests (it reads no page, so a look-ahead gets
        the full evaluation too)."""
        try:
            result = verified.score(self.raw_config["verified"], answer, network, self.host.urls())
        except Exception as exc:  # noqa: BLE001 - reported, not a verdict
            return self._evaluator_failed("WebArena-Verified evaluation", answer, exc)
        return {"answer": answer, "final_url": final_url, **result}
