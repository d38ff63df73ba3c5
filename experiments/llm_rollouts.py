"""Grouped rollouts of an LLM policy, in the shape GRPO-style trainers consume.

    from webarena_gym.experiments.llm_rollouts import collect

    groups = collect(my_generate, ["miniwob/click-button", "webarena/local.3"], n=8, instances=2, workers=2)
    for (env_id, seed), rollouts in groups.items():  # one group per task instance, n rollouts each
        for rollout in rollouts:
            rollout.reward                             # the episode's final reward (the task's evaluator)
            for turn in rollout.turns:
                turn.messages, turn.completion         # the prompt the policy sent and the model's answer
                turn.logprobs                          # its tokens, log-probabilities and ids, if the server sent them

``model`` is a litellm model string (any provider, or a local OpenAI-compatible server through
``api_base=...``), or a callable ``messages -> completion`` that runs in the caller's process (a trainer's
own model): the workers send each prompt back and wait for its completion, so the model is never copied
into them. ``batched=True`` passes the callable every prompt waiting at that moment as one list (return
one completion per prompt), for trainers that generate in batches.

Each rollout is one episode of an existing policy (``react`` by default: WebArena's chain-of-thought
prompt; any registered policy works) through the same env, wrappers and rollout loop as a study. A group
is ``n`` rollouts of one task *instance*: the same env id and the same seed, so on MiniWoB++ (which draws
its problem from the seed) every rollout of a group solves the same problem and the group's mean reward is
a baseline for each of them. ``instances`` seeds per task (``seed, seed + 1, ...``) make that many groups.
Rollouts run in ``workers`` processes, each with its own browser.

With ``logprobs=True`` every request asks for the sampled tokens' log-probabilities; whatever the server
returns (tokens, log-probabilities, token ids: see :mod:`llm.logprobs`) is kept on each turn.

The command line writes JSON lines, one rollout per line::

    python -m webarena_gym.experiments.llm_rollouts --model gpt-4o-mini --tasks miniwob:click-button,click-link --n 4 \\
        --out rollouts.jsonl
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, cast

from webarena_gym.llm.files import write_atomic
from webarena_gym.llm.redaction import redacted_json
from webarena_gym.llm.script import Script

Messages = list[dict[str, Any]]
Completer = Callable[[Messages], str]
BatchCompleter = Callable[[list[Messages]], list[str]]


@dataclass
class Turn:
    """One model call of a rollout: the prompt, the model's text, and what the env made of it."""

    messages: Messages
    completion: str
    role: str = "actor"  # the policy's call role (a policy may call its model for several purposes)
    action: str | None = None  # the command the turn's decision sent to the env (None: no action)
    action_error: str | None = None  # the env's or the policy's verdict on it
    logprobs: dict[str, Any] | None = None  # tokens, logprobs, token_ids, prompt_token_ids (when returned)


@dataclass
class Rollout:
    """One episode: every model call in order, and the reward the task's evaluator gave at the end."""

    env_id: str
    seed: int
    index: int  # its place in its group (the rollouts of one env id and seed)
    turns: list[Turn] = field(default_factory=list)
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    error: str | None = None  # the run's error (policy, model or env), if any

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Job:
    env_id: str
    seed: int
    index: int
    policy: str
    policy_config: dict[str, Any]
    max_steps: int | None
    env_kwargs: dict[str, Any]


def collect(
    model: str | Completer | BatchCompleter,
    tasks: str | Sequence[str],
    n: int,
    *,
    instances: int = 1,
    policy: str = "react",
    workers: int = 2,
    seed: int = 0,
    max_steps: int | None = None,
    batched: bool = False,
    logprobs: bool = False,
    policy_config: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
) -> dict[tuple[str, int], list[Rollout]]:
    """Run ``n`` rollouts of ``policy`` per task instance in ``workers`` processes; return them grouped by
    (env id, seed), ``instances`` seeds per task from ``seed`` on.

    ``tasks``: env ids or a task-set spec (``"miniwob:click-test,click-button"``, ``"local:site=map"``);
    ``max_steps`` defaults to each task's suite budget (MiniWoB++: 10) or else the policy's. Failures
    (unparseable answers, provider errors, a dead browser) end a rollout with ``error`` set; none raises.
    ``logprobs`` asks a model string's server for the sampled tokens' log-probabilities.
    """
    from webarena_gym.experiments import tasksets

    if n < 1 or instances < 1:
        raise ValueError(f"n and instances must be at least 1 (got n={n}, instances={instances})")
    infos = tasksets.resolve(tasks) if isinstance(tasks, str) else tasksets.resolve(",".join(tasks))
    config = dict(policy_config or {})
    remote = callable(model)
    if not remote:
        config["model"] = model
    if logprobs:
        config["request_options"] = {**config.get("request_options", {}), "logprobs": True}
    keys = [(t.env_id, seed + k, t.max_steps) for t in infos for k in range(instances)]
    jobs = [
        _Job(env_id, instance, i, policy, config, max_steps or budget, dict(env_kwargs or {}))
        for env_id, instance, budget in keys
        for i in range(n)
    ]
    groups: dict[tuple[str, int], list[Rollout]] = {(env_id, instance): [] for env_id, instance, _ in keys}
    for rollout in _run(jobs, model if remote else None, batched, workers):
        groups[(rollout.env_id, rollout.seed)].append(rollout)
    for rollouts in groups.values():
        rollouts.sort(key=lambda r: r.index)
    return groups


# -- workers ----------------------------------------------------------------------------------------


