"""The simplified-HTML observation and the WebRL action grammar (Plan-and-Act's spaces): the strict parser
(documented and malformed forms, fuzzed), the HTML pages it acts on, and the translation to BrowserGym on
a real browser (the probe site of the AgentOccam wrapper tests)."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_wrappers_action import bid, make_probe_env

from webarena_gym.wrappers.actions.browser import call
from webarena_gym.wrappers.actions.webrl import WebRLActionConfig, WebRLActions
from webarena_gym.wrappers.actions.webrl_grammar import COMMANDS, DO_ACTIONS, WebRLAction, WebRLActionError, parse_webrl
from webarena_gym.wrappers.observations.html import PLACEHOLDER, SimplifiedHTMLObservation, simplify_dom, strip_ids
from webarena_gym.wrappers.presets import PRESETS

# ------------------------------------------------------------------------------------------------
# Parser units


@pytest.mark.parametrize(
    "text, expected",
    [
        ('do(action="Click", element="12")', WebRLAction("do", "Click", "12")),
        ("do(action='click', element='a12')", WebRLAction("do", "Click", "a12")),  # any case, frame ids
        ('do(element=16, action="Click")', WebRLAction("do", "Click", "16")),  # an id written as a number
        (
            '# Element: the "To" field\n# Note: Distance: 29km.\ndo(action="Type", argument="PPG Paints Arena", '
            'element="14")',
            WebRLAction(
                "do",
                "Type",
                "14",
                "PPG Paints Arena",
                comments=('# Element: the "To" field', "# Note: Distance: 29km."),
            ),
        ),
        (
            'do(action="Search", argument="Library near CMU", element="12")}',
            WebRLAction("do", "Search", "12", "Library near CMU"),
        ),  # fmt: skip
        (
            'do(action="Select Dropdown Option", argument="Month", element="22")',
            WebRLAction("do", "Select Dropdown Option", "22", "Month"),
        ),  # fmt: skip
        ('do(action="Scroll Down")', WebRLAction("do", "Scroll Down")),
        ('do(action="scroll  up", element="3")', WebRLAction("do", "Scroll Up")),  # an unused element is ignored
        ('do(action="Press Enter")', WebRLAction("do", "Press Enter")),
        ('do(action="Press Enter", element="7")', WebRLAction("do", "Press Enter", "7")),
        ('do(action="Switch Tab", argument="1")', WebRLAction("do", "Switch Tab", argument="1")),
        ('do(action="Wait", argument=None)', WebRLAction("do", "Wait")),
        ('exit(message="The driving time is 0:34.")', WebRLAction("exit", message="The driving time is 0:34.")),
        ('exit("01:11, 02:16")', WebRLAction("exit", message="01:11, 02:16")),
        ("exit()", WebRLAction("exit", message="")),
        ('exit(message="""line one\nline "two\\"""")', WebRLAction("exit", message='line one\nline "two"')),
        ('exit(message="a \\"quoted\\" \\\\ word\\n")', WebRLAction("exit", message='a "quoted" \\ word\n')),
        ("go_backward()", WebRLAction("go_backward")),
        ("  go_forward ( )  \n# done", WebRLAction("go_forward", comments=("# done",))),
        ('I will search now.\ndo(action="Search", element="3", argument="x")', WebRLAction("do", "Search", "3", "x")),
    ],
)
def test_parse_documented_forms(text, expected):
    assert parse_webrl(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no action found"),
        ("click [12]", "no action found"),
        ("# Element: the button", "no action found"),
        ('do(action="Fly", element="3")', "unknown action 'Fly'"),
        ('do(action="Switch Page", argument="1")', "unknown action 'Switch Page'"),
        ('do(action="Click")', '"Click" needs element'),
        ('do(action="Click", element=None)', '"Click" needs element'),
        ('do(action="Type", element="3")', '"Type" needs argument'),
        ('do(action="Switch Tab", argument="next")', "tab number"),
        ('do(action="Click", element="1 2")', "must be an id"),
        ('do("Click", "12")', "keyword arguments only"),
        ('do(action="Click", target="12")', "no parameter 'target'"),
        ('do(action="Click", action="Hover", element="1")', "'action' twice"),
        ('do(action="Click", element="12") and then more', "unexpected text after"),
        ('do(action="Click", element="12")\nexit(message="done")', "one action per step"),
        ('exit(message="unclosed)', "not closed"),
        ("exit(message=f'{x}')", "expected a quoted string"),
        ('exit(message="a" + "b")', "expected ',' or ')'"),
        ('exit("a", "b")', "keyword arguments only"),
        ("go_backward(1)", "go_backward() takes no arguments"),
        ('go_backward(steps="1")', "no parameter 'steps'"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(WebRLActionError, match=re.escape(message)):
        parse_webrl(text)


def test_only_enabled_actions_parse():
    with pytest.raises(WebRLActionError, match="not available here. Available actions: Click, exit"):
        parse_webrl('do(action="Hover", element="3")', ("Click", "exit"))
    assert parse_webrl("exit()", ("Click", "exit")).command == "exit"


def test_canonical_forms():
    action = parse_webrl("# Note: 3 pending\ndo(element='7', action='select dropdown option', argument='Say \"hi\"')")
    assert action.call() == 'do(action="Select Dropdown Option", element="7", argument="Say \\"hi\\"")'
    assert action.text() == "# Note: 3 pending\n" + action.call()
    assert parse_webrl(action.text()) == action  # the canonical text parses back to the same action
    assert parse_webrl('exit(message="a\\nb")').call() == 'exit(message="a\\nb")'


# ------------------------------------------------------------------------------------------------
# Fuzzing: only the parser's own error, and nothing ever runs

_TOKENS = [*'()=,"\' \n#}\\', "do", "exit", "go_backward", "go_forward", "action", "element", "argument",
           "message", "None", "12", '"Click"', '"Type"', '"Select Dropdown Option"', "'x'", '"""']  # fmt: skip


