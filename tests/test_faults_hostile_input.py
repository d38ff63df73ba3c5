"""Hostile actions against the raw env: leaving the task's sites by any route and any scheme, local
files uploaded to a site, actions long enough to stall BrowserGym's parser.

A real Chromium on two real HTTP servers of this test: the task's site, and an "outside" site that
records every request it gets, so a test can tell whether an outside page was fetched and whether
any of its scripts ran.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from env_support import FunctionServer, bid_of, send_html, task_config

from webarena_gym.envs.env import WebArenaEnv
from webarena_gym.envs.sites import FixedSiteHost

pytestmark = pytest.mark.browser


class _Sites:
    """The task's site (links, forms and scripts that try to leave it) and an outside site."""

    def __init__(self) -> None:
        self.outside_hits: list[str] = []
        self.outside = FunctionServer(lambda handler: self._outside_page(handler, self))
        self.site = FunctionServer(lambda handler: self._site_page(handler, self))

    @property
    def url(self) -> str:
        return self.site.url

    @property
    def outside_url(self) -> str:
        # another origin for the browser (localhost is not 127.0.0.1), served by the outside server
        return f"http://localhost:{self.outside.port}"

    @staticmethod
    def _outside_page(handler, sites: _Sites) -> None:
        sites.outside_hits.append(handler.path)
        _html(handler, "<title>Outside</title><script>fetch('/script-ran')</script><p>Not a task site</p>")

    @staticmethod
    def _site_page(handler, sites: _Sites) -> None:
        path = urlsplit(handler.path)
        if path.path == "/redirect":
            handler.send_response(302)
            handler.send_header("Location", parse_qs(path.query)["to"][0])
            handler.end_headers()
            return
        outside = sites.outside_url
        _html(
            handler,
            f"""<title>Task site</title><h1>Task site</h1>
<a href="/page2">Second page</a>
<a href="about:blank">Blank link</a>
<a href="/redirect?to={outside}/secret">Redirect link</a>
<form action="{outside}/secret" method="post"><button>Outside form</button></form>
<form action="about:blank"><button>Blank form</button></form>
<button onclick="location.href = 'about:blank'">Script to blank</button>
<button onclick="window.open('{outside}/secret')">Outside popup</button>
<button onclick="window.open('/redirect?to={outside}/secret')">Redirecting popup</button>
<label>Attachment <input type="file" id="attachment"></label>""",
        )

    def close(self) -> None:
        self.site.close()
        self.outside.close()


def _html(handler, body: str) -> None:
    send_html(handler, f"<!doctype html><html><body>{body}</body></html>".encode())


@pytest.fixture(scope="module")
def sites():
    sites = _Sites()
    yield sites
    sites.close()


@pytest.fixture
def env(sites):
    made: list[WebArenaEnv] = []

    def make(**kwargs) -> WebArenaEnv:
        config = task_config(require_login=False, start_url="__SHOPPING__/")
        host = FixedSiteHost({"shopping": sites.url})
        made.append(WebArenaEnv(task_kwargs={"config": config, "host": lambda: host}, obs_mode="axtree", **kwargs))
        return made[-1]

    yield make
    for made_env in made:
        made_env.close()


def _on_the_site(obs: dict, sites: _Sites) -> None:
    assert obs["url"] == f"{sites.url}/" and obs["open_pages_urls"] == (f"{sites.url}/",)


OFF_SITE_URLS = [
    "data:text/html,<script>fetch('http://localhost:1/')</script><p>my own page</p>",
    "about:blank",
    "javascript:document.title='x'",
    "file:///etc/hostname",
    "view-source:{site}/",
    "chrome://version",
    "{outside}/secret",
    "ftp://{outside_host}/x",
]


@pytest.mark.parametrize("target", OFF_SITE_URLS)
def test_goto_off_the_sites_is_refused_whatever_the_scheme(env, sites, target):
    url = target.format(site=sites.url, outside=sites.outside_url, outside_host=sites.outside_url.split("//")[1])
    e = env()
    e.reset(seed=0)
    hits = len(sites.outside_hits)
    obs, reward, terminated, truncated, info = e.step(f"goto({url!r})")
    assert obs["last_action_error"].startswith("Blocked navigation to ") and not (terminated or truncated)
    assert info["blocked_navigation"][0] == url
    _on_the_site(obs, sites)
    obs, info = e.goto(url)  # a policy's controlled navigation is held to the same rule
    assert obs["last_action_error"].startswith("Blocked navigation to ")
    _on_the_site(obs, sites)
    assert len(sites.outside_hits) == hits  # nothing reached the outside site


