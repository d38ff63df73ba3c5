"""A hostile agent's action strings: the env checks exactly what runs (issue 25, finding 1).

BrowserGym's executor, when not strict, skips any text before a call and runs the call; the env's
checks used to read the action from its start and let through what they could not parse. These tests
send the attacks as an agent would (text before the call, a fenced call, a ``javascript:`` URL that
fakes the URL a ``url_match`` task reads) to a real Chromium on a site of this test.
"""

from __future__ import annotations

import pytest
from env_support import FunctionServer, bid_of, send_html, task_config

from webarena_gym.envs.action_parser import ActionCall, ActionSyntaxError, canonical, parse_action
from webarena_gym.envs.env import WebArenaEnv
from webarena_gym.envs.sites import FixedSiteHost

SITE_HTML = b"""<!doctype html><html><head><title>Task site</title></head><body>
<h1>Task site</h1><a href="/orders">Orders</a>
<label>Attachment <input type="file" id="attachment"></label></body></html>"""

JS_DOCUMENT_TITLE = "javascript:document.title='pwned'"
JS_PUSH_STATE = "javascript:history.pushState({}, '', '/orders');void 0"


@pytest.fixture(scope="module")
def site():
    """One page with a file input on 127.0.0.1 (any path serves it)."""
    served = FunctionServer(lambda handler: send_html(handler, SITE_HTML))
    yield served
    served.close()


@pytest.fixture
def env(site):
    made: list[WebArenaEnv] = []

    def make(**overrides) -> WebArenaEnv:
        config = task_config(require_login=False, start_url="__SHOPPING__/", **overrides)
        host = FixedSiteHost({"shopping": site.url})
        made.append(WebArenaEnv(task_kwargs={"config": config, "host": lambda: host}, obs_mode="axtree"))
        return made[-1]

    yield make
    for made_env in made:
        made_env.close()


# ------------------------------------------------------------------ the parser (no browser)


@pytest.mark.parametrize(
    "action",
    [
        f"x goto({JS_DOCUMENT_TITLE!r})",
        f"```goto({JS_DOCUMENT_TITLE!r})```",
        "Action: upload_file('12', '/etc/passwd')",
        "click('12') and goto('x')",
        "import os",
        "click(open('/etc/passwd').read())",
        "click(*['12'])",
        "page.goto('x')",
        "click('12'),",
        "scroll(1e999, 0)",
        "",
        "# only a comment",
    ],
)
def test_anything_but_calls_with_literal_arguments_is_refused(action):
    with pytest.raises(ActionSyntaxError):
        parse_action(action)


def test_calls_are_parsed_and_re_serialised_from_their_values():
    calls = parse_action("  # click the cart\nfill('5', \"it's\\n\", enable_autocomplete_menu=False)\nclick('12')\n")
    assert calls == (
        ActionCall("fill", ("5", "it's\n"), (("enable_autocomplete_menu", False),)),
        ActionCall("click", ("12",)),
    )
    assert canonical(calls) == "fill('5', \"it's\\n\", enable_autocomplete_menu=False)\nclick('12')"
    assert parse_action(canonical(calls)) == calls


def test_answer_detection_reads_the_same_parse(site):
    host = FixedSiteHost({"shopping": site.url})
    e = WebArenaEnv(task_kwargs={"config": task_config(), "host": lambda: host})
    assert e.answer_in("send_msg_to_user('a')") == "a"
    assert e.answer_in("send_msg_to_user(text='a')") == "a"
    assert e.answer_in("x send_msg_to_user('a')") is None
    assert e.answer_in("```send_msg_to_user('a')```") is None


# ------------------------------------------------------------------ the attacks, in a real browser


@pytest.mark.browser
@pytest.mark.parametrize(
    "action",
    [f"x goto({JS_DOCUMENT_TITLE!r})", f"```goto({JS_DOCUMENT_TITLE!r})```", f"Action: goto({JS_DOCUMENT_TITLE!r})"],
)
def test_text_before_a_call_neither_bypasses_the_checks_nor_runs(env, action):
    e = env()
    e.reset(seed=0)
    obs, _, terminated, truncated, _ = e.step(action)
    assert obs["last_action_error"].startswith("Invalid action: ")
    assert not (terminated or truncated)
    assert e.page.title() == "Task site"  # no script ran in the site's origin


@pytest.mark.browser
def test_an_upload_with_text_before_it_reads_no_file(env):
    e = env()
    obs, _ = e.reset(seed=0)
    field = bid_of(obs, "button", "Attachment")
    obs, *_ = e.step(f"Action: upload_file({field!r}, '/etc/passwd')")
    assert obs["last_action_error"].startswith("Invalid action")
    assert e.page.evaluate("document.getElementById('attachment').files.length") == 0


@pytest.mark.browser
def test_an_answer_with_text_before_it_is_not_delivered(env):
    e = env()
    e.reset(seed=0)
    obs, reward, terminated, truncated, _ = e.step("x send_msg_to_user('42')")
    assert not (terminated or truncated) and reward == 0.0
    assert obs["last_action_error"].startswith("Invalid action")
    assert [m["message"] for m in obs["chat_messages"] if m["role"] == "assistant"][1:] == []


@pytest.mark.browser
def test_a_faked_url_cannot_score_a_url_match_task(env, site):
    """``history.pushState`` through a ``javascript:`` URL would change the URL ``url_match`` reads."""
    evaluation = {"eval_types": ["url_match"], "reference_url": "__SHOPPING__/orders"}
    e = env(eval={**task_config()["eval"], **evaluation})
    e.reset(seed=0)
    disguised = " \tJavaScript:" + JS_PUSH_STATE.removeprefix("javascript:")
    for action in (f"x goto({JS_PUSH_STATE!r})", f"goto({JS_PUSH_STATE!r})", f"goto({disguised!r})"):
        obs, *_ = e.step(action)
        assert obs["last_action_error"] and obs["url"] == f"{site.url}/", action
    obs, reward, terminated, *_ = e.step("send_msg_to_user('done')")
    assert terminated and reward == 0.0
