"""The rollout collector for LLM RL trainers: grouped rollouts with per-turn prompts and completions and
the final reward, from a callable model answered in this process (through litellm's mock path in the
workers), on MiniWoB++ and on the local suite; a failing model becomes the rollout's error."""

from __future__ import annotations

import json
import re

import pytest
from model_server import ModelServer

from webarena_gym.experiments.llm_rollouts import collect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ANSWER = "Let's think step by step. In summary, the next action I will perform is ```{}```"


def button_clicker(messages):
    """On a MiniWoB++ page clicks the first button; elsewhere answers the local task's question."""
    text = messages[-1]["content"]
    button = re.search(r"\[(\d+)\] button", text)
    return ANSWER.format(f"click [{button.group(1)}]" if "/miniwob/" in text and button else "stop [hollister]")


def objective(messages) -> str:
    return re.search(r"OBJECTIVE: (.*)", messages[-1]["content"]).group(1)


def test_callable_model_on_miniwob_and_the_local_suite():
    groups = collect(button_clicker, ["miniwob/click-test", "webarena/local.121"], n=2, workers=2, max_steps=3)
    assert list(groups) == [("miniwob/click-test", 0), ("webarena/local.121", 0)]
    for rollouts in groups.values():
        assert [r.index for r in rollouts] == [0, 1] and [r.seed for r in rollouts] == [0, 0]
        for rollout in rollouts:
            assert rollout.error is None and rollout.reward == 1.0 and rollout.terminated, rollout
            turn = rollout.turns[-1]
            assert turn.messages[0]["role"] == "system" and "OBJECTIVE:" in turn.messages[-1]["content"]
            assert turn.completion.startswith("Let's think") and turn.role == "actor"
            json.dumps(rollout.to_dict())  # what a trainer stores
    assert groups[("miniwob/click-test", 0)][0].turns[0].action.startswith("click [")
    assert groups[("webarena/local.121", 0)][0].turns[-1].action == "stop [hollister]"
    assert all(t.logprobs is None for r in groups[("miniwob/click-test", 0)] for t in r.turns)  # none asked for


def test_a_group_is_n_rollouts_of_one_task_instance_and_instances_are_groups():
    groups = collect(button_clicker, "miniwob/click-button", n=2, instances=2, workers=2)
    assert list(groups) == [("miniwob/click-button", 0), ("miniwob/click-button", 1)]
    goals = {}
    for (env_id, seed), rollouts in groups.items():
        assert [(r.env_id, r.seed, r.index) for r in rollouts] == [(env_id, seed, 0), (env_id, seed, 1)]
        first = [objective(r.turns[0].messages) for r in rollouts]
        assert first[0] == first[1], "a group's rollouts must face the same problem"
        goals[seed] = first[0]
    assert goals[0] != goals[1]  # another seed, another problem: another group


def test_token_ids_and_logprobs_are_recorded_when_the_server_returns_them(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-dummy")  # the local server takes any key

    def reply(request):
        return button_clicker(request.body["messages"])

    server = ModelServer(reply)
    try:
        groups = collect(
            "openai/fake",
            "miniwob:click-test",
            n=1,
            workers=1,
            logprobs=True,
            policy_config={"api_base": server.url},
        )
    finally:
        server.close()
    rollout = groups[("miniwob/click-test", 0)][0]
    assert rollout.error is None and rollout.reward == 1.0, rollout
    assert server.requests and all(r.body.get("logprobs") is True for r in server.requests)
    turn = rollout.turns[0]
    pieces = turn.completion.split(" ")
    assert turn.logprobs["tokens"] == pieces
    assert turn.logprobs["logprobs"] == [-0.25 * (i + 1) for i in range(len(pieces))]
    assert turn.logprobs["token_ids"] == [1000 + i for i in range(len(pieces))]
    json.dumps(rollout.to_dict())


def test_batched_model_and_model_failures():
    seen = []

    def batch(prompts):
        seen.append(len(prompts))
        return [button_clicker(p) for p in prompts]

    groups = collect(batch, "miniwob:click-test", n=2, workers=2, batched=True)
    assert [r.reward for r in groups[("miniwob/click-test", 0)]] == [1.0, 1.0] and sum(seen) == 2

    def broken(messages):
        raise ConnectionError("model server down")

    failed = collect(broken, "miniwob:click-test", n=1, workers=1)[("miniwob/click-test", 0)][0]
    assert failed.reward == 0.0 and "model server down" in (failed.error or ""), failed
