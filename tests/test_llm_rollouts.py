"""The rollout collector for LLM RL trainers: grouped rollouts with per-turn prompts and completions and
the final reward, from a callable model answered in this process (through litellm's mock path in the
workers), on MiniWoB++ and on the local suite; a failing model becomes the rollout's error."""

from __future__ import annotations

import json
import re

import pytest

from webarena_gym.experiments.llm_rollouts import collect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ANSWER = "Let's think step by step. In summary, the next action I will perform is ```{}```"


def button_clicker(messages):
    """On a MiniWoB++ page clicks the first button; elsewhere answers the local task's question."""
    text = messages[-1]["content"]
    button = re.search(r"\[(\d+)\] button", text)
    return ANSWER.format(f"click [{button.group(1)}]" if "/miniwob/" in text and button else "stop [hollister]")


def test_callable_model_on_miniwob_and_the_local_suite():
    groups = collect(button_clicker, ["miniwob/click-test", "webarena/local.121"], n=2, workers=2, max_steps=3)
    assert list(groups) == ["miniwob/click-test", "webarena/local.121"]
    for rollouts in groups.values():
        assert [r.index for r in rollouts] == [0, 1] and [r.seed for r in rollouts] == [0, 1]
        for rollout in rollouts:
            assert rollout.error is None and rollout.reward == 1.0 and rollout.terminated, rollout
            turn = rollout.turns[-1]
            assert turn.messages[0]["role"] == "system" and "OBJECTIVE:" in turn.messages[-1]["content"]
            assert turn.completion.startswith("Let's think") and turn.role == "actor"
            json.dumps(rollout.to_dict())  # what a trainer stores
    assert groups["miniwob/click-test"][0].turns[0].action.startswith("click [")
    assert groups["webarena/local.121"][0].turns[-1].action == "stop [hollister]"


def test_batched_model_and_model_failures():
    seen = []

    def batch(prompts):
        seen.append(len(prompts))
        return [button_clicker(p) for p in prompts]

    groups = collect(batch, "miniwob:click-test", n=2, workers=2, batched=True)
    assert [r.reward for r in groups["miniwob/click-test"]] == [1.0, 1.0] and sum(seen) == 2

    def broken(messages):
        raise ConnectionError("model server down")

    failed = collect(broken, "miniwob:click-test", n=1, workers=1)["miniwob/click-test"][0]
    assert failed.reward == 0.0 and "model server down" in (failed.error or ""), failed
