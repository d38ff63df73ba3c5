"""The numeric env's RL options (``fast=True``: the env's ``fast_reset``, ``force_actions`` and ``fast_steps``):
an in-page reset gives the problem a fresh page gets for the same seed (also after an episode that clicked
and typed, and on a task that keeps state its episode start does not regenerate, which is loaded again), a
tab that left the task's page gets a fresh page, and the LLM-facing defaults still open a fresh context per
episode. A fast step observes what a default step observes (every field the numeric wrapper reads, the
reward at the end of an episode, the verdict of an episode the step ends), and a navigation, a blocked one or
a tab switch is still seen. A forced fill types with the events and values of Playwright's fill."""

from __future__ import annotations

from urllib.parse import urlsplit

import numpy as np
import playwright.sync_api
import pytest
from env_support import bid_of, task_config

from webarena_gym import envs
from webarena_gym.envs.extraction import PageExtractor
from webarena_gym.envs.miniwob import keeps_state
from webarena_gym.envs.navigation import LEAVING_FLAG, NavigationWatch
from webarena_gym.wrappers.numeric import TYPEABLE, interactive_elements, make_numeric_env

pytestmark = pytest.mark.browser

# The page's problem with no trace of the env's element marks: the goal as the page states it, and the
# task's DOM (tags, ids, classes, own text, values, inline styles).
_PROBLEM = """() => {
  const walk = e => [e.tagName, e.id, e.getAttribute('class'), e.getAttribute('style'), e.value ?? null,
    e.checked ?? null, [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent.trim()).join('|'),
    [...e.children].map(walk)];
  return {utterance: core.getUtterance(), dom: walk(document.getElementById('wrap'))};
}"""


def problem(env, obs: dict, info: dict) -> dict:
    """The goal, the page's problem, and the elements the numeric env offers as slots (role, name)."""
    slots = [(role, name) for _, role, name in interactive_elements(obs, 64)]
    return {"intent": info["intent"], "slots": slots, **env.unwrapped.page.evaluate(_PROBLEM)}


def play(env, obs: dict) -> None:
    """Leave traces on the page (typed text, checked boxes, an open tab, the mouse over an element): act
    on the first three elements, typing into text fields and clicking the rest, until the episode ends."""
    for bid, role, _ in interactive_elements(obs, 3):
        action = f"fill('{bid}', 'leftover')" if role in TYPEABLE else f"click('{bid}')"
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return


@pytest.mark.parametrize("task", ["click-button", "enter-text", "click-checkboxes", "click-tab-2"])
def test_an_in_page_reset_gives_the_problem_of_a_fresh_page(task):
    fast = envs.make(f"miniwob/{task}", obs_mode="axtree", fast_reset=True, fast_steps=True)
    fresh = envs.make(f"miniwob/{task}", obs_mode="axtree")
    try:
        obs, _ = fast.reset(seed=1)
        context, page = fast.unwrapped.context, fast.unwrapped.page
        for seed in (7, 8):
            play(fast, obs)
            obs, info = fast.reset(seed=seed)
            # the same tab: restarted in the page (or, for a task that keeps state, loaded again in it)
            assert fast.unwrapped.context is context and fast.unwrapped.page is page
            assert problem(fast, obs, info) == problem(fresh, *fresh.reset(seed=seed))
        assert keeps_state(task) == (task == "click-tab-2")
    finally:
        fast.close()
        fresh.close()


@pytest.mark.parametrize("task", ["click-checkboxes", "click-option"])
def test_an_in_page_reset_observes_what_a_fresh_page_does(task):
    """The numeric observation right after an in-page reset is a fresh page's for the same seed: the
    labels' texts of the problem the episode start rebuilt are in the AX tree, as a fresh page's are
    (built before the page was marked, they were left out of it)."""
    fast = make_numeric_env(f"miniwob/{task}", fast=True)
    fresh = make_numeric_env(f"miniwob/{task}", fast=True, fast_reset=False)
    try:
        fast.reset(seed=0)
        page = fast.unwrapped.page
        for seed in (1, 2, 3):
            (vector, info), (expected, expected_info) = fast.reset(seed=seed), fresh.reset(seed=seed)
            assert fast.unwrapped.page is page  # restarted in its tab
            assert np.array_equal(vector, expected)
            assert np.array_equal(info["action_mask"], expected_info["action_mask"])
    finally:
        fast.close()
        fresh.close()


def test_the_llm_defaults_open_a_fresh_context_per_episode():
    env = make_numeric_env("miniwob/click-button")
    try:
        assert not env.unwrapped.fast_reset and not env.unwrapped.fast_steps
        assert make_numeric_env.__kwdefaults__["fast"] is False
        assert "do(force=True)" not in env.unwrapped.action_mapping.__self__.python_includes
        env.reset(seed=0)
        context = env.unwrapped.context
        env.reset(seed=1)
        assert env.unwrapped.context is not context
    finally:
        env.close()


