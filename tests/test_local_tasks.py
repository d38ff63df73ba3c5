"""Every local task's reference solution, replayed through ``envs.make("webarena/local.<id>")`` in a real
browser against the real local sites and the real evaluator, scores 1. For the map, wikipedia and
multi-site tasks a plausible wrong answer (or a wrong end state: another travel mode, another search,
the wrong page) then scores 0 after a reset of the same environment: every local-only task and at
least one task of every WebArena template there has such a variant. Snapshot/restore through the
environment is exact: it undoes a state change in the site data and the page, and a later restore brings
the change back.

(The other sites' wrong-answer and missing-state-change checks live in their own test files.)
"""

from __future__ import annotations

import copy
import json
import sqlite3

import pytest

from webarena_gym import envs
from webarena_gym.envs.evaluation import verified
from webarena_gym.envs.local import registry
from webarena_gym.envs.local.reference import to_browsergym
from webarena_gym.envs.local.verified import expected_response
from webarena_gym.envs.registration import local_task_config

pytestmark = [pytest.mark.slow, pytest.mark.browser]

TASKS = {task["task_id"]: task for task in registry.load_tasks()}
SOLUTIONS = registry.load_solutions()
# The goto-free paths kept beside the reference solutions that jump to pages with ``goto``.
GOTO_FREE = {t: registry.goto_free_solution(t) for t in sorted(TASKS) if registry.uses_goto(SOLUTIONS[t])}


# Plausible wrong final answers (a neighbouring fact, a rounding, a near-miss place).
WRONG_ANSWERS = {
    400: "40.4471, -79.9431",
    401: "40.4417, -79.9452",
    402: "40.44, -79.99",
    403: "12 min",
    404: "25 min",
    405: "1 h 5 min",
    406: "36.7 km",
    407: "4.1 km",
    410: "Kingston",
    411: "Glenbury",
    412: "45 min",
    413: "40 min",
    415: "13 min",
    417: "15 min",
    419: "2.6 km",
    424: "driving: 4 min, walking: 20 min",
    427: "Bexley Pharmacy",
    430: "5 min",
    433: "+1 412 555 7615",
    435: "+1 412 555 0100",
    442: "15105",
    445: "55 min",
    448: "Hill Street Bakery, 3.5 km",
    451: "25 min",
    457: "The order is Kingston Town Hall, Larkridge Town Hall, University of Kingston",
    460: "1 Kingston Airport Road, Kingston",
    463: "Bexley Pharmacy, 12 Oak Street, Aldton",
    466: "4 h 45 min",
    467: "Rhode Island, Massachusetts",  # New York missing
    468: "Ohio, Maryland, New York, New Jersey, Delaware, Virginia",
    470: "Walk: 29 min, Drive: 2 min, Bike: 8 min",  # the police station's times
    472: "No",
    474: "Yes",
    475: "Omni William Penn Hotel: 4.5 km",  # a 54-minute walk
    476: "Wyndham Pittsburgh University Center: 2.1 km",
    477: "DoubleTree by Hilton Hotel Pittsburgh Airport, 0.9 km",
    478: "Hyatt Regency Pittsburgh International Airport, Time: 6 min",
    479: "Hyatt Regency Pittsburgh International Airport: Giant Eagle, ALDI",
    480: "US Citizenship and Immigration Services, 4.2 km",
    500: "1900",
    501: "1850",
    502: "1799",
    503: "Kingston",
    504: "Stoneham",
    505: "61,280",
    506: "9,999",
    507: "Yusuf Moreau",
    508: "Marek Stroud",
    511: "+1 412 555 0199",
    512: "A kind of comet.",
    602: "45 min",
    603: "1 h 30 min",
    604: "2 min",
    605: "3.0 km",
    606: "99.9 km",
    607: "10,000",
    608: "1,234",
    609: "2 h 10 min",
    618: "Silverpine National Park, 12.0 km",
    650: "914 km",
}
# url_match tasks: the same steps, but ending on a different page.
WRONG_MODE = {
    408: "walking",
    409: "driving",
    421: "walking",
    439: "driving",
    454: "cycling",
    481: "walking",
    601: "cycling",
}
WRONG_TARGET = {414: "bakery", 422: "cafes near Glenbury Town Hall", 509: "Kingston", 510: "Kingston", 600: "Kingston"}
# program_html tasks on a page: stop one page early (on the search results instead of the place's page).
WRONG_END = {436, 610}
# State-changing or navigating tasks done to the wrong thing: (text, replacement) in typed values and URLs.
WRONG_VALUE = {
    616: ("Wilstead Stadium", "Kingston Stadium"),  # the club's current ground, not its 1950s one
    622: ("submit/LifeProTips", "submit/aww"),
    626: ("convexegg/chatgpt", "open-maps/geocoder"),
    629: ("real user feedback", "user feedback"),
    633: ("/f/space/1516/", "/f/space/1/"),  # one URL of the five is wrong
    636: ("- Orton's lemma\n", ""),  # one discovery missing from the README
    640: (  # the 8th newest post, not the 8th most active one
        "/1155/hot-take-shelf-was-better-ten-years-ago",
        "/1170/my-honest-thoughts-on-the-drywall-after-a-year",
    ),
}


