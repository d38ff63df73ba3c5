"""The HTML report as a reader sees it in a real Chromium at a laptop's 1,280 px: no sideways scroll,
every image loaded, text columns left-aligned and figures right-aligned, and the error counts linked to
the errored episodes' messages.

The study is written straight into a store (no episodes are run): a wide one, with every site, the
demo's eight policies under long labels, long intent templates and an error message holding a long URL,
the layout's hardest case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from webarena_gym.experiments import tasksets
from webarena_gym.experiments.report import build_report
from webarena_gym.experiments.store import EpisodeResult, StudyStore

pytestmark = [pytest.mark.browser]

WIDTH = 1280
LABELS = [
    *(f"{m} [openai/Qwen/Qwen2.5-7B-Instruct] (5 steps)" for m in ("agentoccam", "coact", "devils_advocate")),
    *(f"{m} [openai/Qwen/Qwen2.5-7B-Instruct] (5 steps)" for m in ("plan_and_act", "plan_mcts", "react")),
    "reference solutions (non-LLM upper bound)",
    "random actions (10 steps, non-LLM floor)",
]
URL = "http://127.0.0.1:8080/v1/chat/completions?" + "&".join(f"param{i}=value{i}" for i in range(40))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    store = StudyStore(tmp_path_factory.mktemp("layout") / "study")
    tasks = tasksets.resolve("local:sample")
    store.write_manifest(
        {"policies": [{"label": label} for label in LABELS], "tasks": [t.env_id for t in tasks], "seeds": [0]}
    )
    for p, label in enumerate(LABELS):
        llm = p < 6
        for i, t in enumerate(tasks):
            error = llm and i == p
            store.append(
                EpisodeResult(
                    label, t.env_id, t.task_id, t.site_group, t.template_id, 0, "error" if error else "done",
                    reward=float((i + p) % 3 == 0), n_steps=5, llm_calls=5 if llm else 0, cost_known=not llm,
                    prompt_tokens=4000 if llm else 0, wall_time_s=12.5,
                    err_msg=f"litellm.APIConnectionError: cannot reach {URL}" if error else None,
                    error_kind="provider" if error else None,
                )
            )  # fmt: skip
    return build_report(store.root)


@pytest.fixture
def page(report, leased_browser):
    page = leased_browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto((report / "index.html").as_uri())
    yield page
    page.close()


def test_the_page_does_not_scroll_sideways_at_1280_px(page):
    assert page.evaluate("innerWidth") == WIDTH
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    assert page.evaluate("document.body.scrollWidth <= innerWidth")
    # nor does any table in its own box: long labels, intents and URLs wrap
    overflowing = page.evaluate(
        "[...document.querySelectorAll('div.table')].filter(d => d.scrollWidth > d.clientWidth)"
        ".map(d => d.firstElementChild.id || d.firstElementChild.className)"
    )
    assert overflowing == []


def test_every_image_loads_and_the_by_site_chart_spans_the_page(page):
    images = page.locator("img")
    assert images.count() >= 1
    for i in range(images.count()):
        assert images.nth(i).evaluate("img => img.complete && img.naturalWidth > 0"), images.nth(i).get_attribute("src")
    chart = page.locator("img[src='success_by_site.png']")
    width = chart.evaluate("img => img.getBoundingClientRect().width")
    assert width >= 0.8 * page.evaluate("document.body.clientWidth")
    # no costs known: the cost plot is left out, and the page says why
    assert page.locator("img[src='success_vs_cost.png']").count() == 0
    assert "not drawn, no policy has a known cost above $0" in page.locator("p.plot-omitted").inner_text()


def align(page, selector: str) -> str:
    return page.locator(selector).first.evaluate("e => getComputedStyle(e).textAlign")


def test_text_columns_are_left_aligned_and_figures_right_aligned(page):
    intent = "#by_template tr:nth-child(2) td:nth-child(2)"  # the intent template's text
    assert page.locator(intent).inner_text().strip()
    assert align(page, intent) == "left" and align(page, "#by_template tr:first-child th:nth-child(2)") == "left"
    assert align(page, "#by_template tr:nth-child(2) td:nth-child(3)") == "right"  # a success rate
    assert align(page, "#summary tr:nth-child(2) td:nth-child(2)") == "right"
    assert align(page, "#summary tr:nth-child(2) td:first-child") == "left"  # the policy
    assert align(page, "table.episodes tr:nth-child(2) td:nth-child(2)") == "left"  # the site
    assert align(page, "table.errors tr:nth-child(2) td:nth-child(5)") == "left"  # the message


def test_the_error_count_leads_to_the_errored_episodes_and_their_messages(page):
    page.locator("#summary a[href='#errors']").first.click()
    assert page.url.endswith("#errors")
    rows = page.locator("table.errors tr")
    assert rows.count() == 1 + 6  # one errored episode per LLM policy
    first = rows.nth(1)
    assert "cannot reach http://127.0.0.1:8080/v1/chat/completions?param0=value0" in first.inner_text()
    first.locator("a").click()
    page.wait_for_load_state()
    assert "litellm.APIConnectionError" in page.locator("#verdict").inner_text()
