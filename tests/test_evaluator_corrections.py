"""AgentOccam's task-label corrections: the right 80 tasks, applied to copies, scored as intended."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from webarena_gym.envs.evaluation.corrections import AGENTOCCAM_CORRECTED_TASKS, apply_agentoccam_corrections
from webarena_gym.envs.evaluation.evaluator import Judge, check_eval_block, evaluate

TASKS = {
    t["task_id"]: t
    for t in json.loads((Path(__file__).resolve().parents[1] / "envs" / "data" / "test.raw.json").read_text())
}
SHOP = "http://127.0.0.1:7770"

# The union the AgentOccam paper lists (App. E), written out independently of the module's table.
PAPER_IDS = {
    *range(16, 21),
    97,
    146,
    *range(178, 183),
    240,
    254,
    *range(261, 265),
    *range(293, 303),
    *range(308, 313),
    330,
    *range(351, 356),
    *range(363, 368),
    *range(415, 419),
    489,
    *range(528, 533),
    583,
    584,
    601,
    603,
    606,
    608,
    629,
    *range(640, 650),
    *range(653, 658),
    679,
    707,
    708,
    709,
}


def corrected(task_id: int) -> dict:
    text = json.dumps(apply_agentoccam_corrections(TASKS[task_id])).replace("__SHOPPING__", SHOP)
    for port, placeholder in enumerate(("__SHOPPING_ADMIN__", "__REDDIT__", "__GITLAB__", "__MAP__"), start=9001):
        text = text.replace(placeholder, f"http://127.0.0.1:{port}")
    return json.loads(text)


def score(config: dict, answer: str = "", last_url: str = "") -> float:
    return evaluate(config, None, answer, judge=Judge(mock_response="correct"), last_url=last_url).score


def test_exactly_the_papers_80_tasks_are_corrected_and_the_originals_stay_untouched():
    assert AGENTOCCAM_CORRECTED_TASKS == PAPER_IDS and len(PAPER_IDS) == 80
    originals = copy.deepcopy(TASKS)
    changed = {tid for tid, task in TASKS.items() if apply_agentoccam_corrections(task) != task}
    assert TASKS == originals
    assert changed == PAPER_IDS - {240}  # 240 is listed but its change is not applied (see the module)


def test_corrected_eval_blocks_are_valid():
    for tid in PAPER_IDS:
        assert check_eval_block(corrected(tid)["eval"]) == [], tid


def test_corrections_change_scores_as_the_paper_describes():
    original_363 = json.loads(json.dumps(TASKS[363]))
    assert score(original_363, "778 m") == 0.0
    assert score(corrected(363), "778 m") == 1.0 and score(corrected(363), "778m") == 1.0
    assert score(corrected(16), "driving: 2min; walking: 16min") == 1.0  # exact to the joined reference
    clone = "Run: git clone ssh://git@metis.lti.cs.cmu.edu:2222/convexegg/super_awesome_robot.git"
    assert score(json.loads(json.dumps(TASKS[293])), clone) == 0.0 and score(corrected(293), clone) == 1.0
    assert score(corrected(261), last_url=f"{SHOP}/electronics.html?cat=60") == 1.0
    assert score(corrected(261), last_url=f"{SHOP}/electronics.html?cat=61") == 0.0
    assert corrected(644)["eval"]["reference_url"].endswith("/f/gaming") and "gaming" in corrected(644)["intent"]
    assert "budget apartment" in corrected(603)["intent"]
    assert corrected(707)["eval"]["program_html"][0]["required_contents"] == {"exact_match": "1/1/22"}
