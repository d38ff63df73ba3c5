"""The shopping func: helpers against the embedded local shop's Magento-style REST slice (a real local
server process and a real Chromium): the protocol the helpers speak is the one the local suite serves."""

from __future__ import annotations

import re

import pytest

from webarena_gym.envs.evaluation.funcs import EvalContext, EvalFuncError, parse_func

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def shop():
    from webarena_gym.envs.local.launcher import LocalSites

    with LocalSites(["shopping"]) as sites:
        yield sites.urls


@pytest.fixture(scope="module")
def page(shop, leased_browser):
    page = leased_browser.new_page()
    page.goto(shop["shopping"])
    yield page
    page.close()


def call(text: str, page, urls, **ctx) -> str:
    return parse_func(text).run(EvalContext(page=page, urls=urls, last_url=page.url, **ctx))


def test_latest_order_and_review_helpers(shop, page):
    url = call("func:shopping_get_latest_order_url()", page, shop)
    assert re.fullmatch(re.escape(shop["shopping"]) + r"/sales/order/view/order_id/\d+/", url)
    sku = "B04IWBZJ6L"  # reviewed in the local shop's seed; the local tasks use it
    assert call(f"func:shopping_get_sku_latest_review_author('{sku}')", page, shop).strip()
    rating = int(call(f"func:shopping_get_sku_latest_review_rating('{sku}')", page, shop))
    assert rating in (20, 40, 60, 80, 100)
    assert call("func:shopping_get_sku_latest_review_author('NO-SUCH-SKU')", page, shop) == ""


def test_wrong_admin_account_is_a_clear_error(shop, page):
    wrong = {"shopping_admin": {"username": "admin", "password": "wrong"}}
    with pytest.raises(EvalFuncError, match="HTTP 401"):
        call("func:shopping_get_latest_order_url()", page, shop, accounts=wrong)
