"""The one episode loop every method runs through, and the environment handle it lends to policies.

``run_episode`` builds the env for the policy's wrappers preset, resets env and policy, and asks the
policy for one decision per step until the episode ends or a budget runs out; it records everything in
a :class:`~experiments.trajectory.Trajectory`. It never raises for a failing policy, LLM or browser:
the episode ends and the trajectory says where and why (``err_msg``, ``stack_trace``, ``error_source``,
``error_kind``); :attr:`~experiments.trajectory.Trajectory.infrastructure_error` tells an outage (the
model provider, the browser, the sites, the judge) from the policy's own failure.

Budgets (see :mod:`policies.base`): the loop owns both. The *decision* budget (``max_steps``, default the
policy's own, e.g. 30 for ReAct, 20 for AgentOccam) counts ``act`` calls on the executed path; the
*interaction* budget (``max_interactions``, default the policy's, often none) counts every env action
the policy causes, through ``Decision.action`` or ``handle.step``. The env runs without a step limit of
its own, so nothing truncates the episode in the middle of a handle call: when a budget is spent the
loop ends the episode through the env's ``end_episode(answer)``, which still runs the evaluator
(``forced_stop``, ``budget_exhausted``), with the answer the policy gives for that case
(:meth:`policies.base.Policy.forced_stop_answer`: WebArena's early-stop message for ReAct,
AgentOccam's failure message). Restores and gotos are counted apart; the actions a replay restore
re-ran count as interactions too (they ran in the browser again), and also apart.

The LLM budgets (calls, tokens, cost; the policy's ``max_llm_*`` options) are enforced by the LLM layer
(:mod:`llm.budget`) for every role; when one is spent, the refused call raises out of ``act`` (or
``reset``) and the loop ends the episode the same way, ``budget_exhausted`` naming the LLM budget.
"""

from __future__ import annotations

import time
import traceback
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import gymnasium as gym

from webarena_gym.experiments.trajectory import HandleCall, StepRecord, Trajectory, jsonable, scrub
from webarena_gym.llm import LLMBudgetExhausted, LLMCall, LLMError, LLMLimits
from webarena_gym.policies.base import (
    Budget,
    BudgetExhausted,
    BudgetUse,
    Decision,
    EnvHandleError,
    HandleUsageError,
    Info,
    Obs,
    Policy,
    StepResult,
    TaskSpec,
)
from webarena_gym.policies.final_answer import finalize
from webarena_gym.wrappers.forwarding import call_env

INITIAL = "initial"  # the handle's token for "the state right after reset"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


_HANDLE_INFO_KEYS = {
    "restore_method",
    "replay_mismatches",
    "replayed_actions",
    "restore_exact",
    "restore_differences",
    "reward",
    "terminated",
    "truncated",
    "action_error",
    "answer",
    "score",
    "method",
}


