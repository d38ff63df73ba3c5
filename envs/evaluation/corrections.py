"""AgentOccam's corrections of WebArena task labels (AgentOccam paper, App. E), as an opt-in.

WebArena's original labels stay the default. :func:`apply_agentoccam_corrections` returns a corrected
copy of a raw task config (placeholders not yet replaced); apply it when the task is loaded, so the
goal shown to the agent and the evaluator agree (some corrections fix typos in the intent too).
:data:`AGENTOCCAM_CORRECTED_TASKS` lists the 80 tasks the paper changed; the paper's "original
evaluator" comparison scores exactly these tasks 0.

Entries the paper leaves unclear are decided here and marked: tasks 240 and 353 keep the intent's
"competitive swimwear" (the paper prints a change to "competative", AgentOccam's released configs do
not make it); task 583 fixes "plan lovers" in the intent as well as in the label, so that the task
stays achievable; 653 uses AgentOccam's released keyword 'broke' (the paper prints 'broke after').
The evaluator-side rectifications (relaxed fuzzy prompt, joined fuzzy lists) are
``envs.evaluation.evaluator.EvalOptions.agentoccam()``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

Task = dict[str, Any]
Correction = Callable[[Task], None]

_TEXT_FIELDS = ("intent", "intent_template", "instantiation_dict", "eval")
_REFUND_KEYWORDS = ("refund", "broke", "three days of use")
_HELP_WORDS = "help |OR| assist |OR| benefit |OR| improve |OR| enhance |OR| transform |OR| revolutionize"


def _answers(**references: Any) -> Correction:
    """Replace ``reference_answers`` (e.g. exact_match -> fuzzy_match or must_include)."""

    def correct(task: Task) -> None:
        task["eval"]["reference_answers"] = copy.deepcopy(references)

    return correct


def _or_url(alternative: str) -> Correction:
    """Accept one more reference URL."""

    def correct(task: Task) -> None:
        task["eval"]["reference_url"] = f"{task['eval']['reference_url']} |OR| {alternative}"

    return correct


def _contents(**required: Any) -> Correction:
    """Replace ``required_contents`` of every program_html target."""

    def correct(task: Task) -> None:
        for target in task["eval"]["program_html"]:
            target["required_contents"] = copy.deepcopy(required)

    return correct


def _target(**fields: Any) -> Correction:
    """Set fields (url, locator, ...) of every program_html target."""

    def correct(task: Task) -> None:
        for target in task["eval"]["program_html"]:
            target.update(fields)

    return correct


def _keywords(old: str, *new: str) -> Correction:
    """Replace one must_include keyword of the program_html targets by ``new`` keywords."""

    def correct(task: Task) -> None:
        for target in task["eval"]["program_html"]:
            items = target["required_contents"].get("must_include")
            if items and old in items:
                at = items.index(old)
                target["required_contents"]["must_include"] = items[:at] + list(new) + items[at + 1 :]

    return correct


def _text(old: str, new: str) -> Correction:
    """Fix a typo wherever it occurs in the intent, its template and instantiation, and the eval block."""

    def replace(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(old, new)
        if isinstance(value, list):
            return [replace(v) for v in value]
        if isinstance(value, dict):
            return {k: replace(v) for k, v in value.items()}
        return value

    def correct(task: Task) -> None:
        for key in _TEXT_FIELDS:
            if key in task:
                task[key] = replace(task[key])

    return correct


def _intent_suffix(suffix: str) -> Correction:
    def correct(task: Task) -> None:
        task["intent"] += suffix
        task["intent_template"] += suffix

    return correct


def _joined_fuzzy(task: Task) -> None:
    """A list of fuzzy keywords no single answer could match becomes one "; "-joined reference."""
    task["eval"]["reference_answers"]["fuzzy_match"] = ["; ".join(task["eval"]["reference_answers"]["fuzzy_match"])]


def _exact_to_must(prefix: str = "") -> Correction:
    def correct(task: Task) -> None:
        exact = task["eval"]["reference_answers"]["exact_match"]
        task["eval"]["reference_answers"] = {"must_include": [prefix + exact]}

    return correct


def _exact_to_spaced_distance(task: Task) -> None:
    """'1.7km' also accepts '1.7 km'."""
    exact = task["eval"]["reference_answers"]["exact_match"]
    task["eval"]["reference_answers"] = {"must_include": [f"{exact} |OR| {exact[:-2]} {exact[-2:]}"]}


def _meetup(date_alternatives: str) -> Correction:
    """Meetup notices: either date spelling; 'virtual meetup' checked as two keywords."""

    def correct(task: Task) -> None:
        for target in task["eval"]["program_html"]:
            interest, _date, _phrase = target["required_contents"]["must_include"]
            target["required_contents"]["must_include"] = [interest, date_alternatives, "virtual", "meetup"]

    return correct


_REFUND = _keywords("it broke after three days of use", "broke", "three days of use")


def _refund_form(order: str, asin: str) -> Correction:
    return _contents(must_include=[*_REFUND_KEYWORDS, order, asin])


def _date_range(start: str, end: str) -> Correction:
    """Report forms show two-digit years: check the 'from' and 'to' fields against those."""

    def correct(task: Task) -> None:
        first, second = task["eval"]["program_html"]
        first["required_contents"] = {"exact_match": start}
        second["required_contents"] = {"exact_match": end}

    return correct


CORRECTIONS: dict[int, list[Correction]] = {
    **{tid: [_joined_fuzzy] for tid in range(16, 21)},
    97: [_answers(must_include=["914km |OR| 914 km"])],
    146: [_answers(fuzzy_match=["16x24"])],
    **{tid: [_answers(fuzzy_match=["Yes, it is closed"])] for tid in (178, 179, 182)},
    **{tid: [_answers(fuzzy_match=["No, it is open"])] for tid in (180, 181)},
    240: [],  # see module docstring
    254: [_answers(fuzzy_match=["4125785000"])],
    261: [_or_url("__SHOPPING__/electronics.html?cat=60")],
    262: [_or_url("__SHOPPING__/clothing-shoes-jewelry.html?cat=145")],
    263: [_or_url("__SHOPPING__/clothing-shoes-jewelry.html?cat=143")],
    264: [_or_url("__SHOPPING__/office-products.html?cat=187")],
    **{tid: [_exact_to_must()] for tid in (293, 294, 295)},
    **{tid: [_exact_to_must("git clone ")] for tid in (296, 297)},
    **{tid: [_intent_suffix(" page")] for tid in range(298, 303)},
    **{tid: [_exact_to_must()] for tid in range(308, 313)},
    330: [_answers(must_include=["83.31"])],
    351: [_or_url("__SHOPPING__/video-games.html?cat=67&product_list_order=price")],
    352: [_or_url("__SHOPPING__/health-household.html?cat=192&product_list_order=price")],
    353: [_or_url("__SHOPPING__/clothing-shoes-jewelry.html?cat=149&product_list_order=price")],
    354: [_or_url("__SHOPPING__/home-kitchen.html?cat=154&product_list_order=price&product_list_dir=desc")],
    355: [_or_url("__SHOPPING__/home-kitchen.html?cat=155&product_list_dir=desc")],
    363: [_answers(must_include=["778m |OR| 778 m"])],
    **{tid: [_exact_to_spaced_distance] for tid in range(364, 368)},
    415: [_contents(must_include=["@davepgreene"])],
    416: [_contents(must_include=["Thank you"])],
    417: [_contents(must_include=["@Roshanjossey"])],
    418: [_target(locator="document.querySelector('.cover-title').textContent"), _contents(must_include=["Busy"])],
    489: [_text("is needed is this dystopian", "is needed in this dystopian")],
    **{tid: [_REFUND] for tid in range(528, 533)},
    583: [_text("Cat parents & plan lovers", "Cat parents & plant lovers")],
    584: [_target(url="__REDDIT__/f/Karaoke/edit")],
    601: [_keywords("is car necessary in NYC", "is car necessary in NYC |OR| is a car necessary in NYC")],
    603: [_text("safe and budge apartment", "safe and budget apartment")],
    606: [_keywords("is car necessary", "is car necessary |OR| is a car necessary")],
    608: [_text("safe and budge apartment", "safe and budget apartment")],
    629: [
        _keywords("Fun thing to do in Pittsburgh", "Fun thing to do in Pittsburgh |OR| Fun things to do in Pittsburgh")
    ],
    640: [_meetup("Mar 15th |OR| March 15th")],
    641: [_meetup("Jul 8th |OR| July 8th")],
    642: [_meetup("Sep 10th |OR| September 10th")],
    643: [_meetup("Oct 21st |OR| October 21st")],
    644: [_text("games", "gaming"), _meetup("Dec 15th |OR| December 15th")],
    **{tid: [_text("correpong", "corresponding"), _keywords("help", _HELP_WORDS)] for tid in range(645, 650)},
    653: [_refund_form("000000180", "B087QJN9W1")],
    654: [_refund_form("161", "B09P7BFL4H")],
    655: [_refund_form("180", "B087QJN9W1")],
    656: [_refund_form("180", "B0041MSF2S")],
    657: [_refund_form("148", "B003FVW3VA")],
    679: [_keywords("Completed", "Complete")],
    707: [_date_range("1/1/22", "12/31/22")],
    708: [_date_range("1/1/23", "12/31/23")],
    709: [_date_range("5/1/21", "3/31/22")],
}


AGENTOCCAM_CORRECTED_TASKS: frozenset[int] = frozenset(CORRECTIONS)


def apply_agentoccam_corrections(task: Task) -> Task:
    """A corrected deep copy of a raw task config (unchanged copy for tasks AgentOccam left alone)."""
    corrected = copy.deepcopy(task)
    for correct in CORRECTIONS.get(int(task["task_id"]), []):
        correct(corrected)
    return corrected
