"""The local suite's tasks in WebArena-Verified form, so a local study is scored by the package's own
evaluators (``evaluator="webarena-verified"``) as well as by WebArena's.

A local task linked to a WebArena intent template gets a Verified task in the package's JSON form,
derived from its WebArena ``eval`` block and the template:

* ``AgentResponseEvaluator``: the ``results_schema`` of the package's Verified tasks of the same intent
  template (the most used one where they differ); the task type follows the local checks
  (``program_html`` mutates, ``url_match`` alone navigates, ``string_match`` retrieves); the expected
  ``retrieved_data`` are the local reference answers (``exact_match``'s value, ``must_include``'s or
  ``fuzzy_match``'s items), typed by the schema; an answer of "N/A" is a ``NOT_FOUND_ERROR``.
* ``NetworkEventEvaluator``: a navigation to the local ``reference_url`` (each ``|OR|`` alternative
  accepted) for a task with ``url_match`` that does not mutate. A mutating task is checked on the request
  it sends, as the package's own mutating tasks are: its ``url_match`` is mostly "GOLD in PRED" (the new
  post's page starts with the forum's URL), which the package's exact URL match cannot express.

What cannot be derived (values of a schema of objects, the request a mutation sends to a local site) is
stored per task in ``verified/<site>.json``: ``{"<task_id>": {"retrieved_data": [...]}}`` replaces the
derived answer, ``"results_schema"`` the template's where the local question asks for something else
(``"why"`` says what), ``{"network": [<NetworkEventEvaluator config>, ...]}`` adds checks. A linked task with
neither a derivable nor a stored form raises :class:`MissingVerifiedForm`. Stored ``network`` checks replace
the derived navigation (a "GOLD in PRED" URL whose page the local site serves under a longer path).
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from ..evaluation.verified import ResponseError, parse_response, results_schema
from . import registry

STORED_DIR = registry.LOCAL_DIR / "verified"
_NOT_FOUND = "n/a"
_MAGENTO_SITES = ("__SHOPPING__", "__SHOPPING_ADMIN__")
_NUMBER = re.compile(r"^[-+]?\$?\s*[-+]?[\d,]*\.?\d+$")


class MissingVerifiedForm(ValueError):
    """A linked local task whose Verified form can neither be derived nor is stored."""


@functools.lru_cache(maxsize=1)
def _template_schemas() -> dict[int, str]:
    """Per WebArena intent template, its Verified tasks' most used ``results_schema`` (as JSON text)."""
    from ..verified import verified_tasks

    counts: dict[int, Counter[str]] = {}
    for task in verified_tasks():
        schema = json.dumps(results_schema(task), sort_keys=True)
        counts.setdefault(int(task["intent_template_id"]), Counter())[schema] += 1
    return {template: c.most_common(1)[0][0] for template, c in counts.items()}


@functools.lru_cache(maxsize=1)
def _stored() -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for path in sorted(STORED_DIR.glob("*.json")):
        out.update({int(key): value for key, value in json.loads(path.read_text(encoding="utf-8")).items()})
    return out


def task_type(task: dict[str, Any]) -> str:
    """``retrieve``, ``mutate`` or ``navigate``: what the local checks of ``task`` verify."""
    types = task["eval"]["eval_types"]
    if "program_html" in types:
        return "mutate"
    return "retrieve" if "string_match" in types else "navigate"


def _answers(eval_: dict[str, Any]) -> list[str]:
    refs = eval_.get("reference_answers") or {}
    if "exact_match" in refs:
        return [str(refs["exact_match"])]
    items = refs.get("must_include") or refs.get("fuzzy_match") or []
    return [str(item) for item in ([items] if isinstance(items, str) else items)]


