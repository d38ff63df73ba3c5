"""The one episode loop every method runs through, and the environment handle it lends to policies.

``run_episode`` builds the env for the policy's wrappers preset, resets env and policy, and asks the
policy for one decision per step until the episode terminates, truncates or the decision budget runs
out; it records everything in a :class:`~experiments.trajectory.Trajectory`. It never raises for a
failing policy, LLM or browser: the episode ends and the trajectory says where and why
(``err_msg``, ``stack_trace``, ``error_source``).

Budget: ``max_steps`` counts decisions (default: the policy's own, e.g. 30 for ReAct, 20 for
AgentOccam) and is also passed to the env as ``max_episode_steps``, whose truncation still runs the
evaluator. If decisions without an action exhaust the budget first, the loop ends the episode with an
empty answer through the base env so the evaluator still scores the final state (``forced_stop``).
"""

from __future__ import annotations

import time
import traceback
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import gymnasium as gym

from experiments.trajectory import HandleCall, StepRecord, Trajectory, jsonable, scrub
from policies.base import Decision, EnvHandleError, Info, Obs, Policy, StepResult, TaskSpec
from llm import LLMCall, LLMError

INITIAL = "initial"  # the handle's token for "the state right after reset"
FORCED_STOP_ACTION = 'send_msg_to_user("")'


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _through_wrappers(env: gym.Env, obs: Obs) -> Obs:
    """Apply the observation transforms of ``env``'s wrapper chain (innermost first) to a base-env obs,
    and tell stateful wrappers the page changed under them.

    Needed because snapshot restore and controlled navigation happen on the base env. A wrapper that
    remembers the last observation (the action wrapper validates ids against it) is resynchronised
    through its ``sync_observation(obs)`` method when it has one, else its ``_obs`` attribute.
    """
    chain = []
    layer = env
    while isinstance(layer, gym.Wrapper):
        chain.append(layer)
        layer = layer.env
    for wrapper in reversed(chain):
        if isinstance(wrapper, gym.ObservationWrapper):
            obs = wrapper.observation(obs)
    for wrapper in chain:
        if hasattr(wrapper, "sync_observation"):
            wrapper.sync_observation(obs)
        elif hasattr(wrapper, "_obs"):
            wrapper._obs = obs
    return obs


_HANDLE_INFO_KEYS = {"restore_method", "replay_mismatches", "reward", "terminated", "truncated", "action_error"}


def _raise_env_error(info: Info) -> None:
    """The env reports a broken browser in ``info["error"]`` instead of raising; the handle raises."""
    if info.get("error"):
        raise EnvHandleError(str(info["error"]))


class RolloutHandle:
    """:class:`policies.base.EnvHandle` over ``env.unwrapped.snapshot/restore/goto`` and ``env.step``.

    Every operation is appended to the current step's ``handle_calls``; failures are recorded and
    re-raised as :class:`EnvHandleError` so a policy may recover (or let the episode end).
    """

    def __init__(self, env: gym.Env, seed: int):
        self._env = env
        self._seed = seed
        self._snapshots: dict[str, Any] = {}
        self._record: list[HandleCall] = []
        self.obs: Obs | None = None  # latest observation produced by a handle operation
        self.last_step: StepResult | None = None  # set when a handle step ended the episode
        self._done = False

    # -- protocol ------------------------------------------------------------------------------------

    @property
    def initial(self) -> str:
        return INITIAL

    @property
    def done(self) -> bool:
        return self._done

    def snapshot(self) -> str:
        def run() -> tuple[str, Obs | None, Info]:
            token = f"snap{len(self._snapshots)}"
            self._snapshots[token] = self._env.unwrapped.snapshot()
            return token, None, {}

        return self._op("snapshot", None, run)

    def restore(self, token: str) -> tuple[Obs, Info]:
        def run() -> tuple[tuple[Obs, Info], Obs, Info]:
            if token == INITIAL:
                obs, info = self._env.reset(seed=self._seed)
                info = {**info, "restore_method": "reset"}
            elif token in self._snapshots:
                raw, info = self._env.unwrapped.restore(self._snapshots[token])
                obs = _through_wrappers(self._env, raw)
            else:
                raise EnvHandleError(f"unknown snapshot token {token!r}")
            _raise_env_error(info)
            return (obs, info), obs, info

        return self._op("restore", token, run)

    def goto(self, url: str) -> tuple[Obs, Info]:
        def run() -> tuple[tuple[Obs, Info], Obs, Info]:
            raw, info = self._env.unwrapped.goto(url)
            _raise_env_error(info)
            obs = _through_wrappers(self._env, raw)
            return (obs, info), obs, info

        return self._op("goto", url, run)

    def step(self, action: str) -> StepResult:
        def run() -> tuple[StepResult, Obs, Info]:
            result = self._env.step(action)
            obs, reward, terminated, truncated, info = result
            if terminated or truncated:
                self._done, self.last_step = True, result
            return (
                result,
                obs,
                {
                    "reward": float(reward),
                    "terminated": terminated,
                    "truncated": truncated,
                    "action_error": obs.get("last_action_error") or info.get("action_error") or None,
                },
            )

        return self._op("step", action, run)

    # -- bookkeeping ---------------------------------------------------------------------------------

    def begin_decision(self) -> list[HandleCall]:
        """Start recording a new decision's handle calls (returned list is filled in place)."""
        self._record, self.obs = [], None
        return self._record

    def _op(self, op: str, arg: str | None, run):
        if self._done:
            raise EnvHandleError(f"handle.{op}: the episode is already over")
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


def _make_env(env_id: str, preset: str, env_kwargs: dict[str, Any]) -> gym.Env:
    from wrappers.presets import make_env

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


