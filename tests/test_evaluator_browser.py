"""program_html and the func: helpers in a real Chromium, against pages and a Magento-like REST API
served on 127.0.0.1 by this module (one browser for the whole module)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from webarena_gym.envs.browser import HeadlessChat
from webarena_gym.envs.evaluation.evaluator import DEFAULT_JUDGE_MODEL, EvalOptions, Judge, evaluate

pytestmark = pytest.mark.browser

TASKS = json.loads((Path(__file__).resolve().parents[1] / "envs" / "data" / "test.raw.json").read_text())
ADMIN_TOKEN = "test-admin-token"
TOKEN_REQUESTS: list[str] = []

PAGES = {
    "/start": "<html><body><h1>Start</h1></body></html>",
    "/product": """<html><body><h1 id="title">Quest Lumaflex&trade; Band</h1>
        <p class="price">$19.00</p><input name="qty" value="3"></body></html>""",
    # the discount field gets its value only when the "Actions" section is opened (Magento admin style)
    "/rule": """<html><body><div data-index="actions"><div class="admin__collapsible-title"
        onclick="document.querySelector('[name=discount_amount]').value = '20'">Actions</div></div>
        <input name="discount_amount" value=""></body></html>""",
    # rendered from an API call after the load event, as GitLab renders its members table
    "/group/project/-/project_members": """<html><body><table id="members"></table><script>
        fetch('/api/members').then(r => r.text()).then(t => {document.getElementById('members').innerHTML = t;});
        </script></body></html>""",
    "/f/books/12/": "<html><body><div class='submission'>Is a car necessary in NYC?</div></body></html>",
    "/sales/order/view/order_id/190/": "<html><body><h1>Order # 000000190</h1><p>Status: Pending</p></body></html>",
}
MEMBERS_ROWS = "".join(
    f"<tr><td data-label='Account'><span class='gl-avatar-labeled-sublabel'>@{name}</span></td>"
    f"<td class='col-max-role'><span>{role}</span></td></tr>"
    for name, role in [("alice", "Owner"), ("byteblaze", "Developer")]
)
REVIEWS = {
    "B0041MSF2S": [
        {"nickname": "Old Reviewer", "ratings": [{"rating_name": "Rating", "percent": 40}]},
        {"nickname": "Emma Lopez", "ratings": [{"rating_name": "Rating", "percent": 80}]},
    ],
    "B000EMPTY1": [],
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass

    def _send(self, status: int, body: str, content_type: str = "text/html") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        return self.headers.get("Authorization") == f"Bearer {ADMIN_TOKEN}"

    def do_GET(self):
        url = urlparse(self.path)
        if url.path in PAGES:
            return self._send(200, PAGES[url.path])
        if url.path == "/api/members":
            time.sleep(0.3)
            return self._send(200, MEMBERS_ROWS)
        if url.path == "/rest/V1/orders":
            query = parse_qs(url.query)
            if not self._authorised():
                return self._send(401, json.dumps({"message": "unauthorised"}), "application/json")
            assert query["searchCriteria[sortOrders][0][direction]"] == ["DESC"]
            assert query["searchCriteria[sortOrders][0][field]"] == ["created_at"]
            return self._send(200, json.dumps({"items": [{"increment_id": "000000190"}]}), "application/json")
        if url.path.startswith("/rest/V1/products/") and url.path.endswith("/reviews"):
            if not self._authorised():
                return self._send(401, "{}", "application/json")
            sku = url.path.split("/")[4]
            return self._send(200, json.dumps(REVIEWS.get(sku, [])), "application/json")
        self._send(404, "<html><body>not found</body></html>")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/rest/default/V1/integration/admin/token":
            TOKEN_REQUESTS.append(self.path)
            if json.loads(body) == {"username": "admin", "password": "admin1234"}:
                return self._send(200, json.dumps(ADMIN_TOKEN), "application/json")
            return self._send(401, "{}", "application/json")
        self._send(404, "")


@pytest.fixture(scope="module")
def base_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(leased_browser):
    """A Chromium on BrowserGym's process-wide Playwright, under a lease (a second sync Playwright in
    the same thread is refused, and the env tests in this process use BrowserGym's)."""
    return leased_browser


@pytest.fixture
def page(browser, base_url):
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base_url}/start")
    yield page
    context.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def html_task(*targets: dict, intent: str = "do it") -> dict:
    return {
        "task_id": 0,
        "intent": intent,
        "eval": {
            "eval_types": ["program_html"],
            "reference_answers": None,
            "reference_url": "",
            "program_html": list(targets),
        },
    }


def target(url: str, locator: str, required: dict, **extra) -> dict:
    return {"url": url, "locator": locator, "required_contents": required, **extra}


