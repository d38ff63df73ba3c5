"""``webarena-gym dataset``: only answers the policy used and the env carried out become assistant
targets; the others are left out, or kept with their reason under ``--keep-rejected``."""

from __future__ import annotations

import json

from webarena_gym.experiments.dataset_files import check_layout
from webarena_gym.experiments.datasets import export_study
from webarena_gym.experiments.datasets import main as dataset_main
from webarena_gym.experiments.store import EpisodeResult, StudyStore
from webarena_gym.experiments.trajectory import StepRecord, Trajectory

PROMPT = [{"role": "system", "content": "You browse."}, {"role": "user", "content": "OBSERVATION:\n[12] link 'Cart'"}]
REASK = {"role": "user", "content": "No action found: end with one action in triple backticks."}


def call(answer: str, messages: list[dict] = PROMPT) -> dict:
    return {
        "role": "actor",
        "model": "m",
        "messages": messages,
        "responses": [answer],
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost": 0.0,
        "latency_s": 0.1,
        "cached": False,
        "error": None,
    }


def study(tmp_path):
    """One successful episode whose steps hold every kind of answer."""
    garbled = call("I am not sure.")
    steps = [
        # an id not on the page: the env refused the action
        StepRecord(0, "http://shop/", "[12] link 'Cart'", "click [99999]", llm_calls=[call("```click [99999]```")],
                   action_error="element 99999 is not on the page"),
        # a malformed answer asked again within the step, then a usable one
        StepRecord(1, "http://shop/", "[12] link 'Cart'", "click [12]", llm_calls=[
            garbled,
            call("```click [12]```", [*PROMPT, {"role": "assistant", "content": "I am not sure."}, REASK]),
        ]),
        # an answer the policy could not read: no action this step
        StepRecord(2, "http://shop/cart", "[3] button 'Pay'", None, llm_calls=[call("Maybe pay?")],
                   decision_error="unparseable answer: no action found"),
        StepRecord(3, "http://shop/cart", "[3] button 'Pay'", "stop [paid]", llm_calls=[call("```stop [paid]```")],
                   reward=1.0, terminated=True),
    ]  # fmt: skip
    root = tmp_path / "study"
    policy = {"name": "react", "preset": "webarena", "config": {}}
    traj = Trajectory("webarena/local.1", policy, 0, 30, steps=steps, reward=1.0, terminated=True)
    saved = traj.save(root / "episodes" / "e1")
    result = EpisodeResult("react [m]", "webarena/local.1", 1, "shopping", 1, 0, "done", reward=1.0, n_steps=4)
    result.trajectory = str(saved.relative_to(root))
    StudyStore(root).append(result)
    return root


def chat_lines(out) -> list[dict]:
    return [json.loads(line) for line in (out / "data/chat.train.jsonl").read_text().splitlines()]


def test_rejected_and_unparseable_answers_are_no_assistant_targets(tmp_path):
    counts = export_study(study(tmp_path), tmp_path / "out", min_reward=1)
    targets = [c["messages"][-1]["content"] for c in chat_lines(tmp_path / "out")]
    assert targets == ["```click [12]```", "```stop [paid]```"]
    assert counts["rejected_answers"] == 3
    steps = [json.loads(line) for line in (tmp_path / "out/data/steps.train.jsonl").read_text().splitlines()]
    assert [[o["accepted"] for o in s["model_output"]] for s in steps] == [[False], [False, True], [False], [True]]
    check_layout(tmp_path / "out")


def test_keep_rejected_keeps_them_flagged_with_their_reason(tmp_path):
    assert dataset_main([str(study(tmp_path)), "--out", str(tmp_path / "out"), "--keep-rejected"]) == 0
    flags = [(c["messages"][-1]["content"], c["rejected"]) for c in chat_lines(tmp_path / "out")]
    assert [answer for answer, _ in flags] == [
        "```click [99999]```",
        "I am not sure.",
        "```click [12]```",
        "Maybe pay?",
        "```stop [paid]```",
    ]
    reasons = [why for _, why in flags]
    assert reasons[0] == "refused by the env: element 99999 is not on the page"
    assert reasons[1].startswith("asked again") and reasons[3].startswith("not used by the policy: unparseable")
    assert reasons[2] is None and reasons[4] is None
    assert check_layout(tmp_path / "out")["chat"] == {"train": 5}
