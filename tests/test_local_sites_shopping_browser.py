"""The shopping sites in a real browser: login through their forms, and the evaluator on their tasks.

One server process and one Chromium serve every check. For each state-changing task the pristine
shop must score 0 (the missing state change), a plausible wrong change must score 0 and the right
change 1; url tasks must reject a near-miss page. The full replay of every reference solution through
the environment is tests/test_local_tasks.py.
"""

from __future__ import annotations

import sqlite3
from typing import Any
from urllib.parse import urlencode

import pytest

from webarena_gym.envs.evaluation.evaluator import evaluate
from webarena_gym.envs.evaluation.judge import Judge
from webarena_gym.envs.local.registry import get_task, load_tasks
from webarena_gym.envs.local.sites import shopping, shopping_admin
from webarena_gym.envs.sites import replace_placeholders

pytestmark = [pytest.mark.slow, pytest.mark.browser]

JUDGE = Judge(mock_response="incorrect")


@pytest.fixture(scope="module")
def sites():
    from webarena_gym.envs.local.launcher import LocalSites

    with LocalSites(["shopping", "shopping_admin"]) as running:
        yield running


@pytest.fixture(scope="module")
def browser(leased_browser):
    """One Chromium for the module, on the shared driver under a lease."""
    return leased_browser


@pytest.fixture()
def page(sites, browser):
    """A fresh context on a pristine shop, logged into both sites through their own forms."""
    sites.reset_state()
    context = browser.new_context()
    page = context.new_page()
    shopping.login(page, sites.urls["shopping"], shopping.ACCOUNT)
    shopping_admin.login(page, sites.urls["shopping_admin"], shopping_admin.ACCOUNT)
    yield page
    context.close()


def score(sites, page, task_id: int, answer: str = "Done", last_url: str | None = None) -> float:
    config = replace_placeholders(get_task(task_id), sites.urls)
    return evaluate(config, page, answer, judge=JUDGE, last_url=last_url, urls=sites.urls).score


def post(page, url: str, form: dict[str, Any]) -> None:
    response = page.request.post(url, form=form)
    assert response.ok, (url, response.status)


def test_login_forms_sign_in_and_reject_bad_passwords(sites, browser, page) -> None:
    shop, admin = sites.urls["shopping"], sites.urls["shopping_admin"]
    page.goto(shop + "/")
    assert page.get_by_text("Welcome, Emma Lopez!").is_visible()
    page.goto(admin + "/sales/order/")
    assert page.get_by_role("heading", name="Orders").is_visible()
    stranger = browser.new_context().new_page()
    with pytest.raises(RuntimeError, match="rejected the login"):
        shopping.login(stranger, shop, {"username": "emma.lopez@gmail.com", "password": "nope"})
    assert "sign-in was incorrect" in stranger.get_by_role("alert").inner_text()
    with pytest.raises(RuntimeError, match="rejected the login"):
        shopping_admin.login(stranger, admin, {"username": "admin", "password": "nope"})
    stranger.context.close()


def test_every_state_changing_task_scores_zero_on_the_pristine_shop(sites, page) -> None:
    ids = [
        t["task_id"]
        for t in load_tasks()
        if t["sites"][0].startswith("shopping") and "program_html" in t["eval"]["eval_types"]
    ]
    assert len(ids) >= 15
    page.goto(sites.urls["shopping"] + "/contact/")  # "last"-page tasks read the page the agent ends on
    assert {task_id: score(sites, page, task_id) for task_id in ids} == {task_id: 0.0 for task_id in ids}


def test_price_task_wrong_then_right_change(sites, page) -> None:
    edit = sites.urls["shopping_admin"] + "/catalog/product/edit/id/20/"  # task 106: reduce by $5 from $34.12
    post(page, edit, {"product[price]": "24.12"})
    assert score(sites, page, 106) == 0.0
    post(page, edit, {"product[price]": "29.12"})
    assert score(sites, page, 106) == 1.0


def test_stock_task_needs_quantity_and_stock_status(sites, page) -> None:
    config = get_task(108)
    product_id = config["eval"]["program_html"][0]["url"].rstrip("/").rsplit("/", 1)[1]
    edit = f"{sites.urls['shopping_admin']}/catalog/product/edit/id/{product_id}/"
    post(page, edit, {"product[quantity_and_stock_status][qty]": "5"})
    assert score(sites, page, 108) == 0.0
    post(page, edit, {"product[quantity_and_stock_status][is_in_stock]": "1"})
    assert score(sites, page, 108) == 1.0