def run(config: dict, page, base_url: str, answer: str = "", **kwargs):
    judge = Judge(DEFAULT_JUDGE_MODEL, mock_response="correct", num_retries=0)
    return evaluate(config, page, answer, judge=judge, urls={"shopping": base_url, "gitlab": base_url}, **kwargs)


def test_last_page_with_js_locator_exact_and_must_include(page, base_url):
    page.goto(f"{base_url}/product")
    title = "document.querySelector('#title').outerText"
    assert run(html_task(target("last", title, {"exact_match": "Quest Lumaflex™ Band"})), page, base_url).score == 1
    assert run(html_task(target("last", title, {"exact_match": "Quest Lumaflex"})), page, base_url).score == 0
    both = target("last", title, {"must_include": ["lumaflex", "band |OR| strap"]})
    assert run(html_task(both), page, base_url).score == 1
    missing = target("last", title, {"must_include": ["lumaflex", "strap |OR| belt"]})
    assert run(html_task(missing), page, base_url).score == 0
    value = "document.querySelector('[name=\"qty\"').value"  # unclosed bracket, as in the real configs
    assert run(html_task(target("last", value, {"exact_match": "3"})), page, base_url).score == 1


def test_empty_locator_reads_the_page_html_unescaped(page, base_url):
    page.goto(f"{base_url}/product")
    result = run(
        html_task(target("last", "", {"must_include": ['<p class="price">$19.00', "lumaflex™"]})), page, base_url
    )
    assert result.score == 1.0
    assert run(html_task(target("last", "", {"must_include": ["$20.00"]})), page, base_url).score == 0.0


def test_explicit_url_opens_a_new_tab_and_leaves_the_agent_page(page, base_url):
    config = html_task(
        target(f"{base_url}/product", "document.querySelector('.price').outerText", {"exact_match": "$19.00"}),
        target(f"{base_url}/f/books/12/", "", {"must_include": ["car necessary"]}),
    )
    result = run(config, page, base_url)
    assert result.score == 1.0
    assert page.url == f"{base_url}/start" and len(page.context.pages) == 1
    wrong = html_task(
        target(f"{base_url}/product", "document.querySelector('.price').outerText", {"exact_match": "$20.00"})
    )
    assert run(wrong, page, base_url).score == 0.0


def test_missing_element_selects_nothing(page, base_url):
    config = html_task(
        target("last", "document.querySelector('#nope').outerText", {"must_include": [""]}),
        target("last", "document.querySelector('#nope').outerText", {"exact_match": "x"}),
    )
    result = run(config, page, base_url)
    first, second = result.details["program_html"]["targets"]
    assert first["score"] == 1.0 and first["selected"] == "" and "locator_error" in first
    assert second["score"] == 0.0 and result.score == 0.0


def test_prep_actions_run_before_the_locator(page, base_url):
    page.goto(f"{base_url}/rule")
    locator = "document.querySelector('[name=\"discount_amount\"').value"
    prep = ["document.querySelector('[data-index=\"actions\"]').querySelector('.admin__collapsible-title').click()"]
    assert run(html_task(target("last", locator, {"exact_match": "20"})), page, base_url).score == 0.0
    assert run(html_task(target("last", locator, {"exact_match": "20"}, prep_actions=prep)), page, base_url).score == 1
    page.reload()
    failing = ["document.querySelector('#absent').click()"]
    result = run(html_task(target("last", locator, {"exact_match": "20"}, prep_actions=failing)), page, base_url)
    assert result.score == 0.0 and result.details["program_html"]["targets"][0]["prep_errors"]


def test_func_url_with_last_url_placeholder(page, base_url):
    page.goto(f"{base_url}/f/books/12/is-a-car-necessary/-/comment/5")
    config = html_task(
        target(
            "func:reddit_get_post_url('__last_url__')",
            "document.querySelector('.submission').outerText",
            {"must_include": ["is car necessary in NYC |OR| is a car necessary in NYC"]},
        )
    )
    result = run(config, page, base_url)
    assert result.score == 1.0
    assert result.details["program_html"]["targets"][0]["resolved_url"] == f"{base_url}/f/books/12/"


def test_gitlab_member_role_on_a_client_rendered_page(page, base_url):
    url = f"{base_url}/group/project/-/project_members"
    member = target(url, "func:gitlab_get_project_memeber_role(__page__, 'byteblaze')", {"must_include": ["Developer"]})
    assert run(html_task(member), page, base_url).score == 1.0
    stranger = target(url, "func:gitlab_get_project_memeber_role(__page__, 'carol')", {"exact_match": "Developer"})
    result = run(html_task(stranger), page, base_url)
    assert result.score == 0.0 and result.details["program_html"]["targets"][0]["selected"] == ""