class RolloutHandle:
    """:class:`policies.base.EnvHandle` over the wrapped env: every call goes through the whole wrapper
    chain (:func:`wrappers.forwarding.call_env`), is counted against the episode's budgets and is
    appended to the current step's ``handle_calls``. Failures are recorded and re-raised as
    :class:`EnvHandleError` so a policy may recover (or let the episode end)."""

    def __init__(
        self, env: gym.Env, seed: int, budget: Budget, traj: Trajectory, *, lookahead: bool, score_trials: bool
    ) -> None:
        self._env = env
        self._seed = seed
        self._budget = budget
        self._traj = traj
        self._lookahead = lookahead
        self._score_trials = score_trials
        self._snapshots: dict[str, Any] = {}
        self._record: list[HandleCall] = []
        self.counters = traj.counters
        self.obs: Obs | None = None  # latest observation produced by a handle operation
        self.current: Obs = {}  # the observation the policy is deciding on (before any handle move)
        self.last_step: StepResult | None = None  # set when a handle step ended the episode
        self._done = False
        self._answer_in: Callable[[str], str | None] = env.get_wrapper_attr("answer_in")

    # -- protocol ------------------------------------------------------------------------------------

    @property
    def initial(self) -> str:
        return INITIAL

    @property
    def done(self) -> bool:
        return self._done

    @property
    def budget(self) -> BudgetUse:
        c = self.counters
        return BudgetUse(
            decisions=c["decisions"],
            decision_limit=self._budget.decisions,
            interactions=c["interactions"],
            interaction_limit=self._budget.interactions,
            restores=c["restores"],
            gotos=c["gotos"],
        )

    def snapshot(self) -> str:
        def run() -> tuple[str, Obs | None, Info]:
            token = f"snap{len(self._snapshots)}"
            self._snapshots[token] = call_env(self._env, "snapshot")
            return token, None, {}

        return self._op("snapshot", None, run)

    def restore(self, token: str) -> tuple[Obs, Info]:
        def run() -> tuple[tuple[Obs, Info], Obs, Info]:
            if token == INITIAL:
                obs, info = self._env.reset(seed=self._seed)
                info = {**info, "restore_method": "reset"}
            elif token in self._snapshots:
                obs, info = call_env(self._env, "restore", self._snapshots[token])
            else:
                raise HandleUsageError(f"unknown snapshot token {token!r}")
            self._raise_env_error(info)
            self.counters["restores"] += 1
            replayed = int(info.get("replayed_actions") or 0)
            self.counters["replayed_actions"] += replayed
            self.counters["interactions"] += replayed  # each ran in the browser again (the card's count)
            return (obs, info), obs, info

        return self._op("restore", token, run)

    def goto(self, url: str) -> tuple[Obs, Info]:
        def run() -> tuple[tuple[Obs, Info], Obs, Info]:
            obs, info = call_env(self._env, "goto", url)
            self._raise_env_error(info)
            self.counters["gotos"] += 1
            return (obs, info), obs, info

        return self._op("goto", url, run)

    def step(self, action: str) -> StepResult:
        def run() -> tuple[StepResult, Obs, Info]:
            answer = self._answer_in(action)
            if answer is not None:  # held back: only Decision.action delivers the final answer
                self.counters["intercepted_answers"] += 1
                obs = self.obs if self.obs is not None else self.current
                return (obs, 0.0, False, False, {"answer": answer, "intercepted": True}), obs, {"answer": answer}
            left = self.budget.interactions_left
            if left is not None and left <= 0:
                raise BudgetExhausted(
                    "interactions", f"the interaction budget ({self._budget.interactions} actions) is spent"
                )
            obs, reward, terminated, truncated, info = self._env.step(action)
            result: StepResult = (obs, float(reward), terminated, truncated, info)
            if _reached_env(info):
                self.counters["interactions"] += 1
            if terminated or truncated:  # the env ended the episode itself (a dead browser)
                self._done, self.last_step = True, result
            error = obs.get("last_action_error") or info.get("action_error") or None
            summary = {"reward": float(reward), "terminated": terminated, "truncated": truncated, "action_error": error}
            return result, obs, summary

        return self._op("step", action, run)

    def evaluate(self, answer: str) -> dict[str, Any]:
        def run() -> tuple[dict[str, Any], None, Info]:
            if not self._lookahead:
                raise HandleUsageError(
                    "look-ahead evaluation is not enabled for this policy (its configuration must allow it)"
                )
            result = jsonable(call_env(self._env, "evaluate_now", answer))
            self.counters["lookahead_calls"] += 1
            self._traj.lookahead.append(
                {
                    "step": len(self._traj.steps) - 1,
                    "answer": answer,
                    "score": result.get("score"),
                    "method": result.get("method"),
                }  # fmt: skip
            )
            return result, None, {"score": result.get("score"), "method": result.get("method")}

        return self._op("evaluate", answer, run)

    def end_trial(self, answer: str | None = None, outcome: str = "", **notes: Any) -> None:
        def run() -> tuple[None, None, Info]:
            trials = self._traj.trials
            started = trials[-1]["end_step"] + 1 if trials else 0
            trial = {
                "index": len(trials),
                "start_step": started,
                "end_step": len(self._traj.steps) - 1,
                "interactions": self.counters["interactions"],
                "answer": answer,
                "outcome": outcome,
                "notes": jsonable(notes),
                "score": None,
                "method": None,
            }
            if self._score_trials:  # for the report only: the policy never sees this verdict
                result = call_env(self._env, "evaluate_now", answer or "")
                trial["score"], trial["method"] = float(result.get("score", 0.0)), result.get("method")
            trials.append(trial)
            return None, None, {"score": trial["score"], "method": trial["method"]}

        self._op("end_trial", answer, run)

    # -- bookkeeping ---------------------------------------------------------------------------------

    def begin_decision(self, obs: Obs) -> list[HandleCall]:
        """Start recording a new decision's handle calls (returned list is filled in place)."""
        self._record, self.obs, self.current = [], None, obs
        return self._record

    @staticmethod
    def _raise_env_error(info: Info) -> None:
        """The env reports a broken browser in ``info["error"]`` instead of raising; the handle raises."""
        if info.get("error"):
            raise EnvHandleError(str(info["error"]))

    def _op(self, op: str, arg: str | None, run: Callable[[], tuple[Any, Obs | None, Info]]) -> Any:
        if self._done:
            raise HandleUsageError(f"handle.{op}: the episode is already over")
        call = HandleCall(op=op, arg=arg)
        self._record.append(call)
        start = time.perf_counter()
        try:
            value, obs, info = run()
        except EnvHandleError as exc:
            call.error = str(exc)
            raise
        except Exception as exc:
            call.error = f"{type(exc).__name__}: {exc}"
            raise EnvHandleError(f"handle.{op}({arg!r}) failed: {call.error}") from exc
        finally:
            call.elapsed_s = time.perf_counter() - start
        if obs is not None:
            self.obs = obs
            call.url = obs.get("url")
        call.info = jsonable({k: v for k, v in info.items() if k in _HANDLE_INFO_KEYS})
        return value


