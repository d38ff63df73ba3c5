"""AgentOccam action wrapper: parser units and fuzz, translation of every command, errors that leave the
browser untouched, and a small task solved end to end with commands (real Chromium, file:// pages)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webarena_gym.wrappers.actions.agentoccam import (
    AGENTOCCAM_COMMANDS,
    WEBARENA_COMMANDS,
    ActionConfig,
    AgentOccamActions,
    _type_ahead,
)
from webarena_gym.wrappers.actions.grammar import (
    COMMAND_SPECS,
    Command,
    InvalidActionError,
    parse_action,
    parse_command,
)

# ------------------------------------------------------------------------------------------------
# A small two-page site and a BrowserGym task over it (shared with the presets and numeric tests).

PAGE = """<!doctype html><html><head><title>Probe shop</title></head><body>
<h1>Probe shop</h1>
<form onsubmit="document.getElementById('out').textContent = 'searched ' + document.getElementById('q').value;
  return false;">
  <input id="q" type="text" aria-label="Search" value="old text">
  <button type="submit">Go</button>
</form>
<label>Color <select id="color"><option>Red</option><option>Blue [dark]</option></select></label>
<div role="listbox" aria-label="Shipping">
  <div role="option" onclick="document.getElementById('ship').textContent = 'express'">Express</div>
  <div role="option" onclick="document.getElementById('ship').textContent = 'standard'">Standard</div>
