"""Presets: each ablation row's observation/action spaces, and a task solved through both AgentOccam
wrappers (real Chromium on the file:// probe site of test_wrappers_action; local-suite tasks are in
test_wrappers_presets_local)."""

from __future__ import annotations

import pytest
from test_wrappers_action import bid, make_probe_env

from wrappers.presets import PRESETS, get_preset, make_env, paired_action_mapping

BELOW_THE_FOLD = "Bottom button"  # sits 3000px down the probe page


@pytest.fixture(scope="module")
def base_env(tmp_path_factory):
    env = make_probe_env(tmp_path_factory.mktemp("presets"))
    yield env
    env.close()


def test_preset_table():
    assert set(PRESETS) >= {"webarena", "reduced_actions", "no_scroll", "simplified_obs", "agentoccam"}
    with_scroll = {name for name, p in PRESETS.items() if "scroll" in p.actions}
    planning = {name for name, p in PRESETS.items() if {"branch", "prune"} <= set(p.actions)}
    assert with_scroll == {"webarena", "reduced_actions"} and planning == {"agentoccam"}
    assert {"hover", "press", "goto", "go_forward", "tab_focus"} <= set(PRESETS["webarena"].actions)
    assert "note" not in PRESETS["webarena"].actions and "go_home" in PRESETS["agentoccam"].actions
    assert PRESETS["simplified_obs"].actions == PRESETS["no_scroll"].actions
    with pytest.raises(KeyError, match="known presets"):
        get_preset("nope")


def test_presets_observe_only_what_they_read():
    # viewport presets need BrowserGym's element visibility; the full-page ones read the AX tree only
    # (the simplified-HTML presets read the DOM snapshot); none reads the screenshot
    viewport = {name for name, p in PRESETS.items() if p.obs_config is None and p.html is None}
    html = {name for name, p in PRESETS.items() if p.html is not None}
    assert {name: p.obs_mode for name, p in PRESETS.items()} == {
        name: "dom" if name in viewport | html else "axtree" for name in PRESETS
    }
    assert viewport == {"webarena", "reduced_actions"} and html == {"plan_and_act"}
    for kwargs, expected in (({}, "axtree"), ({"obs_mode": "full"}, "full")):
        env = make_env("webarena/local.0", "agentoccam", **kwargs)  # no browser before reset
        assert env.unwrapped.obs_mode == expected
        env.close()


def test_paired_action_mapping_runs_fill_and_enter_in_one_step():
    code = paired_action_mapping()("fill('5', 'blue shoes')\npress('5', 'Enter')")
    assert code.rstrip().endswith("fill('5', 'blue shoes')\npress('5', 'Enter')")


@pytest.mark.browser
@pytest.mark.parametrize("name", [name for name, p in PRESETS.items() if p.html is None])  # bracketed grammar
def test_preset_spaces_on_a_page(base_env, name):
    preset = PRESETS[name]
    env = preset.wrap(base_env)
    obs, info = env.reset(seed=0)
    # single-site task: go_home is dropped, everything else of the preset is offered
    assert info["commands"] == [c for c in preset.actions if c != "go_home"]
    bottom = bid(obs, "button", BELOW_THE_FOLD)
    full_page = f"[{bottom}]" in obs["text"]
    assert full_page == (preset.obs_config is not None)  # vanilla rows see the viewport only
    obs, _, _, _, info = env.step(f"click [{bottom}]")  # usable iff shown
    assert ("not on the current page" in info.get("action_error", "")) == (not full_page)
    assert ("'bottom'" in obs["text"]) == full_page  # the button's effect, read back from the page
    assert (obs["text_tree"] is None) == (preset.obs_config is None)
    if preset.obs_config is not None and preset.obs_config.fold_options:
        # options are folded into their dropdown's line with their own ids; the dropdown shows none
        assert f"[{bid(obs, 'option', 'Express')}] 'Express'" in obs["text"]
        assert f"[{bid(obs, 'listbox', 'Shipping')}]" not in obs["text"]
        obs, _, _, _, info = env.step(f"click [{bid(obs, 'listbox', 'Shipping')}]")
        assert "not on the current page" in info["action_error"]
    if "scroll" not in preset.actions:
        obs, _, _, _, info = env.step("scroll [down]")
        assert "not available here" in obs["last_action_error"]


@pytest.mark.browser
def test_probe_task_solved_through_both_agentoccam_wrappers(base_env):
    env = PRESETS["agentoccam"].wrap(base_env)
    obs, _ = env.reset(seed=0)
    search, blue, express = (
        bid(obs, "textbox", "Search"),
        bid(obs, "option", "Blue [dark]"),
        bid(obs, "option", "Express"),
    )
    for element in (search, blue, express):
        assert f"[{element}]" in obs["text"]  # every id used below is one the model was shown
    for action in (
        f"type [{search}] [blue shoes]",
        f"click [{blue}]",
        f"click [{express}]",
        "branch [0] [read the code]",
    ):
        obs, reward, terminated, _, info = env.step(action)
        assert obs["last_action_error"] == "" and not terminated, action
    assert info["memory_action"] == {"name": "branch", "args": ["0", "read the code"]}
    assert "text 'searched blue shoes'" in obs["text"] and "text 'express'" in obs["text"]
    obs, *_ = env.step(f"click [{bid(obs, 'link', 'Details')}]")
    assert "7731" in obs["text"]
    obs, reward, terminated, truncated, info = env.step("stop [7731]")
    assert (reward, terminated, info["browser_action"]) == (1.0, True, "send_msg_to_user('7731')")