def _reached_env(info: Info) -> bool:
    """Whether a step sent anything to the browser (an action wrapper reports ``browser_action=None``
    for an invalid or memory-only command, which costs no interaction)."""
    return "browser_action" not in info or info["browser_action"] is not None


def _make_env(env_id: str, preset: str, env_kwargs: dict[str, Any]) -> gym.Env:
    from webarena_gym.wrappers.presets import make_env

    return make_env(env_id, preset, **env_kwargs)


def _save_screenshot(obs: Obs, directory: Path, index: int) -> str | None:
    """PNG of the screenshot the policy saw; ``None`` when the env produced none (axtree mode)."""
    shot = obs.get("screenshot")
    if shot is None or getattr(shot, "ndim", 0) != 3 or shot.shape[0] < 2:
        return None
    from PIL import Image

    name = f"step_{index}.png"
    directory.mkdir(parents=True, exist_ok=True)
    Image.fromarray(shot).save(directory / name)
    return name


def _fail(traj: Trajectory, source: str, exc: BaseException) -> None:
    traj.err_msg = f"{type(exc).__name__}: {exc}"
    traj.stack_trace = "".join(traceback.format_exception(exc))
    traj.error_source = source
    traj.error_kind = _error_kind(exc) if source != "policy" else None


def _error_kind(exc: BaseException) -> str | None:
    """What failed under an LLM or env error: the LLM error's kind, else the browser or the sites."""
    import playwright.sync_api

    from webarena_gym.envs.env import EpisodeError
    from webarena_gym.envs.sites import SitesUnavailableError

    if isinstance(exc, LLMError):
        return exc.kind
    if isinstance(exc, SitesUnavailableError):
        return "sites"
    browser = playwright.sync_api.Error | EpisodeError
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:  # raised from, or while handling, a browser error
        if isinstance(link, browser):
            return "browser"
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None


def _env_error(traj: Trajectory, info: Info) -> bool:
    """Record an error the env reported in ``info`` (a dead browser, sites or judge down); True if any."""
    if not info.get("error"):
        return False
    traj.err_msg = str(info["error"])
    traj.error_source = str(info.get("error_source") or "env")
    traj.error_kind = info.get("error_kind")
    return True


def _record_calls(rec: StepRecord, traj: Trajectory, calls: list[LLMCall]) -> None:
    rec.llm_calls = [scrub(jsonable(c.to_dict())) for c in calls]
    for call in calls:
        traj.images.update(call.images)


