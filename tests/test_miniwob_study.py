"""A comparison study on MiniWoB++ tasks: the same compare loop, workers, rollout and report as the local
suite, BrowserGym's 10-step budget by default, and the report's table beside published MiniWoB++ results."""

from __future__ import annotations

import json

import pytest

from webarena_gym.experiments.compare import PolicySpec, compare
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.store import StudyStore

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CLICK = "Let's think step by step. In summary, the next action I will perform is ```click [13]```"


def test_study_on_miniwob_and_its_report(tmp_path):
    policies = [
        PolicySpec("random", {"seed": 2}, label="random actions"),
        # click-test's button has id 13 (the scripted model plays this answer through litellm's mock path)
        PolicySpec("react", {"script": {"actor": [CLICK, CLICK]}}, label="react [scripted]"),
    ]
    study = compare(policies, "miniwob:click-test", tmp_path / "study", seeds=(0, 1), n_workers=2, progress=False)
    results = list(StudyStore(study).latest().values())
    assert len(results) == 4 and all(r.status == "done" and r.site_group == "miniwob" for r in results)
    react = [r for r in results if r.policy == "react [scripted]"]
    assert [r.reward for r in react] == [1.0, 1.0] and all(r.n_steps == 1 for r in react)
    trajectory = json.loads(next((study / "episodes").glob("random*/trajectory.json")).read_text())
    assert trajectory["budget"]["decisions"] == 10  # BrowserGym's MiniWoB++ budget, not the policy's own

    report = build_report(study)
    summary = (report / "summary.md").read_text()
    assert "MiniWoB++ (1)" in summary and "## MiniWoB++ beside published results" in summary
    assert "AgentLab GenericAgent, gpt-4o-2024-05-13 | 65.6 ± 1.9" in summary
    assert (report / "miniwob.csv").read_text().count("\n") == 1 + len(policies) + 2
