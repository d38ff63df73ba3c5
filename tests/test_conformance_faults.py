"""The conformance matrix under noise: the model's right answer replaced now and then by a plausible
wrong one (another element of the page, an early answer, an unparseable reply), repeatably, and a
noisy episode still ends with a recorded outcome."""

from __future__ import annotations

import random

import pytest

from webarena_gym.experiments.conformance.faults import MALFORMED, PREMATURE, Faults
from webarena_gym.experiments.conformance.model import ConformanceModel

PAGE = "[10] link 'My Account'\n[194] link 'My Orders'\n[196] link 'My Wish List'"
MESSAGES = [{"role": "system", "content": "- click [id]: click"}, {"role": "user", "content": f"OBSERVATION:\n{PAGE}"}]
REPLY = "The next step. In summary, the next action I will perform is ```click [194]```"


def always(kind: str) -> Faults:
    """Faults that fire on every answer, always of ``kind``."""
    return Faults(1.0, random.Random(0), kinds=(kind,))


def test_no_rate_no_fault_and_a_rate_replaces_about_that_share_repeatably():
    assert Faults.seeded(0.0, 3, "react").apply(REPLY, MESSAGES) == REPLY
    runs = []
    for _ in range(2):
        faults = Faults.seeded(0.2, 3, "react")
        runs.append([faults.apply(REPLY, MESSAGES) != REPLY for _ in range(500)])
    assert runs[0] == runs[1]  # seeded by task and method
    assert 70 <= sum(runs[0]) <= 130
    assert [Faults.seeded(0.2, 4, "react").apply(REPLY, MESSAGES) != REPLY for _ in range(500)] != runs[0]


def test_a_wrong_id_is_another_element_of_the_page_in_the_same_command():
    faults = always("wrong_id")
    wrong = faults.apply(REPLY, MESSAGES)
    assert wrong.startswith("The next step.") and wrong.endswith("```")
    assert wrong.split("```")[1] in ("click [10]", "click [196]")
    assert faults.injected == {"wrong_id": 1}


def test_a_premature_answer_stops_in_place_of_the_command():
    faults = always("premature")
    assert faults.apply(REPLY, MESSAGES) == REPLY.replace("click [194]", PREMATURE)
    assert faults.apply("ACTION:\ntype [21] [chairs] [1]\n", MESSAGES) == f"ACTION:\n{PREMATURE}\n"


@pytest.mark.parametrize("kind", ["wrong_id", "premature", "malformed"])
def test_an_answer_without_a_command_can_only_be_malformed(kind):
    faults = always(kind)
    plan = '{"subplans": [{"thought": "t", "subplan": "Open the orders page."}]}'
    assert faults.apply(plan, MESSAGES) == MALFORMED
    assert faults.injected == {"malformed": 1}


def test_a_wrong_id_needs_another_element_on_the_page():
    alone = [{"role": "user", "content": "[194] link 'My Orders'"}]
    faults = always("wrong_id")
    assert faults.apply(REPLY, alone) == MALFORMED and faults.injected == {"malformed": 1}


def test_the_model_passes_every_answer_through_its_faults():
    model = ConformanceModel(0, "react", ("shopping",), faults=1.0)
    replies = [model.script().next("actor", MESSAGES) for _ in range(20)]
    assert model.calls == {"actor": 20}
    # the right answer (task 0 starts with "My Account") is never given
    assert sum(model.faults.injected.values()) == 20 and all("```click [10]```" not in r for r in replies)


@pytest.mark.browser
@pytest.mark.slow
def test_a_noisy_matrix_records_every_episode_and_its_wrong_answers(tmp_path):
    from webarena_gym.experiments import tasksets
    from webarena_gym.experiments.conformance.matrix import FAULTS_KEY, markdown, run_matrix, summarize
    from webarena_gym.experiments.store import StudyStore

    tasks = [t for t in tasksets.local_tasks() if t.task_id in (0, 400)]
    study = run_matrix(["react"], tasks, tmp_path / "study", faults=0.5)
    results = list(StudyStore(study).latest().values())
    assert sorted(r.task_id for r in results) == [0, 400]
    assert all(r.status == "done" for r in results), [(r.task_id, r.status, r.err_msg) for r in results]
    assert sum(sum(r.extra[FAULTS_KEY].values()) for r in results) >= 1
    assert "wrong answers given" in markdown(summarize(study))