def test_shopping_helpers_use_the_admin_rest_api(page, base_url):
    order = target("func:shopping_get_latest_order_url()", "", {"must_include": ["Order # 000000190", "Pending"]})
    result = run(html_task(order), page, base_url)
    assert result.score == 1.0
    assert result.details["program_html"]["targets"][0]["resolved_url"] == f"{base_url}/sales/order/view/order_id/190/"
    config = html_task(
        target("last", "func:shopping_get_sku_latest_review_author('B0041MSF2S')", {"must_include": ["Emma Lopez"]}),
        target("last", "func:shopping_get_sku_latest_review_rating('B0041MSF2S')", {"must_include": ["80"]}),
    )
    TOKEN_REQUESTS.clear()
    assert run(config, page, base_url).score == 1.0
    assert len(TOKEN_REQUESTS) == 1  # one admin token serves every helper of an evaluation
    empty = target("last", "func:shopping_get_sku_latest_review_author('B000EMPTY1')", {"exact_match": "Emma Lopez"})
    assert run(html_task(empty), page, base_url).score == 0.0


def test_helper_failures_score_zero_with_a_clear_error(page, base_url):
    unknown = target("last", "func:not_a_helper(__page__)", {"exact_match": "x"})
    result = run(html_task(unknown), page, base_url)
    assert result.score == 0.0 and "unknown eval func" in result.details["program_html"]["targets"][0]["error"]
    no_site = html_task(target("func:shopping_get_latest_order_url()", "", {"must_include": ["x"]}))
    result = evaluate(no_site, page, "", judge=Judge(mock_response="correct"), urls={})
    assert result.score == 0.0 and "'shopping' site URL" in result.details["program_html"]["targets"][0]["error"]
    dead = html_task(target(f"http://127.0.0.1:{_closed_port()}/gone", "", {"must_include": ["x"]}))
    result = run(dead, page, base_url, options=EvalOptions(navigation_timeout_ms=5_000))
    assert result.score == 0.0 and "ERR_CONNECTION_REFUSED" in result.details["program_html"]["targets"][0]["error"]
    assert len(page.context.pages) == 1


def test_all_types_together_multiply(page, base_url):
    page.goto(f"{base_url}/product?id=7")
    config = html_task(target("last", "document.querySelector('#title').outerText", {"must_include": ["band"]}))
    config["eval"].update(
        eval_types=["string_match", "url_match", "program_html"],
        reference_answers={"fuzzy_match": ["nineteen dollars"]},
        reference_url=f"{base_url}/product?id=7",
    )
    result = run(config, page, base_url, answer="$19")
    assert result.score == 1.0
    assert json.loads(json.dumps(result.details))["judge"]["calls"] == 1  # details go into trajectories
    assert [result.details[t]["score"] for t in ("string_match", "url_match", "program_html")] == [1.0, 1.0, 1.0]
    page.goto(f"{base_url}/product?id=8")
    assert run(config, page, base_url, answer="$19").score == 0.0


def test_every_real_locator_and_prep_action_is_valid_javascript(page):
    scripts = {
        t[key]
        for task in TASKS
        for t in task["eval"]["program_html"] or []
        for key in ("locator",)
        if t[key].startswith(("document.", "[...document."))
    }
    scripts |= {a for task in TASKS for t in task["eval"]["program_html"] or [] for a in t.get("prep_actions", [])}
    assert len(scripts) > 50
    invalid = page.evaluate(
        """(scripts) => scripts.filter((s) => { try { new Function('return ' + s); return false; }
                                                catch (e) { return true; } })""",
        sorted(scripts),
    )
    assert invalid == []


@pytest.mark.slow
def test_browsergym_env_keeps_the_agent_page_active(base_url, monkeypatch, playwright_leased):
    """BrowserGym switches its active page to any page that loads; after the evaluation tab closes,
    the env must again observe the agent's page, not a closed tab."""
    import browsergym.core.env as bg_env
    from browsergym.core.task import OpenEndedTask

    monkeypatch.setattr(bg_env, "Chat", HeadlessChat)
    env = bg_env.BrowserEnv(
        task_entrypoint=OpenEndedTask,
        task_kwargs={"start_url": f"{base_url}/start"},
        headless=True,
        slow_mo=0,
        pre_observation_delay=0.0,
    )
    try:
        env.reset(seed=0)
        config = html_task(
            target(f"{base_url}/product", "document.querySelector('.price').outerText", {"exact_match": "$19.00"})
        )
        assert run(config, env.page, base_url).score == 1.0
        assert not env.page.is_closed() and env.page.url == f"{base_url}/start"
        obs, *_ = env.step("noop()")
        assert obs["url"] == f"{base_url}/start" and len(obs["open_pages_urls"]) == 1
    finally:
        env.close()