@given(st.lists(st.sampled_from(_TOKENS), max_size=30))
def test_fuzz_parser_raises_only_its_own_error(tokens):
    try:
        action = parse_webrl("".join(tokens))
    except WebRLActionError:
        return
    assert action.function in ("do", "exit", "go_backward", "go_forward")
    assert action.function != "do" or action.action in DO_ACTIONS
    assert parse_webrl(action.text()) == action


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80))
def test_fuzz_parser_on_arbitrary_unicode(text):
    for candidate in (text, f'do(action="Type", element="3", argument="{text}")', f"exit(message='{text}')",
                      f"do({text})", f'# {text}\nexit(message="x")'):  # fmt: skip
        try:
            parse_webrl(candidate)
        except WebRLActionError:
            pass


def test_code_in_an_action_is_never_run(tmp_path):
    marker = tmp_path / "ran"
    payloads = [
        f"do(action=__import__('os').system('touch {marker}'))",
        f"exit(message=open('{marker}', 'w').write('x'))",
        f"exec(\"open('{marker}', 'w')\")",
        f"do(action=\"Click\", element=\"1\"); __import__('os').system('touch {marker}')",
        f"exit(message=\"\"\"ok\"\"\" if open('{marker}', 'w') else '')",
    ]
    for payload in payloads:
        with pytest.raises(WebRLActionError):
            parse_webrl(payload)
    assert not marker.exists() and not os.path.exists(marker)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_fuzz_typed_text_reaches_browsergym_intact(content):
    """Whatever the model types (quotes, backslashes, newlines, '#', brackets) arrives unchanged in fill()."""
    from browsergym.core.action.parsers import highlevel_action_parser

    quoted = '"' + content.replace("\\", "\\\\").replace('"', '\\"') + '"'
    action = parse_webrl(f'do(action="Type", element="5", argument={quoted})')
    assert action.argument == content
    calls = highlevel_action_parser.parse_string(call("fill", "5", action.argument), parse_all=True).as_list()
    assert calls == [["fill", ["5", content]]]


# ------------------------------------------------------------------------------------------------
# The simplified HTML page


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    env = WebRLActions(SimplifiedHTMLObservation(make_probe_env(tmp_path_factory.mktemp("probe"))))
    obs, info = env.reset(seed=0)
    yield env, obs, info
    env.close()


@pytest.mark.browser
def test_html_page_with_ids_and_without(probe):
    env, obs, info = probe
    text, page = obs["text"], obs["text_tree"]
    search, color = bid(obs, "textbox", "Search"), bid(obs, "combobox", "Color")
    assert f'<input id="{search}" type="text" aria-label="Search" value="old text"/>' in text
    assert f'<select id="{color}">' in text and "<option selected>Red</option>" in text
    assert f'<a id="{bid(obs, "link", "Details")}">Details</a>' in text
    assert "Probe shop" in text and "nothing searched" in text
    assert "style" not in text and "height" not in text  # no CSS, no empty spacer
    # ids only on interactive elements, and exactly those the page shows
    shown = set(re.findall(r' id="([^"]+)"', text))
    assert shown == set(page.ids) and search in shown and bid(obs, "heading", "Probe shop") not in shown
    assert page.infos[color].tag == "select"
    assert [(o.label, o.selected) for o in page.infos[color].options] == [("Red", True), ("Blue [dark]", False)]
    # the planner's copy: the same page, no id anywhere
    assert obs["text_no_ids"] == strip_ids(text) and ' id="' not in obs["text_no_ids"]
    assert obs["text_no_ids"].count("\n") == text.count("\n")
    assert info["commands"] == list(COMMANDS)


