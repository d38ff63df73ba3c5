"""The local suite in WebArena-Verified form (offline): every linked task's form is derived from its
WebArena eval and its template, and the package's own evaluator scores the expected response (and the
reference page's navigation) 1 and a wrong answer or a wrong page 0."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from urllib.parse import urlencode

import pytest
from env_support import SITE_URLS as URLS

from webarena_gym.envs.evaluation.verified import parse_response, results_schema, score
from webarena_gym.envs.local import registry
from webarena_gym.envs.local.reference import fill_placeholders
from webarena_gym.envs.local.verified import (
    STORED_DIR,
    MissingVerifiedForm,
    expected_response,
    task_type,
    verified_form,
)
from webarena_gym.envs.registration import local_task_config
from webarena_gym.envs.verified import verified_tasks


def _navigation(url: str) -> dict:
    request = {"method": "GET", "url": url, "headers": [{"name": "accept", "value": "text/html"}]}
    response = {"status": 200, "headers": [], "cookies": [], "content": {"size": -1, "mimeType": "text/html"}}
    request.update(httpVersion="HTTP/1.1", cookies=[])
    return {"request": request, "response": {**response, "redirectURL": ""}}


def _forms() -> dict[int, dict]:
    out = {}
    for task in registry.load_tasks():
        try:
            form = verified_form(task)
        except MissingVerifiedForm:
            continue
        if form is not None:
            out[task["task_id"]] = form
    return out


# What envs/local/verified/<site>.json store per task (the forms' parts that cannot be derived)
STORED = {int(k): v for path in STORED_DIR.glob("*.json") for k, v in json.loads(path.read_text()).items()}


def test_a_mutation_is_checked_on_its_request_and_a_stored_check_replaces_the_derived_navigation():
    """A mutating task's "GOLD in PRED" url_match (the new post's page under the forum's URL) is not made an
    exact navigation check: the request it sends is checked, as in the package's own mutating tasks."""
    post = registry.get_task(212)  # post a question in a forum: url_match "__REDDIT__/f/consoles", GOLD in PRED
    assert post["eval"]["url_note"] == "GOLD in PRED" and task_type(post) == "mutate"
    [check] = verified_form(post)["eval"][1:]
    assert check["expected"]["http_method"] == "POST"
    assert check["expected"]["post_data"]["title"] == post["instantiation_dict"]["question"]
    public = registry.get_task(337)  # "See all public projects": GitLab serves them under /explore/projects
    assert verified_form(public)["eval"][1:] == STORED[337]["network"]


def _trace(task: dict) -> list[dict]:
    """The requests the task's Verified form asks for (the reference page opened, each mutation posted
    with its fields and status): what a correct episode's trace holds."""
    entries = []
    for check in local_task_config(task["task_id"])["verified"]["eval"][1:]:
        expected = check["expected"]
        url = fill_placeholders(expected["url"] if isinstance(expected["url"], str) else expected["url"][0], URLS)
        if expected.get("http_method", "GET") == "GET":
            entries.append(_navigation(url))
            continue
        entry = _post(url, urlencode(expected.get("post_data") or {}, doseq=True))
        entry["response"]["status"] = expected.get("response_status", 200)
        entries.append(entry)
    return entries


def test_every_linked_local_task_has_a_verified_form():
    missing = []
    for task in registry.load_tasks():
        try:
            verified_form(task)
        except MissingVerifiedForm as exc:
            missing.append(str(exc))
    assert not missing, "\n".join(missing)


def test_a_form_takes_its_schema_from_the_template_s_verified_tasks_and_its_values_from_the_local_eval():
    forms = _forms()
    assert len(forms) >= 240
    by_template = collections.defaultdict(set)
    for task in verified_tasks():
        by_template[task["intent_template_id"]].add(json.dumps(results_schema(task), sort_keys=True))
    overridden = {task_id for task_id, entry in STORED.items() if "results_schema" in entry}
    assert all(STORED[task_id].get("why") for task_id in overridden)  # a replaced schema says why
    for task_id, form in forms.items():
        task = registry.get_task(task_id)
        schema = results_schema(form)
        if task_id in overridden:
            assert schema == STORED[task_id]["results_schema"]
        elif task_type(task) == "retrieve" and schema != {"type": "array", "items": {"type": "string"}}:
            assert json.dumps(schema, sort_keys=True) in by_template[form["intent_template_id"]], task_id
        expected = expected_response(form)
        assert parse_response(json.dumps(expected), schema)["task_type"] == task_type(task).upper()
    order = registry.get_task(0)  # "Get the order number of my most recent cancelled order": must_include 195
    assert expected_response(forms[0])["retrieved_data"] == ["195"] and order["eval"]["reference_answers"]