</div>
<a href="page2.html">Details</a>
<p id="out">nothing searched</p><p id="ship">no shipping</p>
<div style="height: 3000px"></div>
<button onclick="document.getElementById('out').textContent = 'bottom'">Bottom button</button>
</body></html>"""
PAGE2 = (
    "<!doctype html><html><head><title>Details</title></head><body><h1>Details page</h1><p>Code: 7731</p></body></html>"
)


def write_site(directory: Path) -> str:
    (directory / "index.html").write_text(PAGE)
    (directory / "page2.html").write_text(PAGE2)
    return (directory / "index.html").as_uri()


def probe_task_class():
    """A BrowserGym task: search 'blue shoes', pick Blue, choose express, answer the code on page 2."""
    from browsergym.core.task import AbstractBrowserTask

    class ProbeTask(AbstractBrowserTask):
        @classmethod
        def get_task_id(cls):
            return "wrappers.probe"

        def __init__(self, seed: int, start_url: str):
            super().__init__(seed)
            self.start_url, self.slow_mo, self.timeout = start_url, 0, 5000
            self.form: tuple[str, str, str] | None = None

        def setup(self, page):
            page.goto(self.start_url)
            return "Search for blue shoes, pick the color Blue, choose express shipping and report the code.", {}

        def validate(self, page, chat_messages):
            if page.url == self.start_url:  # remember the form while it is on screen
                self.form = (page.input_value("#color"), page.inner_text("#out"), page.inner_text("#ship"))
            roles = [m["role"] for m in chat_messages]
            goal_at = roles.index("user") if "user" in roles else len(roles)  # BrowserGym greets first
            answers = [m["message"] for m in chat_messages[goal_at:] if m["role"] == "assistant"]
            if not answers:
                return 0.0, False, "", {}
            solved = answers[-1] == "7731" and self.form == ("Blue [dark]", "searched blue shoes", "express")
            return float(solved), True, "", {}

    return ProbeTask


_PLAYWRIGHT_LEASE = False


def make_probe_env(directory: Path, multiaction: bool = True) -> gym.Env:
    """The raw BrowserGym env over the probe site (no chat window, no sleeps)."""
    import browsergym.core.env as bg_env
    from browsergym.core.action.highlevel import HighLevelActionSet

    from webarena_gym.envs.browser import HeadlessChat, acquire_playwright

    global _PLAYWRIGHT_LEASE
    if not _PLAYWRIGHT_LEASE:
        # A raw BrowserEnv shares the process-wide Playwright driver without a lease; hold one for the
        # process so a WebArenaEnv closing in the meantime does not stop the driver under it.
        _PLAYWRIGHT_LEASE = acquire_playwright() is not None
    bg_env.Chat = HeadlessChat  # one Chromium per env in tests
    actions = HighLevelActionSet(subsets=["chat", "infeas", "bid", "nav", "tab"], multiaction=multiaction)
    return bg_env.BrowserEnv(
        task_entrypoint=probe_task_class(),
        task_kwargs={"start_url": write_site(directory)},
        headless=True,
        pre_observation_delay=0.0,
        action_mapping=actions.to_python_code,
    )


def bid(obs: dict, role: str, name: str) -> str:
    """The BrowserGym id of the first raw-tree node with this role and name."""
    for node in obs["axtree_object"]["nodes"]:
        if node.get("role", {}).get("value") == role and node.get("name", {}).get("value") == name:
            if node.get("browsergym_id"):
                return node["browsergym_id"]
    raise AssertionError(f"no {role} {name!r} on the page")


# ------------------------------------------------------------------------------------------------
# Parser units


@pytest.mark.parametrize(
    "text, expected",
    [
        ("click [12]", Command("click", ("12",))),
        ("  click[a12]  ", Command("click", ("a12",))),
        ("type [3] [blue shoes]", Command("type", ("3", "blue shoes", "1"))),
        ("type [3] [blue shoes] [0]", Command("type", ("3", "blue shoes", "0"))),
        ("type [3] [x] [press_enter_after=0]", Command("type", ("3", "x", "0"))),
        ("type [3] [size [10]]", Command("type", ("3", "size [10]", "1"))),
        ("type [3] [a] [1] [0]", Command("type", ("3", "a] [1", "0"))),
        ("type [3] [two\nlines] [0]", Command("type", ("3", "two\nlines", "0"))),
        ("type [3] []", Command("type", ("3", "", "1"))),
        ("stop", Command("stop", ("",))),
        ("stop [N/A: no order [#17] exists]", Command("stop", ("N/A: no order [#17] exists",))),
        ("note [total is $5] for May]", Command("note", ("total is $5] for May",))),
        ("branch [0] [Find the order]", Command("branch", ("0", "Find the order"))),
        ("prune [2] [dead end]", Command("prune", ("2", "dead end"))),
        ("go_back", Command("go_back")),
        ("go_home", Command("go_home")),
        ("scroll [down]", Command("scroll", ("down", ""))),
        ("scroll [up] [look above]", Command("scroll", ("up", "look above"))),
        ("hover [7]", Command("hover", ("7",))),
        ("press [Control+a]", Command("press", ("Control+a",))),
        ("new_tab", Command("new_tab")),
        ("tab_focus [1]", Command("tab_focus", ("1",))),
        ("close_tab", Command("close_tab")),
        ("goto [http://x.test/a?b=[c]]", None),  # a URL ends at its first ']'
        ("goto [http://x.test/a?b=1]", Command("goto", ("http://x.test/a?b=1",))),
        ("go_forward", Command("go_forward")),
    ],
)
def test_parse_command(text, expected):
    if expected is None:
        with pytest.raises(InvalidActionError):
            parse_command(text)
    else:
        assert parse_command(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("Click [3]", "unknown action 'Click'"),
        ("jump [3]", "unknown action 'jump'"),
        ("click 3", "expected '['"),
        ("click [3", "no closing"),
        ("click [three]", "[id] must be id"),
        ("click [3] [4]", "unexpected text"),
        ("click5", "unknown action"),
        ("click-[5]", "unexpected '-'"),
        ("type [3]", "missing argument [content]"),
        ("type [3] [x] [2]", None),  # '[2]' is no flag, so the content runs to the last ']'
        ("scroll [left]", "[down|up] must be down or up"),
        ("tab_focus [-1]", "must be integer"),
        ("goto [http://a b]", "must be url"),
        ("branch [x] [y]", "must be integer"),
        ("[12]", "starts with a command name"),
    ],
)
def test_parse_errors(text, message):
    if message is None:
        assert parse_command(text) == Command("type", ("3", "x] [2", "1"))
        return
    with pytest.raises(InvalidActionError, match=message.replace("[", r"\[").replace("|", r"\|")):
        parse_command(text)


def test_disabled_command_is_rejected_with_the_enabled_list():
    with pytest.raises(InvalidActionError, match=r"not available here 'scroll'.*click, type, stop"):
        parse_command("scroll [down]", AGENTOCCAM_COMMANDS)
    assert set(WEBARENA_COMMANDS) <= set(COMMAND_SPECS) and set(AGENTOCCAM_COMMANDS) <= set(COMMAND_SPECS)


@pytest.mark.parametrize("value", [None, 12, b"click [1]", ["click [1]"]])
def test_non_text_actions_are_rejected(value):
    with pytest.raises(InvalidActionError, match="must be text"):
        parse_action(value)


def test_multi_line_action_splits_at_command_lines_only():
    commands = parse_action("note [price: $5\nclick the cheaper one later]\nclick [12]")
    assert commands == [Command("note", ("price: $5\nclick the cheaper one later",)), Command("click", ("12",))]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("[] \n\t01azAZ_-+=:/.") + list(COMMAND_SPECS)), max_size=30))
def test_fuzz_parser_raises_only_its_own_error(tokens):
    text = "".join(tokens)
    try:
        commands = parse_action(text)
    except InvalidActionError:
        return
    for command in commands:  # every accepted command has its full, schema-sized argument list
        assert len(command.args) == len(COMMAND_SPECS[command.name].params)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80))
def test_fuzz_parser_on_arbitrary_unicode(text):
    for candidate in (text, f"type [3] [{text}]", f"stop [{text}]", f"click [{text}]"):
        try:
            parse_action(candidate)
        except InvalidActionError:
            pass


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_fuzz_typed_content_reaches_browsergym_intact(content):
    """Whatever the LLM types (quotes, brackets, newlines, '#') arrives unchanged in BrowserGym's fill()."""
    from browsergym.core.action.parsers import highlevel_action_parser

    from webarena_gym.wrappers.actions.agentoccam import _call

    command = parse_command(f"type [5] [{content}] [0]")
    assert command.args == ("5", content, "0")
    calls = highlevel_action_parser.parse_string(_call("fill", "5", command.args[1]), parse_all=True).as_list()
    assert calls == [["fill", ["5", content]]]


