"""Presets: each ablation row's observation/action spaces, and a task solved through both AgentOccam
wrappers (real Chromium on the file:// probe site of test_wrappers_action; local-suite tasks are in
test_wrappers_presets_local)."""

from __future__ import annotations

import numpy as np
import pytest
from test_wrappers_action import bid, make_probe_env

from webarena_gym.wrappers.presets import PRESETS, get_preset, make_env, paired_action_mapping

BELOW_THE_FOLD = "Bottom button"  # sits 3000px down the probe page


@pytest.fixture(scope="module")
def base_env(tmp_path_factory):
    env = make_probe_env(tmp_path_factory.mktemp("presets"))
    yield env
    env.close()


def test_preset_table():
    assert set(PRESETS) >= {"webarena", "reduced_actions", "no_scroll", "simplified_obs", "agentoccam", "set_of_marks"}
    with_scroll = {name for name, p in PRESETS.items() if "scroll" in p.actions}
    planning = {name for name, p in PRESETS.items() if {"branch", "prune"} <= set(p.actions)}
    assert with_scroll == {"webarena", "reduced_actions", "set_of_marks"} and planning == {"agentoccam"}
    assert PRESETS["set_of_marks"].actions == ("click", "type", "scroll", "goto", "stop")  # Plan-MCTS's space
    assert {"hover", "press", "goto", "go_forward", "tab_focus"} <= set(PRESETS["webarena"].actions)
    assert "note" not in PRESETS["webarena"].actions and "go_home" in PRESETS["agentoccam"].actions
    assert PRESETS["simplified_obs"].actions == PRESETS["no_scroll"].actions
    with pytest.raises(KeyError, match="known presets"):
        get_preset("nope")


def test_presets_observe_only_what_they_read():
    # viewport presets need BrowserGym's element visibility (the DOM snapshot), Set-of-Marks the
    # screenshot too, the simplified-HTML presets the DOM snapshot; the full-page text ones read the AX
    # tree only; only Set-of-Marks reads pixels
    viewport = {name for name, p in PRESETS.items() if not p.full_page_ids}
    html = {name for name, p in PRESETS.items() if p.html is not None}
    assert {name: p.obs_mode for name, p in PRESETS.items()} == {
        name: "full" if name == "set_of_marks" else "dom" if name in viewport | html else "axtree" for name in PRESETS
    }
    assert viewport == {"webarena", "reduced_actions", "set_of_marks"} and html == {"plan_and_act"}
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
    assert full_page == preset.full_page_ids  # rows before "no scrolling" and Set-of-Marks: the viewport's ids
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
def test_no_scroll_changes_only_the_page_scope_of_reduced_actions(base_env):
    # The ablation step from "fewer actions" to "no scrolling" takes scroll away and shows the whole
    # page: same text format, same 500-line cap, nothing else.
    reduced, whole = PRESETS["reduced_actions"], PRESETS["no_scroll"]
    assert (reduced.obs_config, whole.obs_config, reduced.raw_lines, whole.raw_lines) == (None, None, 500, 500)
    assert set(reduced.actions) - set(whole.actions) == {"scroll"} and set(whole.actions) <= set(reduced.actions)
    seen = {}
    for preset in (reduced, whole):
        obs, _ = preset.wrap(base_env).reset(seed=0)
        seen[preset.name] = [line.strip() for line in obs["text"].splitlines()]
    assert len(seen["no_scroll"]) > len(seen["reduced_actions"])
    # the viewport's lines, each exactly as the whole page writes it (indentation aside: an element
    # cut off by the viewport lifts its visible children a level up)
    assert set(seen["reduced_actions"]) <= set(seen["no_scroll"])
    assert seen["reduced_actions"][1].startswith("[")  # WebArena's "[id] role 'name'" lines


def test_set_of_marks_draws_the_usable_ids_of_the_viewport_and_scroll_reaches_the_rest(base_env):
    env = PRESETS["set_of_marks"].wrap(base_env)
    obs, _ = env.reset(seed=0)
    shot, marked, usable = obs["som_screenshot"], set(obs["som_ids"]), obs["text_tree"].ids
    assert shot.shape == obs["screenshot"].shape and not np.array_equal(shot, obs["screenshot"])
    go, blue = bid(obs, "button", "Go"), bid(obs, "option", "Blue [dark]")
    assert go in marked and marked <= usable  # every drawn id is usable
    assert blue in usable and blue not in marked  # a closed dropdown's options: usable, never drawn
    bottom = bid(obs, "button", BELOW_THE_FOLD)
    assert "'Bottom button'" in obs["text"] and bottom not in usable  # readable, not yet actionable
    for _ in range(8):
        if bottom in obs["som_ids"]:
            break
        obs, *_ = env.step("scroll [down]")
    assert bottom in obs["som_ids"] and f"button [{bottom}] 'Bottom button'" in obs["text"]
    assert go not in obs["text_tree"].ids  # scrolled out of view: its id is gone
    obs, *_ = env.step(f"click [{bottom}]")
    assert obs["last_action_error"] == "" and "'bottom'" in obs["text"]


def test_set_of_marks_draws_a_page_shown_again_once(base_env):
    # A restore (or a reset) shows a page seen before: its drawing is kept, not drawn again, and shared
    # read-only; a page that looks different is drawn anew.
    env = PRESETS["set_of_marks"].wrap(base_env)
    first, _ = env.reset(seed=0)
    again, _ = env.reset(seed=0)
    assert np.array_equal(again["screenshot"], first["screenshot"])
    assert again["som_screenshot"] is first["som_screenshot"] and not first["som_screenshot"].flags.writeable
    scrolled, *_ = env.step("scroll [down]")
    assert not np.array_equal(scrolled["som_screenshot"], first["som_screenshot"])


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


def test_agentoccams_presets_open_the_papers_viewport_unless_told_otherwise():
    def viewport(env_id: str, preset: str, **kwargs):
        env = make_env(env_id, preset, **kwargs)  # no browser before reset
        try:
            return env.unwrapped.viewport
        finally:
            env.close()

    for name in ("reduced_actions", "no_scroll", "simplified_obs", "history", "agentoccam"):
        assert viewport("webarena/local.0", name) == {"width": 1920, "height": 1080}
    assert viewport("webarena/local.0", "webarena") is None  # WebArena's agent: the task's 1280x720
    assert viewport("webarena/local.0", "agentoccam", viewport={"width": 1280, "height": 720})["width"] == 1280
    assert viewport("miniwob/click-test", "agentoccam") is None  # MiniWoB++ keeps its own size


@pytest.mark.browser
@pytest.mark.parametrize("name", ["webarena", "reduced_actions", "no_scroll"])
def test_the_rows_before_the_alignment_show_webarenas_tree_text(base_env, name):
    import re

    obs, _ = PRESETS[name].wrap(base_env).reset(seed=0)
    lines = obs["text"].splitlines()
    webarena_line = re.compile(r"^\t*(\[\w+\] )?[A-Za-z]+ ('.*'|\".*\")( \w+: \S.*)?$")
    assert lines and all(webarena_line.match(line) for line in lines), [x for x in lines if not webarena_line.match(x)]
    assert not [line for line in lines if re.search(r"InlineTextBox|LineBreak|StaticText ''|url[=:]", line)]
