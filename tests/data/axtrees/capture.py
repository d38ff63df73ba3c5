"""Regenerate the captured trees: ``python tests/data/axtrees/capture.py``.

Each hand-written page in ``pages/`` is opened in the project's Chromium and its BrowserGym
``axtree_object`` (plus extra element properties) is written next to it as ``<page>.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import sync_playwright

from envs.browser import install_launch_patch
from wrappers.axtree_capture import capture_axtree

HERE = Path(__file__).parent


def main() -> None:
    install_launch_patch()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        for html in sorted((HERE / "pages").glob("*.html")):
            page.goto(html.resolve().as_uri())
            data = capture_axtree(page, extra_properties=True)
            (HERE / f"{html.stem}.json").write_text(json.dumps(data, indent=0, sort_keys=True))
            print(html.stem, len(data["axtree_object"]["nodes"]), "nodes")
        browser.close()


if __name__ == "__main__":
    main()
