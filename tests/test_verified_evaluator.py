"""WebArena-Verified's evaluator through the package (offline): the response contract's parser on every
``results_schema`` shape of the 812 tasks, the package's verdict on recorded responses and HAR entries,
and the refusals that keep a malformed answer from being scored as something else."""

from __future__ import annotations

import collections
import json

import pytest
from env_support import SITE_URLS as URLS

from webarena_gym.envs.env import EVALUATORS
from webarena_gym.envs.evaluation.verified import (
    ResponseError,
    parse_response,
    response_instruction,
    results_schema,
    score,
)
from webarena_gym.envs.registration import real_task_config
from webarena_gym.envs.sites import RealSiteHost
from webarena_gym.envs.task import WebArenaTask
from webarena_gym.envs.verified import task_type, verified_task, verified_tasks


def _expected(task: dict) -> dict:
    return next(c for c in task["eval"] if c["evaluator"] == "AgentResponseEvaluator")["expected"]


def _one_answer(data, schema):
    """A concrete agent answer from an expected value: where the dataset lists alternatives (a list in
    place of a scalar or an object), the first one."""
    if data is None:
        return None
    item = (schema or {}).get("items", {})
    out = []
    for value in data:
        while isinstance(value, list) and item.get("type") != "array":
            value = value[0]
        out.append(value)
    return out


def _answer(task: dict) -> dict:
    expected = _expected(task)
    return {**expected, "retrieved_data": _one_answer(expected.get("retrieved_data"), results_schema(task))}


def _entry(method: str, url: str, status: int = 200, post: str | None = None, navigation: bool = True) -> dict:
    headers = [{"name": "accept", "value": "text/html,application/xhtml+xml" if navigation else "*/*"}]
    request = {"method": method, "url": url, "headers": headers, "httpVersion": "HTTP/1.1", "cookies": []}
    if post is not None:
        request["postData"] = {"mimeType": "application/x-www-form-urlencoded", "text": post}
    response = {"status": status, "headers": [], "cookies": [], "content": {"size": -1, "mimeType": "text/html"}}
    return {"request": request, "response": {**response, "redirectURL": "/next" if 300 <= status < 400 else ""}}


SHAPES_OF_812 = 43  # distinct results_schema values across the dataset (README lists them with counts)


def test_the_parser_reads_an_answer_of_every_results_schema_shape_of_the_812_tasks():
    shapes = collections.Counter(json.dumps(results_schema(t), sort_keys=True) for t in verified_tasks())
    assert len(shapes) == SHAPES_OF_812
    assert shapes[json.dumps({"type": "null"})] == 514  # mutate/navigate tasks and errors: no data
    for task in verified_tasks():
        answer = _answer(task)
        parsed = parse_response(json.dumps(answer), results_schema(task))
        assert parsed["status"] == answer["status"] and parsed["task_type"] == answer["task_type"].upper()
        assert parsed["retrieved_data"] == answer["retrieved_data"], task["task_id"]


@pytest.mark.parametrize(
    "text, reason",
    [
        ("Quest Lumaflex Band", "no JSON object"),
        ('{"task_type": "RETRIEVE", "retrieved_data": ["x"]}', "lacks status"),
        ('{"task_type": "FETCH", "status": "SUCCESS", "retrieved_data": ["x"]}', "task_type must be"),
        ('{"task_type": "RETRIEVE", "status": "DONE", "retrieved_data": ["x"]}', "status must be"),
        ('{"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": "x"}', "does not follow"),
        ('{"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": ["x"], "answer": 1}', "unknown keys"),
    ],
)
def test_the_parser_names_the_broken_rule(text, reason):
    with pytest.raises(ResponseError, match=reason):
        parse_response(text, {"type": "array", "items": {"type": "string"}})


def test_typed_data_must_follow_the_schema_and_a_sentence_around_the_object_is_read():
    schema = {"type": "array", "items": {"type": "number"}}
    with pytest.raises(ResponseError, match="not of type 'number'"):
        parse_response('{"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": ["12"]}', schema)
    text = 'Done. ```json\n{"task_type": "retrieve", "status": "success", "retrieved_data": [12]}\n```'
    assert parse_response(text, schema)["retrieved_data"] == [12]
    # An error status needs no data, whatever the schema.
    assert parse_response('{"task_type": "RETRIEVE", "status": "NOT_FOUND_ERROR"}', schema)["retrieved_data"] is None


def test_the_package_scores_every_retrieve_task_s_expected_answer_1_and_a_wrong_one_0():
    retrieve = [t for t in verified_tasks() if task_type(t) == "retrieve" and len(t["eval"]) == 1]
    assert len(retrieve) > 250
    for task in retrieve[::10]:
        right = score(task, json.dumps(_answer(task)), [], URLS)
        assert right["score"] == 1.0, (task["task_id"], right["details"])
        wrong = {**_answer(task), "status": "UNKNOWN_ERROR" if _expected(task)["status"] == "SUCCESS" else "SUCCESS"}
        assert score(task, json.dumps(wrong), [], URLS)["score"] == 0.0, task["task_id"]


def test_an_unparseable_answer_is_scored_as_the_package_reads_it_never_defaulted():
    task = verified_task(0)
    result = score(task, "Quest Lumaflex Band", [], URLS)
    assert result["score"] == 0.0 and "no JSON object" in result["response"]["error"]
    assertions = result["details"]["webarena_verified"]["evaluators_results"][0]["assertions"]
    assert assertions[0]["assertion_name"] == "agent_response_invalid_format"
    assert "error" not in result  # a verdict on the agent, not an evaluator failure


def test_a_navigate_task_is_checked_against_the_last_page_the_trace_opened():
    task = verified_task(44)  # open the GitLab to-do list
    answer = json.dumps({"task_type": "NAVIGATE", "status": "SUCCESS", "retrieved_data": None})
    there = [_entry("GET", URLS["gitlab"] + "/explore"), _entry("GET", URLS["gitlab"] + "/dashboard/todos")]
    assert score(task, answer, there, URLS)["score"] == 1.0
    elsewhere = [*there, _entry("GET", URLS["gitlab"] + "/dashboard/issues")]
    assert score(task, answer, elsewhere, URLS)["score"] == 0.0
    assert score(task, answer, [], URLS)["score"] == 0.0


def test_a_mutate_task_needs_the_request_that_made_the_change():
    task = verified_task(404)  # upvote a post: POST __REDDIT__/sv/124260.json with choice=1
    answer = json.dumps({"task_type": "MUTATE", "status": "SUCCESS", "retrieved_data": None})
    url = URLS["reddit"] + "/sv/124260.json"
    assert score(task, answer, [_entry("POST", url, 200, "choice=1", navigation=False)], URLS)["score"] == 1.0
    assert score(task, answer, [_entry("POST", url, 200, "choice=-1", navigation=False)], URLS)["score"] == 0.0
    assert score(task, answer, [_entry("GET", URLS["reddit"] + "/f/books", navigation=True)], URLS)["score"] == 0.0


def test_the_goal_states_the_contract_and_a_task_without_a_verified_form_is_refused():
    host = RealSiteHost(("gitlab",))
    config = {**real_task_config(44), "verified": verified_task(44)}
    task = WebArenaTask(0, config, host, eval_options=EVALUATORS["webarena-verified"])
    assert task.response_contract == {"results_schema": {"type": "null"}}
    assert '"task_type"' in response_instruction(None) and "NOT_FOUND_ERROR" in response_instruction(None)
    with pytest.raises(ValueError, match="no WebArena-Verified form"):
        WebArenaTask(0, real_task_config(44), host, eval_options=EVALUATORS["webarena-verified"])
