"""AgentOccam's ablation ladder as one study: each row changes only what the paper's row changes, the
command line selects it with the paper's evaluator, and a study of it (real browser, sites, evaluator
and litellm path, a scripted model) reaches the report's action and observation-token tables, with
the study's step budget reaching the policies' final-step warning and forced-stop answer."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from webarena_gym.experiments.ablations import LADDERS, ladder
from webarena_gym.experiments.cli import UsageError, _env_kwargs, _study_policies, build_parser
from webarena_gym.experiments.compare import PolicySpec, compare
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.store import StudyStore
from webarena_gym.policies import make_policy
from webarena_gym.policies.agentoccam.text import actor_answer
from webarena_gym.wrappers.presets import get_preset

ROWS = ["Vanilla", "↓ Actions", "Above + X Scrolling", "Above + Obs Opt.", "Above + History", "AgentOccam"]


def spaces(spec: PolicySpec) -> dict:
    """What a row shows and lets the model do, and the policy switches it sets."""
    policy = make_policy(spec.name, script={"actor": []}, **{k: v for k, v in spec.config.items() if k != "model"})
    preset = get_preset(policy.preset)
    return {
        "policy": spec.name,
        "actions": set(preset.actions),
        "full_page": preset.full_page,
        "aligned": preset.obs_config is not None,
        "raw_lines": preset.raw_lines,
        "history": getattr(policy, "history", None),
        "planning": getattr(policy, "planning", None),
    }


def test_each_row_changes_only_what_the_papers_row_changes():
    rows = [spaces(spec) for spec in ladder("agentoccam", "m")]
    changed = [{k for k in rows[i] if rows[i][k] != rows[i - 1][k]} for i in range(1, len(rows))]
    assert changed == [
        # ReAct (its 1920-token cut of the page) -> AgentOccam's prompt, fewer actions, the first 500 lines
        {"policy", "actions", "history", "planning", "raw_lines"},
        {"actions", "full_page"},  # no scroll, the whole page
        {"aligned", "raw_lines"},  # the aligned observation (its own line cap)
        {"history"},
        {"actions", "planning"},  # branch and prune
    ]
    assert rows[1]["actions"] - rows[2]["actions"] == {"scroll"}
    assert rows[5]["actions"] - rows[4]["actions"] == {"branch", "prune"}


def test_the_command_line_runs_the_ladder_with_the_papers_evaluator(capsys):
    args = build_parser().parse_args(["compare", "--ablation", "agentoccam", "--model", "m", "--out", "s"])
    policies = _study_policies(args)
    assert [p.label for p in policies] == [f"{row} [m]" for row in ROWS]
    assert args.evaluator == "agentoccam" and "Evaluator: agentoccam" in capsys.readouterr().out
    assert _env_kwargs(args) == {"evaluator": "agentoccam"}  # what reaches every episode's env
    args = build_parser().parse_args(
        ["compare", "--policy", "reference", "--ablation", "agentoccam", "--evaluator", "webarena", "--model", "m"]
        + ["--out", "s"]
    )
    assert len(_study_policies(args)) == 7 and args.evaluator == "webarena"  # named explicitly: kept
    with pytest.raises(UsageError, match="needs a model"):  # exit code 2 with one message
        _study_policies(build_parser().parse_args(["compare", "--ablation", "agentoccam", "--out", "s", "--model", ""]))
    assert set(LADDERS) == {"agentoccam"}


def scripted(spec: PolicySpec) -> PolicySpec:
    """The row with a scripted model that never answers: two actions of its grammar, then the budget."""
    if spec.name == "react":
        answers = [
            f"Let's look further. In summary, the next action I will perform is ```{a}```"
            for a in ("scroll [down]",) * 2
        ]
    else:
        answers = [actor_answer(f"note [seen page {i}]") for i in (1, 2)]
    config = {k: v for k, v in spec.config.items() if k != "model"}
    return PolicySpec(spec.name, {**config, "script": {"actor": answers}}, spec.label)


@pytest.mark.browser
@pytest.mark.slow
def test_a_study_of_the_ladder_reaches_the_papers_tables(tmp_path):
    policies = [scripted(spec) for spec in ladder("agentoccam")]
    study = compare(
        policies,
        "webarena/local.500",
        tmp_path / "ladder",
        max_steps=2,  # what `compare --max-steps 2` passes
        # a smaller window than the AgentOccam rows' 1920x1080, so that this article runs past the viewport
        env_kwargs={"evaluator": "agentoccam", "viewport": {"width": 1280, "height": 720}},
        progress=False,
    )
    results = {r.policy: r for r in StudyStore(study).latest().values()}
    assert list(results) == ROWS and all(r.status == "done" and r.n_steps == 2 for r in results.values())
    for label, result in results.items():
        traj = json.loads((Path(study) / result.trajectory / "trajectory.json").read_text())
        assert traj["reset_info"]["evaluator"] == "agentoccam"
        assert traj["forced_stop"] and traj["budget_exhausted"] == "decisions"
        answer = traj["evaluation"]["answer"]
        if label == "Vanilla":
            assert answer == "Early stop: reached the maximum of 2 steps"
        else:
            assert answer == "The trajectory failed: step 3 would go beyond the maximum of 2 steps."
            system = [s["llm_calls"][0]["messages"][0]["content"] for s in traj["steps"]]
            assert "this is the last one" not in system[0] and "Your budget is 2 steps" in system[1]

    report = build_report(study)
    with open(report / "actions.csv") as fh:
        actions = {row["Policy"]: row for row in csv.DictReader(fh)}
    assert actions["Vanilla"]["scroll"] == "2" and actions["Vanilla"]["note"] == "-"
    assert all(actions[row]["note"] == "2" and actions[row]["hover"] == "-" for row in ROWS[1:])
    assert actions["↓ Actions"]["scroll"] == "0" and actions["Above + X Scrolling"]["scroll"] == "-"
    with open(report / "observation_tokens.csv") as fh:
        tokens = {row["Policy"]: row for row in csv.DictReader(fh)}
    assert all(float(tokens[row]["All (1)"]) > 100 for row in ROWS)
    # the whole page (X Scrolling) shows more than the viewport (↓ Actions) of the same article
    assert float(tokens["Above + X Scrolling"]["All (1)"]) > float(tokens["↓ Actions"]["All (1)"])
    summary = (report / "summary.md").read_text()
    assert "## Action frequencies" in summary and "## Observation tokens per step (GPT-2)" in summary
