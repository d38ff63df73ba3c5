"""``snapshot()``/``restore()``: replay (reset + recorded actions with URL checkpoints) for site hosts
that cannot snapshot their data, and the exact path for those that can."""

from __future__ import annotations

import pytest
from env_support import StaticSiteHost, bid_of, task_config

pytestmark = pytest.mark.browser


def _status(obs: dict) -> str:
    """The text of the page's status region (the result of the Add button)."""
    for node in obs["axtree_object"]["nodes"]:
        if node.get("role", {}).get("value") == "status":
            return node.get("name", {}).get("value", "")
    raise AssertionError("no status region")


def _play(env, obs, base):
    """Three steps and a controlled goto: fill, add, second page, back to the shop."""
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '5')")
    obs, *_ = env.step(f"click('{bid_of(obs, 'button', 'Add')}')")
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    obs, _ = env.goto(f"{base}/index.html")
    return obs


def test_replay_restore_reproduces_the_episode(make_env, static_sites):
    env = make_env()
    base = static_sites.site.url
    obs, _ = env.reset(seed=3)
    obs = _play(env, obs, base)
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '8')")
    snap = env.snapshot()
    assert snap.site_state is None and snap.step_count == 4 and snap.seed == 3
    assert [e.kind for e in snap.history] == ["step", "step", "step", "goto", "step"]
    assert snap.url_checkpoints[2] == f"{base}/page2.html"
    assert snap.tab_urls == (f"{base}/index.html",)

    # wander off, then come back
    env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    env.step("send_msg_to_user('done')")
    obs, info = env.restore(snap)
    assert info["restore_method"] == "replay" and info["replay_mismatches"] == 0 and info["restore_exact"]
    assert obs["url"] == f"{base}/index.html" and env.step_count == 4
    assert env.snapshot().history == snap.history
    assert obs["chat_messages"][-1]["role"] == "user"  # the later answer is not in the restored chat
    textbox = bid_of(obs, "textbox", "Quantity")
    value = next(n for n in obs["axtree_object"]["nodes"] if n.get("browsergym_id") == textbox)["value"]["value"]
    assert value == "8"  # in-page state after the goto was replayed too
    # the restored episode continues normally and counts on from the snapshot
    obs, reward, terminated, truncated, info = env.step("send_msg_to_user('42')")
    assert terminated and reward == 1.0 and info["step"] == 5


def test_replay_repairs_url_drift_with_checkpoints(make_env, static_sites):
    env = make_env()
    base = static_sites.site.url
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    snap = env.snapshot()
    # A recorded action that no longer leads where it did (a site that changed): the checkpoint wins.
    drifted = type(snap)(
        **{**snap.__dict__, "history": (type(snap.history[0])("step", "noop(0)", snap.history[0].url),)}
    )
    obs, info = env.restore(drifted)
    assert info["replay_mismatches"] == 1 and obs["url"] == f"{base}/page2.html"


def test_exact_restore_uses_the_site_host_token_and_storage(make_env, static_sites):
    host = StaticSiteHost(static_sites, snapshots=True)
    env = make_env(host=host, config=task_config(start_url="__SHOPPING__/index.html |AND| __SHOPPING__/page2.html"))
    base = static_sites.site.url
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step("tab_focus(1)")
    env.context.add_cookies([{"name": "cart", "value": "3 items", "url": base}])
    snap = env.snapshot()
    assert snap.site_state is not None and snap.active_tab == 1

    env.reset(seed=0)
    calls_before = list(host.calls)
    obs, info = env.restore(snap)
    assert info["restore_method"] == "exact"
    assert host.restored == [snap.site_state]
    assert host.calls == calls_before  # no reset, no login: the token and cookies carry the state
    assert {c["name"]: c["value"] for c in env.context.cookies()}["cart"] == "3 items"
    assert obs["open_pages_urls"] == (f"{base}/index.html", f"{base}/page2.html")
    assert obs["active_page_index"].tolist() == [1] and obs["url"] == f"{base}/page2.html"
    assert env.step_count == 1


def _storage(env, key: str) -> tuple[str | None, str | None]:
    return env.page.evaluate(f"[localStorage.getItem('{key}'), sessionStorage.getItem('{key}')]")


