"""Benchmark of the AgentOccam observation wrapper: tokens against BrowserGym's flat tree, and time.

For every page of the local suite (each site's main page plus the first pages it links to) the
page's ``axtree_object`` is captured from a real Chromium, then both BrowserGym's
``flatten_axtree_to_str`` of the same full page and our aligned text are counted in cl100k tokens.
Targets (issue 4): aligned tokens at most 0.5x the flattened tree's, at most 5 ms median per page.
Run: ``python -m benchmarks.wrappers [--quick]``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlparse

CAPTURED_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "axtrees"
# Links a crawler must not follow: they change state even on GET in some web apps.
_UNSAFE_LINK_WORDS = ("logout", "log_out", "signout", "sign_out", "delete", "remove")


@dataclass
class CapturedPage:
    site: str
    url: str
    axtree_object: dict[str, Any]


def cl100k() -> Any:
    """tiktoken's cl100k_base without network: litellm ships the encoding file."""
    import tiktoken

    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.origin and "TIKTOKEN_CACHE_DIR" not in os.environ:
        bundled = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
        if bundled.is_dir():
            os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
    return tiktoken.get_encoding("cl100k_base")


def _same_site_links(page: Any, base: str, limit: int) -> list[str]:
    if limit <= 0:
        return []
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    origin = urlparse(base).netloc
    seen: list[str] = []
    for href in hrefs:
        url = urljoin(page.url, href).split("#")[0]
        if urlparse(url).netloc != origin or any(w in url.lower() for w in _UNSAFE_LINK_WORDS):
            continue
        if url not in seen and url.rstrip("/") != base.rstrip("/"):
            seen.append(url)
        if len(seen) >= limit:
            break
    return seen


def local_pages(links_per_site: int = 4) -> Iterator[CapturedPage]:
    """Capture each local site's main page and up to ``links_per_site`` pages it links to.

    The browser is logged into every site with an account (through the site host's own login), so
    the crawl sees what an agent sees. Yields nothing when the local suite has no site yet; starts
    its own servers and browser and stops them when the iteration ends.
    """
    from envs.browser import acquire_playwright, release_playwright
    from envs.local.host import LocalSiteHost
    from envs.local.sites import available_sites

    sites = available_sites()
    if not sites:
        return
    host = LocalSiteHost(sites)
    # BrowserGym's process-wide Playwright: a second sync driver in the same thread would fail.
    pw = acquire_playwright()
    try:
        urls = host.urls()
        browser = pw.chromium.launch(headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            host.login(context, list(urls))
            yield from _crawl(context.new_page(), urls, links_per_site)
        finally:
            browser.close()
    finally:
        host.close()
        release_playwright()


def _crawl(page: Any, urls: dict[str, str], links_per_site: int) -> Iterator[CapturedPage]:
    from benchmarks.support.axtree_capture import capture_axtree

    for site, base in urls.items():
        page.goto(base, wait_until="load")
        links = _same_site_links(page, base, links_per_site)
        yield CapturedPage(site, page.url, capture_axtree(page)["axtree_object"])
        for url in links:
            page.goto(url, wait_until="load")
            yield CapturedPage(site, page.url, capture_axtree(page)["axtree_object"])


def captured_pages() -> Iterator[CapturedPage]:
    """The hand-written pages captured in ``tests/data/axtrees`` (always available)."""
    for path in sorted(CAPTURED_DIR.glob("*.json")):
        yield CapturedPage("captured", path.stem, json.loads(path.read_text())["axtree_object"])


def measure(pages: list[CapturedPage], repeats: int) -> list[dict[str, Any]]:
    """Rows: aligned/flat token ratio per site, and the wrapper's median time per page."""
    from browsergym.utils.obs import flatten_axtree_to_str

    from wrappers.observations.agentoccam import ObsConfig, process_axtree

    enc = cl100k()
    unaligned = ObsConfig.none(max_lines=10**9)
    per_site: dict[str, list[tuple[int, int, int]]] = {}
    times: list[float] = []  # CPU time of this thread: other processes' load must not count
    walls: list[float] = []
    for p in pages:
        for _ in range(repeats):
            start, wall = time.thread_time(), time.perf_counter()
            text = process_axtree(p.axtree_object).render(ids=True)
            times.append(time.thread_time() - start)
            walls.append(time.perf_counter() - wall)
        flat = flatten_axtree_to_str(p.axtree_object)
        plain = process_axtree(p.axtree_object, unaligned).render(ids=True)
        per_site.setdefault(p.site, []).append((len(enc.encode(text)), len(enc.encode(flat)), len(enc.encode(plain))))
    rows = []
    for site, counts in per_site.items():
        aligned, flat, plain = (sum(c[i] for c in counts) for i in range(3))
        rows.append(
            {
                "name": f"obs_tokens_ratio.{site}",
                "value": round(aligned / max(flat, 1), 3),
                "unit": "x flatten_axtree_to_str",
                "target": "<= 0.5",
                "note": f"{len(counts)} pages, {aligned} vs {flat} cl100k tokens (full page)",
            }
        )
        # BrowserGym's default flattening also prints inline text boxes and link URLs; this row
        # isolates the passes: the same normalised tree with every pass off, uncapped.
        rows.append(
            {
                "name": f"obs_tokens_ratio_vs_passes_off.{site}",
                "value": round(aligned / max(plain, 1), 3),
                "unit": "x ObsConfig.none()",
                "target": "informative",
                "note": f"{aligned} vs {plain} cl100k tokens",
            }
        )
    if times:
        rows.append(
            {
                "name": "obs_wrapper_ms_per_page",
                "value": round(statistics.median(times) * 1000, 3),
                "unit": "ms CPU (median)",
                "target": "<= 5",
                "note": f"{len(pages)} pages x {repeats}; max {max(times) * 1000:.2f} ms; "
                f"wall-clock median {statistics.median(walls) * 1000:.2f} ms",
            }
        )
    return rows


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Benchmark rows over the local suite's pages (and the captured hand-written pages)."""
    pages = list(captured_pages())
    try:
        pages += list(local_pages(links_per_site=1 if quick else 6))
    except Exception as exc:  # the local suite is optional for this benchmark; say why it is missing
        print(f"bench_wrappers: local suite unavailable: {exc}", file=sys.stderr)
    return measure(pages, repeats=3 if quick else 20)


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv[1:]):
        print(json.dumps(row))
