"""WebArena's evaluation semantics for a task's ``eval`` block, run once when an episode ends.

* ``string_match``: the agent's answer against ``reference_answers`` (``exact_match``, ``must_include``,
  ``fuzzy_match`` through the LLM judge, and the "N/A" rule for unachievable tasks);
* ``url_match``: the final URL against ``reference_url`` (reference base path contained in the
  prediction's, reference query values present; ``|OR|`` alternatives);
* ``program_html``: text selected from pages (the final page, an explicit URL opened in a new tab of
  the agent's context, or a ``func:`` helper's URL) checked against ``required_contents``
  (``exact_match``, ``must_include``, and WebArena-Lite's ``fuzzy_match``: the selected text judged
  against the references joined by ", ", as WebArena-Lite's evaluator does).

The score is the product over the listed eval types. Nothing here raises for bad input, a dead page
or a failing judge: the affected check scores 0 and ``details`` says why.

Decisions beyond WebArena's code:

* fuzzy shortcut: if the cleaned answer equals a cleaned reference, that reference scores 1 without a
  judge call (recorded as ``"judge": "skipped: exact"``); an empty answer scores 0 without a call;
* ``|OR|`` alternatives are honoured inside string ``must_include`` items too (WebArena honours them
  only in ``program_html``; one task, 386, uses them in a string reference);
* a JS locator returning ``null``/``undefined`` selects ``""`` (WebArena's ``str(None)`` gave ``"None"``);
* explicit URLs are opened in a new tab (the agent's page is left as it was), and we wait for the load
  event plus up to ``settle_timeout_ms`` of network quiet instead of a fixed 3 s sleep.

Kept from WebArena: an empty locator selects the page's HTML (``page.content()``, entities unescaped);
URL base paths compare host + path (the scheme is ignored); string answers are cleaned twice.

AgentOccam's evaluator rectifications (paper App. E) are offered through :class:`EvalOptions`; the
default is WebArena's original behaviour.
"""

from __future__ import annotations

import html
import math
import os
import re
import traceback
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, urlparse

from webarena_gym.envs.evaluation.funcs import (
    EVAL_FUNCS,
    EvalContext,
    EvalFuncError,
    is_func,
    parse_func,
    register_eval_func,
)
from webarena_gym.envs.evaluation.judge import DEFAULT_JUDGE_MODEL, FuzzyPrompt, Judge, JudgeCall

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "EvalOptions",
    "EvalResult",
    "Judge",
    "check_eval_block",
    "clean_answer",
    "evaluate",
    "infeasible_answer",
    "register_eval_func",
]

EVAL_TYPES = ("string_match", "url_match", "program_html")
OR_SEPARATOR = " |OR| "
URL_RULE = "GOLD in PRED"
SELECTION_PREVIEW_CHARS = 400

# BrowserGym's variable names for the real sites; helpers fall back to them when no URLs are passed.
SITE_ENV_VARS = {
    "shopping": "WA_SHOPPING",
    "shopping_admin": "WA_SHOPPING_ADMIN",
    "reddit": "WA_REDDIT",
    "gitlab": "WA_GITLAB",
    "wikipedia": "WA_WIKIPEDIA",
    "map": "WA_MAP",
    "homepage": "WA_HOMEPAGE",
}


@dataclass
class EvalResult:
    score: float
    details: dict[str, Any]


