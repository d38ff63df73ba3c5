"""The policy interface: task spec from reset info, the registry and its variants, LLM discovery."""

from __future__ import annotations

import pytest

from webarena_gym.llm import LLM, CallSettings, Script
from webarena_gym.policies import available_policies, make_policy
from webarena_gym.policies import base as base
from webarena_gym.policies.base import Decision, EnvHandle, Policy, TaskSpec, build_llm, register_policy


def test_task_spec_from_reset_info():
    info = {
        "task_id": 612,
        "intent": "Compare two posts",
        "sites": ["reddit", "gitlab"],
        "start_url": "http://r/",
        "site_urls": {"reddit": "http://r", "homepage": "http://h"},
    }
    task = TaskSpec.from_reset("webarena/local.612", {"goal": "ignored when intent is given"}, info)
    assert (task.task_id, task.goal, task.sites, task.multi_site) == (
        612,
        "Compare two posts",
        ("reddit", "gitlab"),
        True,
    )
    assert task.homepage_url == "http://h" and task.site_urls["reddit"] == "http://r"
    single = TaskSpec.from_reset("e", {"goal": "from obs", "url": "http://s/"}, {"sites": ["shopping"]})
    assert single.goal == "from obs" and single.start_url == "http://s/" and not single.multi_site
    assert single.homepage_url is None and single.to_dict()["sites"] == ("shopping",)


def test_registry_lists_and_builds_the_methods():
    names = available_policies()
    assert {"react", "reference", "random"} <= set(names)
    policy = make_policy("random", seed=5)
    assert policy.name == "random" and policy.seed == 5 and not policy.uses_llm
    with pytest.raises(KeyError, match="unknown policy 'nope'; available: .*react"):
        make_policy("nope")


def test_variants_share_a_class_with_different_defaults(monkeypatch):
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))

    @register_policy("echo")
    @register_policy("echo_loud", volume=11)
    class Echo(Policy):
        def __init__(self, volume: int = 1):
            self.volume = volume

        def reset(self, task: TaskSpec) -> None:
            pass

        def act(self, obs, handle: EnvHandle) -> Decision:
            return Decision(action=f"stop [{self.volume}]")

    assert Echo().name == "echo" and make_policy("echo").volume == 1 and make_policy("echo_loud").volume == 11
    assert make_policy("echo_loud", volume=3).volume == 3 and make_policy("echo_loud").name == "echo_loud"
    with pytest.raises(ValueError, match="already registered"):
        register_policy("echo")(type("Other", (Echo,), {}))


def test_policy_llms_are_found_and_shared_llms_get_role_defaults():
    shared = LLM("gpt-4o", {"actor": CallSettings(temperature=0.0)}, script=Script({}))
    llm = build_llm({"actor": CallSettings(temperature=1.0), "judge": CallSettings(max_tokens=5)}, llm=shared)
    assert llm is shared and shared.settings("actor").temperature == 0.0 and shared.settings("judge").max_tokens == 5
    built = build_llm({"actor": CallSettings()}, model="openai/local", script={"actor": ["x"]})
    assert built.model == "openai/local" and built.script.remaining("actor") == 1

    class Two(Policy):
        def __init__(self):
            self.actor, self.judge, self.other = shared, built, "not an llm"

        def reset(self, task):
            pass

        def act(self, obs, handle):
            return Decision(action=None)

    assert Two().llms() == [shared, built] and Two().state() == {} and Two().max_steps == 30