def test_a_fast_reset_off_the_task_page_opens_a_fresh_one():
    env = envs.make("miniwob/click-button", obs_mode="axtree", fast_reset=True)
    try:
        _, info = env.reset(seed=0)
        context = env.unwrapped.context
        obs, *_ = env.step(f"goto('{info['site_urls']['miniwob']}/miniwob/click-test.html')")
        assert obs["url"].endswith("click-test.html")
        obs, info = env.reset(seed=3)
        assert env.unwrapped.context is not context and obs["url"].endswith("click-button.html") and info["intent"]
    finally:
        env.close()


@pytest.fixture
def fast_reads(monkeypatch):
    """Which observations were read by the fast path (``PageExtractor.read`` returned one): True, or
    "restart" for one an in-page reset's episode start read (its own evaluation, no second one)."""
    reads = []
    read = PageExtractor.read

    def counted(self, page, state_script, done=None):
        result = read(self, page, state_script, done)
        reads.append("restart" if result is not None and done is not None else result is not None)
        return result

    monkeypatch.setattr(PageExtractor, "read", counted)
    return reads


# What the numeric wrapper and the task's verdict read, besides the vector: the raw observation's fields
# (each env serves the pages on a port of its own: URLs are compared by their path).
_OBS_FIELDS = ("open_pages_titles", "focused_element_bid", "goal", "last_action_error")
_VERDICT = ("RAW_REWARD_GLOBAL", "REWARD_REASON", "DONE_GLOBAL")


def seen(obs: dict) -> dict:
    return {key: obs[key] for key in _OBS_FIELDS} | {
        "active": int(obs["active_page_index"][0]),
        "paths": [urlsplit(url).path for url in (obs["url"], *obs["open_pages_urls"])],
    }


def verdict(info: dict) -> tuple | None:
    evaluation = info.get("evaluation")
    if evaluation is None:
        return None
    details = evaluation["details"]["miniwob"]
    return (evaluation["score"], *(details[key] for key in _VERDICT))


@pytest.mark.parametrize("task", ["enter-text", "click-checkboxes"])
def test_a_fast_step_observes_what_a_default_step_does(task, fast_reads):
    """The same seeds and actions, with and without ``fast_steps``: the same vectors, masks, rewards, ends
    and raw fields (also right after the in-page resets between episodes), and the fast env read its steps
    the fast way."""
    fast = make_numeric_env(f"miniwob/{task}", fast=True)
    default = make_numeric_env(f"miniwob/{task}", fast=True, fast_steps=False)
    rng = np.random.default_rng(0)
    ends = []
    try:
        assert fast.unwrapped.fast_steps and not default.unwrapped.fast_steps
        (vector, info), (expected, expected_info) = fast.reset(seed=3), default.reset(seed=3)
        for _ in range(10):
            assert np.array_equal(vector, expected)
            assert np.array_equal(info["action_mask"], expected_info["action_mask"])
            assert seen(fast.unwrapped._episode.last_obs) == seen(default.unwrapped._episode.last_obs)
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            vector, reward, terminated, truncated, info = fast.step(action)
            expected, *outcome, expected_info = default.step(action)
            assert [reward, terminated, truncated] == outcome
            assert verdict(info) == verdict(expected_info)
            if terminated or truncated:
                ends.append(reward)
                (vector, info), (expected, expected_info) = fast.reset(), default.reset()
    finally:
        fast.close()
        default.close()
    # episodes ended, and every step and in-page reset of the fast env was read the fast way, each reset with
    # the evaluation that restarted the episode
    assert ends and sorted(fast_reads, key=str) == [True] * 10 + ["restart"] * len(ends)


def test_a_fast_step_reads_the_reward_when_the_page_ends_the_episode(fast_reads):
    env = envs.make("miniwob/click-test", obs_mode="axtree", fast_steps=True)
    try:
        obs, _ = env.reset(seed=0)
        (button,) = [bid for bid, role, _ in interactive_elements(obs, 8) if role == "button"]
        obs, reward, terminated, truncated, info = env.step(f"click('{button}')")
        assert fast_reads == [True]
        assert (reward, terminated, truncated) == (1.0, True, False)
        assert verdict(info)[0] == 1.0 and verdict(info)[3] is True
    finally:
        env.close()


def texts(obs: dict) -> set[str]:
    """The names of the AX tree's nodes (a status shows its text as a StaticText child)."""
    return {str(node.get("name", {}).get("value", "")) for node in obs["axtree_object"]["nodes"]}


