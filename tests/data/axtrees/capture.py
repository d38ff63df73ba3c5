"""Regenerate the captured trees: ``python tests/data/axtrees/capture.py [--local]``.

Each hand-written page in ``pages/`` is opened in the project's Chromium and its BrowserGym
``axtree_object`` (plus extra element properties) is written as ``<page>.json``. With ``--local``,
the main page of every available local-suite site is captured as ``local_<site>.json`` (tree only).
The expected aligned renderings (``*.aligned.txt``) are written for every capture; review their
diff before committing. Only the name ``sources`` (how Chromium computed each name) are left out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from webarena_gym.benchmarks.support.axtree_capture import capture_axtree
from webarena_gym.envs.playwright_patches import install_launch_patch
from webarena_gym.wrappers.observations.agentoccam import process_axtree

HERE = Path(__file__).parent


def save(stem: str, data: dict) -> None:
    for node in data["axtree_object"]["nodes"]:  # name sources (how Chromium computed it): bulk, unused
        node.get("name", {}).pop("sources", None)
    (HERE / f"{stem}.json").write_text(json.dumps(data, separators=(",", ":"), sort_keys=True))
    aligned = process_axtree(data["axtree_object"]).render(ids=True)
    (HERE / f"{stem}.aligned.txt").write_text(aligned + "\n")
    print(stem, len(data["axtree_object"]["nodes"]), "nodes")


def capture_local() -> None:
    from webarena_gym.benchmarks.wrappers import local_pages

    for page in local_pages(links_per_site=0):
        save(f"local_{page.site}", {"axtree_object": page.axtree_object, "extra_element_properties": {}})


def main() -> None:
    if "--local" in sys.argv[1:]:
        capture_local()
        return
    install_launch_patch()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        for html in sorted((HERE / "pages").glob("*.html")):
            page.goto(html.resolve().as_uri())
            save(html.stem, capture_axtree(page, extra_properties=True))
        browser.close()


if __name__ == "__main__":
    main()
