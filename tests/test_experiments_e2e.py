"""Studies end to end on the local suite: real browser, real sites, real evaluator, real litellm path.

One small study runs on the process backend and again on a local Ray instance; both must agree
episode by episode. The HTML report of the study is then opened in headless Chromium.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webarena_gym.experiments.compare import PolicySpec, compare
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.store import StudyStore

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TASKS = "webarena/local.121,webarena/local.203,webarena/local.9"
SCRIPTED_ANSWER = (
    "Let's think step by step. The top search term is hollister. "
    "In summary, the next action I will perform is ```stop [hollister]```"
)
POLICIES = [
    PolicySpec("reference", label="reference solutions (non-LLM upper bound)"),
    PolicySpec("random", {"seed": 3}, label="random actions (non-LLM floor)"),
    # A scripted model: the real litellm call path plays this answer; labelled as scripted, never as a model.
    PolicySpec("react", {"script": {"actor": [SCRIPTED_ANSWER]}}, label="react [scripted]"),
]


def outcome(study: Path) -> dict[tuple[str, str], tuple[float, int, str]]:
    return {(r.policy, r.env_id): (r.reward, r.n_steps, r.status) for r in StudyStore(study).latest().values()}


@pytest.fixture(scope="module")
def process_study(tmp_path_factory) -> Path:
    return compare(
        POLICIES,
        TASKS,
        tmp_path_factory.mktemp("p") / "study",
        n_workers=2,
        max_steps=5,
        progress=False,
        screenshots=True,
    )


def test_study_on_the_local_suite(process_study):
    got = outcome(process_study)
    assert len(got) == 9 and all(status == "done" for _, _, status in got.values()), got
    ref = [got[(POLICIES[0].label, f"webarena/local.{i}")][0] for i in (121, 203, 9)]
    assert ref == [1.0, 1.0, 1.0]
    react = {env: reward for (policy, env), (reward, _, _) in got.items() if policy == "react [scripted]"}
    assert react == {"webarena/local.121": 1.0, "webarena/local.203": 0.0, "webarena/local.9": 0.0}
    episode = next(Path(process_study, "episodes").glob("react*local.121*"))
    traj = json.loads((episode / "trajectory.json").read_text())
    assert traj["steps"][0]["llm_calls"][0]["responses"] == [SCRIPTED_ANSWER]


def test_ray_backend_matches_the_process_backend(process_study, tmp_path):
    ray_study = compare(POLICIES, TASKS, tmp_path / "ray", executor="ray", n_workers=2, max_steps=5, progress=False)
    assert outcome(ray_study) == outcome(process_study)


def test_html_report_renders_and_navigates(process_study, leased_browser):
    report = build_report(process_study)
    for name in ("summary.md", "summary.csv", "summary.json", "success_by_site.png", "success_vs_cost.png"):
        assert (report / name).stat().st_size > 0
    summary = json.loads((report / "summary.json").read_text())
    assert [r["policy"] for r in summary["rows"]] == [p.label for p in POLICIES]
    assert summary["rows"][0]["success"]["all"]["mean"] == 1.0

    page = leased_browser.new_page()
    page.goto((report / "index.html").as_uri())
    assert page.locator("#summary tr").count() == 1 + len(POLICIES)
    page.locator("a.episode-link[href*='reference']").first.click()
    page.wait_for_load_state()
    assert "reward 1.00" in page.locator("#verdict").inner_text()
    steps = page.locator("div.step")
    shot = page.locator("img.shot").first
    assert shot.evaluate("img => img.complete && img.naturalWidth > 100")  # the step's screenshot loads
    assert steps.count() >= 2 and page.locator("code.action").last.inner_text().startswith("stop [")
    page.get_by_text("next episode").click()
    page.wait_for_load_state()
    assert page.url.endswith(".html") and page.locator("#verdict").count() == 1
    page.close()
