"""One-line bugs planted in the methods' decision logic, each caught by a named unit test.

An audit planted these bugs and found that most passed the suite; each now has a test that pins the
behaviour. This file keeps it that way: the named tests pass on a staged copy of the package, and per
bug the named test must fail once the copy gets the one-line change, so a test weakened later until it
no longer sees its bug fails here. The checkout itself is never modified.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_FOLDERS = ("envs", "policies", "wrappers", "experiments", "llm", "benchmarks")


@dataclass(frozen=True)
class PlantedBug:
    name: str
    path: str  # a repository path
    correct: str  # the line (or part of it) as the method needs it, found exactly once in the file
    planted: str
    caught_by: str  # pytest node id of the unit test that must fail


COACT, PLAN_AND_ACT = "tests/test_policies_coact.py", "tests/test_policies_plan_and_act.py"
DEVILS_ADVOCATE, PLAN_MCTS = "tests/test_policies_devils_advocate.py", "tests/test_policies_plan_mcts.py"

BUGS = (
    PlantedBug(
        "CoAct keeps the phase index after a global revision",
        "policies/coact/policy.py",
        "s.phase, s.phase_revisions, s.mode = 0, {}, HANDOFF",
        "s.phase_revisions, s.mode = {}, HANDOFF",
        f"{COACT}::test_a_global_revision_restarts_at_phase_1_of_the_new_plan",
    ),
    PlantedBug(
        "CoAct shows the whole observation instead of 1,920 tokens",
        "policies/coact/policy.py",
        'observation = truncate_tokens(str(obs.get("text") or ""), self.max_obs_tokens, self.llm.model_for(role))',
        'observation = str(obs.get("text") or "")',
        f"{COACT}::test_every_prompt_shows_the_observation_cut_to_1920_tokens_by_default",
    ),
    PlantedBug(
        "CoAct's false_check accepts 'move'",
        "policies/coact/policy.py",
        'allowed = ("move", "revise", "request") if call == CHECK_PASS else ("revise", "request")',
        'allowed = ("move", "revise", "request")',
        f"{COACT}::test_false_check_may_not_move_on_a_move_answer_is_asked_again",
    ),
    PlantedBug(
        "Plan-and-Act's executor gets the first plan, not the newest",
        "policies/plan_and_act/policy.py",
        "plan=self.s.plans[-1] if self.use_planner else None,",
        "plan=self.s.plans[0] if self.use_planner else None,",
        f"{PLAN_AND_ACT}::test_the_executor_follows_the_newest_plan_and_the_replanner_sees_every_action",
    ),
    PlantedBug(
        "Plan-and-Act's replanner is not shown the latest action",
        "policies/plan_and_act/policy.py",
        "actions = [r.action for r in self.s.rounds]",
        "actions = [r.action for r in self.s.rounds][:-1]",
        f"{PLAN_AND_ACT}::test_the_executor_follows_the_newest_plan_and_the_replanner_sees_every_action",
    ),
    PlantedBug(
        "Devil's Advocate ignores the element-map answer",
        "policies/devils_advocate/policy.py",
        "return str(Command(command.name, (mapped, *command.args[1:])))",
        "return action",
        f"{DEVILS_ADVOCATE}::test_after_a_backtrack_the_mapped_new_id_is_the_one_clicked",
    ),
    PlantedBug(
        "Devil's Advocate compares states by URL only",
        "policies/devils_advocate/policy.py",
        "return self.url == other.url and _normalise(self.text) == _normalise(other.text)",
        "return self.url == other.url",
        f"{DEVILS_ADVOCATE}::test_a_page_at_the_same_url_with_other_content_is_another_state",
    ),
    PlantedBug(
        "Plan-MCTS counts a success when any Macro sample says so",
        "policies/plan_mcts/search.py",
        'child.success = codes.count("A") * 2 > len(codes) if codes',
        'child.success = codes.count("A") > 0 if codes',
        f"{PLAN_MCTS}::test_a_success_candidate_needs_most_macro_samples_to_say_a",
    ),
    PlantedBug(
        "Plan-MCTS's depth limit is off by one",
        "policies/plan_mcts/search.py",
        "if node.terminal or node.depth >= self.cfg.max_depth:",
        "if node.terminal or node.depth > self.cfg.max_depth:",
        f"{PLAN_MCTS}::test_nodes_at_the_depth_limit_are_not_expanded",
    ),
    PlantedBug(
        "Plan-MCTS's final selection ignores Q",
        "policies/plan_mcts/search.py",
        '(lambda e: e.Q) if self.cfg.final_select == "max_q" else (lambda e: e.N)',
        "(lambda e: e.N)",
        f"{PLAN_MCTS}::test_the_final_path_follows_the_highest_q_or_the_most_visits",
    ),
    PlantedBug(
        "Plan-MCTS's UCT uses N(s)+1",
        "policies/plan_mcts/tree.py",
        "total = sum(e.N for e in edges)",
        "total = sum(e.N for e in edges) + 1",
        f"{PLAN_MCTS}::test_uct_takes_unvisited_edges_first_in_planner_order_then_the_formula",
    ),
)


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> Path:
    """The package laid out as installed (``webarena_gym/<folder>``) with the tests, in a scratch folder."""
    folder = tmp_path_factory.mktemp("planted")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "webarena_gym", folder / "webarena_gym", ignore=ignore)
    for name in PACKAGE_FOLDERS:
        shutil.copytree(ROOT / name, folder / "webarena_gym" / name, ignore=ignore)
    shutil.copytree(ROOT / "tests", folder / "tests", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")
    imported = _python(folder, "-c", "import webarena_gym; print(webarena_gym.__file__)").stdout.strip()
    assert Path(imported).is_relative_to(folder), f"the tests would import {imported}, not the staged copy"
    clean = _run_tests(folder, *sorted({bug.caught_by for bug in BUGS}))
    assert clean.returncode == 0, f"the named tests fail on the unchanged copy: {clean.stdout[-2000:]}"
    return folder


def _python(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(folder), "PYTHONDONTWRITEBYTECODE": "1"}
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return subprocess.run(
        [sys.executable, "-P", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def _run_tests(folder: Path, *nodes: str) -> subprocess.CompletedProcess[str]:
    return _python(folder, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not browser", *nodes)


@pytest.mark.parametrize("bug", BUGS, ids=[bug.name for bug in BUGS])
def test_each_planted_bug_fails_its_test(staged, bug):
    source = staged / "webarena_gym" / bug.path
    correct = source.read_text()
    assert correct.count(bug.correct) == 1, f"{bug.path} no longer holds the line: update this bug"
    source.write_text(correct.replace(bug.correct, bug.planted))
    try:
        planted = _run_tests(staged, bug.caught_by)
    finally:
        source.write_text(correct)
    # Failed on an assertion, not on a collection error (a planted line that broke the import).
    assert planted.returncode == 1 and " failed" in planted.stdout.splitlines()[-1], planted.stdout[-2000:]
