"""Replies a policy cannot use safely: a provider that ignores ``max_tokens`` and answers with megabytes,
and JSON nested deeper than Python's parser can recurse.

What must hold: each reply is kept up to ``max_reply_chars`` (default 64k characters), the cut is
recorded in the call, and a Devil's Advocate episode fed such replies writes a bounded trajectory; Plan-
MCTS's parsers turn unparseable nesting into a re-ask, not a ``RecursionError``.
"""

from __future__ import annotations

import json

import pytest
from model_server import ModelServer

from webarena_gym.experiments.rollout import run_episode
from webarena_gym.experiments.trajectory import Trajectory
from webarena_gym.llm import LLM, Script
from webarena_gym.llm.client import DEFAULT_MAX_REPLY_CHARS
from webarena_gym.policies import make_policy
from webarena_gym.policies.devils_advocate.policy import ROLES as DA_ROLES
from webarena_gym.policies.plan_mcts import prompts as P

HUGE = 1_000_000


def test_a_reply_over_the_cap_is_cut_and_the_cut_is_recorded(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local-dummy")
    server = ModelServer(lambda request: "y" * HUGE)  # a server that ignores max_tokens
    try:
        llm = LLM("openai/fake", api_base=server.url, retries=0)
        call = llm.complete("actor", [{"role": "user", "content": "go"}]).call
        assert len(call.responses[0]) == DEFAULT_MAX_REPLY_CHARS == 64_000
        assert call.replies_cut == {"0": HUGE} and json.loads(json.dumps(call.to_dict()))["replies_cut"] == {"0": HUGE}
        small = make_policy("react", model="openai/fake", api_base=server.url, max_reply_chars=100, retries=0)
        assert small.llm.max_reply_chars == 100
        assert len(small.llm.complete("actor", [{"role": "user", "content": "go"}]).text) == 100
    finally:
        server.close()


@pytest.mark.browser
@pytest.mark.slow
def test_devils_advocate_fed_megabyte_replies_writes_a_bounded_trajectory(tmp_path):
    script = Script({role: Script.forever("z" * HUGE) for role in DA_ROLES})
    policy = make_policy("devils_advocate", script=script, max_trials=1, max_actions=3)
    traj = run_episode("webarena/local.9", policy, out_dir=tmp_path)
    calls = traj.llm_calls()
    assert calls and all(len(r) <= DEFAULT_MAX_REPLY_CHARS for c in calls for r in c["responses"])
    assert all(c.get("replies_cut") == {"0": HUGE} for c in calls if not c.get("error"))
    size = (tmp_path / "trajectory.json").stat().st_size
    print(f"{len(calls)} calls, trajectory {size / 1e6:.1f} MB")
    assert size < 64_000 * 8 * len(calls)  # a few copies per call at most: no megabyte reply is kept


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_plan_mcts_parsers_reject_deep_nesting_as_an_unusable_answer(depth):
    nested = '{"subplans": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(P.AnswerError, match="nests too deeply"):
        P.parse_subplans(nested, 3)


@pytest.mark.browser
def test_a_long_reply_is_stored_once_in_the_trajectory_and_read_back_whole(tmp_path):
    """A reply repeated by the step's thought and parsed fields is written once; loading restores them."""
    reasoning = "Let's think step by step. MARK-7f3a " + "the page lists orders. " * 2_000
    reply = f"{reasoning} In summary, the next action I will perform is ```stop [done]```"
    policy = make_policy("react", script=Script({"actor": Script.forever(reply)}))
    run_episode("webarena/local.9", policy, out_dir=tmp_path, max_steps=1)
    written = (tmp_path / "trajectory.json").read_text()
    assert written.count("MARK-7f3a") == 1
    step = Trajectory.load(tmp_path).steps[0]
    assert "MARK-7f3a" in step.thought and step.parsed["raw"] == reply
    assert step.llm_calls[0]["responses"] == [reply]