@dataclass(frozen=True)
class EvalOptions:
    """How to evaluate. Defaults reproduce WebArena; :meth:`agentoccam` applies AgentOccam's fixes.

    ``fuzzy_prompt="agentoccam"`` is the relaxed grader (key points of the reference present, extra
    non-contradicting information allowed); ``join_fuzzy_references`` grades a list-valued fuzzy
    reference as one ``"; "``-joined reference (tasks 16-20 could never pass otherwise). AgentOccam's
    per-task label corrections change task configs (intents too), so they are applied when a task is
    loaded: ``envs.evaluation.corrections.apply_agentoccam_corrections``.
    """

    # "webarena-verified": the task's Verified checks, by the webarena_verified package (envs.evaluation.verified)
    scorer: Literal["webarena", "webarena-verified"] = "webarena"
    fuzzy_prompt: FuzzyPrompt = "webarena"
    join_fuzzy_references: bool = False
    navigation_timeout_ms: int = 30_000
    settle_timeout_ms: int = 3_000

    @classmethod
    def agentoccam(cls, **overrides: Any) -> EvalOptions:
        return cls(**{"fuzzy_prompt": "agentoccam", "join_fuzzy_references": True, **overrides})


# ---------------------------------------------------------------------------------------------
# String rules
# ---------------------------------------------------------------------------------------------


def clean_answer(text: str) -> str:
    """Strip whitespace and one pair of surrounding quotes, then lowercase (WebArena's cleaning)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text.lower()


# Words with inner joiners stay whole ("2.5", "1,000", "3-4", "12:30"); any other symbol is its own
# token, so a one-character reference such as "2" matches "2." or "(2)" but not "12" or "2.5".
_TOKEN = re.compile(r"\w+(?:[.,:/'\-]\w+)*|[^\w\s]")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text)


def exact_match(reference: str, prediction: str) -> float:
    return float(clean_answer(prediction) == clean_answer(reference))


def must_include(reference: str, prediction: str, *, whole_token: bool = False) -> float:
    """Substring test; a one-character reference must be a whole token when ``whole_token``."""
    ref, pred = clean_answer(reference), clean_answer(prediction)
    if whole_token and len(ref) == 1:
        return float(ref in tokenize(pred))
    return float(ref in pred)


def must_include_any(item: str, prediction: str, *, whole_token: bool = False) -> float:
    """``must_include`` where ``item`` may list alternatives joined by ``|OR|``."""
    return float(any(must_include(alt, prediction, whole_token=whole_token) for alt in item.split(OR_SEPARATOR)))


def infeasible_answer(reason: str | None) -> str:
    """The answer an infeasibility report stands for: ``"N/A"``, followed by the agent's reason if any."""
    reason = (reason or "").strip()
    return f"N/A: {reason}" if reason else "N/A"


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------


@dataclass
class _Run:
    """Everything one evaluation needs, plus the judge calls it made."""

    config: dict[str, Any]
    page: Any
    answer: str
    judge: Judge
    final_url: str
    urls: dict[str, str]
    options: EvalOptions
    judge_calls: list[JudgeCall] = field(default_factory=list)
    func_cache: dict[str, Any] = field(default_factory=dict)  # shared by the helpers (one admin token)

    @property
    def intent(self) -> str:
        return str(self.config.get("intent", ""))

    def context(self, page: Any) -> EvalContext:
        return EvalContext(page=page, urls=self.urls, last_url=self.final_url, cache=self.func_cache)

    def ask(self, call: JudgeCall) -> dict[str, Any]:
        self.judge_calls.append(call)
        return call.to_dict()


