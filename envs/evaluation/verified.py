"""WebArena-Verified's scoring, run by its own package (``webarena_verified``): the agent's structured
response against ``AgentResponseEvaluator`` and the episode's network trace against
``NetworkEventEvaluator``, deterministic (no judge).

The response contract: the agent's final answer is one JSON object
``{"task_type": "RETRIEVE"|"MUTATE"|"NAVIGATE", "status": "SUCCESS"|<error code>, "retrieved_data": [...]|null,
"error_details": str|null}``, whose ``retrieved_data`` follows the task's ``results_schema`` when the
status is ``SUCCESS``. :func:`parse_response` checks an answer against it (the rollout's final-answer step
re-asks the model once when it fails); :func:`score` hands the parsed object, or the raw text when it did
not parse (the package then records ``agent_response_invalid_format``), to the package's evaluator.

The package is the optional ``verified`` extra; it is imported when first needed, so the rest of the
project runs without it.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema

TASK_TYPES = ("RETRIEVE", "MUTATE", "NAVIGATE")
STATUSES = (
    "SUCCESS",
    "ACTION_NOT_ALLOWED_ERROR",
    "PERMISSION_DENIED_ERROR",
    "NOT_FOUND_ERROR",
    "DATA_VALIDATION_ERROR",
    "UNKNOWN_ERROR",
)
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
# The package logs every failed check with a traceback at ERROR; the verdict and its reasons are in the
# result this module returns, so its log says nothing a run needs.
_PACKAGE_LOGGER = "WebArena-Verified"


class ResponseError(ValueError):
    """An answer that is not a response object of the contract; the message says what is wrong."""


class VerifiedUnavailableError(RuntimeError):
    """The ``webarena_verified`` package is not installed."""


def response_instruction(results_schema: dict | None) -> str:
    """The contract as the agent reads it, appended to the task's intent (the revised intents state the
    answer's content; this says its form)."""
    schema = json.dumps(results_schema if results_schema is not None else {"type": "null"}, sort_keys=True)
    return (
        "When you give your final answer, make it exactly one JSON object with the keys "
        '"task_type" (one of "RETRIEVE", "MUTATE", "NAVIGATE": what the task mainly asked you to do), '
        f'"status" ("SUCCESS", or one of {", ".join(repr(s) for s in STATUSES[1:])} if the task could not be '
        'done), "retrieved_data" (for a successful retrieval, a JSON value following this schema: '
        f'{schema}; null otherwise) and "error_details" (null on success, else a short reason).'
    )


def _json_object(text: str) -> dict:
    """The JSON object ``text`` holds: the whole text, a fenced block, or the span from its first ``{``
    to its last ``}`` (a model's sentence around the object)."""
    candidates = [text.strip(), *_FENCE.findall(text)]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ResponseError("the answer holds no JSON object")


def parse_response(text: str, results_schema: dict | None) -> dict[str, Any]:
    """The response object in ``text`` (keys upper-cased as the package reads them), or
    :class:`ResponseError` saying which rule of the contract it breaks."""
    obj = _json_object(text)
    missing = [key for key in ("task_type", "status") if key not in obj]
    if missing:
        raise ResponseError(f"the response object lacks {', '.join(missing)}")
    unknown = sorted(set(obj) - {"task_type", "status", "retrieved_data", "error_details"})
    if unknown:
        raise ResponseError(f"the response object has unknown keys: {', '.join(unknown)}")
    task_type, status = str(obj["task_type"]).upper(), str(obj["status"]).upper()
    if task_type not in TASK_TYPES:
        raise ResponseError(f"task_type must be one of {', '.join(TASK_TYPES)}, not {obj['task_type']!r}")
    if status not in STATUSES:
        raise ResponseError(f"status must be one of {', '.join(STATUSES)}, not {obj['status']!r}")
    data = obj.get("retrieved_data")
    if status == "SUCCESS" and results_schema is not None:
        try:
            jsonschema.validate(data, _nullable_fields(results_schema))
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "the value"
            raise ResponseError(f"retrieved_data does not follow the task's schema at {where}: {exc.message}") from None
    elif data is not None and not isinstance(data, list):
        raise ResponseError("retrieved_data must be a list or null")
    details = obj.get("error_details")
    return {
        "task_type": task_type,
        "status": status,
        "retrieved_data": data,
        "error_details": None if details is None else str(details),
    }


