"""Test sites for the env tests: static pages on 127.0.0.1 behind a real ``SiteHost``, plus a
/proc scan for browser processes. Loaded as a plugin by conftest.py, so its fixtures need no import."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from webarena_gym.benchmarks.support.procs import children_map, process_table
from webarena_gym.envs.sites import (
    FixedSiteHost,
)

INDEX_HTML = """<!doctype html><html><head><title>Test shop</title></head><body>
<h1>Test shop</h1>
<a href="/page2.html">Second page</a>
<a href="{outside}/secret.html">Outside link</a>
<a href="{outside}/secret.html" target="_blank">Outside tab</a>
<label>Quantity <input id="qty" type="text" name="qty"></label>
<button id="add"
  onclick="document.getElementById('out').textContent = 'added ' + document.getElementById('qty').value">Add</button>
<div id="out" role="status"></div>
</body></html>"""
PAGE2_HTML = """<!doctype html><html><head><title>Second page</title></head><body>
<h1>Second page</h1><p>The answer is 42.</p><a href="/index.html">Back home</a></body></html>"""
DIALOG_HTML = """<!doctype html><html><head><title>Dialogs</title></head><body>
<button id="delete"
onclick="document.getElementById('out').textContent = confirm('Delete this item?') ? 'deleted' : 'kept'">
Delete</button>
<button id="hello" onclick="alert('Saved!')">Save</button>
<div id="out" role="status"></div>
</body></html>"""
FORM_HTML = """<!doctype html><html><head><title>Order form</title></head><body>
<h1>Order form</h1>
<label>Search <input id="q" type="text"></label>
<label><input id="gift" type="checkbox"> Gift wrap</label>
<label><input type="radio" name="ship" value="std" checked> Standard</label>
<label><input id="express" type="radio" name="ship" value="exp"> Express</label>
<label>Size <select id="size"><option>Small</option><option>Medium</option><option>Large</option></select></label>
<label>Note <textarea id="note"></textarea></label>
<div id="editor" contenteditable="true" role="textbox" aria-label="Message"></div>
<div id="pane" style="height:80px;overflow:auto"><div style="height:800px">Pane</div></div>
<div id="echo" role="status"></div>
<div style="height:3000px">Tall</div>
<script>
document.getElementById('q').addEventListener('input', e => {
  document.getElementById('echo').textContent = 'typed ' + e.target.value;
});
</script>
</body></html>"""
FRAMED_HTML = """<!doctype html><html><head><title>Framed form</title></head><body>
<h1>Checkout</h1><iframe id="inner" src="/inner.html" style="height:300px"></iframe></body></html>"""
INNER_HTML = """<!doctype html><html><head><title>Inner form</title></head><body>
<label>Coupon <input id="coupon" type="text"></label>
<label><input id="terms" type="checkbox"> Accept terms</label>
<label>Colour <select id="colour"><option>Red</option><option>Blue</option></select></label>
</body></html>"""
SECRET_HTML = "<!doctype html><html><head><title>Outside</title></head><body>Not a task site</body></html>"


class _Server:
    """A quiet static HTTP server for one directory, on a free port of 127.0.0.1."""

    def __init__(self, root: Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - http.server's signature
        pass


class FunctionServer:
    """A quiet HTTP server on a free port of 127.0.0.1 whose every request (GET, POST, HEAD) is answered
    by ``answer(handler)``: a test's small site is one function."""

    def __init__(self, answer: Callable[[http.server.BaseHTTPRequestHandler], None]) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002 - http.server's signature
                pass

            def do_GET(self) -> None:
                answer(self)

            do_POST = do_HEAD = do_GET

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def env_on(answer: Callable[[http.server.BaseHTTPRequestHandler], None], path: str = "/") -> Iterator[tuple]:
    """``with env_on(answer) as (env, served):`` an AX-tree env whose task (no login) starts at ``path`` of a
    one-function shop site; both are closed on the way out."""
    from webarena_gym.envs.env import WebArenaEnv

    served = FunctionServer(answer)
    host = FixedSiteHost({"shopping": served.url})
    config = task_config(require_login=False, start_url=f"__SHOPPING__{path}")
    env = WebArenaEnv(task_kwargs={"config": config, "host": lambda: host}, obs_mode="axtree")
    try:
        yield env, served
    finally:
        env.close()
        served.close()


# The real sites' base URLs the offline evaluator tests fill placeholders with (nothing listens there).
SITE_URLS = {
    "shopping": "http://127.0.0.1:9001",
    "shopping_admin": "http://127.0.0.1:9002/admin",
    "reddit": "http://127.0.0.1:9003",
    "gitlab": "http://127.0.0.1:9004",
    "wikipedia": "http://127.0.0.1:9005",
    "map": "http://127.0.0.1:9006",
    "homepage": "http://127.0.0.1:9007",
}


