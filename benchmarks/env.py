"""``env.step`` latency: our ``WebArenaEnv`` against plain BrowserGym and against the physical floor.

One static page of about 1,100 accessibility nodes (a product table) is served from a 127.0.0.1
``http.server`` thread. In the same process and over the same Playwright driver, each round runs,
interleaved so that machine load hits all of them alike:
- plain BrowserGym: ``BrowserEnv`` with its defaults (chat browser, 0.5 s pre-observation delay,
  the task's default ``slow_mo``, DOM + AX tree + screenshot), without our Playwright speed-ups;
- plain BrowserGym tuned (``slow_mo=0``, no delay): what the defaults cost, for context;
- ``WebArenaEnv`` in ``obs_mode="full"`` and ``"axtree"``;
- the floor: one click (the same input event) plus one ``Accessibility.getFullAXTree`` over a
  CDP session of the same Playwright connection.
Every step clicks the page's counter button, which changes the page.
The AX-tree step is also measured against its floor on the largest local page (the store admin's
orders grid, 200 rows, about 8,500 AX nodes), logged in, each step toggling one row's checkbox; the
floor runs in a second context of the same browser with the same cookies.
Targets (issues 2 and 21): full mode <= 0.25x plain BrowserGym; axtree mode <= 1.3x the floor on both
pages.
"""

from __future__ import annotations

import functools
import http.server
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PAGE_ROWS = 47  # about 1,100 AX nodes with the layout below


def bench_page(rows: int = PAGE_ROWS) -> str:
    """A shop-like page: navigation, a search form, a product table with inputs, a counter button."""
    nav = "".join(f'<li><a href="#c{i}">Category {i}</a></li>' for i in range(12))
    body = "".join(
        f"<tr><td><a href='#p{i}'>Product {i}</a></td><td>${i * 3 + 0.99:.2f}</td>"
        f"<td><label>Qty <input type='number' value='1' name='q{i}'></label></td>"
        f"<td><button>Add {i}</button></td></tr>"
        for i in range(rows)
    )
    return (
        "<!doctype html><html><head><title>Bench shop</title></head><body>"
        f"<header><h1>Bench shop</h1><nav><ul>{nav}</ul></nav>"
        "<form onsubmit='return false'><input type='search' aria-label='Search'><button>Search</button></form>"
        "</header><main><button id='counter' "
        "onclick=\"this.textContent = 'Clicked ' + (++window.n || (window.n = 1))\">"
        "Clicked 0</button><table><thead><tr><th>Name</th><th>Price</th><th>Quantity</th><th></th></tr></thead>"
        f"<tbody>{body}</tbody></table></main><footer><p>Bench footer</p></footer></body></html>"
    )


@contextmanager
def serve_page(html: str) -> Iterator[str]:
    """Serve ``html`` as /bench.html on a free 127.0.0.1 port; yields the site's base URL."""
    with tempfile.TemporaryDirectory() as root:
        (Path(root) / "bench.html").write_text(html)

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()


def _counter_bid(obs: dict) -> str:
    for node in obs["axtree_object"]["nodes"]:
        name = node.get("name", {}).get("value", "")
        if node.get("role", {}).get("value") == "button" and name.startswith("Clicked") and "browsergym_id" in node:
            return node["browsergym_id"]
    raise RuntimeError("counter button not found in the AX tree")


def _task_config(base: str) -> dict:
    return {
        "sites": ["shopping"], "task_id": -1, "require_login": False, "storage_state": None,
        "start_url": "__SHOPPING__/bench.html", "geolocation": None, "intent_template": "Benchmark page",
        "instantiation_dict": {}, "intent": "Benchmark page", "require_reset": False,
        "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "n/a"},
                 "reference_url": "", "program_html": [], "string_note": ""},
        "intent_template_id": -1,
    }  # fmt: skip


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


class _Contender:
    """One thing to time per round: a callable returning after one step."""

    def __init__(self, name: str, step: Callable[[], None], plain: bool = False) -> None:
        self.name, self.step, self.plain = name, step, plain
        self.samples: list[float] = []


