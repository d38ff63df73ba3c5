"""WebArena-Lite: the 165 ids, their corrected configurations, the task set, the shared evaluator, and the
failure without the real sites (which are not reachable here)."""

from __future__ import annotations

import collections
import time

import gymnasium as gym
import pytest
from env_support import SITE_URLS as URLS
from env_support import browser_processes

from webarena_gym import envs
from webarena_gym.envs.env import WebArenaEnv
from webarena_gym.envs.evaluation.evaluator import check_eval_block, evaluate
from webarena_gym.envs.evaluation.funcs import parse_func
from webarena_gym.envs.evaluation.judge import DEFAULT_JUDGE_MODEL, Judge
from webarena_gym.envs.registration import N_LITE_TASKS, lite_task_config, real_task_config
from webarena_gym.envs.sites import RealSiteHost, replace_placeholders
from webarena_gym.experiments import tasksets


def test_165_lite_ids_with_their_webarena_origin():
    assert N_LITE_TASKS == 165
    assert all(f"webarena-lite/{i}" in gym.registry for i in range(165))
    assert "webarena-lite/165" not in gym.registry
    ids = envs.list_env_ids("lite")
    assert ids == [f"webarena-lite/{i}" for i in range(165)]
    origins = [lite_task_config(i)["old_task_id"] for i in range(165)]
    assert len(set(origins)) == 165 and all(0 <= o < 812 for o in origins)
    assert lite_task_config(0)["task_id"] == 0 and lite_task_config(0)["old_task_id"] == 4
    assert envs.list_env_ids("lite", site="gitlab") and all(
        "gitlab" in lite_task_config(int(i.split("/")[1]))["sites"] for i in envs.list_env_ids("lite", site="gitlab")
    )


def test_lite_configs_are_the_corrected_ones():
    """Lite task 8 is WebArena task 43 with its third search term corrected; task 1 (WebArena 7) asks for a
    judged answer instead of an exact string."""
    corrected, original = lite_task_config(8), real_task_config(43)
    assert corrected["old_task_id"] == 43 and corrected["intent"] == original["intent"]
    assert corrected["eval"]["reference_answers"] == {"must_include": ["hollister", "Joust Bag", "nike"]}
    assert original["eval"]["reference_answers"]["must_include"][2] == "Antonia Racer Tank"
    assert "fuzzy_match" in lite_task_config(1)["eval"]["reference_answers"]
    assert "exact_match" in real_task_config(7)["eval"]["reference_answers"]
    changed = sum(lite_task_config(i)["eval"] != real_task_config(lite_task_config(i)["old_task_id"])["eval"]
                  for i in range(165))  # fmt: skip
    assert changed == 46


def test_the_same_evaluator_scores_lite_tasks():
    judge = Judge(DEFAULT_JUDGE_MODEL, mock_response="Correct.", num_retries=0)
    lite = replace_placeholders(lite_task_config(8), URLS)
    original = replace_placeholders(real_task_config(43), URLS)
    answer = "hollister, Joust Bag, nike"
    assert evaluate(lite, None, answer, judge=judge, urls=URLS).score == 1.0
    assert evaluate(original, None, answer, judge=judge, urls=URLS).score == 0.0


def test_every_lite_eval_block_is_understood():
    problems = {}
    for i in range(165):
        config = replace_placeholders(lite_task_config(i), URLS)
        if found := check_eval_block(config["eval"]):
            problems[i] = found
        for target in config["eval"]["program_html"] or []:
            for value in (target["url"], target["locator"]):
                if value.startswith("func:"):
                    parse_func(value)  # every func: the corrected configs call is known here
    assert problems == {}


def test_make_constructs_without_servers():
    env = gym.make("webarena-lite/1", obs_mode="axtree")
    try:
        inner = env.unwrapped
        assert isinstance(inner, WebArenaEnv) and inner.env_id == "webarena-lite/1"
        assert inner.task_config["old_task_id"] == 7 and inner.task_config["start_url"] == "__MAP__"
        assert isinstance(inner.host, RealSiteHost) and inner.host.sites == ("map",)
        assert inner.browser is None
    finally:
        env.close()


def test_lite_task_set_and_its_ordering():
    tasks = tasksets.resolve("webarena:lite")
    assert [t.env_id for t in tasks] == envs.list_env_ids("lite")
    # the paper's per-site task counts (its A.11 table)
    assert collections.Counter(t.site_group for t in tasks) == {
        "shopping": 45, "shopping_admin": 35, "gitlab": 30, "map": 26, "reddit": 19, "multisite": 10
    }  # fmt: skip
    lite_ids = {t.env_id for t in tasks}
    deps = {t.env_id: t.depends_on for t in tasks if t.depends_on}
    assert deps and all(set(d) <= lite_ids for d in deps.values())
    # WebArena 77 waits for 65 (BrowserGym's metadata); here as the lite ids of those tasks
    lite_of = {lite_task_config(i)["old_task_id"]: f"webarena-lite/{i}" for i in range(165)}
    assert deps[lite_of[77]] == (lite_of[65],)
    maps = tasksets.resolve("webarena-lite:site=map")
    assert maps and all("map" in t.sites for t in maps)
    assert [t.env_id for t in tasksets.resolve("webarena-lite/3,webarena/4")] == ["webarena-lite/3", "webarena/4"]
    with pytest.raises(ValueError, match="webarena:lite"):
        tasksets.resolve("lite")


@pytest.mark.browser
def test_reset_without_the_sites_fails_at_once_naming_the_variables(monkeypatch):
    for name in ("WA_MAP", "WA_WIKIPEDIA", "WA_HOMEPAGE"):
        monkeypatch.delenv(name, raising=False)
    before = browser_processes()
    env = gym.make("webarena-lite/1")  # a map task
    started = time.monotonic()
    with pytest.raises(Exception, match="WA_MAP is not set") as err:
        env.reset(seed=0)
    assert type(err.value).__name__ == "SitesUnavailableError"
    assert "export WA_MAP=" in str(err.value)
    assert time.monotonic() - started < 5
    assert browser_processes() - before == set(), "a failed reset must leave nothing running"
    env.close()


@pytest.mark.browser
@pytest.mark.parametrize("verdict, text, expected", [("Correct.", "I want a refund: it broke.", 1.0),
                                                     ("Incorrect.", "hello", 0.0), ("Correct.", "", 0.0)])  # fmt: skip
def test_lite_fuzzy_page_contents_are_judged(leased_browser, verdict, text, expected):
    """Lite task 123 drafts a message: the text the locator selects is judged against the joined references."""
    config = replace_placeholders(lite_task_config(123), URLS)
    target = config["eval"]["program_html"][0]
    assert target["url"] == "last" and "fuzzy_match" in target["required_contents"]
    context = leased_browser.new_context()
    try:
        page = context.new_page()
        page.set_content('<textarea title="What’s on your mind?"></textarea>')
        page.fill("textarea", text)
        judge = Judge(DEFAULT_JUDGE_MODEL, mock_response=verdict, num_retries=0)
        result = evaluate(config, page, "", judge=judge, urls=URLS)
    finally:
        context.close()
    assert result.score == expected
    check = result.details["program_html"]["targets"][0]["checks"][0]
    assert check["reference"] == "refund, it broke after three days of use, 000000180, 12.99"
    assert (check["judge"] == "skipped: empty selection") == (text == "")
