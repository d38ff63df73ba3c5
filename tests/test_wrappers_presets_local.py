"""Presets on the local suite: a task solved by AgentOccam commands through both wrappers (make_env), and
go_home on a multi-site task (real Chromium, real local Flask sites)."""

from __future__ import annotations

import pytest

from webarena_gym.wrappers.presets import PRESETS, make_env


def _local_env_ids() -> list[str]:
    from webarena_gym.envs.registration import list_env_ids

    return list_env_ids("local")


@pytest.mark.browser
@pytest.mark.slow
def test_local_task_solved_with_agentoccam_commands():
    """A local-suite task through make_env('agentoccam'): its reference solution, as AgentOccam commands."""
    from webarena_gym.envs.local.registry import load_solutions

    solutions = load_solutions()
    env_id = next(i for i in _local_env_ids() if _translatable(solutions.get(_task_id(i))))
    env = make_env(env_id, "agentoccam", headless=True)
    try:
        obs, info = env.reset(seed=0)
        reward, terminated = 0.0, False
        for step in solutions[_task_id(env_id)]:
            obs, reward, terminated, _, info = env.step(_as_command(step, obs))
            assert obs["last_action_error"] == "", (step, obs["last_action_error"])
        assert terminated and reward == 1.0
    finally:
        env.close()


def _task_id(env_id: str) -> int:
    return int(env_id.rsplit(".", 1)[-1])


_COMMAND_OF = {"click", "fill", "select_option", "go_back", "send_msg_to_user"}


def _translatable(steps) -> bool:
    return bool(steps) and all(s["action"] in _COMMAND_OF for s in steps) and steps[-1]["action"] == "send_msg_to_user"


def _as_command(step: dict, obs: dict) -> str:
    """A reference-solution step (envs.local.reference format) as the AgentOccam command a model would write."""
    if step["action"] == "send_msg_to_user":
        return f"stop [{step.get('text', '')}]"
    if step["action"] == "go_back":
        return "go_back"
    target = step["target"]
    matches = [
        n["browsergym_id"]
        for n in obs["axtree_object"]["nodes"]
        if n.get("browsergym_id")
        and n.get("role", {}).get("value") == target["role"]
        and n.get("name", {}).get("value") == target["name"]
    ]
    element = matches[target.get("nth", 0)]
    if step["action"] == "fill":
        return f"type [{element}] [{step['value']}] [0]"
    if step["action"] == "select_option":
        option = next(
            n["browsergym_id"]
            for n in obs["axtree_object"]["nodes"]
            if n.get("role", {}).get("value") == "option" and n.get("name", {}).get("value") == step["value"]
        )
        return f"click [{option}]"
    return f"click [{element}]"


@pytest.mark.browser
@pytest.mark.slow
def test_go_home_on_a_multi_site_local_task():
    from webarena_gym.envs.local.registry import load_tasks

    task = next(t for t in load_tasks() if len(t["sites"]) > 1)
    env = make_env(f"webarena/local.{task['task_id']}", "agentoccam", headless=True)
    try:
        obs, info = env.reset(seed=0)
        home = info["site_urls"]["homepage"]
        assert "go_home" in info["commands"] and not obs["url"].startswith(home)
        obs, _, _, _, info = env.step("go_home")
        assert obs["last_action_error"] == "" and info["browser_action"] == f"goto('{home}')"
        assert obs["url"].rstrip("/") == home
        obs, _, _, _, info = env.step("goto [http://example.com/]")
        # AgentOccam does not offer goto (the reference accepted it silently; we do not)
        assert "not available here 'goto'" in info["action_error"] and obs["url"].rstrip("/") == home
    finally:
        env.close()


@pytest.mark.browser
@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_declares_every_observation_it_emits(name):
    env = make_env("webarena/local.0", name)
    try:
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs), sorted(set(obs) ^ set(env.observation_space.spaces))
        obs, *_ = env.step("click [999999]")  # an invalid command: the wrapper's own observation
        assert env.observation_space.contains(obs)
        obs, *_ = env.step("stop [000000195]")
        assert env.observation_space.contains(obs)
    finally:
        env.close()