@pytest.mark.parametrize("force_actions", [False, True], ids=["locator-clicks", "point-clicks"])
def test_a_quiet_step_is_read_fast_and_a_navigation_dialog_or_frame_still_seen(make_env, fast_reads, force_actions):
    """On the static shop (a WebArena-format task, one tab): typing, clicking and a dialog are read the fast
    way and show their effect; a blocked link, a link to another page and a page with a frame are read the
    default way, with what the default path shows for each. The same with forced actions, whose clicks are
    mouse clicks at the element's point that do not wait for the navigation they start."""
    env = make_env(fast_steps=True, force_actions=force_actions)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '3')")
    obs, *_ = env.step(f"click('{bid_of(obs, 'button', 'Add')}')")
    assert fast_reads == [True, True] and "added 3" in texts(obs)
    assert obs["focused_element_bid"] == bid_of(obs, "button", "Add") and obs["open_pages_titles"] == ("Test shop",)
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Outside link')}')")  # the URL guard: the tab stays
    assert obs["last_action_error"].startswith("Blocked navigation to") and obs["url"].endswith("/index.html")
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    assert obs["url"].endswith("/page2.html") and bid_of(obs, "link", "Back home")
    obs, *_ = env.step(f"goto('{obs['url'].replace('page2', 'dialogs')}')")
    fast_reads.clear()
    obs, *_ = env.step(f"click('{bid_of(obs, 'button', 'Save')}')")
    assert fast_reads == [True] and obs["dialogs"] == ("alert 'Saved!' (dismissed)",)
    obs, *_ = env.step(f"goto('{obs['url'].replace('dialogs', 'framed')}')")
    obs, *_ = env.step(f"click('{bid_of(obs, 'checkbox', 'Accept terms')}')")  # inside the frame
    assert fast_reads[-1] is False and bid_of(obs, "textbox", "Coupon")


def test_tabs_under_fast_steps_still_take_turns(make_env, fast_reads):
    """The fast path's activation pings (tabs loading or shown, not every input event) still follow
    BrowserGym's tab actions; steps with more than one tab are read the default way."""
    two_tabs = task_config(start_url="__SHOPPING__/index.html |AND| __SHOPPING__/page2.html")
    env = make_env(fast_steps=True, config=two_tabs)
    obs, _ = env.reset(seed=0)
    assert obs["active_page_index"][0] == 0
    obs, *_ = env.step("tab_focus(1)")
    assert obs["active_page_index"][0] == 1 and obs["url"].endswith("/page2.html")
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Back home')}')")
    assert obs["active_page_index"][0] == 1 and obs["open_pages_titles"] == ("Test shop", "Test shop")
    obs, *_ = env.step("new_tab()")
    assert obs["active_page_index"][0] == 2 and obs["url"] == "about:blank"
    obs, *_ = env.step("tab_focus(0)")
    obs, *_ = env.step(f"click('{bid_of(obs, 'button', 'Add')}')")
    assert obs["active_page_index"][0] == 0 and "added" in texts(obs)
    assert fast_reads == []


@pytest.fixture
def waits(monkeypatch):
    """The env's waits for a navigation request its page asked for (``NavigationWatch.await_start``)."""
    calls = []
    await_start = NavigationWatch.await_start
    monkeypatch.setattr(
        NavigationWatch, "await_start", lambda self, *args: calls.append(args) or await_start(self, *args)
    )
    return calls


@pytest.mark.parametrize("force_actions", [False, True], ids=["locator-clicks", "point-clicks"])
def test_a_page_that_asked_to_leave_is_waited_for_and_read_the_default_way(make_env, fast_reads, waits, force_actions):
    """A point click returns before the navigation it started is seen; the page's own note that it asked
    to leave, read with the page, sends the step the default way (once: the read clears it), and a blocked
    navigation, which leaves the page where it was, leaves no note behind (whether the step saw the
    navigation at once, as after a locator click, or only when it read the page)."""
    env = make_env(fast_steps=True, force_actions=force_actions, action_timeout_ms=500)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Outside link')}')")
    assert obs["last_action_error"].startswith("Blocked navigation to")
    fast_reads.clear()
    waits.clear()  # the blocked step itself may have waited: a busy machine can read the page before its request
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '3')")
    assert fast_reads == [True] and waits == []
    page = env.unwrapped.page  # a navigate event kept, as a link's click keeps it
    page.evaluate(f"() => {{ window.{LEAVING_FLAG} = new Event('navigate'); }}")
    obs, *_ = env.step(f"click('{bid_of(obs, 'button', 'Add')}')")
    assert len(waits) == 1 and "added 3" in texts(obs)
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '4')")
    assert fast_reads[-1] is True and len(waits) == 1