def test_exact_restore_forgets_everything_after_the_snapshot(make_env, static_sites):
    """The reused browser context comes back as a new one would: no later cookies, storage, tabs or history."""
    env = make_env(host=StaticSiteHost(static_sites, snapshots=True))
    base = static_sites.site.url
    obs, _ = env.reset(seed=0)
    snap = env.snapshot()
    context = env.context

    env.page.evaluate("localStorage.setItem('k', 'later'); sessionStorage.setItem('k', 'later')")
    env.context.add_cookies([{"name": "later", "value": "1", "url": base}])
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    env.context.new_page().goto(f"{base}/page2.html")
    obs, info = env.restore(snap)
    assert info["restore_method"] == "exact" and env.context is context  # the fast path ran
    assert obs["open_pages_urls"] == (f"{base}/index.html",) and env.step_count == 0
    assert {c["name"] for c in env.context.cookies()} == {"session"}
    assert _storage(env, "k") == [None, None]
    obs, *_, info = env.step("go_back()")  # the restored tab's history starts blank, as a reset's does
    assert info["blocked_navigation"] == ["about:blank"] and obs["url"] == f"{base}/index.html"


def test_exact_restore_seeds_snapshot_local_storage(make_env, static_sites):
    env = make_env(host=StaticSiteHost(static_sites, snapshots=True))
    env.reset(seed=0)
    env.page.evaluate("localStorage.setItem('k', 'snap')")
    snap = env.snapshot()
    env.page.evaluate("localStorage.setItem('k', 'later'); localStorage.setItem('other', '1')")
    env.restore(snap)
    assert _storage(env, "k")[0] == "snap" and _storage(env, "other")[0] is None


def _two_site_env(make_env, static_sites):
    """The shop plus a second task site (the static sites' other origin), both allowed."""
    from webarena_gym.envs.sites import FixedSiteHost

    class TwoSites(StaticSiteHost):
        def __init__(self) -> None:
            super().__init__(static_sites, snapshots=True)
            FixedSiteHost.__init__(self, {"shopping": static_sites.site.url, "reddit": static_sites.outside.url})

    return make_env(host=TwoSites(), config=task_config(sites=["shopping", "reddit"]))


def test_exact_restore_reloads_the_open_tab_in_place(make_env, static_sites):
    """The open tab is reused (no new tab) and still comes back as a new one would."""
    env = make_env(host=StaticSiteHost(static_sites, snapshots=True))
    base = static_sites.site.url
    obs, _ = env.reset(seed=0)
    snap = env.snapshot()
    tab = env.page
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    env.page.evaluate("sessionStorage.setItem('k', 'later'); window.name = 'later'")
    for _ in range(2):
        obs, info = env.restore(snap)
        assert info["restore_method"] == "exact" and env.page is tab and env.context.pages == [tab]
        assert obs["url"] == f"{base}/index.html" and bid_of(obs, "link", "Second page")
        assert _storage(env, "k") == [None, None] and env.page.evaluate("window.name") == ""
    obs, *_, info = env.step("go_back()")  # the history starts blank, as a new tab's: no way back to page 2
    assert info["blocked_navigation"] == ["about:blank"] and obs["url"] == f"{base}/index.html"


def test_a_tab_that_showed_another_site_is_replaced_on_restore(make_env, static_sites):
    """sessionStorage of an origin the tab has left cannot be cleared in place: the tab is replaced."""
    env = _two_site_env(make_env, static_sites)
    shop, other = static_sites.site.url, static_sites.outside.url
    env.reset(seed=0)
    snap = env.snapshot()
    tab = env.page
    env.goto(f"{other}/secret.html")
    env.page.evaluate("sessionStorage.setItem('k', 'other site')")
    env.goto(f"{shop}/page2.html")
    obs, info = env.restore(snap)
    assert info["restore_method"] == "exact" and env.page is not tab and obs["url"] == f"{shop}/index.html"
    env.goto(f"{other}/secret.html")
    assert _storage(env, "k") == [None, None]


def test_a_popup_tab_is_not_reused_and_extra_tabs_close(make_env, static_sites):
    env = _two_site_env(make_env, static_sites)
    shop, other = static_sites.site.url, static_sites.outside.url
    obs, _ = env.reset(seed=0)
    first = env.page
    obs, *_ = env.step(f"click('{bid_of(obs, 'link', 'Outside tab')}')")  # opens a second tab
    both = (f"{shop}/index.html", f"{other}/secret.html")
    for _ in range(50):  # the new tab may be reported, or reach its page, after the click's observation
        if obs["open_pages_urls"] == both:
            break
        obs, *_ = env.step("noop(100)")
    assert obs["open_pages_urls"] == both
    two_tabs = env.snapshot()
    obs, _ = env.restore(two_tabs)  # the popup keeps its opener in place, so the tabs are replaced
    assert env.page is not first and obs["open_pages_urls"] == two_tabs.tab_urls
    assert env.context.pages[1].evaluate("window.opener === null")
    one_tab = type(two_tabs)(**{**two_tabs.__dict__, "tab_urls": (f"{shop}/page2.html",), "active_tab": 0})
    kept = env.context.pages[0]
    obs, _ = env.restore(one_tab)  # the second tab is closed, the first reloaded in place
    assert env.page is kept and obs["open_pages_urls"] == (f"{shop}/page2.html",)