def _record_decision(rec: StepRecord, traj: Trajectory, decision: Decision, calls: list[LLMCall]) -> None:
    seen = {id(c) for c in calls}
    _record_calls(rec, traj, calls + [c for c in decision.llm_calls if id(c) not in seen])
    rec.action = decision.action or None
    rec.thought = decision.thought
    rec.parsed = jsonable(decision.parsed)
    rec.decision_error = decision.error


def _record_env_step(rec: StepRecord, traj: Trajectory, result: StepResult) -> None:
    obs, reward, terminated, truncated, info = result
    rec.reward = float(reward)
    rec.terminated, rec.truncated = bool(terminated), bool(truncated)
    rec.action_error = obs.get("last_action_error") or info.get("action_error") or None
    rec.browser_action = info.get("browser_action")
    traj.reward = float(reward) if (terminated or truncated) else traj.reward
    traj.terminated, traj.truncated = bool(terminated), bool(truncated)
    if terminated or truncated:
        traj.evaluation = jsonable(info.get("evaluation")) if info.get("evaluation") is not None else None
    _env_error(traj, info)  # the env ended the episode itself, or could not judge it


def run_episode(
    env_id: str,
    policy: Policy,
    *,
    seed: int = 0,
    max_steps: int | None = None,
    max_interactions: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
    out_dir: str | Path | None = None,
    screenshots: bool = False,
    score_trials: bool = True,
) -> Trajectory:
    """Run one episode of ``policy`` on ``env_id``; see the module docstring. Never raises for
    policy, LLM or browser failures (``KeyboardInterrupt`` still stops the process).

    ``max_steps`` / ``max_interactions`` override the policy's budgets. ``score_trials``: the loop scores
    each trial a multi-trial policy ends (``handle.end_trial``) for the report, without telling the policy.
    """
    interactions = max_interactions if max_interactions is not None else policy.max_interactions
    budget = Budget(
        decisions=int(max_steps if max_steps is not None else policy.max_steps),
        interactions=interactions,
        llm=next((llm.limits for llm in policy.llms() if llm.limits.any), LLMLimits()),
    )
    env_kwargs = dict(env_kwargs or {})
    env_kwargs.setdefault("max_episode_steps", None)  # the loop owns the budgets (see the module docstring)
    if screenshots:
        env_kwargs.setdefault("obs_mode", "full")  # only full observations carry a screenshot
    traj = Trajectory(
        env_id=env_id,
        policy={"name": policy.name, "preset": policy.preset, "config": scrub(jsonable(policy.config()))},
        seed=seed,
        max_steps=budget.decisions,
        # the LLM limits appear when set, so a study without them records its budgets as before
        budget={"decisions": budget.decisions, "interactions": budget.interactions}
        | (budget.llm.to_dict() if budget.llm.any else {}),
        env_kwargs=scrub(jsonable(env_kwargs)),
        started_at=_now(),
    )
    traj.oracle_assisted = policy.allows_lookahead()
    out = Path(out_dir) if out_dir is not None else None
    start = time.perf_counter()
    env: gym.Env | None = None
    llm_log: list[LLMCall] = []
    for llm in policy.llms():
        llm.log = llm_log
    try:
        env = _make_env(env_id, policy.preset, env_kwargs)
        obs, info = env.reset(seed=seed)
        traj.reset_info = jsonable(info)
        traj.timings["reset_s"] = time.perf_counter() - start
    except Exception as exc:
        _fail(traj, "env", exc)
        return _finish(traj, env, policy, out, start)

    try:
        task = TaskSpec.from_reset(env_id, obs, info, budget)
        traj.task = jsonable(task.to_dict())
        for llm in policy.llms():
            llm.begin_episode()
        policy.reset(task)
    except LLMBudgetExhausted as exc:  # a method that calls its model before the first step
        _end_by_budget(traj, env, policy, exc.budget)
        return _finish(traj, env, policy, out, start)
    except Exception as exc:
        _fail(traj, "llm" if isinstance(exc, LLMError) else "policy", exc)
        return _finish(traj, env, policy, out, start)

    handle = RolloutHandle(env, seed, budget, traj, lookahead=policy.allows_lookahead(), score_trials=score_trials)
    answer_in = env.get_wrapper_attr("answer_in")
    contract = info.get("response_contract")  # WebArena-Verified scoring: answers go through the final-answer step
    while True:
        if traj.counters["decisions"] >= budget.decisions:
            _end_by_budget(traj, env, policy, "decisions")
            break
        rec = StepRecord(
            index=len(traj.steps), url=str(obs.get("url", "")), observation=str(obs.get("text") or ""), action=None
        )
        traj.steps.append(rec)
        started = time.perf_counter()
        if screenshots and out is not None:
            rec.screenshot = _save_screenshot(obs, out, rec.index)
        try:
            decision = _decide(policy, obs, handle, rec, traj, llm_log)
        except LLMBudgetExhausted as exc:
            traj.counters["decisions"] += 1
            _end_by_budget(traj, env, policy, exc.budget)
            break
        traj.counters["decisions"] += 1
        if decision is None:
            break
        if handle.done:  # the env ended the episode under a handle call (a dead browser)
            assert handle.last_step is not None
            _record_env_step(rec, traj, handle.last_step)
            rec.action = None
            break
        obs = handle.obs if handle.obs is not None else obs  # a moved browser: the action applies there
        if not decision.action:
            rec.timings["step_s"] = time.perf_counter() - started
            continue
        left = handle.budget.interactions_left
        if left is not None and left <= 0 and answer_in(decision.action) is None:
            rec.action_error = "not run: the interaction budget is spent (only an answer may follow)"
            _end_by_budget(traj, env, policy, "interactions")
            break
        t1 = time.perf_counter()
        try:
            reasked = _final_answer(contract, answer_in(decision.action), task.goal, policy, rec, traj)
            if reasked is not None:  # the re-asked response is the agent's answer: terminated, not truncated
                obs, reward, _, _, info = call_env(env, "end_episode", reasked)
                result: StepResult = (obs, float(reward), "evaluation" in info, "evaluation" not in info, info)
            else:
                obs, reward, terminated, truncated, info = env.step(decision.action)
                result = (obs, float(reward), terminated, truncated, info)
        except Exception as exc:
            _fail(traj, "llm" if isinstance(exc, LLMError) else "env", exc)
            break
        finally:
            rec.timings["env_s"] = time.perf_counter() - t1
        if _reached_env(result[4]):
            traj.counters["interactions"] += 1
        _record_env_step(rec, traj, result)
        obs = result[0]
        rec.timings["step_s"] = time.perf_counter() - started
        if rec.terminated or rec.truncated:
            break
    traj.tree = _tree_of(policy)
    return _finish(traj, env, policy, out, start)


