"""Numeric MiniWoB++ envs under Gymnasium's vector envs (sync and async) and stable-baselines3's
SubprocVecEnv: each sub-env owns a browser, steps with masks, and closing leaves no process behind, also
after a worker was killed (checked by pid: every browser, driver and worker process the vector env started is gone)."""

from __future__ import annotations

import os
import signal
import time

import gymnasium as gym
import numpy as np
import pytest

from webarena_gym.benchmarks.support.procs import children_map, process_table
from webarena_gym.wrappers.numeric import numeric_env_fns

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TASKS = ["miniwob/click-test", "miniwob/click-button"]
# Started once per process by multiprocessing itself and stopped when this process exits: not ours.
_MULTIPROCESSING_HELPERS = ("multiprocessing.forkserver", "multiprocessing.resource_tracker")


def descendants() -> dict[int, str]:
    """pid -> command line of every live descendant of this process."""
    table = process_table()
    children = children_map(table)
    found, stack = {}, [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            if table[child][1] != "Z" and not any(h in table[child][2] for h in _MULTIPROCESSING_HELPERS):
                found[child] = table[child][2]
            stack.append(child)
    return found


def alive(pids: dict[int, str], timeout: float = 10.0) -> dict[int, str]:
    """The ones of ``pids`` still running (zombies count as gone) after waiting up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        table = process_table()
        left = {pid: cmd for pid, cmd in pids.items() if pid in table and table[pid][1] != "Z"}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def drive(reset, step, n_steps: int = 4) -> list[float]:
    """Reset, then step every sub-env with a random unmasked action; returns the rewards seen."""
    rng = np.random.default_rng(0)
    obs, info = reset()
    masks = info["action_mask"]
    assert obs.shape[0] == len(TASKS) and masks.shape == (len(TASKS), 33) and masks.any(axis=1).all()
    rewards = []
    for _ in range(n_steps):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, reward, terminated, truncated, info = step(actions)
        rewards += list(reward)
        masks = info["action_mask"]
    return rewards


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_gymnasium_vector_env_runs_and_closes(mode):
    before = set(descendants())
    fns = numeric_env_fns(TASKS)
    vec = gym.vector.SyncVectorEnv(fns) if mode == "sync" else gym.vector.AsyncVectorEnv(fns, context="forkserver")
    try:
        rewards = drive(lambda: vec.reset(seed=0), vec.step)
        assert 1.0 in rewards  # click-test's one button (or stop, masked in) ends with 1.0 at some point
        started = {pid: cmd for pid, cmd in descendants().items() if pid not in before}
        browsers = [cmd for cmd in started.values() if "chrom" in cmd]
        assert len({cmd for cmd in browsers if "--type=" not in cmd}) >= 1 and browsers
    finally:
        vec.close()
    assert not alive(started), alive(started)


def test_sb3_subproc_vec_env_with_masks_runs_and_closes():
    from stable_baselines3.common.vec_env import SubprocVecEnv

    before = set(descendants())
    vec = SubprocVecEnv(numeric_env_fns(TASKS), start_method="forkserver")
    try:
        obs = vec.reset()
        masks = np.stack(vec.env_method("action_masks"))
        assert obs.shape == (2, vec.observation_space.shape[0]) and masks.shape == (2, 33)
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        obs, rewards, dones, infos = vec.step(actions)
        assert rewards[0] == 1.0 and dones[0]  # click-test: the first slot is its button
        workers = {pid: cmd for pid, cmd in descendants().items() if pid not in before}
        assert sum("chrom" in cmd and "--type=" not in cmd for cmd in workers.values()) == 2  # one browser each
    finally:
        vec.close()
    assert not alive(workers), alive(workers)


def test_fast_sub_envs_leave_nothing_behind_when_a_worker_is_killed():
    before = set(descendants())
    vec = gym.vector.AsyncVectorEnv(numeric_env_fns(TASKS, fast=True), context="forkserver")
    try:
        drive(lambda: vec.reset(seed=0), vec.step, n_steps=3)  # click-test ends at once: in-page resets follow
        started = {pid: cmd for pid, cmd in descendants().items() if pid not in before}
        assert sum("chrom" in cmd and "--type=" not in cmd for cmd in started.values()) == 2  # one browser each
        os.kill(vec.processes[0].pid, signal.SIGKILL)
        vec.processes[0].join(timeout=30)
    finally:
        vec.close(terminate=True)
    assert not alive(started, timeout=30), alive(started)