def test_a_navigation_the_page_cancels_leaves_no_note_and_one_it_makes_is_seen(make_env, fast_reads, waits):
    """The note is for navigations that will send a request: a link the page's own handler cancels leaves
    the step on the fast path (no wait), and the same link followed is the next page's observation."""
    env = make_env(fast_steps=True, force_actions=True, action_timeout_ms=500)
    obs, _ = env.reset(seed=0)
    page = env.unwrapped.page
    page.evaluate(
        "() => { window.cancel = (e) => e.preventDefault(); navigation.addEventListener('navigate', cancel); }"
    )
    fast_reads.clear()
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    assert obs["url"].endswith("/index.html") and fast_reads == [True] and waits == []
    page.evaluate("() => navigation.removeEventListener('navigate', cancel)")
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    assert obs["url"].endswith("/page2.html") and bid_of(obs, "link", "Back home")


# Every input event a field gets, with whether the browser made it and the field's value then; ``select``
# is left out: Chromium queues it, so where it lands among the key events is the scheduler's.
_RECORD_EVENTS = """() => {
  window.events = [];
  for (const type of ['focus', 'focusin', 'keydown', 'beforeinput', 'input', 'keyup', 'change', 'blur'])
    document.addEventListener(type, e => window.events.push(
      [type, e.target.id, e.isTrusted, e.target.value ?? e.target.textContent]), true);
  const count = '<input id="count" type="number" aria-label="Count">';
  document.getElementById('q').parentElement.insertAdjacentHTML('afterend', count);
}"""


def test_a_forced_fill_types_as_playwright_does(make_env, monkeypatch):
    """``force_actions``' fill of a text input, a textarea and a contenteditable element selects and types
    without Playwright's locator fill, with the same trusted events and values as the default fill (also
    replacing and clearing text); a number input, which Playwright checks, still goes to BrowserGym's fill."""
    locator_fills = []
    fill = playwright.sync_api.Locator.fill
    monkeypatch.setattr(
        playwright.sync_api.Locator, "fill", lambda self, *a, **k: locator_fills.append(a) or fill(self, *a, **k)
    )
    seen_by = {}
    for force in (False, True):
        env = make_env(config=task_config(start_url="__SHOPPING__/form.html"), force_actions=force)
        obs, _ = env.reset(seed=0)
        env.page.evaluate(_RECORD_EVENTS)
        obs, *_ = env.step("noop(0)")
        locator_fills.clear()
        fields = ("Search", "Note", "Message")  # an input, a textarea, a contenteditable element
        for name in fields:
            for value in ("abc", "two\nlines", ""):
                obs, *_ = env.step(f"fill({bid_of(obs, 'textbox', name)!r}, {value!r})")
                assert obs["last_action_error"] == ""
        obs, *_ = env.step(f"fill({bid_of(obs, 'spinbutton', 'Count')!r}, ' 42 ')")
        assert obs["last_action_error"] == ""
        seen_by[force] = env.page.evaluate("() => [window.events, document.getElementById('count').value]")
        typed = [(value,) for _ in fields for value in ("abc", "two\nlines", "")]
        assert locator_fills == ([] if force else typed) + [(" 42 ",)]
    assert seen_by[True] == seen_by[False]
    events, count = seen_by[True]
    assert count == "42" and ["input", "q", True, "abc"] in events and ["input", "editor", True, "abc"] in events


def test_a_fast_step_scores_an_ending_it_caused_from_its_own_read(monkeypatch):
    """An episode that runs out of steps, or that the agent answers, on a fast step is scored from the
    reward state read with the page (no second read, no unmarking for an evaluator that reads no HTML), with
    the verdict the default path's evaluation gives."""
    from webarena_gym.envs.miniwob.task import MiniWoBTask

    evaluated = []
    evaluate = MiniWoBTask.evaluate
    monkeypatch.setattr(
        MiniWoBTask, "evaluate", lambda self, *a, **k: evaluated.append(a[1]) or evaluate(self, *a, **k)
    )
    endings = {}
    for fast_steps in (False, True):
        env = envs.make("miniwob/click-checkboxes", obs_mode="axtree", fast_steps=fast_steps, max_episode_steps=2)
        try:
            ends = []
            for seed, last in ((4, "noop(0)"), (5, "send_msg_to_user('done')")):
                obs, _ = env.reset(seed=seed)
                (box, *_) = [bid for bid, role, _ in interactive_elements(obs, 16) if role == "checkbox"]
                env.step(f"click('{box}')")
                _, reward, terminated, truncated, info = env.step(last)
                ends.append((reward, terminated, truncated, info["evaluation"]))
        finally:
            env.close()
        endings[fast_steps] = ends
        assert evaluated == ([] if fast_steps else ["", "done"])
        evaluated.clear()
    assert endings[True] == endings[False]
    assert [end[:3] for end in endings[True]] == [(0.0, False, True), (0.0, True, False)]
    assert endings[True][1][3]["answer"] == "done"