def send_html(handler: http.server.BaseHTTPRequestHandler, body: bytes, status: int = 200) -> None:
    """Answer ``handler``'s request with the page ``body``."""
    handler.send_response(status)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class StaticSites:
    """Two origins: the task's "shopping" site and an outside site the URL guard must block."""

    def __init__(self, root: Path) -> None:
        (root / "site").mkdir(parents=True, exist_ok=True)
        (root / "outside").mkdir(parents=True, exist_ok=True)
        self.outside = _Server(root / "outside")
        self.site = _Server(root / "site")
        (root / "site" / "index.html").write_text(INDEX_HTML.format(outside=self.outside.url))
        (root / "site" / "page2.html").write_text(PAGE2_HTML)
        (root / "site" / "dialogs.html").write_text(DIALOG_HTML)
        (root / "site" / "form.html").write_text(FORM_HTML)
        (root / "site" / "framed.html").write_text(FRAMED_HTML)
        (root / "site" / "inner.html").write_text(INNER_HTML)
        (root / "outside" / "secret.html").write_text(SECRET_HTML)

    def close(self) -> None:
        self.site.close()
        self.outside.close()


class StaticSiteHost(FixedSiteHost):
    """The static shop as a ``SiteHost`` that records the calls the env makes."""

    def __init__(self, sites: StaticSites, *, snapshots: bool = False) -> None:
        super().__init__({"shopping": sites.site.url})
        self._snapshots = snapshots
        self.calls: list[str] = []
        self.restored: list[object] = []

    def prepare(self) -> None:
        self.calls.append("prepare")

    def reset_state(self) -> None:
        self.calls.append("reset_state")

    def login(self, context, sites) -> None:
        self.calls.append(f"login:{','.join(sites)}")
        context.add_cookies([{"name": "session", "value": "emma", "url": self.urls()["shopping"]}])

    def snapshot_state(self):
        return {"calls": len(self.calls)} if self._snapshots else None

    def restore_state(self, token) -> None:
        self.restored.append(token)

    def close(self) -> None:
        self.calls.append("close")


@pytest.fixture(scope="module")
def static_sites(tmp_path_factory):
    sites = StaticSites(tmp_path_factory.mktemp("static_sites"))
    yield sites
    sites.close()


@pytest.fixture
def make_env(static_sites):
    """Build ``WebArenaEnv``s on the static shop (axtree mode unless told); all closed at teardown."""
    from webarena_gym.envs.env import WebArenaEnv

    made = []

    def factory(config=None, host=None, **kwargs):
        host = host or StaticSiteHost(static_sites)
        kwargs.setdefault("obs_mode", "axtree")
        env = WebArenaEnv(task_kwargs={"config": config or task_config(), "host": lambda: host}, **kwargs)
        made.append(env)
        return env

    yield factory
    for env in made:
        env.close()


def bid_of(obs: dict, role: str, name: str) -> str:
    """The bid of the first AX node with this role and accessible name."""
    for node in obs["axtree_object"]["nodes"]:
        if node.get("role", {}).get("value") == role and node.get("name", {}).get("value") == name:
            if "browsergym_id" in node:
                return node["browsergym_id"]
    raise AssertionError(f"no {role} {name!r} in the AX tree")


def task_config(**overrides) -> dict:
    """A WebArena-format task on the static shop (string_match exact "42")."""
    config = {
        "sites": ["shopping"],
        "task_id": 9001,
        "require_login": True,
        "storage_state": "./.auth/shopping_state.json",
        "start_url": "__SHOPPING__/index.html",
        "geolocation": None,
        "intent_template": "What is the answer on the {{page}}?",
        "instantiation_dict": {"page": "second page"},
        "intent": "What is the answer on the second page?",
        "require_reset": False,
        "eval": {
            "eval_types": ["string_match"],
            "reference_answers": {"exact_match": "42"},
            "reference_url": "",
            "program_html": [],
            "string_note": "",
            "reference_answer_raw_annotation": "42",
        },
        "intent_template_id": 9001,
    }
    config.update(overrides)
    return config


def browser_processes() -> set[int]:
    """Live (non-zombie) chromium and Playwright-driver processes descended from this process."""
    table = process_table()
    children = children_map(table)
    found, stack = set(), [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            stack.append(child)
            _, state, cmdline = table[child]
            if state != "Z" and ("chrom" in cmdline or "playwright" in cmdline):
                found.add(child)
    return found


def alive(pids: set[int]) -> set[int]:
    """Which of ``pids`` still run (zombies waiting for their reaper count as gone)."""
    table = process_table()
    return {pid for pid in pids if pid in table and table[pid][1] != "Z"}