def run(quick: bool = False) -> list[dict[str, Any]]:
    from browsergym.core.env import BrowserEnv
    from browsergym.core.task import OpenEndedTask

    from webarena_gym.envs.env import WebArenaEnv
    from webarena_gym.envs.playwright_patches import install_launch_patch, install_speedups, remove_speedups
    from webarena_gym.envs.sites import FixedSiteHost

    rounds = 6 if quick else 25
    install_launch_patch()  # plain BrowserGym cannot find this machine's Chromium otherwise
    envs: list[Any] = []
    with serve_page(bench_page()) as base:
        url = f"{base}/bench.html"
        try:
            plain = BrowserEnv(task_entrypoint=OpenEndedTask, task_kwargs={"start_url": url})
            tuned = BrowserEnv(
                task_entrypoint=OpenEndedTask, task_kwargs={"start_url": url}, slow_mo=0, pre_observation_delay=0.0
            )
            ours = {
                mode: WebArenaEnv(
                    task_kwargs={"config": _task_config(base), "host": lambda: FixedSiteHost({"shopping": base})},
                    obs_mode=mode,
                    max_episode_steps=10_000,
                )
                for mode in ("full", "axtree")
            }
            envs = [plain, tuned, *ours.values()]
            remove_speedups()
            plain_obs, _ = plain.reset(seed=0)
            tuned.reset(seed=0)
            install_speedups()
            ours_obs = {mode: env.reset(seed=0)[0] for mode, env in ours.items()}
            n_nodes = len(ours_obs["axtree"]["axtree_object"]["nodes"])
            action = {name: f"click('{_counter_bid(obs)}')" for name, obs in [("plain", plain_obs), *ours_obs.items()]}
            browser = ours["axtree"].browser
            assert browser is not None  # reset() started it
            floor_page = browser.new_context().new_page()  # same browser and driver
            floor_page.goto(url)
            cdp = floor_page.context.new_cdp_session(floor_page)
            button = floor_page.locator("#counter")

            def floor_step() -> None:
                button.click()
                cdp.send("Accessibility.getFullAXTree")

            contenders = [
                _Contender("plain BrowserGym (defaults)", lambda: plain.step(action["plain"]), plain=True),
                _Contender("plain BrowserGym (slow_mo 0, no delay)", lambda: tuned.step(action["plain"]), plain=True),
                _Contender("WebArenaEnv full", lambda: _checked(ours["full"].step(action["full"]))),
                _Contender("WebArenaEnv axtree", lambda: _checked(ours["axtree"].step(action["axtree"]))),
                _Contender("floor (click + AX tree)", floor_step),
            ]
            _interleave(contenders, rounds)
        finally:
            install_speedups()
            for env in envs:
                env.close()
    return _rows(contenders, n_nodes, rounds) + largest_page_rows(rounds)


LARGEST_PAGE_TASK = 100  # a store admin task: its orders grid is the local suite's largest page
LARGEST_PAGE_PATH = "/sales/order/"