def _restored_state(env, obs) -> dict:
    """Everything a restored episode can observe or act on: the observation, the tab's history and
    storage, the cookies, the counters, and where going back and forward leads."""
    page = env.page
    state = {
        "obs": {key: obs[key] for key in ("url", "open_pages_urls", "last_action_error")},
        "tree": [
            (node.get("role", {}).get("value"), node.get("name", {}).get("value"), node.get("browsergym_id"))
            for node in obs["axtree_object"]["nodes"]
            if not node.get("ignored")
        ],
        "chat": [message["message"] for message in obs["chat_messages"]],
        "step": env.step_count,
        "page": page.evaluate(
            "[history.length, document.cookie, JSON.stringify(localStorage), JSON.stringify(sessionStorage),"
            " window.name, document.getElementById('qty').value]"
        ),
        "cookies": sorted((cookie["name"], cookie["value"]) for cookie in env.context.cookies()),
    }
    obs, *_, info = env.step("go_back()")
    state["back"] = (obs["url"], info.get("blocked_navigation"))
    obs, *_ = env.step("go_forward()")
    state["forward"] = obs["url"]
    return state


def _mess_up(env, obs: dict) -> None:
    """Change every kind of state a restore must undo, in the tab the restore may reuse."""
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '7')")
    env.page.evaluate(
        "sessionStorage.setItem('s', 'later'); localStorage.setItem('l', 'later'); window.name = 'later';"
        " document.cookie = 'late=1; path=/'; history.pushState({}, '', '#later')"
    )
    env.step(f"click('{bid_of(obs, 'link', 'Second page')}')")
    env.step("send_msg_to_user('an answer after the snapshot')")


def test_exact_restore_in_place_equals_one_through_new_tabs(make_env, static_sites):
    """The same snapshot restored once into the reused tab and once through new tabs (the tab had
    shown another site, so it cannot be reused) leaves the episode in the same state."""
    env = _two_site_env(make_env, static_sites)
    shop, other = static_sites.site.url, static_sites.outside.url
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '2')")
    env.context.add_cookies([{"name": "cart", "value": "2 items", "url": shop}])
    snap = env.snapshot()

    tab = env.page
    _mess_up(env, obs)
    obs, info = env.restore(snap)
    assert info["restore_method"] == "exact" and env.page is tab  # reloaded in place
    in_place = _restored_state(env, obs)

    env.goto(f"{other}/secret.html")  # the tab has now shown another origin: it will be replaced
    obs, _ = env.goto(f"{shop}/index.html")
    tab = env.page
    _mess_up(env, obs)
    obs, info = env.restore(snap)
    assert info["restore_method"] == "exact" and env.page is not tab  # new tabs
    through_new_tabs = _restored_state(env, obs)

    assert in_place == through_new_tabs
    assert (
        in_place["step"] == 1
        and in_place["back"] == (f"{shop}/index.html", ["about:blank"])
        and in_place["forward"] == f"{shop}/index.html"
    )
    assert ("cart", "2 items") in in_place["cookies"] and ("late", "1") not in in_place["cookies"]
    assert in_place["page"][2:] == ["{}", "{}", "", "2"]  # storage, window name, the snapshot's form value


_PAGE_STATE = (
    "[q.value, gift.checked, express.checked, size.value, note.value, editor.textContent, pane.scrollTop,"
    " Math.round(scrollY), document.activeElement.id, q.selectionStart, echo.textContent]"
)


def _fill_the_form(env, obs) -> dict:
    """Change every kind of page state a reload loses; the search box keeps the focus (typed, no Enter)."""
    obs, *_ = env.step(f"click('{bid_of(obs, 'checkbox', 'Gift wrap')}')")
    obs, *_ = env.step(f"click('{bid_of(obs, 'radio', 'Express')}')")
    obs, *_ = env.step(f"select_option('{bid_of(obs, 'combobox', 'Size')}', 'Large')")
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Note')}', 'leave it at the door')")
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Message')}', 'hello there')")
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Search')}', 'red shoes')")
    env.page.evaluate("pane.scrollTop = 200; window.scrollTo(0, 150); q.setSelectionRange(3, 3)")
    return obs


