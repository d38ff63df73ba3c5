"""Action options of ``WebArenaEnv``: the element-action timeout must cover a slow navigation, the
first start tab is the active one, and an action's code is built once per process."""

from __future__ import annotations

import http.server
import threading
import time

import pytest
from env_support import FixedSiteHost, bid_of, task_config

from webarena_gym.envs.action_set import DEFAULT_ACTION_TIMEOUT_MS, compiled_action, default_action_set

SLOW_PAGE_DELAY_S = 1.0  # twice BrowserGym's hard-coded 500 ms click timeout
START_HTML = b"<!doctype html><title>Start</title><a href='/slow'>Slow page</a>"
SLOW_HTML = b"<!doctype html><title>Slow</title><h1>Arrived</h1>"


def test_an_action_is_mapped_and_compiled_once():
    mapped: list[str] = []

    def mapping(calls: str) -> str:
        mapped.append(calls)
        return f"ran = {calls!r}\n"

    first = compiled_action(mapping, "noop(0)")
    assert compiled_action(mapping, "noop(0)") is first and mapped == ["noop(0)"]
    compiled_action(mapping, "noop(1)")
    assert mapped == ["noop(0)", "noop(1)"]  # another action is mapped anew
    namespace: dict = {}
    for code in first:
        exec(code, namespace)
    assert namespace["ran"] == "noop(0)"
    mapping = default_action_set().to_python_code
    definitions, call = compiled_action(mapping, "click('a1')")
    assert "click" in definitions.co_names and call.co_names == ("click",)  # defines, then calls BrowserGym's click
    # an action never seen before (a new element id) compiles its call only: the definitions are shared
    assert compiled_action(mapping, "click('a2')")[0] is definitions


class _SlowHandler(http.server.BaseHTTPRequestHandler):
    """``/`` links to ``/slow``, which answers only after a delay (a busy site)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/slow"):
            time.sleep(SLOW_PAGE_DELAY_S)
            body = SLOW_HTML
        else:
            body = START_HTML
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002
        pass


@pytest.fixture(scope="module")
def slow_site():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SlowHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_action_set_timeout_replaces_browsergym_literal():
    code = default_action_set(4321).to_python_code("click('12')")
    assert "timeout=4321" in code and "timeout=500" not in code
    assert f"timeout={DEFAULT_ACTION_TIMEOUT_MS}" in default_action_set().python_includes
    with pytest.raises(ValueError):
        default_action_set(0)


@pytest.mark.browser
def test_click_whose_navigation_outlasts_500ms_lands_without_error(make_env, slow_site):
    env = make_env(host=FixedSiteHost({"shopping": slow_site}), config=task_config(start_url="__SHOPPING__/"))
    obs, _ = env.reset(seed=0)
    started = time.monotonic()
    obs, reward, terminated, truncated, info = env.step(f"click('{bid_of(obs, 'link', 'Slow page')}')")
    assert time.monotonic() - started >= SLOW_PAGE_DELAY_S  # the navigation really was slow
    assert obs["last_action_error"] == ""
    assert obs["url"] == f"{slow_site}/slow" and obs["open_pages_titles"] == ("Slow",)
    assert not (terminated or truncated)


@pytest.mark.browser
def test_first_start_tab_is_active(make_env, static_sites):
    env = make_env(config=task_config(start_url="__SHOPPING__/index.html |AND| __SHOPPING__/page2.html"))
    base = static_sites.site.url
    for _ in range(3):
        obs, _ = env.reset(seed=0)
        assert obs["open_pages_urls"] == (f"{base}/index.html", f"{base}/page2.html")
        assert obs["active_page_index"].tolist() == [0] and obs["url"] == f"{base}/index.html"
        obs, *_ = env.step("noop(0)")  # late activation pings from the second tab change nothing
        assert obs["active_page_index"].tolist() == [0] and obs["url"] == f"{base}/index.html"


@pytest.mark.browser
def test_closing_the_first_start_tab_activates_the_other(make_env, static_sites):
    env = make_env(config=task_config(start_url="__SHOPPING__/index.html |AND| __SHOPPING__/page2.html"))
    env.reset(seed=0)
    obs, *_ = env.step("tab_close()")
    assert obs["last_action_error"] == "" and obs["open_pages_urls"] == (f"{static_sites.site.url}/page2.html",)
    assert obs["active_page_index"].tolist() == [0]