def evaluate(
    config: dict[str, Any],
    page: Any,
    answer: str | None,
    *,
    judge: Judge,
    last_url: str | None = None,
    urls: dict[str, str] | None = None,
    options: EvalOptions | None = None,
    only: Collection[str] | None = None,
) -> EvalResult:
    """Score a finished episode. ``config`` has its site placeholders already replaced.

    ``page`` is the page the agent ended on (its context is logged in); ``last_url`` defaults to its
    URL; ``urls`` (site -> base URL) default to the ``WA_*`` variables and serve ``func:`` helpers.
    ``only`` limits the checks to those eval types (a look-ahead on real sites skips the ones that
    read pages); the others are recorded as skipped and ``details["partial"]`` is set.
    """
    eval_block = config.get("eval") if isinstance(config, dict) else None
    eval_types = list(eval_block.get("eval_types") or []) if isinstance(eval_block, dict) else []
    final_url = last_url if last_url is not None else _page_url(page)
    run = _Run(
        config if isinstance(config, dict) else {},
        page,
        answer or "",
        judge,
        final_url,
        urls if urls is not None else _urls_from_env(),
        options or EvalOptions(),
    )
    details: dict[str, Any] = {"eval_types": eval_types, "answer": run.answer, "final_url": final_url}
    score = 1.0 if eval_types else 0.0
    if not eval_types:
        details["error"] = "the task config lists no eval_types"
    for eval_type in eval_types:
        handler = _HANDLERS.get(eval_type)
        if only is not None and eval_type not in only:
            details[eval_type] = {"skipped": "not checked in this evaluation"}
            details["partial"] = True
            continue
        if handler is None:
            part_score, part = 0.0, {"error": f"unknown eval type {eval_type!r} (known: {', '.join(EVAL_TYPES)})"}
        else:
            try:
                part_score, part = handler(run)
            except Exception as exc:  # a malformed eval block must not end the run
                part_score = 0.0
                part = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=5)}
        details[eval_type] = {"score": part_score, **part}
        score *= part_score
    details["judge"] = _judge_summary(run)
    details["score"] = score
    return EvalResult(score=score, details=details)


def _page_url(page: Any) -> str:
    try:
        return str(page.url)
    except Exception:  # no page, or the browser is gone
        return ""


def _urls_from_env() -> dict[str, str]:
    return {site: os.environ[var].rstrip("/") for site, var in SITE_ENV_VARS.items() if os.environ.get(var)}


def _judge_summary(run: _Run) -> dict[str, Any]:
    costs = [c.cost for c in run.judge_calls]
    return {
        "model": run.judge.model,
        "calls": len(run.judge_calls),
        "cost": sum(c for c in costs if c is not None),
        "cost_known": all(c is not None for c in costs),
        "prompt_tokens": sum(c.prompt_tokens or 0 for c in run.judge_calls),
        "completion_tokens": sum(c.completion_tokens or 0 for c in run.judge_calls),
        "errors": [c.error for c in run.judge_calls if c.error],
        "failures": [{"error": c.error, "kind": c.error_kind} for c in run.judge_calls if c.error],
    }


def _string_match(run: _Run) -> tuple[float, dict[str, Any]]:
    references = run.config["eval"].get("reference_answers")
    if not isinstance(references, dict) or not references:
        return 0.0, {"error": "string_match needs a non-empty reference_answers object"}
    checks: list[dict[str, Any]] = []
    pred = clean_answer(run.answer)  # cleaned here and again by each rule, as WebArena does
    for rule, value in references.items():
        if rule == "exact_match":
            checks.append({"rule": rule, "reference": value, "score": exact_match(str(value), pred)})
        elif rule == "must_include":
            items = value if isinstance(value, list) else [value]
            for item in items:
                score = must_include_any(str(item), pred, whole_token=len(items) == 1)
                checks.append({"rule": rule, "reference": item, "score": score})
        elif rule == "fuzzy_match":
            checks.extend(_fuzzy_checks(run, value))
        else:
            checks.append({"rule": rule, "score": 0.0, "error": f"unknown reference_answers rule {rule!r}"})
    return math.prod(c["score"] for c in checks), {"checks": checks}