def _decide(
    policy: Policy, obs: Obs, handle: RolloutHandle, rec: StepRecord, traj: Trajectory, llm_log: list[LLMCall]
) -> Decision | None:
    """Ask the policy for a decision and record it; ``None`` when it failed (recorded in ``traj``).
    A spent LLM budget is recorded on the step and raised on, for the loop to end the episode."""
    calls = handle.begin_decision(obs)
    del llm_log[:]
    t0 = time.perf_counter()
    try:
        decision = policy.act(obs, handle)
        if not isinstance(decision, Decision):
            raise TypeError(f"{type(policy).__name__}.act returned {type(decision).__name__}, not Decision")
    except LLMBudgetExhausted as exc:
        rec.decision_error = f"no decision: {exc}"
        rec.timings["act_s"] = time.perf_counter() - t0
        rec.handle_calls = [jsonable(vars(c)) for c in calls]
        _record_calls(rec, traj, list(llm_log))
        raise
    except Exception as exc:
        source = _error_source(exc)
        _fail(traj, source, exc)
        decision = None
    rec.timings["act_s"] = time.perf_counter() - t0
    rec.timings["llm_s"] = sum(c.latency_s for c in llm_log)
    rec.handle_calls = [jsonable(vars(c)) for c in calls]
    if decision is None:
        _record_calls(rec, traj, list(llm_log))
        return None
    _record_decision(rec, traj, decision, list(llm_log))
    try:
        rec.policy_state = jsonable(policy.state())
    except Exception as exc:
        rec.policy_state = {"error": f"{type(exc).__name__}: {exc}"}
    return decision


