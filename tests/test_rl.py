"""PPO's plumbing on MiniWoB++ (learning itself is the benchmark's job, benchmarks/rl.py): the command
line trains a few steps in worker processes, writes the curve, TensorBoard events and the model, and
evaluates the trained and the random policy on the same held-out seeds; the rule baseline on synthetic slots."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from webarena_gym.experiments.rl import (
    BestPolicy,
    TrainConfig,
    _every,
    _time_limit,
    main,
    plot_curves,
    random_policy,
    rule_policy,
)
from webarena_gym.wrappers.numeric import SLOT_DIM, SLOT_FLAGS


@pytest.mark.browser
@pytest.mark.slow
def test_train_evaluate_and_save(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["--tasks", "click-test,miniwob/focus-text", "--steps", "16", "--n-steps", "4", "--batch-size", "4"]
    argv += ["--validate-every", "8", "--validation-episodes", "1"]
    main([*argv, "--eval-episodes", "2", "--out", str(out)])
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed["train_env_steps"] == 16
    for name in ("curve.csv", "curve.png", "model.zip", "eval.json"):
        assert (out / name).stat().st_size > 0, name
    assert any((out / "tb").rglob("events.out.tfevents.*"))
    rows = list(csv.DictReader(open(out / "curve.csv")))
    assert rows and {r["task"] for r in rows} <= {"miniwob/click-test", "miniwob/focus-text"}
    assert all(r["success"] in ("0", "1") and int(r["length"]) >= 1 for r in rows)
    summary = json.loads((out / "eval.json").read_text())
    assert summary["eval_seeds"] == "1000000..1000001"
    # a round between the two updates (8 steps each) and one at the end, on seeds of their own
    selection = summary["selection"]
    assert [r["env_steps"] for r in selection["rounds"]] == [8, 16]
    assert selection["validation_seeds"] == "500000..500000"
    assert set(selection["rounds"][0]["success"]) == {"miniwob/click-test", "miniwob/focus-text"}
    best_mean = max(r["mean"] for r in selection["rounds"])
    assert selection["kept_env_steps"] == max(r["env_steps"] for r in selection["rounds"] if r["mean"] == best_mean)
    for task in ("miniwob/click-test", "miniwob/focus-text"):
        for policy in ("ppo", "rule", "random"):
            result = summary["evaluation"][task][policy]
            assert result["episodes"] == 2 and 0.0 <= result["success_rate"] <= 1.0
    # MiniWoB++ tasks end by themselves: stop is masked out, so random clicks the one button
    assert summary["evaluation"]["miniwob/click-test"]["random"]["success_rate"] == 1.0

    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(out / "model.zip", device="cpu")
    assert model.action_space.n == 2 * TrainConfig(tasks=["x"]).k + 1


def test_config_rules():
    config = TrainConfig(tasks=["click-test", "webarena/local.0"])
    assert config.env_ids == ["miniwob/click-test", "webarena/local.0"]
    assert config.numeric_options("miniwob/click-test")["numeric"] == {"allow_stop": False}
    assert config.numeric_options("webarena/local.0")["numeric"] == {"allow_stop": True}
    act = random_policy(0)
    assert {act(np.zeros(3), np.array([False, True, False])) for _ in range(5)} == {1}


def _slots(*flags: tuple[float, float, float, float], prefix: int = 5) -> np.ndarray:
    """An observation whose slots carry only (present, typeable, goal_overlap, goal_quoted), the element
    states after them set, which the rule does not read."""
    vector = np.zeros(prefix + len(flags) * SLOT_DIM, np.float32)
    for slot, values in enumerate(flags):
        first = prefix + (slot + 1) * SLOT_DIM - len(SLOT_FLAGS)
        vector[first : first + 4] = values
        vector[first + 4 : first + len(SLOT_FLAGS)] = 1.0
    return vector


def test_rule_acts_on_the_quoted_slot_then_the_best_overlap():
    act, k = rule_policy(), 4
    mask = np.array([True, True, True, False] + [False, True, False, False] + [False])
    # slot 1 is quoted and a text field: it is filled, though slot 2 overlaps the goal more
    assert act(_slots((1, 0, 0.5, 0), (1, 1, 0.3, 1), (1, 0, 1.0, 0), (0, 0, 0, 0)), mask) == k + 1
    # nothing quoted: the best overlap is clicked; a tie goes to the first in page order
    assert act(_slots((1, 0, 0.5, 0), (1, 1, 0.3, 0), (1, 0, 1.0, 0), (0, 0, 0, 0)), mask) == 2
    assert act(_slots((1, 0, 0.5, 0), (1, 1, 0.3, 0), (1, 0, 0.5, 0), (0, 0, 0, 0)), mask) == 0
    # a quoted text field the mask does not let it fill is passed over
    no_typing = mask.copy()
    no_typing[k + 1] = False
    assert act(_slots((1, 0, 0.5, 0), (1, 1, 0.3, 1), (1, 0, 1.0, 0), (0, 0, 0, 0)), no_typing) == 2
    # no slot filled: the one action the mask leaves (stop)
    only_stop = np.zeros(2 * k + 1, bool)
    only_stop[-1] = True
    assert act(_slots(*[(0, 0, 0, 0)] * k), only_stop) == 2 * k


def test_training_ends_at_the_time_limit():
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, device="cpu", seed=0)
    model.learn(total_timesteps=10_000, callback=_time_limit(0.0))
    assert model.num_timesteps == 1  # stopped at the first env step after the deadline
    model.learn(total_timesteps=32, callback=_time_limit(3600.0))
    assert model.num_timesteps == 32


def test_validation_runs_between_updates_once_enough_steps_have_passed():
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, device="cpu", seed=0)
    calls: list[int] = []
    model.learn(total_timesteps=112, callback=_every(32, lambda: calls.append(model.num_timesteps)))
    assert calls == [32, 64, 96]  # rollouts start at 0, 16, ..., 96: each call once 32 steps have passed
    calls.clear()
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, device="cpu", seed=0)
    model.learn(total_timesteps=112, callback=_every(40, lambda: calls.append(model.num_timesteps)))
    assert calls == [48, 96]  # between updates only: the first rollout start 40 steps after the last call


def test_best_policy_keeps_the_highest_mean_and_the_later_of_a_tie():
    import torch

    net = torch.nn.Linear(2, 1)
    best = BestPolicy()
    with pytest.raises(RuntimeError):
        best.restore(net)

    def offer(steps, a, b, weight):
        torch.nn.init.constant_(net.weight, weight)
        return best.offer(steps, {"a": a, "b": b}, net.state_dict())

    assert offer(100, 0.5, 0.5, 1.0)
    assert offer(200, 0.9, 0.3, 2.0)  # mean 0.6 beats 0.5
    assert not offer(300, 1.0, 0.1, 3.0)  # mean 0.55: a better task alone does not win
    assert offer(400, 0.3, 0.9, 4.0)  # a tie with 0.6 goes to the later round
    assert not offer(500, 0.0, 0.0, 5.0)
    best.restore(net)  # the kept weights were copied, not referenced: the later offers did not change them
    assert torch.equal(net.weight, torch.full((1, 2), 4.0))
    summary = best.summary([500_000, 500_001, 500_002])
    assert summary["kept_env_steps"] == 400 and summary["validation_seeds"] == "500000..500002"
    assert [r["env_steps"] for r in summary["rounds"]] == [100, 200, 300, 400, 500]
    assert summary["rounds"][2] == {"env_steps": 300, "mean": 0.55, "success": {"a": 1.0, "b": 0.1}}


def test_curves_of_several_runs_with_baselines(tmp_path):
    runs = {}
    for seed in (0, 1):
        path = tmp_path / f"seed{seed}.csv"
        lines = ["env_steps,task,reward,length,success"]
        lines += [f"{i},miniwob/{task},{i % 2},2,{i % 2}" for i in range(1, 40) for task in ("a", "b")]
        path.write_text("\n".join(lines) + "\n")
        runs[f"seed {seed}"] = path
    png = tmp_path / "curves.png"
    plot_curves(runs, png, {"miniwob/a": {"rule": 0.1, "random": 0.3}})
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    marked = tmp_path / "marked.png"  # the kept policies' steps are drawn
    plot_curves(runs, marked, {"miniwob/a": {"rule": 0.1, "random": 0.3}}, {"seed 0": 20, "seed 1": 30})
    assert marked.read_bytes()[:8] == png.read_bytes()[:8] and marked.read_bytes() != png.read_bytes()


def test_learning_rows_set_each_task_s_bar_at_the_better_baseline_plus_30():
    from webarena_gym.benchmarks import rl as bench

    ruled, other = bench.TASKS[:2]  # the rule scores 30 % on one task, 0 on the others

    def summary(seed, ppo):
        evaluation = {
            f"miniwob/{task}": {
                "ppo": {"success_rate": ppo},
                "rule": {"success_rate": 0.3 if task == ruled else 0.0},
                "random": {"success_rate": 0.1 + 0.02 * seed},
            }
            for task in bench.TASKS
        }
        config = {"eval_episodes": 50, "n_envs": None, "seed": seed}
        return {"evaluation": evaluation, "config": config, "train_env_steps": 9000 + seed,
                "train_wall_s": 3600, "train_env_steps_per_s": 2.5}  # fmt: skip

    rows = bench.learning_rows([summary(0, 0.9), summary(1, 0.8), summary(2, 0.7)], "3 seeds side by side")
    by_name = {row["name"]: row for row in rows}
    ruled_row = by_name[f"{ruled}: PPO success"]
    assert ruled_row["value"] == 80.0
    assert ruled_row["target"].startswith(">= 60 ")  # the rule's 30 is the better baseline
    assert "90 / 80 / 70 (spread 20)" in ruled_row["note"] and "random 12 %" in ruled_row["note"]
    assert by_name[f"{other}: PPO success"]["target"].startswith(">= 42 ")  # random's mean, 12, + 30
    budget = by_name["training budget per seed"]
    assert budget["value"] == 9001 and "9000 / 9001 / 9002 env steps in 60 / 60 / 60 min" in budget["note"]
    assert budget["note"].endswith(
        f"min wall, 2.5 / 2.5 / 2.5 env steps/s; {len(bench.TASKS)} sub-envs per seed; 3 seeds side by side"
    )
    selected = [summary(seed, 0.5) for seed in range(3)]
    for seed, kept in enumerate((3000, 41000, 39000)):
        rounds = [{"env_steps": 3000 * (n + 1)} for n in range(seed + 13)]
        selected[seed]["selection"] = {"kept_env_steps": kept, "rounds": rounds}
    note = bench.learning_rows(selected)[-1]["note"]
    assert note.endswith("policy kept: the best of 13 / 14 / 15 validation rounds, from env step 3000 / 41000 / 39000")