def plain_answer(text: str) -> str:
    """What an answer under the contract says, for WebArena's string checks: its retrieved data (items
    joined by ", "), "N/A" for a task reported not doable, or ``text`` itself when it is no response object."""
    try:
        response = parse_response(text, None)
    except ResponseError:
        return text
    if response["status"] != "SUCCESS":
        return "N/A"
    data = response["retrieved_data"] or []
    return ", ".join(item if isinstance(item, str) else json.dumps(item) for item in data)


def _nullable_fields(schema: Any) -> Any:
    """``schema`` with every object property also allowed to be null (Verified's own expected answers hold
    null where a value is absent, e.g. a book without an author)."""
    if not isinstance(schema, dict):
        return schema
    out = {key: _nullable_fields(value) for key, value in schema.items() if key != "properties"}
    if "properties" in schema:
        out["properties"] = {name: _or_null(_nullable_fields(prop)) for name, prop in schema["properties"].items()}
    return out


def _or_null(schema: dict) -> dict:
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null":
        return {**schema, "type": [kind, "null"]}
    return schema


def results_schema(verified_task: dict) -> dict | None:
    """The ``results_schema`` of a Verified task's ``AgentResponseEvaluator``."""
    for check in verified_task["eval"]:
        if check["evaluator"] == "AgentResponseEvaluator":
            return check.get("results_schema")
    return None


def _package() -> Any:
    try:
        import webarena_verified  # noqa: F401
    except ModuleNotFoundError as exc:
        raise VerifiedUnavailableError(
            "evaluator 'webarena-verified' needs the webarena-verified package: "
            "pip install -c constraints.txt -e '.[verified]' (scripts/setup.sh installs it)"
        ) from exc
    logging.getLogger(_PACKAGE_LOGGER).setLevel(logging.CRITICAL)
    from webarena_verified.api import internal

    return internal


@functools.cache
def _reader() -> Any:
    internal = _package()
    from webarena_verified.types.config import WebArenaVerifiedConfig

    return internal.WebArenaVerifiedDataReader(WebArenaVerifiedConfig())


def package_version() -> str | None:
    """The installed ``webarena-verified`` version, None without it."""
    from importlib import metadata

    try:
        return metadata.version("webarena-verified")
    except metadata.PackageNotFoundError:
        return None


def _trace(entries: Sequence[dict]) -> Any:
    from webarena_verified.types.tracing import NetworkTrace

    if not entries:  # the package refuses an empty list; an empty trace is a fact of the episode
        return NetworkTrace.model_construct(is_playwright=False, src_file=Path("network.har"), events=())
    return NetworkTrace.from_content(list(entries))


def score(
    verified_task: dict, answer: str | None, network: Sequence[dict], site_urls: dict[str, str]
) -> dict[str, Any]:
    """Score one episode: ``{"score", "details", "response"}`` (``response``: the parsed object or
    ``{"error": ...}``); an evaluation the package could not run carries ``error``. ``verified_task`` is
    in the package's JSON form, placeholders unresolved; ``network`` holds HAR 1.2 entries; ``site_urls``
    maps site names to base URLs (the shop admin's includes ``/admin``)."""
    internal = _package()
    from webarena_verified.types.config import EnvironmentConfig, WebArenaVerifiedConfig
    from webarena_verified.types.eval import TaskEvalContext
    from webarena_verified.types.task import WebArenaSite, WebArenaVerifiedTask

    known = {site.value for site in WebArenaSite}
    environments = {
        WebArenaSite(site): EnvironmentConfig(urls=[url.rstrip("/")])
        for site, url in site_urls.items()
        if site in known
    }
    config = WebArenaVerifiedConfig(environments=environments)
    try:
        response: Any = parse_response(answer or "", results_schema(verified_task))
        response_info: dict[str, Any] = dict(response)
    except ResponseError as exc:
        response, response_info = answer, {"error": str(exc)}
    context = TaskEvalContext(
        task=WebArenaVerifiedTask.model_validate(verified_task),
        agent_response_raw=response,
        network_trace=_trace(network),
        config=config,
    )
    result = internal.WebArenaVerifiedEvaluator(config=config, reader=_reader()).evaluate_task(context=context)
    details = result.model_dump(mode="json")
    out: dict[str, Any] = {"score": float(result.score), "details": {"webarena_verified": details}}
    out["response"] = response_info
    if details.get("status") == "error":
        out.update(error=details.get("error_msg") or "the evaluator failed", error_source="env", error_kind="evaluator")
    return out
