"""Registration: cheap ``import webarena_gym``, the 812 real ids and the local ones, kwargs reaching the env."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest

from webarena_gym import envs
from webarena_gym.envs.env import WebArenaEnv
from webarena_gym.envs.registration import N_REAL_TASKS, real_task_config
from webarena_gym.envs.sites import RealSiteHost


def test_import_is_cheap_and_registers_everything():
    code = (
        "import json, sys, time; t = time.perf_counter(); import webarena_gym, gymnasium as gym; "
        "print(json.dumps({'s': time.perf_counter() - t, 'heavy': [m for m in ('litellm', 'playwright', "
        "'browsergym', 'torch') if m in sys.modules], 'n': sum(k.startswith('webarena/') for k in gym.registry), "
        "'cost_map': __import__('os').environ.get('LITELLM_LOCAL_MODEL_COST_MAP')}))"
    )
    env = {"PATH": "/usr/bin:/bin"}  # no LITELLM_* set by the parent
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                    check=True).stdout)  # fmt: skip
    assert out["heavy"] == []
    assert out["n"] >= N_REAL_TASKS
    assert out["cost_map"] == "True"


def test_real_ids_match_the_shipped_tasks():
    assert all(f"webarena/{i}" in gym.registry for i in range(N_REAL_TASKS))
    assert len(envs.list_env_ids("real")) == N_REAL_TASKS
    assert real_task_config(310)["task_id"] == 310
    assert "webarena/812" not in gym.registry


def test_make_310_constructs_without_servers_and_passes_kwargs():
    env = gym.make("webarena/310", headless=False, obs_mode="axtree", judge_model="judge-x", judge_mock="correct")
    try:
        inner = env.unwrapped
        assert isinstance(inner, WebArenaEnv) and inner.env_id == "webarena/310"
        assert (inner.headless, inner.obs_mode, inner.judge_model, inner.judge_mock) == (
            False, "axtree", "judge-x", "correct"
        )  # fmt: skip
        assert inner.max_episode_steps == 30
        assert inner.task_config["start_url"] == "__GITLAB__"  # resolved at reset, from WA_GITLAB
        assert inner.browser is None  # nothing launched before reset
        host = inner.host
        assert isinstance(host, RealSiteHost) and host.sites == ("gitlab",)
    finally:
        env.close()


def test_envs_make_gives_max_episode_steps_to_the_env():
    env = envs.make("webarena/310", max_episode_steps=5)
    try:
        assert env.unwrapped.max_episode_steps == 5
        # no Gymnasium TimeLimit: it would truncate without running the evaluator
        wrapper, names = env, []
        while wrapper is not wrapper.unwrapped:
            names.append(type(wrapper).__name__)
            wrapper = wrapper.env
        assert "TimeLimit" not in names
    finally:
        env.close()


def test_list_env_ids_filters():
    gitlab = envs.list_env_ids(site="gitlab")
    assert gitlab and all("gitlab" in real_task_config(int(i.split("/")[1]))["sites"] for i in gitlab)
    template = envs.list_env_ids(template=323)
    assert "webarena/310" in template
    assert all(real_task_config(int(i.split("/")[1]))["intent_template_id"] == 323 for i in template)
    assert envs.list_env_ids(site="gitlab", template=323) == template
    with pytest.raises(ValueError, match="suite"):
        envs.list_env_ids("other")


def test_local_ids_follow_the_local_registry():
    registry = pytest.importorskip("webarena_gym.envs.local.registry")
    tasks = registry.load_tasks()
    if not tasks:
        pytest.skip("the local suite has no tasks yet")
    ids = envs.list_env_ids("local")
    assert ids == [f"webarena/local.{t['task_id']}" for t in tasks]
    assert all(i in gym.registry for i in ids)
    site = tasks[0]["sites"][0]
    assert envs.list_env_ids("local", site=site) == [
        f"webarena/local.{t['task_id']}" for t in tasks if site in t["sites"]
    ]
    env = gym.make(ids[0], obs_mode="axtree")
    try:
        inner = env.unwrapped
        assert inner.env_id == ids[0] and type(inner.host).__name__ == "LocalSiteHost"
        assert inner.task_config["task_id"] == tasks[0]["task_id"]
    finally:
        env.close()


def test_agentoccams_evaluator_is_reachable_from_both_makes():
    corrected = envs.make("webarena/16", evaluator="agentoccam")
    fixed_intent = gym.make("webarena/603", evaluator="agentoccam")
    plain = envs.make("webarena/16")
    try:
        # its label corrections are applied to the task (the joined fuzzy list of tasks 16-20) ...
        assert corrected.unwrapped.evaluator == "agentoccam"
        assert corrected.unwrapped.task_config["eval"]["reference_answers"]["fuzzy_match"] == [
            "driving: 2min; walking: 16min"
        ]
        assert "budget apartment" in fixed_intent.unwrapped.task_config["intent"]  # a typo fixed in the intent
        # ... and WebArena's labels and evaluator stay the default
        assert plain.unwrapped.evaluator == "webarena"
        assert plain.unwrapped.task_config["eval"]["reference_answers"]["fuzzy_match"] == [
            "driving: 2min",
            "walking: 16min",
        ]
    finally:
        for env in (corrected, fixed_intent, plain):
            env.close()
    with pytest.raises(ValueError, match="evaluator must be one of webarena, agentoccam"):
        envs.make("webarena/16", evaluator="lenient")