@pytest.mark.browser
def test_live_state_and_snippets(probe):
    env, obs, _ = probe
    search, color = bid(obs, "textbox", "Search"), bid(obs, "combobox", "Color")
    obs, *_ = env.step(f'do(action="Type", element="{search}", argument="red shoes")')
    obs, *_ = env.step(f'do(action="Select Dropdown Option", element="{color}", argument="Blue [dark]")')
    assert 'value="red shoes"' in obs["text"] and "<option selected>Blue [dark]</option>" in obs["text"]
    snippet = obs["text_tree"].snippet(color)
    assert snippet.startswith("<body>") and snippet.endswith("</body>")
    assert f'<select id="{color}">' in snippet and "<label>" in snippet  # its ancestors
    assert f'id="{search}"' not in snippet  # not a sibling: the search form is elsewhere
    assert len(snippet) < len(obs["text"]) / 2
    assert obs["text_tree"].snippet(None) == PLACEHOLDER == obs["text_tree"].snippet("99999")


def test_an_empty_dom_gives_an_empty_page():
    page = simplify_dom({})
    assert page.html == "<html></html>" and page.ids == frozenset()


# ------------------------------------------------------------------------------------------------
# Translation and execution on a real browser


@pytest.mark.browser
def test_translation_of_every_action(probe):
    env, obs, _ = probe
    search, color, link = bid(obs, "textbox", "Search"), bid(obs, "combobox", "Color"), bid(obs, "link", "Details")
    height = env.unwrapped.page.viewport_size["height"]
    cases = {
        f'do(action="Click", element="{link}")': [f"click('{link}')"],
        f'do(action="Right Click", element="{link}")': [f"click('{link}', 'right')"],
        f'do(action="Hover", element="{link}")': [f"hover('{link}')"],
        f'do(action="Type", element="{search}", argument="it\'s [new]")': [f"fill('{search}', \"it's [new]\")"],
        f'do(action="Search", element="{search}", argument="x")': [
            f"fill('{search}', 'x')",
            f"press('{search}', 'Enter')",
        ],  # fmt: skip
        f'do(action="Select Dropdown Option", element="{color}", argument="Blue [dark]")': [
            f"select_option('{color}', 'Blue [dark]')"
        ],
        f'do(action="Select Dropdown Option", element="{color}", argument=" blue  [DARK] ")': [
            f"select_option('{color}', 'Blue [dark]')"  # the label the page shows, matched without case/spacing
        ],
        'do(action="Scroll Down")': [f"scroll(0, {height})"],
        'do(action="Scroll Up")': [f"scroll(0, {-height})"],
        f'do(action="Press Enter", element="{search}")': [f"press('{search}', 'Enter')"],
        'do(action="Switch Tab", argument="0")': ["tab_focus(0)"],
        'do(action="Wait")': ["noop(1000)"],
        'exit(message="N/A: not sold here")': ["send_msg_to_user('N/A: not sold here')"],
        "exit()": ["send_msg_to_user('')"],
        "go_backward()": ["go_back()"],
        "go_forward()": ["go_forward()"],
    }
    for text, expected in cases.items():
        assert env.translate(parse_webrl(text)) == expected, text
    obs, *_ = env.step('do(action="Wait")')
    focused = obs["focused_element_bid"]  # no keyboard_press in this action set: Enter on the focused element
    assert focused and env.translate(parse_webrl('do(action="Press Enter")')) == [f"press('{focused}', 'Enter')"]
    assert env.answer_in('# Note: found it\nexit(message="7731")') == "7731"
    assert env.answer_in("exit()") == "" and env.answer_in("go_backward()") is None
    assert env.answer_in("exit(message=") is None


