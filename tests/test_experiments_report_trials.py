"""The report's trial tables and plot without running episodes: success after each trial (Fig. 6 of Devil's
Advocate), its Table 1 statistics (actions in the first and last trial, plan revisions), the note on
restarts on real WebArena, and oracle-assisted rows marked."""

from __future__ import annotations

from webarena_gym.experiments.compare import trial_actions
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.report.summary import summarize
from webarena_gym.experiments.report.tables import all_tables
from webarena_gym.experiments.store import EpisodeResult, StudyStore


def result(policy: str, env_id: str, scores: list[float], actions: list[int], **kw) -> EpisodeResult:
    return EpisodeResult(
        policy=policy, env_id=env_id, task_id=int(env_id.rsplit(".", 1)[-1].rsplit("/", 1)[-1]), site_group="shopping",
        template_id=1, seed=0, status="done", reward=scores[-1] if scores else 0.0, n_steps=sum(actions) + 1,
        trial_scores=scores, trial_actions=actions, **kw,
    )  # fmt: skip


def study(tmp_path, results: list[EpisodeResult], labels: list[str]):
    store = StudyStore(tmp_path / "study")
    store.write_manifest({"policies": [{"name": p, "label": p} for p in labels], "ordering": "none"})
    for r in results:
        store.append(r)
    return store.root


def test_actions_per_trial_prefer_the_policys_count_over_interactions():
    trials = [
        {"interactions": 5, "notes": {"actions": 6}},  # a note that never reached the browser
        {"interactions": 9, "notes": {}},
        {"interactions": 12},
    ]
    assert trial_actions(trials) == [6, 4, 3]


def test_table_1_and_the_trial_curve(tmp_path):
    results = [
        result("da", "webarena/local.1", [0.0, 1.0], [3, 1]),
        result("da", "webarena/local.2", [1.0], [7]),
        result("da", "webarena/local.3", [0.0, 0.0, 0.0], [4, 4, 2]),
        result("da", "webarena/local.4", [1.0, 0.0], [2, 2]),  # a misjudged success, undone by the restart
        result("da oracle", "webarena/5", [0.0, 1.0], [6, 2], oracle_assisted=True),
        result("react", "webarena/local.1", [], []),
    ]
    root = study(tmp_path, results, ["da", "da oracle", "react"])
    tables = {t.name: t for t in all_tables(summarize(root))}
    stats = tables["trial_stats"]
    assert stats.header == ["Policy", "Actions in first trial", "Actions in last trial", "Plan revisions", "Episodes"]
    assert stats.rows == [["da", "4.00", "3.00", "1.00", "4"], ["da oracle †", "6.00", "2.00", "1.00", "1"]]
    restart = next(n for n in stats.notes if n.startswith("A new trial"))
    assert "(1 episode(s) of this study restarted trials on real WebArena)" in restart
    assert any("oracle-assisted" in n for n in stats.notes)
    curve = tables["trials"]
    assert curve.rows[0] == ["da", "50.0", "50.0", "50.0"] and curve.rows[1][0] == "da oracle †"  # not best-of-k
    report = build_report(root)
    assert (report / "success_after_trial.png").stat().st_size > 0
    assert (report / "trial_stats.csv").read_text().splitlines()[1] == "da,4.00,3.00,1.00,4"


def test_no_trial_tables_or_plot_for_single_trial_methods(tmp_path):
    root = study(tmp_path, [result("react", "webarena/local.1", [], [])], ["react"])
    assert {t.name for t in all_tables(summarize(root))}.isdisjoint({"trials", "trial_stats"})
    assert not (build_report(root) / "success_after_trial.png").exists()
