"""The browser runtime (envs/browser.py) and the marking edits (envs/observation.py) on a real Chromium."""

from __future__ import annotations

import inspect

import pytest
from browsergym.core.observation import extract_merged_axtree

from webarena_gym.envs import browser, playwright_patches
from webarena_gym.envs.extraction import (
    AXTreeReader,
    PageSessions,
    focused_element_bid,
    mark_elements,
    marking_script,
    unmark,
)

PAGE = """<!doctype html><html><body>
<button aria-description="adds to cart" id="add">Add</button>
<input id="qty" type="text" value="1" aria-label="Quantity">
<iframe srcdoc="<button id='inner'>Inner</button>"></iframe>
</body></html>"""


@pytest.fixture(scope="module")
def page(leased_browser):
    page = leased_browser.new_page()
    page.set_content(PAGE)
    page.frames[1].wait_for_load_state()
    yield page
    page.close()


def test_launch_options_use_the_system_chromium_and_quiet_flags(monkeypatch):
    monkeypatch.delenv(browser.CHROMIUM_ENV_VAR, raising=False)
    options = browser.launch_options(["--lang=en-US"])
    assert options["args"][0] == "--lang=en-US" and "--no-sandbox" in options["args"]
    assert options["executable_path"] == browser.find_chromium()
    monkeypatch.setenv(browser.CHROMIUM_ARGS_ENV_VAR, "--lang=en-US --mute-audio")
    assert browser.launch_options(["--lang=en-US"])["args"].count("--lang=en-US") == 1
    assert "--mute-audio" in browser.launch_options()["args"]
    monkeypatch.setenv(browser.CHROMIUM_ENV_VAR, "/nonexistent/chrome")
    with pytest.raises(browser.BrowserNotFoundError, match="not an executable"):
        browser.find_chromium()


def test_headless_runs_prefer_the_headless_shell(monkeypatch, tmp_path):
    monkeypatch.delenv(browser.CHROMIUM_ENV_VAR, raising=False)
    shell, full = tmp_path / "chromium-headless-shell", tmp_path / "chromium"
    for exe in (shell, full):
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    monkeypatch.setattr(browser, "_DEBIAN_HEADLESS_SHELL", shell)
    monkeypatch.setattr(browser, "_DEBIAN_REAL_BINARY", full)
    assert browser.find_chromium(headless=True) == str(shell)
    assert browser.find_chromium(headless=False) == str(full)
    assert browser.launch_options(headless=False)["executable_path"] == str(full)
    shell.unlink()
    monkeypatch.setenv("PATH", str(tmp_path))  # no shell anywhere: the full browser serves headless runs too
    assert browser.find_chromium(headless=True) == str(full)


def test_speedups_are_reversible_and_keep_results():
    import playwright._impl._connection as connection

    playwright_patches.install_speedups()
    assert connection.inspect.stack is not inspect.stack
    frames = connection.inspect.stack()
    assert frames[0].function == "test_speedups_are_reversible_and_keep_results" and frames[0].lineno > 0
    playwright_patches.remove_speedups()
    assert connection.inspect is inspect
    playwright_patches.install_speedups()


@pytest.mark.browser
def test_sticky_marks_give_the_same_tree_as_browsergym_and_unmark_cleanly(page):
    for with_visibility in (False, True):
        assert marking_script(with_visibility)[1] is True  # the edits applied to this BrowserGym version
        mark_elements(page, with_visibility=with_visibility)
        mark_elements(page, with_visibility=with_visibility)  # idempotent: marks are not stacked
        description = page.get_attribute("#add", "aria-description")
        assert description.startswith("browsergym_id_") and description.count("browsergym_id_") == 1
        assert description.endswith(" adds to cart")
        tree = extract_merged_axtree(page)
        named = {n["browsergym_id"]: n.get("name", {}).get("value") for n in tree["nodes"] if "browsergym_id" in n}
        assert "Add" in named.values() and "Quantity" in named.values()
        assert "Inner" in named.values()  # the iframe's tree is merged, its elements marked
        add = next(n for n in tree["nodes"] if n.get("name", {}).get("value") == "Add")
        assert add["description"]["value"] == "adds to cart"  # the page's own description survives
        unmark(page)
        assert page.get_attribute("#add", "aria-description") == "adds to cart"
        assert page.get_attribute("#add", "aria-roledescription") is None
        assert page.get_attribute("#add", "bid") is not None  # bids stay, as in BrowserGym


@pytest.mark.browser
def test_live_values_reach_the_dom_and_focus_is_reported(page):
    page.fill("#qty", "7")
    mark_elements(page, with_visibility=False)
    assert page.get_attribute("#qty", "value") == "7"
    assert focused_element_bid(page) == page.get_attribute("#qty", "bid")
    page.frames[1].focus("#inner")
    assert focused_element_bid(page) == page.frames[1].get_attribute("#inner", "bid")


@pytest.mark.browser
def test_ax_reader_matches_browsergym_on_a_single_frame_page(page):
    context = page.context.browser.new_context()
    single = context.new_page()
    try:
        single.set_content("<h1>Shop</h1><a href='#x' aria-description='go'>Link</a><input aria-label='Name'>")
        mark_elements(single, with_visibility=False)
        reader = AXTreeReader(PageSessions())
        ours, theirs = reader.read(single), extract_merged_axtree(single)
        assert ours == theirs
        assert {n["browsergym_id"] for n in ours["nodes"] if "browsergym_id" in n}
        single.fill("input", "Ada")  # later reads through the kept session see changes
        assert any(n.get("value", {}).get("value") == "Ada" for n in reader.read(single)["nodes"])
    finally:
        context.close()