# ------------------------------------------------------------------------------------------------
# Translation and execution on a real browser


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    env = AgentOccamActions(
        make_probe_env(tmp_path_factory.mktemp("probe")), ActionConfig(WEBARENA_COMMANDS + ("note", "branch", "prune"))
    )
    obs, info = env.reset(seed=0)
    yield env, obs
    env.close()


@pytest.mark.browser
def test_translation_of_every_command(probe):
    env, obs = probe
    search, color = bid(obs, "textbox", "Search"), bid(obs, "combobox", "Color")
    blue, express, link = bid(obs, "option", "Blue [dark]"), bid(obs, "option", "Express"), bid(obs, "link", "Details")
    height = env.unwrapped.page.viewport_size["height"]
    cases = {
        f"click [{link}]": [f"click('{link}')"],
        f"click [{blue}]": [f"select_option('{color}', 'Blue [dark]')"],  # native <select> option
        f"click [{express}]": [f"click('{express}')"],  # ARIA listbox option: a plain click
        f"type [{search}] [it's [new]]": [f"fill('{search}', \"it's [new]\")", f"press('{search}', 'Enter')"],
        f"type [{search}] [x] [0]": [f"fill('{search}', 'x')"],
        # a native <select> (Red chosen): where Chromium's type-ahead lands, key by key, case aside
        f"type [{color}] [blue] [1]": [f"select_option('{color}', 'Blue [dark]')"],
        f"type [{color}] [RED]": [f"select_option('{color}', 'Red')"],
        f"hover [{link}]": [f"hover('{link}')"],
        "scroll [down]": [f"scroll(0, {height})"],
        "scroll [up]": [f"scroll(0, {-height})"],
        "stop [N/A: not sold here]": ["send_msg_to_user('N/A: not sold here')"],
        "stop": ["send_msg_to_user('')"],
        "go_back": ["go_back()"],
        "go_forward": ["go_forward()"],
        "new_tab": ["new_tab()"],
        "close_tab": ["tab_close()"],
        "tab_focus [0]": ["tab_focus(0)"],
        "goto [file:///tmp/x.html]": ["goto('file:///tmp/x.html')"],
    }
    for text, expected in cases.items():
        assert env.translate(parse_command(text)) == expected, text
    # no keyboard_press in this action set: the key goes to the focused element (the document body here)
    focused = obs["focused_element_bid"]
    assert focused and env.translate(parse_command("press [Control+a]")) == [f"press('{focused}', 'Control+a')"]
    dark = r"no option of the dropdown \[\d+\] starts with 'dark'; 'Blue \[dark\]' contains it; its options"
    with pytest.raises(InvalidActionError, match=dark):
        env.translate(parse_command(f"type [{color}] [dark]"))
    with pytest.raises(InvalidActionError, match="no tab 3"):
        env.translate(parse_command("tab_focus [3]"))
    with pytest.raises(InvalidActionError, match="full http"):
        env.translate(parse_command("goto [javascript:alert(1)]"))


