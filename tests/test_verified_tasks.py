"""WebArena-Verified's tasks: the 812 ids and their task sets equal the installed package's dataset as its
own API reads it, and the env's config carries the Verified intent, start pages and checks (offline)."""

from __future__ import annotations

import collections

import gymnasium as gym
import pytest
from webarena_verified import WebArenaVerified

from webarena_gym import envs
from webarena_gym.envs.registration import real_task_config
from webarena_gym.envs.task import START_URL_SEPARATOR
from webarena_gym.envs.verified import env_config, hard_task_ids
from webarena_gym.experiments import tasksets


@pytest.fixture(scope="module")
def package_tasks():
    return {task.task_id: task for task in WebArenaVerified().get_tasks()}


def test_ids_intents_and_revisions_equal_the_package_dataset(package_tasks):
    assert sorted(package_tasks) == list(range(812))
    assert envs.list_env_ids("verified") == [f"webarena-verified/{i}" for i in range(812)]
    assert all(f"webarena-verified/{i}" in gym.registry for i in range(812))
    assert "webarena-verified/812" not in gym.registry
    revisions = collections.Counter()
    for task_id, task in package_tasks.items():
        config = env_config(task_id, real_task_config(task_id))
        assert config["intent"] == task.intent, task_id
        assert config["revision"] == task.revision, task_id
        assert config["start_url"].split(START_URL_SEPARATOR) == list(task.start_urls), task_id
        assert tuple(config["sites"]) == tuple(site.value for site in task.sites), task_id
        assert [check["evaluator"] for check in config["verified"]["eval"]] == [c.evaluator for c in task.eval]
        revisions[task.revision] += 1
    # The figures: 793 tasks at revision 2, 19 at 3-4.
    assert revisions[2] == 793 and revisions[3] + revisions[4] == 19


def test_an_env_reads_the_verified_task_and_defaults_to_its_evaluator_and_trace(package_tasks):
    env = gym.make("webarena-verified/44")
    try:
        inner = env.unwrapped
        assert inner.task_config["intent"] == package_tasks[44].intent
        assert inner.task_config["eval"] == real_task_config(44)["eval"]  # WebArena's checks stay for "webarena"
        assert inner.evaluator == "webarena-verified" and inner.record_network
    finally:
        env.close()
    plain = gym.make("webarena-verified/44", evaluator="webarena", record_network=False)
    try:
        assert plain.unwrapped.evaluator == "webarena" and not plain.unwrapped.record_network
    finally:
        plain.close()


def test_task_sets_all_hard_and_per_site(package_tasks):
    everything = tasksets.resolve("webarena-verified")
    assert [t.env_id for t in everything] == [f"webarena-verified/{i}" for i in range(812)]
    hard = tasksets.resolve("webarena-verified:hard")
    assert len(hard) == 258 and {t.task_id for t in hard} == set(hard_task_ids())
    for site in ("gitlab", "shopping_admin", "map"):
        picked = {t.task_id for t in tasksets.resolve(f"webarena-verified:site={site}")}
        assert picked == {i for i, task in package_tasks.items() if site in {s.value for s in task.sites}}
    mixed = tasksets.resolve("webarena-verified/3,webarena/3")
    assert [t.env_id for t in mixed] == ["webarena-verified/3", "webarena/3"]
    assert mixed[0].eval_types == ("AgentResponseEvaluator",)
    # State-changing tasks keep BrowserGym's ordering, in Verified ids.
    real = {t.task_id: t.depends_on for t in tasksets.real_tasks()}
    assert all(
        t.depends_on == tuple(d.replace("webarena/", "webarena-verified/") for d in real[t.task_id]) for t in everything
    )
