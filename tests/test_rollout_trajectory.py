"""The trajectory document: schema validation, AgentLab summary, credential scrubbing."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from webarena_gym.experiments.trajectory import (
    SCHEMA_VERSION,
    TRAJECTORY_SCHEMA,
    StepRecord,
    Trajectory,
    TrajectoryValidationError,
    jsonable,
    scrub,
    validate,
)
from webarena_gym.llm import LLMCall


def sample() -> Trajectory:
    call = LLMCall(
        role="actor",
        model="gpt-4o",
        messages=[{"role": "user", "content": "hi"}],
        responses=["x"],
        prompt_tokens=120,
        completion_tokens=30,
        cost=0.002,
        latency_s=0.5,
    )
    cached = LLMCall(
        role="judge",
        model="gpt-4o",
        messages=[],
        responses=["1"],
        prompt_tokens=50,
        completion_tokens=1,
        cost=0.001,
        latency_s=0.01,
        cached=True,
    )
    unpriced = LLMCall(
        role="actor",
        model="openai/local",
        messages=[],
        responses=["y"],
        prompt_tokens=80,
        completion_tokens=5,
        cost=None,
        latency_s=0.2,
    )
    traj = Trajectory(env_id="webarena/local.3", policy={"name": "react", "preset": "webarena"}, seed=0, max_steps=30)
    traj.steps = [
        StepRecord(
            index=0,
            url="http://a/",
            observation="[1] link 'x'",
            action="click [1]",
            llm_calls=[call.to_dict(), cached.to_dict()],
            timings={"act_s": 0.6, "env_s": 0.3},
        ),
        StepRecord(
            index=1,
            url="http://a/x",
            observation="",
            action="stop [42]",
            llm_calls=[unpriced.to_dict()],
            decision_error=None,
            action_error="element 9 not found",
            reward=1.0,
            terminated=True,
        ),
    ]
    traj.reward, traj.terminated, traj.evaluation = 1.0, True, {"string_match": {"score": 1.0}}
    return traj


def test_documents_validate_and_round_trip(tmp_path):
    traj = sample()
    data = traj.to_dict()
    validate(data)
    assert data["schema_version"] == SCHEMA_VERSION == TRAJECTORY_SCHEMA["properties"]["schema_version"]["const"]
    path = traj.save(tmp_path)
    again = Trajectory.load(path)
    assert again.to_dict() == data
    assert json.loads((tmp_path / "summary_info.json").read_text()) == traj.summary_info()


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d.pop("steps"),
        lambda d: d.update(schema_version="0.1"),
        lambda d: d["steps"][0].update(action=3),
        lambda d: d["steps"][0]["llm_calls"][0].update(prompt_tokens=-1),
        lambda d: d["steps"][1]["llm_calls"][0].pop("cost"),
        lambda d: d["steps"][0].update(handle_calls=[{"op": "teleport", "error": None}]),
        lambda d: d["summary"].pop("n_steps"),
    ],
)
def test_invalid_documents_are_rejected(breakage):
    data = copy.deepcopy(sample().to_dict())
    breakage(data)
    with pytest.raises(TrajectoryValidationError, match="trajectory invalid"):
        validate(data)


def test_summary_info_matches_agentlab_and_totals():
    summary = sample().summary_info()
    for key in ("n_steps", "cum_reward", "err_msg", "stack_trace", "terminated", "truncated"):
        assert key in summary
    assert summary["n_steps"] == 2 and summary["cum_reward"] == 1.0 and summary["terminated"] is True
    assert summary["stats.cum_llm_calls"] == 3 and summary["stats.cum_cached_llm_calls"] == 1
    assert summary["stats.cum_prompt_tokens"] == 250 and summary["stats.max_prompt_tokens"] == 120
    assert summary["stats.cum_cost"] == pytest.approx(0.002)  # cached calls cost nothing now, unknown skipped
    assert summary["stats.cost_unknown_calls"] == 1 and summary["stats.cum_action_errors"] == 1
    assert summary["stats.cum_act_s"] == pytest.approx(0.6)


def test_scrub_removes_credentials_but_keeps_token_counts():
    config = {
        "api_key": "abc123",
        "model": "gpt-4o",
        "max_tokens": 384,
        "prompt_tokens": 12,
        "nested": [{"Authorization": "Bearer zzz"}, "key sk-ABCDEFGHIJKLMNOPQRSTUVWX here"],
        "password_file": None,
        "token": "hf_abcdefghijklmnopqrstuvwxyz",
    }
    clean = scrub(config)
    assert clean["api_key"] == clean["token"] == "<redacted>" and clean["nested"][0]["Authorization"] == "<redacted>"
    assert clean["nested"][1] == "key <redacted> here"
    assert clean["max_tokens"] == 384 and clean["prompt_tokens"] == 12 and clean["password_file"] is None
    assert clean["model"] == "gpt-4o"


def test_jsonable_handles_numpy_and_objects():
    out = jsonable({"a": np.int64(3), "b": np.array([1.5, 2.0]), 4: {1, 2}, "o": object()})
    json.dumps(out)
    assert out["a"] == 3 and out["b"] == [1.5, 2.0] and sorted(out["4"]) == [1, 2] and out["o"].startswith("<object")


def test_schema_1_0_documents_still_load():
    old = sample().to_dict()
    for key in ("budget", "counters", "budget_exhausted", "oracle_assisted", "lookahead", "trials", "tree"):
        del old[key]
    old["schema_version"] = "1.0"
    old["steps"][0]["browser_action"] = "click('1')"
    old["steps"][0]["handle_calls"] = [{"op": "restore", "arg": "snap0", "error": None}]
    loaded = Trajectory.from_dict(old)
    assert loaded.schema_version == SCHEMA_VERSION and loaded.budget == {"decisions": 30, "interactions": None}
    assert loaded.counters["decisions"] == 2 and loaded.counters["interactions"] == 1
    assert loaded.counters["restores"] == 1 and loaded.trials == [] and loaded.tree is None
    with pytest.raises(TrajectoryValidationError, match="unknown trajectory schema version"):
        Trajectory.from_dict({**old, "schema_version": "0.9"})