class _RemoteModel(Script):
    """A scripted LLM whose every answer, for any call role, comes from the collecting process."""

    def __init__(self, conn: Connection) -> None:
        super().__init__({})
        self._conn = conn

    def next(self, role: str, messages: list[Any]) -> str | BaseException:
        self._conn.send(("complete", messages))
        reply = self._conn.recv()
        if isinstance(reply, BaseException):
            return reply
        return str(reply)

    def remaining(self, role: str) -> int:
        return -1


def _rollout(job: _Job, conn: Connection, remote: bool) -> Rollout:
    from webarena_gym.experiments.rollout import run_episode
    from webarena_gym.policies import make_policy

    config = dict(job.policy_config)
    if remote:
        config["script"] = _RemoteModel(conn)
    try:
        policy = make_policy(job.policy, **config)
    except Exception as exc:  # noqa: BLE001 - a bad config is this rollout's error, not the collector's crash
        return Rollout(job.env_id, job.seed, job.index, error=f"{type(exc).__name__}: {exc}")
    traj = run_episode(job.env_id, policy, seed=job.seed, max_steps=job.max_steps, env_kwargs=job.env_kwargs)
    turns = []
    for step in traj.steps:
        for call in step.llm_calls:
            completion = (call.get("responses") or [""])[0] or ""
            turns.append(
                Turn(
                    messages=call.get("messages") or [],
                    completion=completion,
                    role=str(call.get("role") or "actor"),
                    action=step.action,
                    action_error=step.decision_error or step.action_error,
                    logprobs=(call.get("logprobs") or [None])[0],
                )
            )
    return Rollout(
        job.env_id,
        job.seed,
        job.index,
        turns=turns,
        reward=float(traj.reward),
        terminated=traj.terminated,
        truncated=traj.truncated,
        error=traj.err_msg,
    )


def _worker(conn: Connection, remote: bool, environ: dict[str, str]) -> None:
    os.environ.update(environ)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        conn.send(("done", _rollout(job, conn, remote)))


def _run(jobs: list[_Job], model: Any, batched: bool, workers: int) -> list[Rollout]:
    """Hand jobs to worker processes; answer their completion requests with ``model`` meanwhile."""
    if not jobs:
        return []
    ctx = mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods() else mp.get_context("spawn")
    remote = model is not None
    pool: list[tuple[mp.process.BaseProcess, Connection]] = []
    for _ in range(max(1, min(workers, len(jobs)))):
        parent, child = ctx.Pipe()
        proc: mp.process.BaseProcess = ctx.Process(target=_worker, args=(child, remote, dict(os.environ)), daemon=True)
        proc.start()
        child.close()
        pool.append((proc, parent))
    pending, done, busy = list(jobs), [], {}
    try:
        for _, conn in pool:
            if pending:
                busy[conn] = pending.pop(0)
                conn.send(busy[conn])
        while busy:
            ready = cast(list[Connection], wait(list(busy)))  # wait() returns the connections it was given
            requests: list[tuple[Connection, Any]] = []
            for conn in ready:
                try:
                    kind, payload = conn.recv()
                except EOFError:
                    job = busy.pop(conn)
                    done.append(Rollout(job.env_id, job.seed, job.index, error="the rollout worker died"))
                    continue
                if kind == "complete":
                    requests.append((conn, payload))
                    continue
                done.append(payload)
                del busy[conn]
                if pending:
                    busy[conn] = pending.pop(0)
                    conn.send(busy[conn])
            if requests:
                for (conn, _), answer in zip(requests, _answer(model, [p for _, p in requests], batched), strict=True):
                    conn.send(answer)
    finally:
        for proc, conn in pool:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
            conn.close()
    return done


def _answer(model: Any, prompts: list[Messages], batched: bool) -> list[str | BaseException]:
    """The model's completions for ``prompts``; a failing call becomes that rollout's error, not ours."""
    try:
        if batched:
            answers = list(model(prompts))
            if len(answers) != len(prompts):
                raise ValueError(f"the batched model returned {len(answers)} completions for {len(prompts)} prompts")
            return [str(a) for a in answers]
    except Exception as exc:  # noqa: BLE001 - reported in each waiting rollout
        return [RuntimeError(f"the model failed: {type(exc).__name__}: {exc}")] * len(prompts)
    results: list[str | BaseException] = []
    for prompt in prompts:
        try:
            results.append(str(model(prompt)))
        except Exception as exc:  # noqa: BLE001 - reported in that rollout
            results.append(RuntimeError(f"the model failed: {type(exc).__name__}: {exc}"))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m webarena_gym.experiments.llm_rollouts", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--model", required=True, help="litellm model string (e.g. gpt-4o-mini, ollama/llama3.1)")
    parser.add_argument("--api-base", default=None, help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--tasks", required=True, help="task set or env ids, e.g. miniwob:click-test,click-button")
    parser.add_argument("--n", type=int, default=4, help="rollouts per task instance (one group)")
    parser.add_argument("--instances", type=int, default=1, help="task instances (seeds) per task, one group each")
    parser.add_argument("--logprobs", action="store_true", help="ask the server for the tokens' log-probabilities")
    parser.add_argument("--policy", default="react")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--out", default="-", help="JSON lines file ('-': standard output)")
    args = parser.parse_args(argv)
    config = {"api_base": args.api_base} if args.api_base else {}
    groups = collect(
        args.model,
        args.tasks,
        args.n,
        instances=args.instances,
        logprobs=args.logprobs,
        policy=args.policy,
        workers=args.workers,
        seed=args.seed,
        max_steps=args.max_steps,
        policy_config=config,
    )
    text = "".join(redacted_json(r.to_dict()) + "\n" for rollouts in groups.values() for r in rollouts)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        write_atomic(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