class PlantedJudge:
    """Stand-in for the LLM judge: it rejects the planted wrong answer and accepts anything else, in the
    verdict words of the call it answers (an unachievable-task prompt asks for 'same' or 'different')."""

    def __init__(self) -> None:
        self.wrong: str | None = None

    def __call__(self, messages: list[dict]) -> str:
        text = " ".join(str(m.get("content", "")) for m in messages).lower()  # answers arrive cleaned
        wrong = bool(self.wrong) and self.wrong.lower() in text
        if "verdict: same" in text:
            return "Verdict: different" if wrong else "Verdict: same"
        return "Verdict: incorrect" if wrong else "Verdict: correct"


JUDGE = PlantedJudge()


@pytest.fixture(scope="module")
def env_for():
    """One environment per set of sites, made by ``envs.make`` and reused for each task on those sites.

    Reusing means: the next task's config replaces the current one and the next ``reset`` starts it, on
    the same server process and browser (this is what keeps the replay of every task affordable).
    """
    made: dict[tuple[str, ...], object] = {}

    def get(task_id: int):
        key = tuple(sorted(TASKS[task_id]["sites"]))
        if key not in made:
            made[key] = envs.make(f"webarena/local.{task_id}", judge_mock=JUDGE, obs_mode="axtree", record_network=True)
        env = made[key]
        env.unwrapped.task_kwargs["config"] = registry.get_task(task_id)
        env.unwrapped.env_id = f"webarena/local.{task_id}"
        return env

    yield get
    for env in made.values():
        env.close()


def replay(env, steps: list[dict]) -> tuple[float, dict, list[str]]:
    """Reset, run ``steps`` (resolved against each new observation); returns reward, last info, errors."""
    obs, reset_info = env.reset()
    assert reset_info["task_id"] == env.unwrapped.task_kwargs["config"]["task_id"]
    urls = env.unwrapped.host.urls()
    reward, info, errors = 0.0, {}, []
    for step in steps:
        action = to_browsergym(step, obs, urls)
        obs, reward, terminated, truncated, info = env.step(action)
        if obs["last_action_error"]:
            errors.append(f"{action}: {obs['last_action_error'][:200]}")
        if terminated or truncated:
            break
    return reward, info, errors


def wrong_steps(task_id: int) -> list[dict] | None:
    steps = copy.deepcopy(SOLUTIONS[task_id])
    if task_id in WRONG_ANSWERS:
        steps[-1] = {"action": "send_msg_to_user", "text": WRONG_ANSWERS[task_id]}
        return steps
    if task_id in WRONG_MODE:
        for step in steps:
            if step["action"] == "select_option":
                step["value"] = WRONG_MODE[task_id]
        return steps
    if task_id in WRONG_TARGET:
        for step in steps:
            if step["action"] == "fill":
                step["value"] = WRONG_TARGET[task_id]
            if step["action"] == "click" and step["target"]["role"] == "link" and step is steps[-2]:
                step["target"]["name"] = WRONG_TARGET[task_id]
        return steps
    if task_id in WRONG_END:
        del steps[-2]
        return steps
    if task_id in WRONG_VALUE:
        old, new = WRONG_VALUE[task_id]
        for step in steps:
            for key in ("value", "url"):
                if key in step:
                    step[key] = step[key].replace(old, new)
        return steps
    return None


