"""Which reference path the conformance model follows: the solution itself when the prompt offers
``goto``, else the task's goto-free path; a task that needs a URL no page shows is its own cause."""

from __future__ import annotations

import pytest

from webarena_gym.envs.local import registry
from webarena_gym.experiments.conformance.model import NEEDS_URL, NO_GRAMMAR, ConformanceModel, Stuck

TASK = 300  # gitlab: the solution opens the contributors graph with goto, then answers
PAGE = "[5] link 'Projects'\n[9] link 'primer / design'"
CLICKS = [
    {"action": "click", "target": {"role": "link", "name": "primer / design"}},
    {"action": "send_msg_to_user", "text": "Carol Nguyen"},
]


def test_without_goto_the_model_follows_the_goto_free_path(monkeypatch):
    monkeypatch.setattr(registry, "goto_free_solution", lambda task_id: [dict(s) for s in CLICKS])
    with_goto = ConformanceModel(TASK, "react", ("gitlab",))
    assert with_goto.next_command(0, PAGE, "http://127.0.0.1:9/", {"click", "goto", "stop"}).startswith("goto [")
    clicks_only = ConformanceModel(TASK, "agentoccam", ("gitlab",))
    assert clicks_only.next_command(0, PAGE, "", {"click", "stop"}) == "click [9]"
    assert clicks_only.next_command(1, PAGE, "", {"click", "stop"}) == "stop [Carol Nguyen]"


def test_a_task_that_needs_a_url_no_page_shows_is_counted_apart(monkeypatch):
    monkeypatch.setattr(registry, "goto_free_solution", lambda task_id: None)
    monkeypatch.setattr(registry, "needs_typed_url", lambda task_id: "no page links to the graph")
    model = ConformanceModel(TASK, "agentoccam", ("gitlab",))
    with pytest.raises(Stuck) as stuck:
        model.next_command(0, PAGE, "", {"click", "stop"})
    assert (stuck.value.finding.cause, model.finding) == (NEEDS_URL, stuck.value.finding)
    monkeypatch.setattr(registry, "needs_typed_url", lambda task_id: None)
    unmarked = ConformanceModel(TASK, "agentoccam", ("gitlab",))
    with pytest.raises(Stuck) as stuck:
        unmarked.next_command(0, PAGE, "", {"click", "stop"})
    assert stuck.value.finding.cause == NO_GRAMMAR
