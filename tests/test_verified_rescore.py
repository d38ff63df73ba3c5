"""Re-scoring a finished study from its records, and the agreement of two evaluators' verdicts (both
success rates, the confusion matrix, Cohen's kappa, the disagreements linked to their episode pages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webarena_gym.experiments.cli import main
from webarena_gym.experiments.compare import PolicySpec, compare
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.report.agreement import agreement, cohen_kappa
from webarena_gym.experiments.rescore import Rescored, load_rescored
from webarena_gym.experiments.store import StudyStore

TASKS = "webarena/local.121,webarena/local.9,webarena/local.209"
WRONG = "Let's think step by step. In summary, the next action I will perform is ```stop [nothing]```"


def test_cohen_kappa_of_known_tables():
    # 20 both pass, 5 first only, 10 second only, 15 both fail: p_o 0.7, p_e 0.5, kappa 0.4.
    pairs = [(True, True)] * 20 + [(True, False)] * 5 + [(False, True)] * 10 + [(False, False)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([(True, True), (False, False)]) == 1.0
    assert cohen_kappa([(True, False), (False, True)]) == pytest.approx(-1.0)
    assert cohen_kappa([(True, True)] * 3) == 1.0 and cohen_kappa([]) is None


def _row(key: str, original: float | None, score: float | None, site: str = "gitlab") -> Rescored:
    return Rescored(key, "p", f"webarena-verified/{key}", site, 0, "webarena-verified", score, "failed: X",
                    "webarena", original, "passed", None)  # fmt: skip


def test_agreement_counts_pairs_and_lists_disagreements_with_both_reasons():
    rows = [_row("1", 1.0, 1.0), _row("2", 1.0, 0.0), _row("3", 0.0, 0.0, "map"), _row("4", None, 1.0)]
    rows.append(_row("5", 1.0, None))
    a = agreement(rows)
    assert a["paired"] == 3 and [u["key"] for u in a["unscored"]] == ["5"]
    assert a["confusion"] == {"both_pass": 1, "original_only": 1, "rescored_only": 0, "both_fail": 1}
    assert a["by_site"]["gitlab"] == {"n": 2, "original": 1.0, "rescored": 0.5}
    assert [d["key"] for d in a["disagreements"]] == ["2"]
    assert a["disagreements"][0]["original_reason"] == "passed" and a["disagreements"][0]["reason"] == "failed: X"


@pytest.mark.browser
@pytest.mark.slow
def test_rescore_a_finished_study_and_report_the_agreement(tmp_path, capsys):
    policies = [
        PolicySpec("reference", label="reference"),
        PolicySpec("react", {"script": {"actor": [WRONG]}}, label="react [scripted]"),
    ]
    study = compare(policies, TASKS, tmp_path / "study", max_steps=5, progress=False)
    assert main(["rescore", str(study), "--evaluator", "agentoccam"]) == 0
    rows = {(r.policy, r.env_id): r for r in load_rescored(study)["agentoccam"]}
    assert len(rows) == 6
    for env_id in ("webarena/local.121", "webarena/local.9"):  # answers and final URLs are re-read
        assert rows[("reference", env_id)].score == 1.0 and rows[("reference", env_id)].original_score == 1.0
        assert rows[("react [scripted]", env_id)].score == 0.0
    live = rows[("reference", "webarena/local.209")]
    assert live.score is None and "program_html reads pages of the live site" in live.reason
    assert live.original_score == 1.0  # the study's own verdict stays where it was
    summary = json.loads(Path(study, "report", "summary.json").read_text())
    assert summary["agreement"]["agentoccam"]["kappa"] == 1.0
    assert summary["agreement"]["agentoccam"]["confusion"]["both_pass"] == 2
    md = Path(study, "report", "summary.md").read_text()
    assert "Evaluator agreement: confusion matrix" in md and "webarena vs agentoccam" in md
    # Under WebArena's evaluator no answer followed the response contract and no trace was recorded, so the
    # package fails each episode and says why.
    assert main(["rescore", str(study), "--evaluator", "webarena-verified"]) == 0
    verified = {(r.policy, r.env_id): r for r in load_rescored(study)["webarena-verified"]}
    assert verified[("reference", "webarena/local.121")].score == 0.0
    mutation = verified[("reference", "webarena/local.209")]
    assert mutation.score == 0.0 and "no network trace was recorded" in mutation.reason
    assert main(["rescore", str(tmp_path / "nothing"), "--evaluator", "webarena"]) == 2
    assert "is not a study directory" in capsys.readouterr().err
    check_reproducibility_record(study)


@pytest.mark.browser
@pytest.mark.slow
def test_a_local_study_under_the_verified_evaluator_is_scored_both_ways(tmp_path):
    """The local suite's Verified form end to end: the reference answers under the contract and passes the
    package's checks (its answer, the reference page in the recorded trace); WebArena's checks re-read the
    same episodes (the contract's data as the answer, the final URL) and agree; a wrong answer fails both."""
    policies = [
        PolicySpec("reference", label="reference"),
        PolicySpec("react", {"script": {"actor": [WRONG], "final_answer": ["nothing"]}}, label="react [scripted]"),
    ]
    env_kwargs = {"evaluator": "webarena-verified", "record_network": True}
    study = compare(policies, "webarena/local.121,webarena/local.9", tmp_path / "s", max_steps=5, progress=False,
                    env_kwargs=env_kwargs)  # fmt: skip
    results = {(r.policy, r.env_id): r for r in StudyStore(study).latest().values()}
    assert {k: r.reward for k, r in results.items() if k[0] == "reference"} == {
        ("reference", "webarena/local.121"): 1.0,
        ("reference", "webarena/local.9"): 1.0,
    }
    assert all(r.reward == 0.0 for k, r in results.items() if k[0] != "reference")
    assert (study / str(results[("reference", "webarena/local.9")].trajectory) / "network.har").exists()
    assert main(["rescore", str(study), "--evaluator", "webarena"]) == 0
    rows = load_rescored(study)["webarena"]
    assert {(r.policy, r.env_id): r.score for r in rows} == {k: r.reward for k, r in results.items()}
    summary = json.loads(Path(study, "report", "summary.json").read_text())
    assert summary["agreement"]["webarena"]["kappa"] == 1.0


def check_reproducibility_record(study: Path) -> None:
    """Every episode carries its record; a study whose episodes ran under two records is flagged."""
    store = StudyStore(study)
    results = list(store.latest().values())
    records = [r.extra["reproducibility"] for r in results]
    assert all(rec["chromium"] and rec["packages"]["webarena-verified"] == "1.2.3" for rec in records)
    react = next(rec for r, rec in zip(results, records, strict=True) if r.policy == "react [scripted]")
    assert "react_system.txt" in react["prompt_templates"] and react["evaluator"] == {"name": "webarena"}
    manifest = store.read_manifest()
    assert manifest["reproducibility"]["code_revision"] == manifest["code_revision"]
    assert "/" not in json.dumps(manifest["reproducibility"]).replace("/dev", "")  # no machine path
    md = Path(build_report(study), "summary.md").read_text()
    assert "Reproducibility record" in md and "Mixed records" not in md
    # The same study resumed after an upgrade: one episode's new attempt ran under another litellm.
    upgraded = results[0]
    record = upgraded.extra["reproducibility"]
    upgraded.extra = {"reproducibility": {**record, "packages": {**record["packages"], "litellm": "9.9.9"}}}
    upgraded.attempt += 1
    store.append(upgraded)
    md = Path(build_report(study), "summary.md").read_text()
    assert "**Mixed records**: this study's episodes ran under 2 different records" in md