def test_map_wikipedia_and_multi_site_tasks_have_wrong_variants():
    mine = [TASKS[t] for t in TASKS if 400 <= t < 700]
    local_only = [t["task_id"] for t in mine if registry.webarena_template_id(t) is None]
    assert [t for t in local_only if wrong_steps(t) is None] == []
    templates = {registry.webarena_template_id(t) for t in mine} - {None}
    covered = {registry.webarena_template_id(t) for t in mine if wrong_steps(t["task_id"]) is not None}
    assert templates - covered == set()


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reference_solution_scores_one_and_a_wrong_one_zero(env_for, task_id):
    env, wrong = env_for(task_id), wrong_steps(task_id)
    JUDGE.wrong = WRONG_ANSWERS.get(task_id)
    reward, info, errors = replay(env, SOLUTIONS[task_id])
    assert reward == 1.0, f"task {task_id}: {info.get('evaluation')} errors={errors}"
    verified_scores_reference(env, task_id)
    if wrong is not None:
        reward, info, _ = replay(env, wrong)
        assert reward == 0.0, f"task {task_id} wrong variant scored: {info.get('evaluation')}"


def test_goto_free_paths_use_only_what_every_action_space_has():
    for task_id in TASKS:
        steps = registry.goto_free_solution(task_id)
        if steps is None:  # every task that needs goto has a path beside it, or says why none can exist
            assert task_id in GOTO_FREE and registry.needs_typed_url(task_id), task_id
            continue
        actions = {step["action"] for step in steps}
        assert "goto" not in actions, task_id
        assert "go_home" not in actions or len(TASKS[task_id]["sites"]) > 1, f"task {task_id}: go_home on one site"
        assert registry.needs_typed_url(task_id) is None


@pytest.mark.parametrize("task_id", [t for t, steps in GOTO_FREE.items() if steps is not None])
def test_goto_free_path_scores_one(env_for, task_id):
    JUDGE.wrong = None
    reward, info, errors = replay(env_for(task_id), GOTO_FREE[task_id])
    assert reward == 1.0, f"task {task_id}: {info.get('evaluation')} errors={errors}"


def verified_scores_reference(env, task_id: int) -> None:
    """The same replay under WebArena-Verified's form of the task (where it has one): the package scores
    the response the reference sends under the contract and the replay's network trace 1."""
    config = local_task_config(task_id)
    if "verified" not in config:
        assert registry.webarena_template_id(TASKS[task_id]) is None  # every linked task has one
        return
    form = config["verified"]
    entries = env.get_wrapper_attr("network_trace")()["log"]["entries"]
    result = verified.score(form, json.dumps(expected_response(form)), entries, env.unwrapped.host.urls())
    assert result["score"] == 1.0, f"task {task_id} under WebArena-Verified: {result['details']}"


def _state_changing_task() -> int | None:
    for task_id, task in sorted(TASKS.items()):
        if "program_html" in task["eval"]["eval_types"] and task_id in SOLUTIONS:
            return task_id
    return None


def _db_rows(env) -> list[str]:
    conn = sqlite3.connect(env.unwrapped.host.local.db_path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_restore_undoes_and_redoes_a_state_change_exactly():
    task_id = _state_changing_task()
    if task_id is None:
        pytest.skip("no state-changing local task yet")
    *actions, answer = SOLUTIONS[task_id]
    JUDGE.wrong = None
    env = envs.make(f"webarena/local.{task_id}", judge_mock=JUDGE)
    try:
        obs, _ = env.reset()
        start_url, pristine = obs["url"], _db_rows(env)
        before = env.unwrapped.snapshot()
        urls = env.unwrapped.host.urls()
        for step in actions:
            obs, *_ = env.step(to_browsergym(step, obs, urls))
        after, changed, changed_url = env.unwrapped.snapshot(), _db_rows(env), obs["url"]
        assert changed != pristine, "the reference solution changed nothing in the database"

        obs, info = env.unwrapped.restore(before)
        assert info["restore_method"] == "exact" and env.unwrapped.step_count == 0
        assert obs["url"] == start_url and _db_rows(env) == pristine
        _, reward, terminated, _, _ = env.step(to_browsergym(answer, obs, urls))
        assert terminated and reward == 0.0  # the change is gone, so the task is not done

        obs, info = env.unwrapped.restore(after)
        assert env.unwrapped.step_count == len(actions) and obs["url"] == changed_url
        assert _db_rows(env) == changed
        _, reward, terminated, _, _ = env.step(to_browsergym(answer, obs, urls))
        assert terminated and reward == 1.0
    finally:
        env.close()