def test_a_local_config_carries_its_form_and_a_local_only_task_none():
    linked = next(t for t in registry.load_tasks() if registry.webarena_template_id(t) is not None)
    local_only = next(t for t in registry.load_tasks() if registry.webarena_template_id(t) is None)
    assert local_task_config(linked["task_id"])["verified"] == verified_form(linked)
    assert "verified" not in local_task_config(local_only["task_id"])


def test_a_shop_search_matches_the_index_action_of_its_route():
    task = next(t for t in registry.load_tasks() if "catalogsearch/result/?" in t["eval"].get("reference_url", ""))
    form, response = verified_form(task), json.dumps(expected_response(verified_form(task)))
    url = fill_placeholders(task["eval"]["reference_url"], URLS).replace("/result/?", "/result/index/?")
    assert score(form, response, [_navigation(url)], URLS)["score"] == 1.0
    wrong = url.replace("/result/index/?", "/advanced/?")
    assert score(form, response, [_navigation(wrong)], URLS)["score"] == 0.0


def _another(value):
    """A wrong value of the same shape (a wrong answer the schema still accepts)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, dict):
        key = sorted(value)[0]
        return {**value, key: _another(value[key])}
    return "Zanzibar 9999"


def _samples() -> list[int]:
    """One task per eval-type combination and per results_schema shape among the derived forms."""
    seen: dict[str, int] = {}
    for task_id, form in sorted(_forms().items()):
        task = registry.get_task(task_id)
        seen.setdefault("+".join(task["eval"]["eval_types"]), task_id)
        seen.setdefault(json.dumps(results_schema(form), sort_keys=True), task_id)
        if expected_response(form)["status"] != "SUCCESS":
            seen.setdefault("not found", task_id)
    return sorted(set(seen.values()))


@pytest.mark.parametrize("task_id", _samples())
def test_the_package_scores_the_expected_response_1_and_a_wrong_answer_or_page_0(task_id):
    task, form = registry.get_task(task_id), _forms()[task_id]
    right = expected_response(form)
    assert score(form, json.dumps(right), _trace(task), URLS)["score"] == 1.0
    wrong_status = {**right, "status": "UNKNOWN_ERROR" if right["status"] == "SUCCESS" else "SUCCESS"}
    assert score(form, json.dumps(wrong_status), _trace(task), URLS)["score"] == 0.0
    if right["retrieved_data"]:
        other = _another(right["retrieved_data"][0])
        wrong_data = {**right, "retrieved_data": [other, *right["retrieved_data"][1:]]}
        assert score(form, json.dumps(wrong_data), _trace(task), URLS)["score"] == 0.0
    if task_type(task) == "mutate":  # no request sent: the site was not changed
        assert score(form, json.dumps(right), [], URLS)["score"] == 0.0
    derived_navigation = task_type(task) != "mutate" and "network" not in STORED.get(task_id, {})
    if "url_match" in task["eval"]["eval_types"] and derived_navigation:
        # WebArena's url_match reads only the reference's query keys; so does the derived check
        opened = _trace(task)[0]["request"]["url"]
        extra = [_navigation(opened + ("&" if "?" in opened else "?") + "page_size=50")]
        assert score(form, json.dumps(right), extra, URLS)["score"] == 1.0
        elsewhere = [_navigation(fill_placeholders(task["start_url"].split("|AND|")[0].strip(), URLS) + "/elsewhere")]
        assert score(form, json.dumps(right), elsewhere, URLS)["score"] == 0.0


RECORDED = Path(__file__).resolve().parent / "data" / "verified_local" / "episodes.json"


def test_recorded_local_episodes_are_scored_by_the_package_as_they_were_live():
    """Answers and network traces (document requests and form posts) recorded by a local study run under
    ``--evaluator webarena-verified``: the reference and the random baseline on a retrieval (local.0) and a
    shop search (local.6). Scored again offline they keep their live verdicts; the reference's answer on
    the random episode's trace (a wrong end state) fails."""
    episodes = json.loads(RECORDED.read_text())
    assert {(e["env_id"], e["policy"]) for e in episodes} == {
        (env, policy) for env in ("webarena/local.0", "webarena/local.6") for policy in ("reference", "random")
    }
    for e in episodes:
        form = local_task_config(int(e["env_id"].rsplit(".", 1)[1]))["verified"]
        assert score(form, e["answer"], e["entries"], e["site_urls"])["score"] == e["reward"], e["env_id"]
    by = {(e["env_id"], e["policy"]): e for e in episodes}
    reference, random = by[("webarena/local.6", "reference")], by[("webarena/local.6", "random")]
    assert reference["reward"] == 1.0 and random["reward"] == 0.0
    form = local_task_config(6)["verified"]
    assert score(form, reference["answer"], random["entries"], random["site_urls"])["score"] == 0.0