def test_review_task_checks_rating_and_author(sites, page) -> None:
    shop = sites.urls["shopping"]
    page.goto(shop + "/catalogsearch/result/?q=B04IWBZJ6L")  # the comforter of task 19
    page.get_by_role("link", name="Linenspa Full Comforter, 4 Piece").first.click()
    product_id = page.url
    form = {"rating": "4", "nickname": "Emma Lopez", "title": "ok", "detail": "fine"}
    review_url = shop + page.locator("form.review-form").get_attribute("action")
    post(page, review_url, form)
    assert score(sites, page, 19) == 0.0
    post(page, review_url, {**form, "rating": "5", "nickname": "Emma L."})
    assert score(sites, page, 19) == 0.0
    post(page, review_url, {**form, "rating": "5"})
    assert score(sites, page, 19) == 1.0, product_id


def test_order_task_rejects_the_wrong_variant(sites, page) -> None:
    shop = sites.urls["shopping"]
    page.goto(shop + "/clarks-women-s-sandal.html")  # task 16: 2 pairs, size 8, Blue
    product = page.locator("input[name=product]").first.get_attribute("value")
    address = {
        "firstname": "Emma",
        "lastname": "Lopez",
        "street1": "101 S San Mateo Dr",
        "city": "San Mateo",
        "region": "California",
        "postcode": "94010",
        "country": "United States",
        "phone": "6505551212",
        "shipping_method": "flatrate",
    }
    post(page, shop + "/checkout/cart/add/", {"product": product, "qty": "2", "size": "8", "color": "Green"})
    post(page, shop + "/checkout/", address)
    assert score(sites, page, 16) == 0.0
    post(page, shop + "/checkout/cart/add/", {"product": product, "qty": "2", "size": "8", "color": "Blue"})
    post(page, shop + "/checkout/", address)
    assert score(sites, page, 16) == 1.0


def test_report_task_needs_the_right_dates_on_the_report_page(sites, page) -> None:
    report = sites.urls["shopping_admin"] + "/reports/report_sales/sales/?report_period=day&from={}&to={}"
    page.goto(report.format("2/1/23", "2/27/23"))
    assert score(sites, page, 116) == 0.0
    page.goto(report.format("2/1/23", "2/28/23"))
    assert score(sites, page, 116) == 1.0
    page.goto(report.format("2/1/23", "2/28/23").replace("/sales/?", "/bestsellers/?"))
    assert score(sites, page, 116) == 0.0


