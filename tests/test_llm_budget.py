"""The per-episode LLM budget of the LLM layer (calls, tokens, cost) through litellm's real call path."""

from __future__ import annotations

import pytest
from test_rollout_loop import envs, react, say  # noqa: F401 - envs: the text-site fixture used below

from webarena_gym.experiments import rollout
from webarena_gym.llm import LLM, LLMBudgetExhausted, LLMError, LLMLimits, Script
from webarena_gym.policies import make_policy

MSGS = [{"role": "user", "content": "OBJECTIVE: buy a red hat"}]


def scripted(limits: LLMLimits, model: str = "gpt-4o", **kw) -> LLM:
    return LLM(
        model, script=Script({"actor": Script.forever("click [1]"), "judge": Script.forever("ok")}), limits=limits, **kw
    )


def test_the_call_budget_counts_every_role_and_refuses_before_sending():
    llm = scripted(LLMLimits(llm_calls=3))
    llm.log = []
    for role in ("actor", "judge", "actor"):
        llm.complete(role, MSGS)
    with pytest.raises(LLMBudgetExhausted) as spent:
        llm.complete("judge", MSGS)
    assert spent.value.budget == "llm_calls" and "3 calls" in str(spent.value)
    assert llm.script.used == {"actor": 2, "judge": 1} and len(llm.log) == 3  # nothing sent, nothing recorded
    assert llm.spent.exhausted == "llm_calls"
    llm.begin_episode()  # a new episode, a new budget
    assert llm.complete("judge", MSGS).text == "ok" and llm.spent.llm_calls == 1 and llm.spent.exhausted is None


def test_the_token_budget_lets_the_crossing_call_finish_and_refuses_the_next():
    llm = scripted(LLMLimits(llm_tokens=30))
    calls = []
    with pytest.raises(LLMBudgetExhausted) as spent:
        while True:
            calls.append(llm.complete("actor", MSGS).call)
    used = sum(c.prompt_tokens + c.completion_tokens for c in calls)
    assert (
        spent.value.budget == "llm_tokens" and used >= 30 > used - calls[-1].prompt_tokens - calls[-1].completion_tokens
    )
    assert llm.spent.llm_tokens == used


def test_the_cost_budget_counts_dollars_and_cached_replays_stop_where_the_original_did(tmp_path):
    first = scripted(LLMLimits(llm_cost=0.0005), cache_dir=tmp_path)
    original = []
    with pytest.raises(LLMBudgetExhausted):
        while True:
            original.append(first.complete("actor", MSGS).text)
    assert len(original) >= 2 and first.spent.llm_cost >= 0.0005

    replay = LLM("gpt-4o", script=Script({"actor": []}), cache_dir=tmp_path, limits=LLMLimits(llm_cost=0.0005))
    replayed = []
    with pytest.raises(LLMBudgetExhausted):
        while True:
            replayed.append(replay.complete("actor", MSGS).text)
    assert replayed == original  # every answer from the cache, and the budget ran out at the same call


def test_a_cost_budget_for_a_model_without_a_price_is_a_configuration_error_before_any_call():
    llm = scripted(LLMLimits(llm_cost=1.0), model="openai/my-local-model")
    with pytest.raises(LLMError) as failure:
        llm.complete("actor", MSGS)
    assert failure.value.kind == "configuration" and "--max-cost" in str(failure.value)
    assert "--max-tokens" in str(failure.value) and llm.script.used == {"actor": 0, "judge": 0}


def test_policies_take_the_budget_as_options_and_refuse_a_negative_one():
    policy = make_policy("react", script={}, max_llm_calls=5, max_llm_tokens=1000, max_llm_cost=0.5)
    assert policy.llms()[0].limits == LLMLimits(llm_calls=5, llm_tokens=1000, llm_cost=0.5)
    assert policy.llms()[0].describe()["limits"] == {"llm_calls": 5, "llm_tokens": 1000, "llm_cost": 0.5}
    with pytest.raises(ValueError, match="max_llm_calls must be >= 0"):
        make_policy("coact", script={}, max_llm_calls=-1)


@pytest.mark.usefixtures("envs")
def test_the_loop_ends_the_episode_at_the_token_budget_with_the_methods_own_answer():
    """A text site (no browser): a ReAct call crosses the token budget and the next one is refused; the
    episode ends with WebArena's early-stop answer naming that budget, and is scored."""
    traj = rollout.run_episode("test/shop", react([say("click [2]")] * 5, max_llm_tokens=1500))
    spent = sum(c["prompt_tokens"] + c["completion_tokens"] for c in traj.llm_calls())
    assert traj.err_msg is None and traj.forced_stop and traj.budget_exhausted == "llm_tokens"
    assert (
        traj.budget["llm_tokens"] == 1500 and spent >= 1500 and traj.counters["interactions"] == len(traj.llm_calls())
    )
    assert traj.evaluation["answer"] == "Early stop: reached the maximum of 1500 LLM tokens"
    assert traj.steps[-1].action is None and "LLM tokens budget" in traj.steps[-1].decision_error