@pytest.mark.parametrize("snapshots", [True, False], ids=["exact", "replay"])
def test_restore_brings_back_typed_text_choices_scrolling_and_focus(make_env, static_sites, snapshots):
    env = make_env(host=StaticSiteHost(static_sites, snapshots=snapshots), config=task_config(
        start_url="__SHOPPING__/form.html"))  # fmt: skip
    obs, _ = env.reset(seed=0)
    _fill_the_form(env, obs)
    snap = env.snapshot()
    before = env.page.evaluate(_PAGE_STATE)
    assert before == ["red shoes", True, True, "Large", "leave it at the door", "hello there", 200, 150, "q", 3,
                      "typed red shoes"]  # fmt: skip

    env.goto(f"{static_sites.site.url}/form.html")  # a fresh copy of the page: everything unsaved is gone
    obs, info = env.restore(snap)
    assert env.page.evaluate(_PAGE_STATE) == before  # the page's own script saw the typed text too
    assert info["restore_exact"] and "restore_differences" not in info
    search = bid_of(obs, "textbox", "Search")
    node = next(n for n in obs["axtree_object"]["nodes"] if n.get("browsergym_id") == search)
    assert node["value"]["value"] == "red shoes" and obs["focused_element_bid"] == search
    # the restored episode goes on from the typed text, at the caret where it was
    env.step(f"press('{search}', 's')")
    assert env.page.evaluate("[q.value, echo.textContent]") == ["reds shoes", "typed reds shoes"]


def test_exact_restore_brings_back_what_was_typed_in_an_iframe(make_env, static_sites):
    env = make_env(host=StaticSiteHost(static_sites, snapshots=True), config=task_config(
        start_url="__SHOPPING__/framed.html"))  # fmt: skip
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Coupon')}', 'SAVE10')")
    obs, *_ = env.step(f"click('{bid_of(obs, 'checkbox', 'Accept terms')}')")
    obs, *_ = env.step(f"select_option('{bid_of(obs, 'combobox', 'Colour')}', 'Blue')")
    inner = "[coupon.value, terms.checked, colour.value]"
    assert env.page.frame_locator("#inner").locator("body").evaluate(f"() => {inner}") == ["SAVE10", True, "Blue"]
    snap = env.snapshot()

    env.goto(f"{static_sites.site.url}/framed.html")  # the frame reloads empty
    obs, info = env.restore(snap)
    assert env.page.frame_locator("#inner").locator("body").evaluate(f"() => {inner}") == ["SAVE10", True, "Blue"]
    assert info["restore_exact"] and "restore_differences" not in info, info.get("restore_differences")
    node = next(n for n in obs["axtree_object"]["nodes"] if n.get("browsergym_id") == bid_of(obs, "textbox", "Coupon"))
    assert node["value"]["value"] == "SAVE10"


def test_a_restore_that_cannot_bring_the_page_back_says_what_differs(make_env, static_sites):
    """What the page's scripts built (the Add button's result) is not page state: a reload loses it,
    and the restore reports it instead of claiming to be exact."""
    env = make_env(host=StaticSiteHost(static_sites, snapshots=True))
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Quantity')}', '5')")
    obs, *_ = env.step(f"click('{bid_of(obs, 'button', 'Add')}')")
    assert _status(obs) == "added 5" or "added 5" in str(obs["axtree_object"])
    snap = env.snapshot()
    obs, info = env.restore(snap)
    assert not info["restore_exact"]
    assert any("missing" in line and "added 5" in line for line in info["restore_differences"])
    assert len(info["restore_differences"]) <= 11


def test_a_page_that_breaks_the_page_state_reading_still_restores_and_says_what_is_lost(make_env, static_sites):
    env = make_env(host=StaticSiteHost(static_sites, snapshots=True), config=task_config(
        start_url="__SHOPPING__/form.html"))  # fmt: skip
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(f"fill('{bid_of(obs, 'textbox', 'Search')}', 'red shoes')")
    env.page.evaluate("() => { document.querySelectorAll = () => { throw new Error('not today'); }; }")
    snap = env.snapshot()
    assert snap.page_states == (None,)
    obs, info = env.restore(snap)
    assert info["restore_method"] == "exact" and obs["url"].endswith("/form.html") and env.step_count == 1
    assert not info["restore_exact"] and any("red shoes" in line for line in info["restore_differences"])