def largest_page_rows(rounds: int) -> list[dict[str, Any]]:
    """The AX-tree step against its floor on the local suite's largest page, interleaved."""
    from urllib.parse import urlsplit

    from webarena_gym import envs
    from webarena_gym.envs.env import WebArenaEnv

    env = envs.make(f"webarena/local.{LARGEST_PAGE_TASK}", obs_mode="axtree", max_episode_steps=None)
    base = env.unwrapped  # the floor is measured on the env's own browser, beside the env's step
    assert isinstance(base, WebArenaEnv)
    try:
        obs, _ = env.reset(seed=0)
        start = urlsplit(obs["url"])
        obs, _ = base.goto(f"{start.scheme}://{start.netloc}{LARGEST_PAGE_PATH}")
        n_nodes = len(obs["axtree_object"]["nodes"])
        boxes = [
            node["browsergym_id"]
            for node in obs["axtree_object"]["nodes"]
            if node.get("role", {}).get("value") == "checkbox" and node.get("browsergym_id")
        ]
        row = 3  # a row's checkbox (the first is the grid's select-all)
        browser = base.browser
        assert browser is not None  # reset() launched it
        floor_context = browser.new_context(viewport=base.page.viewport_size)
        floor_context.add_cookies(base.context.cookies())
        floor_page = floor_context.new_page()
        floor_page.goto(obs["url"])
        cdp = floor_context.new_cdp_session(floor_page)
        floor_box = floor_page.get_by_role("checkbox").nth(row)

        def floor_step() -> None:
            floor_box.click()
            cdp.send("Accessibility.getFullAXTree")

        contenders = [
            _Contender("WebArenaEnv axtree", lambda: _checked(env.step(f"click('{boxes[row]}')"))),
            _Contender("floor (click + AX tree)", floor_step),
        ]
        _interleave(contenders, rounds)
        floor_context.close()
    finally:
        env.close()
    ours, floor = (_stats(c.samples)[0] for c in contenders)
    page = f"largest local page ({LARGEST_PAGE_PATH}, {n_nodes} AX nodes)"
    return [
        {"name": f"step median: WebArenaEnv axtree, {page}", "value": ours, "unit": "ms", "target": "",
         "note": f"{rounds} interleaved rounds"},
        {"name": f"step median: floor, {page}", "value": floor, "unit": "ms", "target": "", "note": ""},
        {"name": "ratio: WebArenaEnv axtree / floor, largest local page", "value": ours / floor, "unit": "x",
         "target": "<= 1.3", "note": "floor = one click + one full AX-tree fetch"},
    ]  # fmt: skip


def _checked(transition: tuple) -> None:
    error = transition[0]["last_action_error"]
    if error:
        raise RuntimeError(f"benchmark action failed: {error}")


def _interleave(contenders: list[_Contender], rounds: int) -> None:
    """One untimed warm-up step each, then ``rounds`` rounds taking the contenders in turn, so that a
    busy moment of the machine falls on all of them alike."""
    for contender in contenders:
        _timed(contender)
    for _ in range(rounds):
        for contender in contenders:
            contender.samples.append(_timed(contender))


def _timed(contender: _Contender) -> float:
    from webarena_gym.envs.playwright_patches import install_speedups, remove_speedups

    if contender.plain:
        remove_speedups()
    try:
        start = time.perf_counter()
        contender.step()
        return (time.perf_counter() - start) * 1000
    finally:
        install_speedups()


def _rows(contenders: list[_Contender], n_nodes: int, rounds: int) -> list[dict[str, Any]]:
    med = {c.name: _stats(c.samples)[0] for c in contenders}
    rows: list[dict[str, Any]] = [
        {
            "name": "page size",
            "value": n_nodes,
            "unit": "AX nodes",
            "target": "",
            "note": f"{rounds} interleaved rounds",
        }
    ]
    for contender in contenders:
        median, p90 = _stats(contender.samples)
        rows.append({"name": f"step median: {contender.name}", "value": median, "unit": "ms", "target": "", "note": ""})
        rows.append({"name": f"step p90: {contender.name}", "value": p90, "unit": "ms", "target": "", "note": ""})
    plain = med["plain BrowserGym (defaults)"]
    floor = med["floor (click + AX tree)"]
    rows += [
        {"name": "ratio: WebArenaEnv full / plain BrowserGym", "value": med["WebArenaEnv full"] / plain,
         "unit": "x", "target": "<= 0.25", "note": "medians, same run"},
        {"name": "ratio: WebArenaEnv axtree / plain BrowserGym", "value": med["WebArenaEnv axtree"] / plain,
         "unit": "x", "target": "<= 0.25", "note": "medians, same run"},
        {"name": "ratio: WebArenaEnv full / plain BrowserGym tuned",
         "value": med["WebArenaEnv full"] / med["plain BrowserGym (slow_mo 0, no delay)"], "unit": "x",
         "target": "", "note": "same observation, BrowserGym's own speed settings at their fastest"},
        {"name": "ratio: WebArenaEnv axtree / floor", "value": med["WebArenaEnv axtree"] / floor,
         "unit": "x", "target": "<= 1.3", "note": "floor = one click + one full AX-tree fetch"},
    ]  # fmt: skip
    return rows


if __name__ == "__main__":
    import json
    import sys

    for row in run(quick="--quick" in sys.argv[1:]):
        print(json.dumps(row, default=str))