def test_type_ahead_moves_key_by_key_from_the_chosen_option_as_chromium_does():
    sizes = ["Select...", "S", "M", "L", "XL", "XS"]
    assert _type_ahead((sizes, 0), "9", "S") == "S"  # one key: the next option after the chosen one it begins
    assert _type_ahead((sizes, 0), "9", "Sel") == "Select..."  # a run: from the chosen one on
    assert _type_ahead((sizes, 1), "9", "x") == "XL"
    assert _type_ahead((sizes, 4), "9", "x") == "XS"  # from XL on, the next one x begins
    assert _type_ahead((sizes, 5), "9", "xs") == "XS"
    assert _type_ahead((sizes, 0), "9", "xx") == "XS"  # the same key again: the next option it begins
    assert _type_ahead((sizes, 0), "9", "xxx") == "XL"  # ... cycling round
    assert _type_ahead((sizes, 0), "9", "se") == "Select..."  # a run of two keys searches for both
    assert _type_ahead((sizes, 2), "9", "") == "M"  # no key: the choice stays
    with pytest.raises(InvalidActionError):  # "dd" ending a run is no repeat of "d": nothing starts with "tdd"
        _type_ahead((["Sa", "Db", "Tc", "Td"], 0), "9", "tdd")
    with pytest.raises(InvalidActionError, match="starts with 'xq'"):
        _type_ahead((sizes, 0), "9", "xq")
    with pytest.raises(InvalidActionError, match="starts with 'Q'"):
        _type_ahead((sizes, 0), "9", "Q")
    # a text that starts no option but is part of some: those come first, before the whole list
    users = ["Select a user", "Abishek S (abisubramanya27)", "Yi-Jie Lou (yjlou)"]
    with pytest.raises(InvalidActionError) as caught:
        _type_ahead((users, 0), "103", "yjlou")
    assert str(caught.value) == (
        "no option of the dropdown [103] starts with 'yjlou'; 'Yi-Jie Lou (yjlou)' contains it; its options are "
        "'Select a user', 'Abishek S (abisubramanya27)', 'Yi-Jie Lou (yjlou)'"
    )
    with pytest.raises(InvalidActionError, match=r"'i'; 'Abishek S \(.*\)', 'Yi-Jie Lou \(.*\)' contain it;"):
        _type_ahead((users, 0), "103", "i")


def test_go_home_and_goto_follow_the_task_sites(probe):
    env, _ = probe
    env._site_urls = {"shopping": "http://127.0.0.1:7770", "homepage": "http://127.0.0.1:4399"}
    try:
        assert env.translate(parse_command("go_home")) == ["goto('http://127.0.0.1:4399')"]
        assert env.translate(parse_command("goto [http://127.0.0.1:7770/cart]")) == [
            "goto('http://127.0.0.1:7770/cart')"
        ]
        with pytest.raises(InvalidActionError, match="only open this task's sites"):
            env.translate(parse_command("goto [http://evil.test/]"))
    finally:
        env._site_urls = {}
    with pytest.raises(InvalidActionError, match="no homepage"):
        env.translate(parse_command("go_home"))


