"""WebArena-Verified's final-answer step in the rollout loop: an answer under a response contract is
scored as it is when it parses, the model is asked once more when it does not, and nothing is filled in
for it. A small in-process env stands in for the browser (the loop is what is tested here)."""

from __future__ import annotations

import json
import re
from typing import Any

import gymnasium as gym
import pytest

from webarena_gym.experiments import rollout
from webarena_gym.llm import Script
from webarena_gym.policies.react import WEBARENA_ACTIONS, ReActPolicy

SCHEMA = {"type": "array", "items": {"type": "number"}}
RIGHT = {"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": [12]}


def _score(answer: str) -> float:
    try:
        response = json.loads(answer)
    except ValueError:
        return 0.0
    return float(isinstance(response, dict) and all(response.get(k) == v for k, v in RIGHT.items()))


class ContractEnv(gym.Env):
    """One page; ``stop [answer]`` scores the answer against the expected response object."""

    def __init__(self, contract: dict | None) -> None:
        self.contract = contract
        self.stepped: list[str] = []
        self.ended_with: list[str] = []

    def _obs(self) -> dict[str, Any]:
        return {"text": "[5] StaticText 'Red hat $12'", "url": "http://t/", "last_action_error": ""}

    def reset(self, *, seed=None, options=None):
        info = {"task_id": 7, "intent": "What does the red hat cost?", "sites": ["shopping"], "start_url": "http://t/"}
        return self._obs(), {**info, "response_contract": self.contract}

    def step(self, action: str):
        self.stepped.append(action)
        m = re.fullmatch(r"stop \[(.*)\]", action, re.S)
        assert m, action
        score = _score(m.group(1))
        return self._obs(), score, True, False, {"evaluation": {"score": score, "answer": m.group(1)}}

    def end_episode(self, answer: str = ""):
        self.ended_with.append(answer)
        return self._obs(), _score(answer), False, True, {"evaluation": {"score": _score(answer), "answer": answer}}

    def answer_in(self, action: str):
        m = re.fullmatch(r"stop \[(.*)\]", action, re.S)
        return m.group(1) if m else None

    def close(self):
        pass


@pytest.fixture
def made(monkeypatch):
    envs: list[ContractEnv] = []
    contract = {"results_schema": SCHEMA}

    def make(env_id: str, preset: str, kwargs: dict[str, Any]) -> gym.Env:
        envs.append(ContractEnv(None if env_id == "test/plain" else contract))
        return envs[-1]

    monkeypatch.setattr(rollout, "_make_env", make)
    return envs


def policy(answer: str, final_answers: list[str]) -> ReActPolicy:
    say = f"The price is shown. In summary, the next action I will perform is ```stop [{answer}]```"
    script = Script({"actor": [say], "final_answer": final_answers})
    return ReActPolicy(script=script, actions=list(WEBARENA_ACTIONS))


def test_an_answer_that_follows_the_contract_is_scored_as_the_policy_sent_it(made):
    traj = rollout.run_episode("test/shop", policy(json.dumps(RIGHT), []))
    assert traj.reward == 1.0 and traj.terminated and made[0].stepped and not made[0].ended_with
    assert traj.final_answer["response"] == {**RIGHT, "error_details": None}
    assert traj.final_answer["reasked"] is False and traj.final_answer["error"] is None


def test_an_answer_that_does_not_parse_is_asked_for_once_more_and_the_reply_scored(made):
    traj = rollout.run_episode("test/shop", policy("12 dollars", [json.dumps(RIGHT)]))
    assert traj.err_msg is None, traj.err_msg
    assert made[0].ended_with and not made[0].stepped
    assert traj.reward == 1.0 and traj.terminated and not traj.truncated
    assert traj.final_answer["reasked"] and traj.final_answer["answer"] == "12 dollars"
    assert "no JSON object" in traj.final_answer["error"]
    roles = [call["role"] for call in traj.steps[-1].llm_calls]
    assert roles == ["actor", "final_answer"]
    assert "12 dollars" in traj.steps[-1].llm_calls[1]["messages"][-1]["content"]


def test_a_reply_that_does_not_parse_either_leaves_the_policy_s_answer_to_be_scored(made):
    reply = '{"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": ["12"]}'  # a string, not a number
    traj = rollout.run_episode("test/shop", policy("12 dollars", [reply]))
    assert traj.err_msg is None, traj.err_msg  # one re-ask only: a second would exhaust the script
    assert made[0].stepped == ["stop [12 dollars]"] and traj.reward == 0.0
    assert "no JSON object" in traj.final_answer["error"] and "asked again" in traj.final_answer["error"]
    assert traj.final_answer["response"] is None


def test_without_a_contract_there_is_no_final_answer_step(made):
    traj = rollout.run_episode("test/plain", policy("12 dollars", []))
    assert traj.final_answer is None and made[0].stepped == ["stop [12 dollars]"]
