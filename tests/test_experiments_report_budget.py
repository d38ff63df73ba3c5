"""The report's view of LLM budgets without running episodes: the budget table (limits, spend, episodes a
budget ended) and success against tokens and cost (wall time when a cost is unknown) per seed."""

from __future__ import annotations

import pytest

from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.report.plots import spend_axes
from webarena_gym.experiments.report.summary import summarize
from webarena_gym.experiments.report.tables import all_tables
from webarena_gym.experiments.store import EpisodeResult, StudyStore


def result(policy: str, task: int, seed: int, reward: float, tokens: int, cost: float | None, **kw) -> EpisodeResult:
    return EpisodeResult(
        policy=policy, env_id=f"webarena/local.{task}", task_id=task, site_group="shopping", template_id=1,
        seed=seed, status="done", reward=reward, n_steps=3, llm_calls=4, prompt_tokens=tokens - 100,
        completion_tokens=100, cost=cost or 0.0, cost_known=cost is not None, wall_time_s=10.0 * (seed + 1), **kw,
    )  # fmt: skip


def study(tmp_path, results: list[EpisodeResult], configs: dict[str, dict]):
    store = StudyStore(tmp_path / "study")
    policies = [{"name": p, "label": p, "config": c} for p, c in configs.items()]
    store.write_manifest({"policies": policies, "ordering": "none"})
    for r in results:
        store.append(r)
    return store.root


def test_the_budget_table_and_success_against_spend_per_seed(tmp_path):
    results = [
        result("capped", 1, 0, 1.0, 1000, 0.01, budget_exhausted="llm_calls"),
        result("capped", 2, 0, 0.0, 3000, 0.03, budget_exhausted="llm_calls"),
        result("capped", 1, 1, 0.0, 2000, 0.02),
        result("capped", 2, 1, 0.0, 2000, 0.02, budget_exhausted="llm_tokens"),
        result("free", 1, 0, 1.0, 9000, 0.09),
        result("free", 2, 0, 1.0, 11000, 0.11),
    ]
    root = study(tmp_path, results, {"capped": {"max_llm_calls": 4, "max_llm_tokens": 3000}, "free": {}})
    summary = summarize(root)
    table = {t.name: t for t in all_tables(summary)}["llm_budget"]
    assert table.rows == [
        ["capped", "4", "3000", "-", "4.0", "2000", "0.0200", "3"],
        ["free", "-", "-", "-", "4.0", "10000", "0.1000", "0"],
    ]
    capped = summary["rows"][0]["by_seed"]
    assert [(s["seed"], s["success"], s["tokens_per_task"]) for s in capped] == [(0, 0.5, 2000.0), (1, 0.0, 2000.0)]
    assert capped[0]["cost_per_task"] == pytest.approx(0.02)
    assert spend_axes(summary) == [("tokens_per_task", "LLM tokens per task"), ("cost_per_task", "cost per task ($)")]
    report = build_report(root)
    assert (report / "success_vs_spend.png").stat().st_size > 0 and (report / "llm_budget.csv").exists()


def test_an_unknown_cost_puts_wall_time_on_the_second_axis(tmp_path):
    results = [result("local model", 1, 0, 1.0, 1000, None), result("local model", 1, 1, 0.0, 1500, None)]
    summary = summarize(study(tmp_path, results, {"local model": {}}))
    assert [s["cost_per_task"] for s in summary["rows"][0]["by_seed"]] == [None, None]
    assert spend_axes(summary)[1] == ("wall_time_per_task_s", "wall time per task (s; cost unknown)")
    assert {t.name for t in all_tables(summary)}.isdisjoint({"llm_budget"})  # no budget set: no table
