"""The observation wrapper on live pages: a plain BrowserGym env, and every page of the local suite.

The property test walks each available local site's main page and the pages it links to (through
``benchmarks.wrappers.local_pages``, the same crawl the benchmark measures), so it grows with
the suite without edits here.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest
from browsergym.core.spaces import Unicode

from webarena_gym.benchmarks.support.alignment import unreachable, word_retention
from webarena_gym.envs.browser import HeadlessChat
from webarena_gym.envs.playwright_patches import install_launch_patch
from webarena_gym.wrappers.observations.agentoccam import AgentOccamObservation, ObsConfig, TextTree, process_axtree

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = Path(__file__).parent / "data" / "axtrees" / "pages"


def _open_page(monkeypatch, page: str) -> AgentOccamObservation:
    """``browsergym/openended`` on a file:// page, without the chat window's second browser."""
    import browsergym.core  # noqa: F401  registers browsergym/openended
    import browsergym.core.env as bg_env

    install_launch_patch()
    monkeypatch.setattr(bg_env, "Chat", HeadlessChat)
    env = gym.make(
        "browsergym/openended",
        task_kwargs={"start_url": (PAGES / page).resolve().as_uri(), "goal": "Edit the account."},
        headless=True,
        slow_mo=0,
        pre_observation_delay=0.0,
    )
    return AgentOccamObservation(env)


@pytest.fixture
def openended(monkeypatch):
    wrapped = _open_page(monkeypatch, "forms.html")
    yield wrapped
    wrapped.close()


def test_date_fields_and_units_keep_their_words_on_a_real_page(monkeypatch):
    """Chromium's date input (named sub-fields "Month Month", a "Show date picker" button, all sharing
    the input's id) and a temperature written "156°F": every word, and the unit sign, survive the alignment."""
    env = _open_page(monkeypatch, "weather.html")
    try:
        obs, _ = env.reset(seed=0)
    finally:
        env.close()
    text, tree = obs["text"], obs["text_tree"]
    for label in ("Month", "Day", "Year"):
        assert f"spinbutton '{label}' [value:" in text  # the filled date shows its parts' values
        assert f"spinbutton '{label}' [required: False]" in text  # the empty one its placeholders below
    assert text.count("button 'Show date picker'") == 2 and "'Show date picker Show date picker'" not in text
    assert "156°F" in text and "128°F" in text
    kept = word_retention(obs["axtree_object"], tree.render(ids=False))
    assert kept.share == 1.0, kept.missing
    assert unreachable(obs["axtree_object"], tree) == []


def test_wrapper_on_a_plain_browsergym_env(openended):
    space = openended.observation_space
    assert space["text"] == Unicode() and "axtree_object" in space.spaces
    obs, _ = openended.reset(seed=0)
    assert space["text"].contains(obs["text"])
    tree = obs["text_tree"]
    assert isinstance(tree, TextTree) and obs["text"] == tree.render(ids=True)
    assert obs["text"].splitlines()[0] == "RootWebArea 'Edit Account Information'"
    first_name = next(n for n in tree.root.walk() if n.name == "First Name" and n.role == "textbox")
    assert f"textbox [{first_name.bid}] 'First Name' [value: Emma] [required: True]" in obs["text"]
    dropdown = next(n for n in tree.root.walk() if n.role == "combobox")
    mexico = next(
        bid
        for bid, parent in tree.option_parent.items()
        if parent == dropdown.bid and f"[{bid}] 'Mexico'" in obs["text"]
    )
    assert f"[{mexico}] 'Mexico' [selected" not in obs["text"]  # not the chosen one: no mark
    assert unreachable(obs["axtree_object"], tree) == []

    obs, *_ = openended.step(f"fill('{first_name.bid}', 'Zed')")
    assert not obs["last_action_error"]
    assert f"textbox [{first_name.bid}] 'First Name' [value: Zed] [required: True]" in obs["text"]
    obs, *_ = openended.step(f"select_option('{dropdown.bid}', 'Mexico')")
    assert f"[{mexico}] 'Mexico' [selected: True]" in obs["text"]
    history = obs["text_tree"].render(ids=False)
    assert "'Mexico' [selected: True]" in history and f"[{mexico}]" not in history


def test_config_switches_reach_the_wrapper(openended):
    plain = AgentOccamObservation(openended.env, ObsConfig.none())
    obs, _ = plain.reset(seed=0)
    assert "StaticText" in obs["text"] and "text '" not in obs["text"]  # no renaming, no passes


def test_properties_hold_on_every_local_suite_page():
    from browsergym.utils.obs import flatten_axtree_to_str

    from webarena_gym.benchmarks.wrappers import local_pages
    from webarena_gym.llm.tokens import gpt2_encoding

    enc = gpt2_encoding()
    seen, tokens = [], {}
    for page in local_pages(links_per_site=3):
        tree = process_axtree(page.axtree_object)
        assert unreachable(page.axtree_object, tree) == [], page.url
        retention = word_retention(page.axtree_object, tree.render(ids=False))
        assert retention.share >= 0.995, (page.url, retention.missing)
        aligned = len(enc.encode(tree.render(ids=True)))
        flat = len(enc.encode(flatten_axtree_to_str(page.axtree_object)))
        totals = tokens.setdefault(page.site, [0, 0])
        totals[0] += aligned
        totals[1] += flat
        seen.append(page.url)
    if not seen:
        pytest.skip("the local suite has no site yet")
    assert len(seen) >= 2 * len(tokens)  # the crawl reached beyond the main pages
    for site, (aligned, flat) in tokens.items():
        assert aligned <= 0.5 * flat, (site, aligned, flat)