def post_pairs(page, url: str, pairs: list[tuple[str, str]]) -> None:
    """A form post with repeated keys (ticked grid rows), which ``form=`` cannot express."""
    body = urlencode(pairs)
    response = page.request.post(url, data=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.ok, (url, response.status)


def _db(sites, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(sites.db_path) as conn:
        return conn.execute(sql, args).fetchall()


def test_tracking_task_needs_the_named_carrier(sites, page) -> None:
    admin = sites.urls["shopping_admin"]  # task 188: order 205 with DHL tracking number 24353446464
    post(
        page,
        f"{admin}/admin/order_shipment/new/order_id/205/",
        {"tracking[0][carrier_code]": "ups", "tracking[0][number]": "24353446464"},
    )
    assert score(sites, page, 188) == 0.0
    post(
        page,
        f"{admin}/admin/order_shipment/new/order_id/205/",
        {"tracking[0][carrier_code]": "dhl", "tracking[0][number]": "24353446464"},
    )
    assert score(sites, page, 188) == 1.0


def test_order_address_and_page_title_tasks_reject_near_misses(sites, page) -> None:
    admin = sites.urls["shopping_admin"]
    address = {
        "firstname": "Emma",
        "lastname": "Lopez",
        "street[0]": "456 Oak Avenue",
        "street[1]": "Apartment 5B",
        "city": "New York",
        "region": "New York",
        "postcode": "10002",
        "country": "United States",
        "phone": "6505551212",
    }  # task 191 wants zip 10001
    post(page, f"{admin}/sales/order/address/order_id/205/", address)
    assert score(sites, page, 191) == 0.0
    post(page, f"{admin}/sales/order/address/order_id/205/", {**address, "postcode": "10001"})
    assert score(sites, page, 191) == 1.0
    page_id = _db(sites, "SELECT id FROM shop_cms_page WHERE title = 'About us'")[0][0]  # task 185: "Our Story"
    post(
        page,
        f"{admin}/cms/page/edit/page_id/{page_id}/",
        {"title": "Our History", "identifier": "about-us", "is_active": "1"},
    )
    assert score(sites, page, 185) == 0.0
    post(
        page,
        f"{admin}/cms/page/edit/page_id/{page_id}/",
        {"title": "Our Story", "identifier": "about-us", "is_active": "1"},
    )
    assert score(sites, page, 185) == 1.0


def test_review_moderation_tasks_reject_acting_on_too_many_reviews(sites, page) -> None:
    admin = sites.urls["shopping_admin"]
    pending = _db(sites, "SELECT id, rating FROM shop_review WHERE status = 2")
    # Task 182 approves the positive pending reviews only; approving all of them is wrong.
    post_pairs(
        page,
        f"{admin}/review/product/pending/massAction/",
        [("massaction", "approve")] + [("selected", str(i)) for i, _ in pending],
    )
    assert score(sites, page, 182) == 0.0
    sites.reset_state()
    positive = [("selected", str(i)) for i, r in pending if r >= 4]
    post_pairs(page, f"{admin}/review/product/pending/massAction/", [("massaction", "approve"), *positive])
    assert score(sites, page, 182) == 1.0
    # Task 183 deletes the 1-star pending reviews only.
    sites.reset_state()
    low = [("selected", str(i)) for i, r in pending if r <= 2]
    post_pairs(page, f"{admin}/review/product/pending/massAction/", [("massaction", "delete"), *low])
    assert score(sites, page, 183) == 0.0
    sites.reset_state()
    post_pairs(
        page,
        f"{admin}/review/product/pending/massAction/",
        [("massaction", "delete")] + [("selected", str(i)) for i, r in pending if r == 1],
    )
    assert score(sites, page, 183) == 1.0


def test_out_of_stock_task_needs_every_matching_product(sites, page) -> None:
    admin = sites.urls["shopping_admin"]  # task 173: all Yankee Candle jar candles
    ids = [
        r[0] for r in _db(sites, "SELECT id FROM shop_product WHERE name LIKE 'Yankee Candle%Jar Candle%' ORDER BY id")
    ]
    assert len(ids) > 1
    for product_id in ids[:-1]:
        post(
            page,
            f"{admin}/catalog/product/edit/id/{product_id}/",
            {"product[quantity_and_stock_status][is_in_stock]": "0"},
        )
    assert score(sites, page, 173) == 0.0
    post(page, f"{admin}/catalog/product/edit/id/{ids[-1]}/", {"product[quantity_and_stock_status][is_in_stock]": "0"})
    assert score(sites, page, 173) == 1.0


def test_price_rule_draft_is_read_from_the_open_form(sites, page) -> None:
    page.goto(sites.urls["shopping_admin"] + "/sales_rule/promo_quote/new/")  # task 193: spring sale, 20%, all groups
    page.get_by_label("Rule Name").fill("spring sale")
    page.get_by_label("Websites").select_option("Main Website")
    page.get_by_label("Discount Amount").fill("20")
    page.get_by_label("General", exact=True).check()
    assert score(sites, page, 193, last_url=page.url) == 0.0  # "for all customers" means every customer group
    for group in ("NOT LOGGED IN", "Wholesale", "Retailer"):
        page.get_by_label(group, exact=True).check()
    assert score(sites, page, 193, last_url=page.url) == 1.0
    assert _db(sites, "SELECT COUNT(*) FROM shop_sales_rule") == [(0,)]  # a draft: nothing was saved


def test_reorder_task_needs_the_cancelled_order_items(sites, page) -> None:
    shop = sites.urls["shopping"]  # task 98: reorder the sticky notes of the cancelled order 195
    address = {
        "firstname": "Emma",
        "lastname": "Lopez",
        "street1": "101 S San Mateo Dr",
        "city": "San Mateo",
        "region": "California",
        "postcode": "94010",
        "country": "United States",
        "phone": "6505551212",
        "shipping_method": "flatrate",
    }
    post(page, f"{shop}/sales/order/reorder/order_id/187/", {})
    post(page, f"{shop}/checkout/", address)
    assert score(sites, page, 98) == 0.0
    post(page, f"{shop}/sales/order/reorder/order_id/195/", {})
    post(page, f"{shop}/checkout/", address)
    assert score(sites, page, 98) == 1.0


@pytest.mark.parametrize(
    "task_id, wrong_url, right_url",
    [
        (
            6,
            "/catalogsearch/result/?q=chairs",
            "/catalogsearch/result/index/?q=chairs&product_list_order=price&product_list_dir=asc",
        ),
        (
            7,
            "/catalogsearch/result/?q=headphones&product_list_order=price&product_list_dir=asc",
            "/catalogsearch/result/?q=headphones&product_list_order=price&product_list_dir=desc",
        ),
        (10, "/electronics.html", "/electronics/headphones.html?p=2"),
        (
            11,
            "/clothing-shoes-jewelry/women/shoes.html?price=25-50",
            "/clothing-shoes-jewelry/women/shoes.html?price=0-25",
        ),
        (103, "/review/product/", "/review/product/pending/?search=x"),
        (45, "/catalogsearch/result/?q=usb", "/catalogsearch/result/index/?q=usb+wifi"),
        (
            51,
            "/video-games/playstation-4/accessories.html?product_list_order=name",
            "/video-games/playstation-4/accessories.html?product_list_order=price&product_list_dir=asc",
        ),
        (54, "/sales/order/view/order_id/173/", "/sales/order/view/order_id/181/"),
        (
            33,
            "/beauty-personal-care/oral-care/toothpaste.html",
            "/beauty-personal-care/oral-care/children-s-dental-care.html",
        ),
        (195, "/admin/system_design_theme/edit/id/3/", "/admin/system_design_theme/edit/id/1/"),
        (  # 13 cards: the 24-slot case fits too, but the 16-slot one is the closest fit
            757,
            "/powera-24-slot-game-card-case-neon-customer-favorite.html",
            "/younik-game-card-case-for-nintendo-switch-with-16-game-card-slots-black.html",
        ),
        (
            758,
            "/younik-game-card-holder-for-nintendo-switch-with-32-game-card-slots-and-8-micro-sd-slots-gray.html",
            "/younik-game-card-storage-box-for-nintendo-switch-with-64-game-card-slots-gray.html",
        ),
        (759, "/sandisk-dual-band-external-hard-drive-1tb.html", "/seagate-ultra-portable-ssd-2tb.html"),  # not an SSD
        (  # 20 cards: the 16-slot case is cheaper but too small
            760,
            "/younik-game-card-case-for-nintendo-switch-with-16-game-card-slots-black.html",
            "/younik-game-card-holder-for-nintendo-switch-with-32-game-card-slots-and-8-micro-sd-slots-gray.html",
        ),
        (  # the 2020 model, not the 2021 one
            761,
            "/microsoft-xbox-wireless-controller-carbon-black-for-xbox-series-x-s-xbox-one-and-windows.html",
            "/microsoft-xbox-wireless-controller-pulse-red-for-xbox-series-x-s-xbox-one-and-windows.html",
        ),
    ],
)
def test_url_tasks_reject_near_misses(sites, task_id: int, wrong_url: str, right_url: str) -> None:
    base = sites.urls[get_task(task_id)["sites"][0]]
    assert score(sites, None, task_id, last_url=base + wrong_url) == 0.0
    assert score(sites, None, task_id, last_url=base + right_url) == 1.0


def test_price_of_a_named_product_task_wrong_then_right_change(sites, page) -> None:
    edit = sites.urls["shopping_admin"] + "/catalog/product/edit/id/1504/"  # task 801: reduce by $5 from $64.99
    post(page, edit, {"product[price]": "54.99"})
    assert score(sites, page, 801) == 0.0
    post(page, edit, {"product[price]": "59.99"})
    assert score(sites, page, 801) == 1.0


def test_description_task_needs_every_positive_quote(sites, page) -> None:
    edit = sites.urls["shopping_admin"] + "/catalog/product/edit/id/1504/"  # task 803: the rain jacket
    quote = '"It folds into its own pocket and weighs nothing."'
    post(page, edit, {"product[description]": quote})  # one of the two positive reviews
    assert score(sites, page, 803) == 0.0
    post(page, edit, {"product[description]": quote + ' "Love the color and the hood stays put in the wind."'})
    assert score(sites, page, 803) == 1.0


def _add_product(page, admin: str, size: str) -> None:
    """Task 805's product through the Add Product form, in the given size."""
    page.goto(admin + "/catalog/product/new/")
    for field, value in (("name", "Energy-Bulk Women Shirt"), ("sku", "EB-WS"), ("price", "60"), ("qty", "50")):
        page.fill(f"#product-{field}", value)
    page.select_option("#product-category", label="clothing-shoes-jewelry/women/clothing")
    page.select_option("#product-size", size)
    page.select_option("#product-color", "Blue")
    page.click("#save-button")
    page.wait_for_url("**/catalog/product/edit/id/**")


def test_new_product_task_needs_the_asked_size_on_the_saved_product(sites, page) -> None:
    admin = sites.urls["shopping_admin"]
    _add_product(page, admin, "M")
    assert score(sites, page, 805, last_url=page.url) == 0.0
    sites.reset_state()
    _add_product(page, admin, "S")
    assert page.locator("#product-size").input_value() == "S"  # a simple product's size shows once saved
    assert score(sites, page, 805, last_url=page.url) == 1.0


def test_sale_task_needs_every_shirt_of_the_brand(sites, page) -> None:
    admin = sites.urls["shopping_admin"]
    ids = [t["url"].rstrip("/").rsplit("/", 1)[1] for t in get_task(807)["eval"]["program_html"]]
    assert len(ids) > 1
    for product_id in ids[:-1]:
        post(page, f"{admin}/catalog/product/edit/id/{product_id}/", {"product[sale]": "1"})
    assert score(sites, page, 807) == 0.0  # one Hollister shirt is still not on sale
    post(page, f"{admin}/catalog/product/edit/id/{ids[-1]}/", {"product[sale]": "1"})
    assert score(sites, page, 807) == 1.0


@pytest.mark.parametrize(
    "task_id, wrong, right",
    [
        # $1.00 a bar against $0.26 a bar
        (
            762,
            "/kind-peanut-butter-protein-bars-pack-of-12.html",
            "/pringles-dark-chocolate-granola-bars-24-count.html",
        ),
        # $0.99 a unit, the better of the two 24-packs, against the 12-pack's $0.70
        (763, "/planters-honey-roasted-rice-cakes-24-count.html", "/jiffy-sea-salt-trail-mix-pack-of-12.html"),
    ],
)
def test_open_tabs_task_needs_the_lowest_unit_price_in_the_cart(
    sites, page, task_id: int, wrong: str, right: str
) -> None:
    shop = sites.urls["shopping"]
    for url, expected in ((wrong, 0.0), (right, 1.0)):
        page.goto(shop + url)
        product = page.locator("input[name=product]").first.get_attribute("value")
        post(page, shop + "/checkout/cart/add/", {"product": product, "qty": "1"})
        assert score(sites, page, task_id) == expected, url


@pytest.mark.parametrize(
    "task_id, wrong, right",
    [
        (809, {"color[]": ["White", "Red", "Purple", "Pink"]}, {"color[]": ["White", "Red", "Purple", "Brown"]}),
        (810, {"color[]": ["Green", "Gray", "Pink", "Navy"]}, {"color[]": ["Green", "Gray", "Pink", "Blue"]}),
        (811, {"size[]": ["XXS", "XS", "S", "M", "L", "XL"]}, {"size[]": ["XS", "S", "M", "L", "XL", "XXL"]}),
        (812, {"size[]": ["XXS", "XS", "S", "M", "L", "XL"]}, {"size[]": ["XXS", "XS", "S", "M", "L", "XL", "XXL"]}),
    ],
)
def test_configuration_tasks_need_the_asked_variations(sites, page, task_id: int, wrong: dict, right: dict) -> None:
    """The wizard generates the ticked sizes x colours; another value (or only one of two) scores 0."""
    edit = replace_placeholders(get_task(task_id), sites.urls)["eval"]["program_html"][0]["url"]
    wizard = edit.replace("/edit/", "/wizard/")
    page.goto(wizard)
    current = {
        name: page.locator(f"input[name='{name}']:checked").evaluate_all("boxes => boxes.map(b => b.value)")
        for name in ("size[]", "color[]")
    }
    for ticked, expected in ((wrong, 0.0), (right, 1.0)):
        post_pairs(page, wizard, [(name, value) for name, values in (current | ticked).items() for value in values])
        assert score(sites, page, task_id) == expected
