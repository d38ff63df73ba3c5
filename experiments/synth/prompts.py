"""The teacher's prompts, one builder per call (wording in ``prompts.txt``, the project's own).

What each prompt carries follows the paper's Section 4 and appendix: query generation from seed queries
(Sec. 4.1; the paper adapts WebRL's self-instruct prompt, which it does not print, so ours asks for the
task-generation block format of the released code's task generator), the plan annotator (A.5), the
replanning annotator with its collapsed rounds (A.9), the CoT annotators (Sec. 4.2.2 and the released code),
synthetic plan expansion (A.6), the failure classifier (A.7) and the targeted generator (A.8). Feasibility,
the outcome reward model and the classifier of failed episodes are ours (the paper names an LLM filter,
ORM-Llama-3.1-8B and a hand analysis). Section labels, tags, round labels and placeholders are the paper's
interfaces.

Decisions the paper leaves open ([I]):
* the annotators number actions from 0 (the coverage check runs over 0..len-1);
* a trajectory's action is shown as its comment lines and its call, as the executor wrote it;
* the replanning chat starts with round 0 (the query, the first page, all actions as future ones) whose
  answer is the grounded plan, so every later round has the previous plans as its own earlier answers;
* a page longer than ``max_page_chars`` is cut, with a note, so one huge page cannot overflow a prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from webarena_gym.llm import Message
from webarena_gym.wrappers.observations.html import PLACEHOLDER as HTML_PLACEHOLDER

PROMPTS_FILE = Path(__file__).resolve().parent / "prompts.txt"
FUTURE_PLACEHOLDER = "** Future actions **"  # A.9.2's stand-in for the future actions of earlier rounds
MAX_PAGE_CHARS = 60_000  # [I] about 15k tokens: the local suite's largest pages fit, runaway ones are cut


@cache
def texts() -> dict[str, str]:
    """The sections of ``prompts.txt`` by name."""
    parts = re.split(r"^=== (\w+) ===\n", PROMPTS_FILE.read_text(), flags=re.M)
    return {parts[i]: parts[i + 1].rstrip("\n") for i in range(1, len(parts), 2)}


def page(html: str, limit: int = MAX_PAGE_CHARS) -> str:
    if len(html) <= limit:
        return html
    return html[:limit] + f"\n[... the rest of the page ({len(html) - limit} characters) is not shown]"


def numbered_actions(actions: Sequence[str], first: int = 0) -> str:
    """Actions as the annotators read them: ``i. <comment lines and call>``, numbered from ``first``."""
    return "\n".join(f"{i}. {a.strip()}" for i, a in enumerate(actions, first)) or "None"


def action_list(actions: Sequence[str]) -> str:
    return "\n\n".join(f"- Action {k}:\n{a.strip()}" for k, a in enumerate(actions, 1)) or "None"


def retry_message(error: str) -> Message:
    return {"role": "user", "content": texts()["retry"].format(error=error)}


# -- Stage 1 -------------------------------------------------------------------------------------------


def query_messages(site: str, examples: Sequence[tuple[str, str]], n_new: int) -> list[Message]:
    """New queries from seed (start page, query) pairs of one site."""
    t = texts()
    shown = "\n\n".join(
        t["query_example"].format(index=i, start=start, intent=intent) for i, (start, intent) in enumerate(examples, 1)
    )
    return [
        {"role": "system", "content": t["query_system"].format(n_new=n_new)},
        {"role": "user", "content": t["query_user"].format(site=site, examples=shown, n_new=n_new)},
    ]


def feasibility_messages(site: str, examples: Sequence[str], tasks: Sequence[str]) -> list[Message]:
    shown = "\n".join(f"- {e}" for e in examples)
    listed = "\n\n".join(f"## Task {i}\n{task}" for i, task in enumerate(tasks, 1))
    return [{"role": "user", "content": texts()["feasibility"].format(site=site, examples=shown, tasks=listed)}]


def orm_messages(goal: str, actions: Sequence[str], answer: str, html: str) -> list[Message]:
    content = texts()["orm"].format(
        goal=goal, actions=numbered_actions(actions), answer=answer or "(none)", html=page(html)
    )
    return [{"role": "user", "content": content}]


# -- Stage 2 -------------------------------------------------------------------------------------------


def plan_annotator_messages(goal: str, html: str, actions: Sequence[str]) -> list[Message]:
    """A.5: the grounded plan of a whole trajectory."""
    t = texts()
    user = t["plan_annotator_user"].format(
        goal=goal, html=page(html), trajectory=numbered_actions(actions), last=len(actions) - 1
    )
    return [
        {"role": "system", "content": t["plan_annotator_system"].format(examples=t["plan_annotator_example"])},
        {"role": "user", "content": user},
    ]


def _round(index: int, html: str, action: str, future: str) -> str:
    return texts()["replan_annotator_round"].format(index=index, html=html, action=action, future=future)


def replan_annotator_messages(
    goal: str, actions: Sequence[str], answers: Sequence[str], k: int, html_k: str
) -> list[Message]:
    """A.9, round ``k`` (1 <= k < len(actions)): the earlier rounds collapsed, each followed by its answer
    (``answers[0]`` the grounded plan of round 0, ``answers[j]`` the replan of round j), then round ``k``
    with the current page and the future actions ``k..``."""
    t = texts()
    if not 1 <= k < len(actions) or len(answers) != k:
        raise ValueError(f"round {k} needs the answers of rounds 0..{k - 1} ({len(answers)} given)")
    messages: list[Message] = [
        {"role": "system", "content": t["replan_annotator_system"].format(examples=t["plan_annotator_example"])}
    ]
    for j in range(k):
        collapsed = _round(j, HTML_PLACEHOLDER, actions[j - 1].strip() if j else "None", FUTURE_PLACEHOLDER)
        head = f"## User Query\n{goal}\n\n" if j == 0 else ""
        messages += [{"role": "user", "content": head + collapsed}, {"role": "assistant", "content": answers[j]}]
    future = t["replan_annotator_future"].format(
        trajectory=numbered_actions(actions[k:], k), first=k, last=len(actions) - 1
    )
    messages.append({"role": "user", "content": _round(k, page(html_k), actions[k - 1].strip(), future)})
    return messages


def cot_plan_messages(goal: str, html: str, plan: str) -> list[Message]:
    content = texts()["cot_plan"].format(goal=goal, html=page(html), plan=plan)
    return [{"role": "user", "content": content}]


def cot_replan_messages(goal: str, previous_plan: str, actions: Sequence[str], html: str, plan: str) -> list[Message]:
    content = texts()["cot_replan"].format(
        goal=goal, previous_plan=previous_plan, actions=action_list(actions), html=page(html), plan=plan
    )
    return [{"role": "user", "content": content}]


def cot_action_messages(goal: str, plan: str, actions: Sequence[str], html: str, action: str) -> list[Message]:
    content = texts()["cot_action"].format(
        goal=goal, plan=plan or "(no plan)", actions=action_list(actions), html=page(html), action=action.strip()
    )
    return [{"role": "user", "content": content}]


# -- Stage 3 -------------------------------------------------------------------------------------------


def expansion_messages(examples: Sequence[tuple[str, str, str]], n_new: int) -> list[Message]:
    """A.6: ``n_new`` pairs from (query, initial page without ids, plan) examples of one site."""
    t = texts()
    shown = "\n\n".join(
        t["expansion_example"].format(index=i, goal=goal, html=page(html), plan=plan)
        for i, (goal, html, plan) in enumerate(examples, 1)
    )
    return [
        {"role": "system", "content": t["expansion_system"].format(examples=shown)},
        {"role": "user", "content": t["expansion_user"].format(n_new=n_new, n_examples=len(examples))},
    ]


# -- Stage 4 -------------------------------------------------------------------------------------------


def class_section(classes: Sequence[dict]) -> str:
    lines = [f"Class {c['label']}: {c['name']}. {c['description']} Data that helps: {c['needs']}." for c in classes]
    return "\n".join([*lines, "Other: none of the classes above fits."])


def labels_text(classes: Sequence[dict]) -> str:
    return ", ".join([*(f"Class {c['label']}" for c in classes), "Other"])


def episode_classifier_messages(
    site: str, classes: Sequence[dict], goal: str, plans: Sequence[str], actions: Sequence[str], answer: str
) -> list[Message]:
    content = texts()["episode_classifier"].format(
        site=site,
        classes=class_section(classes),
        goal=goal,
        plans="\n\n".join(plans) or "(the agent wrote no plan)",
        actions=numbered_actions(actions),
        answer=answer or "(none)",
        labels=labels_text(classes),
    )
    return [{"role": "user", "content": content}]


def training_classifier_messages(site: str, classes: Sequence[dict], goal: str, plan: str) -> list[Message]:
    content = texts()["training_classifier"].format(
        site=site, classes=class_section(classes), goal=goal, plan=plan, labels=labels_text(classes)
    )
    return [{"role": "user", "content": content}]


def targeted_messages(site: str, goal: str, plan: str) -> list[Message]:
    return [{"role": "user", "content": texts()["targeted"].format(site=site, goal=goal, plan=plan)}]