@pytest.mark.browser
@pytest.mark.parametrize(
    "action, error",
    [
        ('do(action="Click", element="99999")', 'element "99999" is not on the current page'),
        (
            'do(action="Select Dropdown Option", element="{color}", argument="Green")',
            "has no option 'Green'; its options are: 'Red', 'Blue [dark]'",
        ),  # fmt: skip
        ('do(action="Select Dropdown Option", element="{link}", argument="Red")', "not a dropdown"),
        ('do(action="Switch Tab", argument="3")', "there is no tab 3"),
        ('do(action="Switch Page", argument="1")', "unknown action 'Switch Page'"),
        ("quote('hello')", "no action found"),
        ("click('12')", "no action found"),  # BrowserGym's syntax is not this grammar
        ('do(action="Click", element="{link}")\ngo_backward()', "one action per step"),
    ],
)
def test_errors_take_no_browser_action(probe, action, error):
    env, obs, _ = probe
    action = action.format(color=bid(obs, "combobox", "Color"), link=bid(obs, "link", "Details"))
    page = env.unwrapped.page
    before = (page.url, page.content(), env.unwrapped.last_action)
    obs, reward, terminated, truncated, info = env.step(action)
    assert error in info["action_error"] and obs["last_action_error"].startswith("Invalid action:")
    assert info["browser_action"] is None and (reward, terminated, truncated) == (0.0, False, False)
    assert (page.url, page.content(), env.unwrapped.last_action) == before


@pytest.mark.browser
def test_disabled_actions_are_refused(tmp_path):
    env = WebRLActions(SimplifiedHTMLObservation(make_probe_env(tmp_path)), WebRLActionConfig(("Click", "exit")))
    try:
        obs, info = env.reset(seed=0)
        assert info["commands"] == ["Click", "exit"]
        obs, *_, info = env.step('do(action="Scroll Down")')
        assert "not available here" in info["action_error"] and info["browser_action"] is None
    finally:
        env.close()
    with pytest.raises(ValueError, match="unknown WebRL actions"):
        WebRLActions(make_probe_env(tmp_path), WebRLActionConfig(("Teleport",)))


@pytest.mark.browser
@pytest.mark.parametrize("multiaction", [True, False])
def test_probe_task_solved_with_webrl_actions(tmp_path, multiaction):
    env = WebRLActions(SimplifiedHTMLObservation(make_probe_env(tmp_path, multiaction=multiaction)))
    try:
        obs, _ = env.reset(seed=0)
        steps = [
            f'# Element: the search box\ndo(action="Search", element="{bid(obs, "textbox", "Search")}", '
            'argument="blue shoes")',
            f'do(action="Select Dropdown Option", element="{bid(obs, "combobox", "Color")}", argument="Blue [dark]")',
            f'do(action="Click", element="{bid(obs, "option", "Express")}")',
            f'do(action="Click", element="{bid(obs, "link", "Details")}")',
            '# Note: the code is 7731\nexit(message="7731")',
        ]
        infos = []
        for action in steps:
            obs, reward, terminated, truncated, info = env.step(action)
            assert obs["last_action_error"] == "", (action, obs["last_action_error"])
            assert terminated == action.endswith('exit(message="7731")'), action
            infos.append(info)
        assert (reward, terminated) == (1.0, True)
        assert infos[0]["browser_action"].split("\n")[-1].endswith("'Enter')")
        assert infos[1]["webrl_action"].startswith('do(action="Select Dropdown Option"')
        assert infos[-1]["browser_action"] == "send_msg_to_user('7731')"
    finally:
        env.close()


@pytest.mark.browser
def test_going_back_from_the_first_page_stays(tmp_path):
    env = WebRLActions(SimplifiedHTMLObservation(make_probe_env(tmp_path)))
    try:
        obs, _ = env.reset(seed=0)
        start = obs["url"]
        obs, *_ = env.step("go_backward()")
        assert obs["url"] == start and "no earlier page" in obs["last_action_error"]
        assert obs["text"].startswith("<html>")  # still the simplified page
        obs, *_ = env.step(f'do(action="Click", element="{bid(obs, "link", "Details")}")')
        assert "Code: 7731" in obs["text"]
        obs, *_ = env.step("go_backward()")
        assert obs["url"] == start and obs["last_action_error"] == ""
    finally:
        env.close()


@pytest.mark.browser
def test_the_plan_and_act_preset(tmp_path):
    preset = PRESETS["plan_and_act"]
    assert preset.obs_mode == "dom" and preset.actions == COMMANDS
    env = preset.wrap(make_probe_env(tmp_path))
    try:
        assert isinstance(env, WebRLActions) and isinstance(env.env, SimplifiedHTMLObservation)
        obs, info = env.reset(seed=0)
        bottom = bid(obs, "button", "Bottom button")
        assert f'<button id="{bottom}">Bottom button</button>' in obs["text"]  # the full page, below the fold too
        obs, *_ = env.step(f'do(action="Click", element="{bottom}")')
        assert obs["last_action_error"] == "" and "bottom" in obs["text_no_ids"]
    finally:
        env.close()