def _fuzzy_checks(run: _Run, value: Any) -> list[dict[str, Any]]:
    pred = clean_answer(run.answer)
    if value == "N/A":
        check: dict[str, Any] = {"rule": "fuzzy_match", "reference": "N/A"}
        # WebArena compares with exact_match, which cleans the already cleaned answer again: a quoted
        # answer padded inside its quotes (' "N/A " ') or quoted twice ("'N/A'") still is "n/a".
        if clean_answer(pred) == "n/a":
            return [{**check, "score": 1.0, "judge": "skipped: exact"}]
        if not pred:
            return [{**check, "score": 0.0, "judge": "skipped: empty answer"}]
        note = str(run.config["eval"].get("string_note") or "")
        call = run.judge.unachievable_match(run.intent, note, pred)
        return [{**check, "string_note": note, "score": call.score, "judge": run.ask(call)}]
    references = [str(v) for v in value] if isinstance(value, list) else [str(value)]
    if run.options.join_fuzzy_references and len(references) > 1:
        references = ["; ".join(references)]
    checks = []
    for reference in references:
        check = {"rule": "fuzzy_match", "reference": reference}
        if pred and pred == clean_answer(reference):
            checks.append({**check, "score": 1.0, "judge": "skipped: exact"})
        elif not pred:
            checks.append({**check, "score": 0.0, "judge": "skipped: empty answer"})
        else:
            call = run.judge.fuzzy_match(run.intent, reference, pred, style=run.options.fuzzy_prompt)
            checks.append({**check, "score": call.score, "judge": run.ask(call)})
    return checks


def _split_url(url: str) -> tuple[str, dict[str, list[str]]]:
    """(host + path, decoded query) of a URL whose trailing slash has been removed."""
    parsed = urlparse(url.rstrip("/"))
    return parsed.netloc + parsed.path, parse_qs(parsed.query)


def url_match(reference_url: str, predicted_url: str) -> float:
    """WebArena's "GOLD in PRED": some reference base path is contained in the predicted one, and for
    every query key of any reference, one of its reference values is among the prediction's values."""
    pred_base, pred_query = _split_url(predicted_url)
    ref_bases: list[str] = []
    ref_query: dict[str, set[str]] = {}
    for ref in reference_url.split(OR_SEPARATOR):
        base, query = _split_url(ref.strip())
        ref_bases.append(base)
        for key, values in query.items():
            ref_query.setdefault(key, set()).update(values)
    base_ok = any(base in pred_base for base in ref_bases)
    query_ok = all(any(v in pred_query.get(key, []) for v in values) for key, values in ref_query.items())
    return float(base_ok and query_ok)


def _url_match(run: _Run) -> tuple[float, dict[str, Any]]:
    eval_block = run.config["eval"]
    reference = eval_block.get("reference_url")
    rule = eval_block.get("url_note") or URL_RULE
    info = {"reference_url": reference, "predicted_url": run.final_url, "rule": rule}
    if not isinstance(reference, str) or not reference.strip():
        return 0.0, {**info, "error": "url_match needs a reference_url string"}
    if rule != URL_RULE:
        return 0.0, {**info, "error": f"unknown url_note rule {rule!r} (known: {URL_RULE!r})"}
    return url_match(reference, run.final_url), info


def _program_html(run: _Run) -> tuple[float, dict[str, Any]]:
    targets = run.config["eval"].get("program_html")
    if not isinstance(targets, list) or not targets:
        return 0.0, {"error": "program_html needs a non-empty list of targets"}
    tab = _EvalTab(run.page, run.options)
    try:
        results = [_check_target(run, target, tab) for target in targets]
    finally:
        tab.close()
    return math.prod(r["score"] for r in results), {"targets": results}


_REACTIVATE_JS = (
    "() => { if (typeof window.browsergym_page_activated === 'function') window.browsergym_page_activated(); }"
)


class _EvalTab:
    """A tab of the agent's context for explicit target URLs, so the agent's page stays as it was.

    Opened on first need and shared by the targets; closing it makes the agent's page the active one
    again (BrowserGym switches to any page that loads, so it would otherwise point at a closed tab).
    """

    def __init__(self, agent_page: Any, options: EvalOptions) -> None:
        self.agent_page = agent_page
        self.options = options
        self.page: Any = None

    def open(self, url: str) -> Any:
        if self.page is None:
            if self.agent_page is None:
                raise RuntimeError("no browser context to open the target URL in")
            self.page = self.agent_page.context.new_page()
        self.page.goto(url, wait_until="load", timeout=self.options.navigation_timeout_ms)
        _settle(self.page, self.options, "networkidle")
        return self.page

    def close(self) -> None:
        if self.page is None:
            return
        try:
            self.page.close()
            if not self.agent_page.is_closed():
                self.agent_page.bring_to_front()
                # BrowserGym marks the page that loaded last as active; tell it the agent's page is back.
                self.agent_page.evaluate(_REACTIVATE_JS)
        except Exception:  # the browser is gone: nothing left to tidy
            pass


