"""Hostile navigation (issue 25, findings 2 and 5): open redirects in the local sites' logins, and a
navigation that the agent's own action breaks (Chromium's error page) counted as the agent's failure."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from env_support import FunctionServer, bid_of, env_on, send_html, task_config

from webarena_gym.envs.env import WebArenaEnv
from webarena_gym.envs.local.data import build
from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.sites import gitlab, reddit
from webarena_gym.envs.sites import FixedSiteHost

# What a login's "go back to" parameter may carry to send the browser to another host, as a browser
# reads it: tabs and newlines are dropped, a backslash is a slash.
OFF_SITE_TARGETS = [
    "/%09/127.0.0.1:1/x",
    "/%0a/127.0.0.1:1/x",
    "/%0d%0a/127.0.0.1:1/x",
    "//127.0.0.1:1/x",
    "/%5c127.0.0.1:1/x",
    "/%5C%5C127.0.0.1:1/x",
    "http://127.0.0.1:1/x",
    "%09//127.0.0.1:1/x",
]


@pytest.fixture(scope="module")
def site_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("sites") / "sites.sqlite"
    build(path, ["reddit", "gitlab"])
    return path


def _reddit_login(site_db, query: str):
    client = reddit.create_app(SiteContext("reddit", str(site_db))).test_client()
    form = {"_username": reddit.ACCOUNT["username"], "_password": reddit.ACCOUNT["password"]}
    return client.post(f"/login?{query}", data=form)


def _gitlab_sign_in(site_db, query: str):
    client = gitlab.create_app(SiteContext("gitlab", str(site_db))).test_client()
    form = {"username": gitlab.ACCOUNT["username"], "password": gitlab.ACCOUNT["password"]}
    return client.post(f"/users/sign_in?{query}", data=form)


@pytest.mark.parametrize("target", OFF_SITE_TARGETS)
def test_a_login_never_redirects_off_the_site(site_db, target):
    for response in (_reddit_login(site_db, f"next={target}"), _gitlab_sign_in(site_db, f"redirect_to={target}")):
        assert response.status_code == 302  # never a 500
        assert response.headers["Location"] == "/"


def test_a_login_still_returns_to_a_page_of_the_site(site_db):
    response = _reddit_login(site_db, "next=/f/books%3Fsort%3Dnew")
    assert response.status_code == 302 and response.headers["Location"] == "/f/books?sort=new"
    response = _gitlab_sign_in(site_db, "redirect_to=/byteblaze/dotfiles")
    assert response.status_code == 302 and response.headers["Location"] == "/byteblaze/dotfiles"


# ------------------------------------------------------------------ Chromium's error page, in a real browser

DEAD_PORT_URL = "http://127.0.0.1:1/x"  # nothing listens on port 1: the navigation fails
SCRIPT_URL = "javascript:document.title='pwned'"


def _task_site(handler) -> None:
    """A page of the task's site, and a path that redirects wherever its ``to`` says."""
    path = urlsplit(handler.path)
    if path.path == "/redirect":
        handler.send_response(302)
        handler.send_header("Location", parse_qs(path.query)["to"][0])
        handler.end_headers()
        return
    body = (
        f"<!doctype html><html><head><title>Task site</title></head><body><h1>Task site</h1>"
        f'<a href="/redirect?to={DEAD_PORT_URL}">Broken link</a><a href="/page2">Second page</a>'
        f'<a href="{SCRIPT_URL}">Script link</a>'
        f'<a href=" \tJaVa&#9;Script:{SCRIPT_URL[11:]}">Disguised link</a>'
        f'<form action="{SCRIPT_URL}"><button>Script form</button></form>'
        f'<div style="height: 3000px"></div></body></html>'
    ).encode()
    send_html(handler, body)


@pytest.fixture(scope="module")
def site():
    served = FunctionServer(_task_site)
    yield served
    served.close()


@pytest.fixture
def env(site):
    host = FixedSiteHost({"shopping": site.url})
    config = task_config(require_login=False, start_url="__SHOPPING__/")
    made = WebArenaEnv(task_kwargs={"config": config, "host": lambda: host}, obs_mode="axtree")
    yield made
    made.close()


@pytest.mark.browser
@pytest.mark.parametrize("route", ["click", "goto"])
def test_a_navigation_the_agent_broke_is_reported_and_brought_back(env, site, route):
    """A redirect to a port where nothing listens ends on Chromium's error page: that is the agent's
    failure (reported, the tab brought back, the episode goes on), never a dead browser."""
    obs, _ = env.reset(seed=0)
    broken = f"{site.url}/redirect?to={DEAD_PORT_URL}"
    action = f"click({bid_of(obs, 'link', 'Broken link')!r})" if route == "click" else f"goto({broken!r})"
    obs, _, terminated, truncated, info = env.step(action)
    assert not (terminated or truncated) and "error" not in info
    assert obs["last_action_error"].startswith(f"The page could not be loaded ({DEAD_PORT_URL}: net::ERR_"), obs
    assert obs["url"] == f"{site.url}/" and obs["open_pages_urls"] == (f"{site.url}/",)
    obs, _, terminated, truncated, info = env.step("scroll(0, 200)")
    assert not (terminated or truncated) and "error" not in info and obs["last_action_error"] == ""
    obs, reward, terminated, *_ = env.step("send_msg_to_user('42')")
    assert terminated and reward == 1.0