@pytest.mark.browser
@pytest.mark.parametrize(
    "action, error",
    [
        ("click [99999]", "element [99999] is not on the current page"),
        ("click [1]0", "unexpected text"),
        ("go_home", "not available here"),  # single-site task: go_home is not offered
        ("fly [3]", "unknown action 'fly'"),
        ("click('12')", "unexpected '('"),  # BrowserGym syntax is not this grammar
        ("click [12]\ntype [3] [x]", "one browser command per step"),
    ],
)
def test_errors_take_no_browser_action(probe, action, error):
    env, _ = probe
    page = env.unwrapped.page
    before = (page.url, page.content(), env.unwrapped.last_action)
    obs, reward, terminated, truncated, info = env.step(action)
    assert error in info["action_error"] and error in obs["last_action_error"]
    assert obs["last_action_error"].startswith("Invalid action:")
    assert info["browser_action"] is None and (reward, terminated, truncated) == (0.0, False, False)
    assert (page.url, page.content(), env.unwrapped.last_action) == before


@pytest.mark.browser
def test_memory_commands_do_not_touch_the_browser(probe):
    env, obs = probe
    page = env.unwrapped.page
    before = (page.url, page.content())
    obs, _, _, _, info = env.step("note [the code is on page 2]")
    assert info["memory_action"] == {"name": "note", "args": ["the code is on page 2"]}
    assert info["browser_action"] is None and obs["last_action_error"] == ""
    obs, _, _, _, info = env.step("branch [0] [open the details]\nprune [0] [details were a dead end]")
    assert info["memory_actions"] == [
        {"name": "branch", "args": ["0", "open the details"]},
        {"name": "prune", "args": ["0", "details were a dead end"]},
    ]
    assert info["memory_action"] == info["memory_actions"][-1] and info["browser_action"] is None
    assert (page.url, page.content()) == before


def _solve(env: gym.Env, with_note: bool, typed_color: bool = False) -> tuple[float, bool, list[dict]]:
    """Solve the probe task; ``typed_color``: pick the color by typing into the dropdown (WebArena's way
    when its options are not shown) instead of clicking its option."""
    obs, info = env.reset(seed=0)
    assert info["commands"] == list(env.commands) and "go_home" not in env.commands
    infos = []
    color = (
        f"type [{bid(obs, 'combobox', 'Color')}] [blue] [0]"
        if typed_color
        else f"click [{bid(obs, 'option', 'Blue [dark]')}]"
    )
    steps = [
        f"type [{bid(obs, 'textbox', 'Search')}] [blue shoes]",
        color,
        f"click [{bid(obs, 'option', 'Express')}]",
        ("note [shipping chosen]\n" if with_note else "") + f"click [{bid(obs, 'link', 'Details')}]",
        "stop [7731]",
    ]
    for action in steps:
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs["last_action_error"] == "", (action, obs["last_action_error"])
        assert terminated == action.startswith("stop"), action
        infos.append(info)
    return reward, terminated, infos


@pytest.mark.browser
@pytest.mark.parametrize("multiaction", [True, False])
def test_probe_task_solved_with_commands(tmp_path, multiaction):
    env = AgentOccamActions(make_probe_env(tmp_path, multiaction=multiaction))
    try:
        reward, terminated, infos = _solve(env, with_note=True, typed_color=not multiaction)
        assert (reward, terminated) == (1.0, True)
        fill, enter = infos[0]["browser_action"].split("\n")
        assert fill.startswith("fill(") and enter.endswith("'Enter')")
        assert infos[3]["memory_action"] == {"name": "note", "args": ["shipping chosen"]}
        assert infos[3]["browser_action"].startswith("click(")
        assert infos[4]["browser_action"] == "send_msg_to_user('7731')"
    finally:
        env.close()


@pytest.mark.browser
def test_go_back_never_lands_on_a_blank_page(tmp_path):
    env = AgentOccamActions(make_probe_env(tmp_path))
    try:
        obs, _ = env.reset(seed=0)
        start = obs["url"]
        obs, *_, info = env.step("go_back")
        assert obs["url"] == start and "no earlier page" in obs["last_action_error"]
        obs, *_ = env.step(f"click [{bid(obs, 'link', 'Details')}]")
        obs, *_ = env.step("go_back")
        assert obs["url"] == start and obs["last_action_error"] == ""
    finally:
        env.close()