def _typed(value: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind in ("number", "integer"):
        if not _NUMBER.match(value.strip()):
            raise ValueError(value)
        number = float(value.replace("$", "").replace(",", "").replace(" ", ""))
        return int(number) if number.is_integer() else number
    if kind == "boolean":
        return {"yes": True, "true": True, "no": False, "false": False}[value.strip().lower()]
    if kind == "string" and not (schema.get("format") == "url" and " " in value.strip()):
        return value
    raise ValueError(value)


def _response(task: dict[str, Any], schema: dict[str, Any] | None, stored: dict[str, Any]) -> dict[str, Any]:
    kind = task_type(task)
    if kind != "retrieve":
        return {"task_type": kind, "status": "SUCCESS", "retrieved_data": None}
    answers = _answers(task["eval"])
    if "retrieved_data" not in stored and [a.strip().lower() for a in answers] == [_NOT_FOUND]:
        return {"task_type": kind, "status": "NOT_FOUND_ERROR", "retrieved_data": None}
    if "retrieved_data" in stored:
        data = stored["retrieved_data"]
    else:
        items = (schema or {}).get("items") or {"type": "string"}
        try:  # a WebArena answer's "|OR|" alternatives: the package takes a list in place of the value
            typed = [[_typed(alt.strip(), items) for alt in answer.split("|OR|")] for answer in answers]
            data = [alts[0] if len(alts) == 1 else alts for alts in typed]
        except (ValueError, KeyError):
            raise MissingVerifiedForm(
                f"local task {task['task_id']}: its answers {answers} do not fit the schema {schema}; store its "
                f"retrieved_data in {STORED_DIR.name}/<site>.json"
            ) from None
    response = {"task_type": kind, "status": "SUCCESS", "retrieved_data": data}
    try:
        parse_response(json.dumps(_first_alternatives(response, schema)), schema)
    except ResponseError as exc:
        problem = f"local task {task['task_id']}: its expected answer breaks the contract: {exc}"
        raise MissingVerifiedForm(problem) from None
    return response


def _navigation(task: dict[str, Any]) -> dict[str, Any]:
    """WebArena's url_match as the package's check: a reference URL opened, its query keys with their values;
    other query keys ignored (WebArena reads only the reference's). A shop path ending in "/" also matches
    its ``index/`` action, the same page on a Magento route (the local shop's search form posts there)."""
    refs = [url.strip() for url in task["eval"]["reference_url"].split("|OR|") if url.strip()]
    urls = list(refs)
    for url in refs:
        path = urlsplit(url).path
        if url.startswith(_MAGENTO_SITES) and path.endswith("/") and path.count("/") >= 3:
            urls.append(urlunsplit(urlsplit(url)._replace(path=path + "index/")))
    keys = sorted({key for url in refs for key in parse_qs(urlsplit(url).query)})
    check: dict[str, Any] = {
        "evaluator": "NetworkEventEvaluator",
        "expected": {"url": urls[0] if len(urls) == 1 else urls},
    }
    # the package ignores a query key a pattern finds (re.search): here every key but the reference's
    check["ignored_query_params_patterns"] = [f"^(?!(?:{'|'.join(re.escape(k) for k in keys)})$)"] if keys else ["."]
    return check


def verified_form(task: dict[str, Any]) -> dict[str, Any] | None:
    """The Verified task (the package's JSON form) of local ``task``; None for a local-only task."""
    template = registry.webarena_template_id(task)
    if template is None:
        return None
    stored = _stored().get(int(task["task_id"]), {})
    schema_text = _template_schemas().get(template)
    schema = stored.get("results_schema") or (json.loads(schema_text) if schema_text else None)
    kind = task_type(task)
    if kind == "retrieve" and (schema is None or schema.get("type") == "null"):
        schema = {"type": "array", "items": {"type": "string"}}  # the template's Verified tasks retrieve nothing
    elif kind != "retrieve":
        schema = {"type": "null"}
    checks: list[dict[str, Any]] = [
        {"evaluator": "AgentResponseEvaluator", "results_schema": schema, "expected": _response(task, schema, stored)}
    ]
    if "network" in stored:
        checks.extend(stored["network"])
    elif "url_match" in task["eval"]["eval_types"] and kind != "mutate":
        checks.append(_navigation(task))
    if kind == "mutate" and len(checks) == 1:
        raise MissingVerifiedForm(
            f"local task {task['task_id']} mutates a site but has no network check; store the request it must "
            f"send in {STORED_DIR.name}/<site>.json"
        )
    return {
        "task_id": int(task["task_id"]),
        "intent_template_id": template,
        "sites": list(task["sites"]),
        "start_urls": [url.strip() for url in task["start_url"].split("|AND|")],
        "intent": task["intent"],
        "intent_template": task["intent_template"],
        "instantiation_dict": task["instantiation_dict"],
        "eval": checks,
        "revision": 1,
    }


def _first_alternatives(response: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    """``response`` with each listed alternative replaced by the first one: a concrete answer."""
    data, items = response.get("retrieved_data"), (schema or {}).get("items") or {}
    if data is None or items.get("type") == "array":
        return response
    return {**response, "retrieved_data": [v[0] if isinstance(v, list) else v for v in data]}


def expected_response(verified_task: dict[str, Any]) -> dict[str, Any]:
    """A response object that a Verified task's ``AgentResponseEvaluator`` expects (the first of any
    alternatives): the reference's answer under the contract."""
    for check in verified_task["eval"]:
        if check["evaluator"] == "AgentResponseEvaluator":
            expected = _first_alternatives(dict(check["expected"]), check.get("results_schema"))
            return {**expected, "task_type": str(expected["task_type"]).upper(), "error_details": None}
    raise ValueError("the task has no AgentResponseEvaluator")