@pytest.mark.browser
@pytest.mark.parametrize("element", [("link", "Script link"), ("link", "Disguised link"), ("button", "Script form")])
def test_a_javascript_link_or_form_on_a_site_page_runs_nothing(env, element):
    """Content the agent can put on a site (a link in a profile or README) must not run its script when
    clicked: no request is made, so only the page-level guard can stop it."""
    obs, _ = env.reset(seed=0)
    obs, _, terminated, truncated, info = env.step(f"click({bid_of(obs, *element)!r})")
    assert obs["last_action_error"].startswith("Blocked navigation to javascript:"), obs["last_action_error"]
    assert not (terminated or truncated) and env.page.title() == "Task site"


@pytest.mark.browser
@pytest.mark.slow
def test_the_login_redirect_attack_stays_on_the_site_and_the_episode_goes_on():
    """The issue's attack on the local suite, in BrowserGym's action grammar only: log in again with a
    ``next`` that a browser reads as another host. It used to end on Chromium's error page, where the
    next ``scroll`` never returned and the episode ended as "browser died" (left out of success rates)."""
    from webarena_gym import envs

    env = envs.make("webarena/local.200", obs_mode="axtree")
    try:
        obs, info = env.reset(seed=0)
        reddit_url = info["site_urls"]["reddit"]
        obs, *_ = env.step(f"goto('{reddit_url}/login?next=/%09/127.0.0.1:1/x')")
        form = reddit.ACCOUNT
        env.step(f"fill({bid_of(obs, 'textbox', 'Username')!r}, {form['username']!r})")
        env.step(f"fill({bid_of(obs, 'textbox', 'Password')!r}, {form['password']!r})")
        obs, _, terminated, truncated, info = env.step(f"click({bid_of(obs, 'button', 'Log in')!r})")
        assert not (terminated or truncated) and "error" not in info
        assert obs["url"] == f"{reddit_url}/" and obs["last_action_error"] == ""
        obs, _, terminated, truncated, info = env.step("scroll(0, 200)")
        assert not (terminated or truncated) and "error" not in info and obs["last_action_error"] == ""
        *_, terminated, truncated, info = env.step("send_msg_to_user('no idea')")
        assert terminated and "error" not in info and info["evaluation"]["score"] == 0.0
    finally:
        env.close()


def _slow_sort_site(delay_s: float):
    """A product list whose sort dropdown submits its form on change (as task 52's category page does),
    served slowly: the navigation is still in flight when the action returns."""

    def answer(handler) -> None:
        order = parse_qs(urlsplit(handler.path).query).get("order", ["position"])[0]
        if order != "position":
            time.sleep(delay_s)
        body = (
            f"<!doctype html><html><head><title>Sorted by {order}</title></head><body>"
            f"<h1>Sorted by {order}</h1><form action='/list'><label>Sort by <select name='order' "
            "onchange='this.form.submit()'><option value='position'>Position</option>"
            "<option value='price'>Price</option></select></label></form></body></html>"
        ).encode()
        send_html(handler, body)

    return answer


@pytest.mark.browser
def test_a_select_that_submits_its_form_completes_as_a_navigation():
    """The option's change submits the form and the next page answers slowly: the step waits for that
    navigation instead of reading a page being replaced ("Execution context was destroyed")."""
    with env_on(_slow_sort_site(delay_s=2.0), "/list") as (env, served):
        obs, _ = env.reset(seed=0)
        obs, _, terminated, truncated, info = env.step(
            f"select_option({bid_of(obs, 'combobox', 'Sort by')!r}, 'Price')"
        )
        assert not (terminated or truncated) and "error" not in info, info.get("error")
        assert obs["last_action_error"] == "" and obs["url"] == f"{served.url}/list?order=price"
        assert bid_of(obs, "heading", "Sorted by price")


def _hanging_site(handler) -> None:
    """A page whose button starts a script that never yields: the agent's click hangs the tab."""
    send_html(
        handler,
        b"<!doctype html><html><head><title>Hang</title></head><body>"
        b"<button onclick='setTimeout(() => { for (;;) {} }, 0)'>Hang</button></body></html>",
    )


@pytest.mark.browser
def test_a_page_the_agent_hung_ends_the_episode_as_its_failure_not_a_browser_error(monkeypatch):
    """A browser call that times out while Chromium still answers is the agent's doing: the episode ends
    as failed (no infrastructure error to leave out of reports or re-run), and the browser serves on."""
    monkeypatch.setenv("WEBARENA_GYM_BROWSER_CALL_TIMEOUT", "8")
    with env_on(_hanging_site) as (env, served):
        obs, _ = env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step(f"click({bid_of(obs, 'button', 'Hang')!r})")
        assert terminated and not truncated and reward == 0.0
        assert "error" not in info and "error_kind" not in info and "page_hung" in info
        assert "stopped answering after the agent's action" in obs["last_action_error"]
        obs, _ = env.reset(seed=0)  # the same browser runs the next episode
        assert obs["url"].startswith(served.url) and not obs["last_action_error"]