@pytest.mark.parametrize(
    "element",
    [
        ("link", "Blank link"),
        ("link", "Redirect link"),
        ("button", "Outside form"),
        ("button", "Blank form"),
        ("button", "Script to blank"),
        ("button", "Outside popup"),
        ("button", "Redirecting popup"),
    ],
)
def test_links_forms_scripts_new_tabs_and_redirects_cannot_leave_the_sites(env, sites, element):
    e = env()
    obs, _ = e.reset(seed=0)
    obs, *_ = e.step(f"click({bid_of(obs, *element)!r})")
    assert obs["last_action_error"].startswith("Blocked navigation to "), obs["last_action_error"]
    obs, *_ = e.step("noop(0)")  # a blocked tab may be reported late; by now it is gone
    _on_the_site(obs, sites)
    assert "/script-ran" not in sites.outside_hits  # no script of an outside page ever ran
    obs, *_ = e.step(f"click({bid_of(obs, 'link', 'Second page')!r})")
    assert obs["last_action_error"] == "" and obs["url"] == f"{sites.url}/page2"  # the site still works


def test_new_tab_opens_a_blank_tab_but_no_tab_may_navigate_to_blank(env, sites):
    """``new_tab`` opens a tab on its initial empty page (by design, as in WebArena); navigating a tab
    to about:blank is blocked, and a blank tab can go on to the sites."""
    e = env()
    e.reset(seed=0)
    obs, *_ = e.step("new_tab()")
    assert obs["last_action_error"] == "" and obs["open_pages_urls"] == (f"{sites.url}/", "about:blank")
    assert obs["url"] == "about:blank"
    obs, *_ = e.step(f"goto('{sites.url}/page2')")
    assert obs["last_action_error"] == "" and obs["url"] == f"{sites.url}/page2"
    obs, *_, info = e.step("go_back()")  # back to the tab's blank start: refused, the tab stays on the site
    assert info["blocked_navigation"] == ["about:blank"] and obs["url"] == f"{sites.url}/page2"
    obs, *_ = e.step("goto('about:blank')")
    assert obs["last_action_error"].startswith("Blocked navigation to about:blank")
    assert obs["open_pages_urls"] == (f"{sites.url}/", f"{sites.url}/page2")


def test_uploads_come_only_from_the_allowed_directory(env, sites, tmp_path):
    allowed = tmp_path / "uploads"
    allowed.mkdir()
    (allowed / "receipt.txt").write_text("paid")
    (allowed / "escape.txt").symlink_to("/etc/hostname")
    outside_file = tmp_path / "private.txt"
    outside_file.write_text("secret")

    def chosen(e: WebArenaEnv) -> list[str]:
        return e.page.evaluate("[...document.getElementById('attachment').files].map(f => f.name)")

    e = env(upload_dir=allowed)
    obs, _ = e.reset(seed=0)
    field = bid_of(obs, "button", "Attachment")
    for path in ("/etc/hostname", str(outside_file), str(allowed / "escape.txt"), str(allowed / ".." / "private.txt")):
        obs, *_ = e.step(f"upload_file({field!r}, {path!r})")
        assert "uploads come only from the allowed upload directory" in obs["last_action_error"], path
        assert str(tmp_path) not in obs["last_action_error"]  # no machine path reaches the agent
        assert chosen(e) == []
    obs, *_ = e.step(f"upload_file({field!r}, [{str(allowed / 'receipt.txt')!r}, '/etc/hostname'])")
    assert "uploads come only" in obs["last_action_error"] and chosen(e) == []
    obs, *_ = e.step(f"upload_file({field!r}, {str(allowed / 'receipt.txt')!r})")
    assert obs["last_action_error"] == "" and chosen(e) == ["receipt.txt"]

    closed = env()  # no upload directory: no uploads at all
    obs, _ = closed.reset(seed=0)
    obs, *_ = closed.step(f"upload_file({field!r}, {str(allowed / 'receipt.txt')!r})")
    assert "file uploads are disabled" in obs["last_action_error"] and chosen(closed) == []


def test_over_long_actions_are_refused_before_parsing(env, sites):
    """BrowserGym's parser takes ~19 s on 100,000 characters (quadratic): the env refuses them first."""
    e = env()
    e.reset(seed=0)
    for action in ("x" * 100_000, f"send_msg_to_user('{'a' * 100_000}')"):
        obs, reward, terminated, truncated, _ = e.step(action)
        assert "characters long; actions are limited to 10,000 characters" in obs["last_action_error"]
        assert not (terminated or truncated) and len(obs["last_action"]) < 300
    obs, _, terminated, *_ = e.step("send_msg_to_user('42')")  # the episode goes on and can still answer
    assert terminated and obs["last_action_error"] == ""