def _record_decision(rec: StepRecord, decision: Decision, calls: list[LLMCall]) -> None:
    seen = {id(c) for c in calls}
    calls = calls + [c for c in decision.llm_calls if id(c) not in seen]
    rec.action = decision.action or None
    rec.thought = decision.thought
    rec.parsed = jsonable(decision.parsed)
    rec.decision_error = decision.error
    rec.llm_calls = [scrub(jsonable(c.to_dict())) for c in calls]


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
    if info.get("error"):  # the env ended the episode itself (dead browser, page failure)
        traj.err_msg, traj.error_source = str(info["error"]), "env"


def run_episode(
    env_id: str,
    policy: Policy,
    *,
    seed: int = 0,
    max_steps: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
    out_dir: str | Path | None = None,
    screenshots: bool = False,
) -> Trajectory:
    """Run one episode of ``policy`` on ``env_id``; see the module docstring. Never raises for
    policy, LLM or browser failures (``KeyboardInterrupt`` still stops the process)."""
    budget = int(max_steps if max_steps is not None else policy.max_steps)
    env_kwargs = dict(env_kwargs or {})
    env_kwargs.setdefault("max_episode_steps", budget)
    if screenshots:
        env_kwargs.setdefault("obs_mode", "full")  # only full observations carry a screenshot
    traj = Trajectory(
        env_id=env_id,
        policy={"name": policy.name, "preset": policy.preset, "config": scrub(jsonable(policy.config()))},
        seed=seed,
        max_steps=budget,
        env_kwargs=scrub(jsonable(env_kwargs)),
        started_at=_now(),
    )
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
        task = TaskSpec.from_reset(env_id, obs, info)
        traj.task = task.to_dict()
        for llm in policy.llms():
            llm.begin_episode()
        policy.reset(task)
    except Exception as exc:
        _fail(traj, "llm" if isinstance(exc, LLMError) else "policy", exc)
        return _finish(traj, env, policy, out, start)

    handle = RolloutHandle(env, seed)
    while len(traj.steps) < budget:
        rec = StepRecord(
            index=len(traj.steps), url=str(obs.get("url", "")), observation=str(obs.get("text") or ""), action=None
        )
        traj.steps.append(rec)
        started = time.perf_counter()
        if screenshots and out is not None:
            rec.screenshot = _save_screenshot(obs, out, rec.index)
        decision = _decide(policy, obs, handle, rec, traj, llm_log)
        if decision is None:
            break
        if handle.done:  # a handle step ended the episode inside the decision
            assert handle.last_step is not None
            _record_env_step(rec, traj, handle.last_step)
            rec.action = None
            break
        obs = handle.obs if handle.obs is not None else obs  # a moved browser: the action applies there
        ended = False
        if decision.action:
            t1 = time.perf_counter()
            try:
                result = env.step(decision.action)
            except Exception as exc:
                _fail(traj, "env", exc)
                break
            finally:
                rec.timings["env_s"] = time.perf_counter() - t1
            _record_env_step(rec, traj, result)
            obs, ended = result[0], rec.terminated or rec.truncated
        rec.timings["step_s"] = time.perf_counter() - started
        if ended:
            break
    else:
        _force_stop(traj, env)
    return _finish(traj, env, policy, out, start)


def _decide(
    policy: Policy, obs: Obs, handle: RolloutHandle, rec: StepRecord, traj: Trajectory, llm_log: list[LLMCall]
) -> Decision | None:
    """Ask the policy for a decision and record it; ``None`` when it failed (recorded in ``traj``)."""
    calls = handle.begin_decision()
    del llm_log[:]
    t0 = time.perf_counter()
    try:
        decision = policy.act(obs, handle)
        if not isinstance(decision, Decision):
            raise TypeError(f"{type(policy).__name__}.act returned {type(decision).__name__}, not Decision")
    except Exception as exc:
        source = "llm" if isinstance(exc, LLMError) else "env" if isinstance(exc, EnvHandleError) else "policy"
        _fail(traj, source, exc)
        decision = None
    rec.timings["act_s"] = time.perf_counter() - t0
    rec.timings["llm_s"] = sum(c.latency_s for c in llm_log)
    rec.handle_calls = [jsonable(vars(c)) for c in calls]
    if decision is None:
        rec.llm_calls = [scrub(jsonable(c.to_dict())) for c in llm_log]
        return None
    _record_decision(rec, decision, list(llm_log))
    try:
        rec.policy_state = jsonable(policy.state())
    except Exception as exc:
        rec.policy_state = {"error": f"{type(exc).__name__}: {exc}"}
    return decision


def _force_stop(traj: Trajectory, env: gym.Env) -> None:
    """Decision budget spent without the env ending: answer nothing so the evaluator still runs."""
    traj.forced_stop = True
    try:
        _, reward, _, _, info = env.unwrapped.step(FORCED_STOP_ACTION)
    except Exception as exc:
        _fail(traj, "env", exc)
        return
    traj.reward, traj.truncated = float(reward), True
    traj.evaluation = jsonable(info.get("evaluation")) if info.get("evaluation") is not None else None


def _finish(traj: Trajectory, env: gym.Env | None, policy: Policy, out: Path | None, start: float) -> Trajectory:
    for llm in policy.llms():
        llm.log = None
    try:
        traj.final_policy_state = jsonable(policy.state())
    except Exception as exc:
        traj.final_policy_state = {"error": f"{type(exc).__name__}: {exc}"}
    if env is not None:
        try:
            env.close()
        except Exception as exc:  # the episode is already decided; a dead browser must not hide it
            warnings.warn(f"closing {traj.env_id} failed: {type(exc).__name__}: {exc}", stacklevel=2)
    traj.finished_at = _now()
    traj.timings["total_s"] = time.perf_counter() - start
    if out is not None:
        traj.save(out)
    return traj