def _post(url: str, body: str) -> dict:
    entry = _navigation(url)
    entry["request"].update(method="POST", postData={"mimeType": "application/x-www-form-urlencoded", "text": body})
    return entry


def test_a_mutation_s_check_is_read_from_the_reference_trace_fields_named_by_the_eval_only():
    from webarena_gym.experiments.verified_local import mutation_checks

    task = registry.get_task(19)  # rate a purchase 5 stars with the nickname Emma Lopez (program_html)
    shop = URLS["shopping"]
    trace = [
        _post(shop + "/customer/account/login/", "login%5Busername%5D=emma&login%5Bpassword%5D=%3Cscrubbed%3E"),
        _navigation(shop + "/review/product/list/id/205/"),
        _post(shop + "/review/product/post/id/205/", "rating=5&nickname=Emma+Lopez&title=Warm&detail=Soft+and+warm"),
    ]
    checks = mutation_checks(task, trace, URLS)
    assert checks == [
        {
            "evaluator": "NetworkEventEvaluator",
            "expected": {
                "url": "__SHOPPING__/review/product/post/id/205/",
                "http_method": "POST",
                "response_status": 200,
                "post_data": {"nickname": "Emma Lopez"},  # the free text of the review is the agent's choice
            },
        }
    ]
    form = {**verified_form(registry.get_task(0)), "eval": [{"evaluator": "AgentResponseEvaluator",
            "results_schema": {"type": "null"}, "expected": {"task_type": "mutate", "status": "SUCCESS",
            "retrieved_data": None}}, *checks]}  # fmt: skip
    answer = json.dumps({"task_type": "MUTATE", "status": "SUCCESS", "retrieved_data": None})
    assert score(form, answer, trace, URLS)["score"] == 1.0
    other = [*trace[:2], _post(shop + "/review/product/post/id/205/", "rating=5&nickname=Someone+Else&title=W")]
    assert score(form, answer, other, URLS)["score"] == 0.0
    # a small form keeps every field; a task that posts nothing is checked on the last page it opened
    vote = mutation_checks(task, [_post(shop + "/wishlist/index/add/", "product=382")], URLS)
    assert vote[0]["expected"]["post_data"] == {"product": "382"}
    # a field holding a site's address is left out: its port differs in the next run
    links = f"file_path=urls.txt&content={URLS['reddit']}/f/space/1"
    [posted] = mutation_checks(task, [_post(shop + "/new/", links)], URLS)
    assert posted["expected"]["post_data"] == {"file_path": "urls.txt"}
    page = mutation_checks(task, [_navigation(shop + "/x"), _navigation(shop + "/contact")], URLS)
    assert page == [{"evaluator": "NetworkEventEvaluator", "expected": {"url": "__SHOPPING__/contact"}}]