def _check_target(run: _Run, target: dict[str, Any], tab: _EvalTab) -> dict[str, Any]:
    result: dict[str, Any] = {"url": target.get("url"), "locator": target.get("locator"), "score": 0.0}
    try:
        page = _target_page(run, target, tab, result)
        selected = html.unescape(_select(run, page, target, result))
    except Exception as exc:  # navigation failure, dead browser, failing helper
        result["error"] = f"{type(exc).__name__}: {exc}"
        return result
    result["selected"] = selected[:SELECTION_PREVIEW_CHARS]
    required = target.get("required_contents") or {}
    checks = []
    if "exact_match" in required:
        checks.append(
            {
                "rule": "exact_match",
                "reference": required["exact_match"],
                "score": exact_match(str(required["exact_match"]), selected),
            }
        )
    elif "must_include" in required:
        for item in required["must_include"]:
            checks.append({"rule": "must_include", "reference": item, "score": must_include_any(str(item), selected)})
    elif "fuzzy_match" in required:  # WebArena-Lite's corrected configs (e.g. a drafted message's content)
        value = required["fuzzy_match"]
        reference = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        check: dict[str, Any] = {"rule": "fuzzy_match", "reference": reference}
        if not selected.strip():
            checks.append({**check, "score": 0.0, "judge": "skipped: empty selection"})
        else:
            call = run.judge.fuzzy_match(run.intent, reference, selected, style=run.options.fuzzy_prompt)
            checks.append({**check, "score": call.score, "judge": run.ask(call)})
    else:
        result["error"] = f"required_contents needs exact_match, must_include or fuzzy_match, got {sorted(required)}"
        return result
    result["checks"] = checks
    result["score"] = math.prod(c["score"] for c in checks)
    return result


def _target_page(run: _Run, target: dict[str, Any], tab: _EvalTab, result: dict[str, Any]) -> Any:
    """The agent's page for ``"last"``; otherwise the evaluation tab, navigated to the target URL."""
    url = str(target.get("url", ""))
    if is_func(url):
        url = str(parse_func(url).run(run.context(run.page)))
        result["resolved_url"] = url
    if url == "last":
        if run.page is None:
            raise RuntimeError("no agent page to read")
        _settle(run.page, run.options, "load")
        return run.page
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"target url must be 'last', an http(s) URL or func:..., got {url!r}")
    return tab.open(url)


def _settle(page: Any, options: EvalOptions, state: str) -> None:
    """Let client-side rendering finish (GitLab draws its tables after load); never fatal."""
    try:
        page.wait_for_load_state(state, timeout=options.settle_timeout_ms)
    except Exception:
        pass


def _select(run: _Run, page: Any, target: dict[str, Any], result: dict[str, Any]) -> str:
    locator = str(target.get("locator", ""))
    if not locator.strip():
        return page.content()
    if is_func(locator):
        return _as_text(parse_func(locator).run(run.context(page)))
    if not locator.startswith(("document.", "[...document.")):
        raise ValueError(f"unknown locator {locator[:80]!r}: expected '', document.… or func:…")
    for action in target.get("prep_actions") or []:
        try:
            page.evaluate(f"() => {action}")
        except Exception as exc:  # WebArena ignores failing preparation steps
            result.setdefault("prep_errors", []).append(f"{type(exc).__name__}: {exc}"[:300])
    try:
        return _as_text(page.evaluate(f"() => {locator}"))
    except Exception as exc:  # the element is missing: the page is wrong, so nothing is selected
        result["locator_error"] = f"{type(exc).__name__}: {exc}"[:300]
        return ""


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_HANDLERS: dict[str, Callable[[_Run], tuple[float, dict[str, Any]]]] = {
    "string_match": _string_match,
    "url_match": _url_match,
    "program_html": _program_html,
}