def _final_answer(
    contract: dict[str, Any] | None, answer: str | None, goal: str, policy: Policy, rec: StepRecord, traj: Trajectory
) -> str | None:
    """Run the final-answer step on an answer under a response contract (:mod:`policies.final_answer`);
    returns the re-asked response to score instead of the policy's answer, or None (score the action)."""
    if contract is None or answer is None:
        return None
    llms = policy.llms()
    final = finalize(answer, contract, goal, llms[0] if llms else None)
    traj.final_answer = jsonable(final.to_dict())
    if final.call is not None:
        rec.llm_calls.append(scrub(jsonable(final.call.to_dict())))
    return final.text if final.text != answer else None


def _error_source(exc: BaseException) -> str:
    """Who failed: the model provider, the environment (a handle call the browser could not do) or the
    policy itself (its own bug, or a handle call it may not make)."""
    if isinstance(exc, LLMError):
        return "llm"
    if isinstance(exc, EnvHandleError) and not isinstance(exc, HandleUsageError):
        return "env"
    return "policy"


def _end_by_budget(traj: Trajectory, env: gym.Env, policy: Policy, which: str) -> None:
    """A budget is spent without the env ending: the episode ends with the policy's answer for that
    case, so the evaluator still scores the state (a failing policy hook answers nothing)."""
    traj.forced_stop = True
    traj.budget_exhausted = which
    try:
        answer = str(policy.forced_stop_answer(which) or "")
    except Exception as exc:  # a policy bug must not cost the episode its score
        warnings.warn(f"{type(policy).__name__}.forced_stop_answer failed: {exc}", stacklevel=2)
        answer = ""
    try:
        _, reward, _, _, info = call_env(env, "end_episode", answer)
    except Exception as exc:
        _fail(traj, "env", exc)
        return
    traj.evaluation = jsonable(info.get("evaluation")) if info.get("evaluation") is not None else None
    if _env_error(traj, info):
        return
    traj.reward, traj.truncated = float(reward), True


def _tree_of(policy: Policy) -> dict[str, Any] | None:
    try:
        tree = policy.search_tree()
    except Exception as exc:  # a reporting failure must not lose the episode
        return {"error": f"{type(exc).__name__}: {exc}"}
    return jsonable(tree.to_dict()) if tree is not None else None


def _network_trace(env: gym.Env) -> dict[str, Any] | None:
    """The episode's recorded requests (HAR), None when the env recorded none."""
    try:
        trace = env.get_wrapper_attr("network_trace")
    except AttributeError:  # an env of another kind
        return None
    try:
        return trace()
    except Exception as exc:  # noqa: BLE001 - the episode is decided; a dead browser must not hide it
        warnings.warn(f"reading the network trace of the episode failed: {type(exc).__name__}: {exc}", stacklevel=2)
        return None


def _finish(traj: Trajectory, env: gym.Env | None, policy: Policy, out: Path | None, start: float) -> Trajectory:
    for llm in policy.llms():
        llm.log = None
        if traj.budget_exhausted is None and llm.spent.exhausted:  # a method that answered the refusal itself
            traj.budget_exhausted = llm.spent.exhausted
    try:
        traj.final_policy_state = jsonable(policy.state())
    except Exception as exc:
        traj.final_policy_state = {"error": f"{type(exc).__name__}: {exc}"}
    if env is not None:
        traj.network = _network_trace(env)
        try:
            env.close()
        except Exception as exc:  # the episode is already decided; a dead browser must not hide it
            warnings.warn(f"closing {traj.env_id} failed: {type(exc).__name__}: {exc}", stacklevel=2)
    traj.finished_at = _now()
    traj.timings["total_s"] = time.perf_counter() - start
    if out is not None:
        try:
            traj.save(out)
        except Exception as exc:  # noqa: BLE001 - the caller still gets the episode (e.g. a full disk)
            warnings.warn(f"writing the trajectory of {traj.env_id} failed: {type(exc).__name__}: {exc}", stacklevel=2)
    return traj