# ---------------------------------------------------------------------------------------------
# Static checks of an eval block (used when loading task files and by the tests)
# ---------------------------------------------------------------------------------------------


def check_eval_block(eval_block: dict[str, Any]) -> list[str]:
    """Problems that would make this eval block score 0 whatever the agent does; [] when none."""
    problems: list[str] = []
    eval_types = eval_block.get("eval_types") or []
    if not eval_types:
        problems.append("no eval_types")
    for eval_type in eval_types:
        if eval_type not in EVAL_TYPES:
            problems.append(f"unknown eval type {eval_type!r}")
    if "string_match" in eval_types:
        problems += _check_references(eval_block)
    if "url_match" in eval_types:
        if not isinstance(eval_block.get("reference_url"), str) or not eval_block["reference_url"].strip():
            problems.append("url_match without a reference_url")
        if (eval_block.get("url_note") or URL_RULE) != URL_RULE:
            problems.append(f"unknown url_note {eval_block['url_note']!r}")
    if "program_html" in eval_types:
        targets = eval_block.get("program_html")
        if not isinstance(targets, list) or not targets:
            problems.append("program_html without targets")
        for i, target in enumerate(targets or []):
            problems += [f"program_html[{i}]: {p}" for p in _check_target_spec(target)]
    return problems


def _check_references(eval_block: dict[str, Any]) -> list[str]:
    refs = eval_block.get("reference_answers")
    if not isinstance(refs, dict) or not refs:
        return ["string_match without reference_answers"]
    problems = []
    for rule, value in refs.items():
        if rule == "exact_match" and not isinstance(value, str):
            problems.append("exact_match reference is not a string")
        elif rule == "must_include" and not (
            isinstance(value, str) or isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):  # a single string is one item (WebArena-Lite's task 81 writes one)
            problems.append("must_include reference is neither a string nor a list of strings")
        elif rule == "fuzzy_match":
            if value == "N/A":
                if not eval_block.get("string_note"):
                    problems.append("N/A fuzzy_match without a string_note")
            elif not (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
                problems.append("fuzzy_match reference is neither 'N/A' nor a list of strings")
        elif rule not in ("exact_match", "must_include", "fuzzy_match"):
            problems.append(f"unknown reference_answers rule {rule!r}")
    return problems


def _check_target_spec(target: dict[str, Any]) -> list[str]:
    problems = []
    url, locator = str(target.get("url", "")), str(target.get("locator", ""))
    for text in (url, locator):
        if is_func(text):
            try:
                name = parse_func(text).name
            except EvalFuncError as exc:
                problems.append(str(exc))
                continue
            if name not in EVAL_FUNCS:
                problems.append(f"unknown eval func {name!r}")
    if not (url == "last" or is_func(url) or url.startswith(("http://", "https://"))):
        problems.append(f"bad url {url!r}")
    if locator.strip() and not (is_func(locator) or locator.startswith(("document.", "[...document."))):
        problems.append(f"unknown locator {locator[:60]!r}")
    required = target.get("required_contents") or {}
    exact, include, fuzzy = required.get("exact_match"), required.get("must_include"), required.get("fuzzy_match")
    if not (
        isinstance(exact, str)
        or any(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in (include, fuzzy))
    ):
        problems.append(
            "required_contents needs exact_match (a string), must_include or fuzzy_match (a list of strings)"
        )
    if not all(isinstance(a, str) for a in target.get("prep_actions") or []):
        problems.append("prep_actions must be strings")
    return problems
