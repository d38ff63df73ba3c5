"""The local shopping and shopping_admin sites without a browser: seed, pages, forms, grids, REST, tasks.

Pages are driven through Flask's test client on a database built by the suite's own builder, so
these checks are fast; tests/test_local_sites_shopping_browser.py covers the real-browser side.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from webarena_gym.envs.evaluation.evaluator import check_eval_block, evaluate
from webarena_gym.envs.evaluation.judge import Judge
from webarena_gym.envs.local import data
from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.registry import TASK_KEYS, load_solutions, load_tasks
from webarena_gym.envs.local.sites import shopping, shopping_admin
from webarena_gym.envs.sites import replace_placeholders

SITES = ["shopping", "shopping_admin"]
URLS = {"shopping": "http://shop.test", "shopping_admin": "http://admin.test"}
INTERACTIVE = re.compile(r"<(a|button|input|select|textarea)\b")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shop") / "pristine.sqlite"
    data.build(path, SITES)
    return path


@pytest.fixture(scope="module")
def db_path(pristine: Path) -> Path:
    return pristine.with_name("instance.sqlite")


@pytest.fixture()
def db(pristine: Path, db_path: Path) -> Path:
    """The apps' database, back to pristine for every test (the apps are built once per module)."""
    shutil.copy(pristine, db_path)
    return db_path


@pytest.fixture(scope="module")
def shop_app(db_path: Path):
    return shopping.create_app(SiteContext("shopping", str(db_path), URLS))


@pytest.fixture(scope="module")
def admin_app(db_path: Path):
    return shopping_admin.create_app(SiteContext("shopping_admin", str(db_path), URLS))


def _rows(db: Path, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchall()


@pytest.fixture()
def shop(shop_app, db: Path):
    return shop_app.test_client()


@pytest.fixture()
def customer(shop):
    resp = shop.post(
        "/customer/account/login/",
        data={"login[username]": shopping.ACCOUNT["username"], "login[password]": shopping.ACCOUNT["password"]},
    )
    assert resp.status_code == 302 and resp.location.endswith("/customer/account/")
    return shop


@pytest.fixture()
def admin(admin_app, db: Path):
    client = admin_app.test_client()
    resp = client.post("/admin/auth/login/", data={"login[username]": "admin", "login[password]": "admin1234"})
    assert resp.status_code == 302 and resp.location.endswith("/dashboard/")
    return client


def _text(resp) -> str:
    assert resp.status_code == 200, resp.status_code
    return resp.get_data(as_text=True)


def _alerts(html: str) -> list[str]:
    return re.findall(r'role="alert"[^>]*>([^<]*)<', html)


# -- seed -------------------------------------------------------------------------------------


def test_seed_is_deterministic_and_realistic(pristine: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.sqlite"
    data.build(again, SITES)
    with sqlite3.connect(pristine) as a, sqlite3.connect(again) as b:
        assert list(a.iterdump()) == list(b.iterdump())
    count = lambda table: _rows(pristine, f"SELECT COUNT(*) FROM {table}")[0][0]  # noqa: E731
    assert count("shop_product") >= 400 and count("shop_review") >= 1000 and count("shop_order") >= 200
    leaves = _rows(
        pristine,
        "SELECT COUNT(*) FROM shop_category c WHERE NOT EXISTS"
        " (SELECT 1 FROM shop_category k WHERE k.parent_id = c.id)",
    )[0][0]
    assert leaves >= 20
    years = _rows(pristine, "SELECT DISTINCT strftime('%Y', created_at) FROM shop_order ORDER BY 1")
    assert years == [("2022",), ("2023",)]
    emma = _rows(
        pristine,
        "SELECT COUNT(*), COUNT(DISTINCT status) FROM shop_order o JOIN shop_customer c"
        " ON c.id = o.customer_id WHERE c.email = 'emma.lopez@gmail.com'",
    )[0]
    assert emma[0] >= 30 and emma[1] == 4
    # Order ids are the numeric increment ids, as WebArena's order URLs assume.
    assert _rows(pristine, "SELECT COUNT(*) FROM shop_order WHERE CAST(increment_id AS INTEGER) != id")[0][0] == 0


def test_site_modules_follow_the_contract() -> None:
    assert shopping_admin.SCHEMA == "" and "CREATE TABLE shop_product" in shopping.SCHEMA
    assert shopping.ACCOUNT == {"username": "emma.lopez@gmail.com", "password": "Password.123"}
    assert shopping_admin.ACCOUNT == {"username": "admin", "password": "admin1234"}


# -- storefront -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/electronics.html",
        "/catalogsearch/result/?q=headphones",
        "/sony-waterproof-over-ear-studio-headphones-silver.html",
        "/customer/account/",
        "/sales/order/history/",
        "/customer/address/",
        "/wishlist/",
        "/contact/",
        "/sales/order/view/order_id/181/",
    ],
)
def test_storefront_pages_are_large(customer, path: str) -> None:
    html = _text(customer.get(path))
    assert len(INTERACTIVE.findall(html)) >= 50, path


def test_category_listing_sorts_filters_and_paginates(shop) -> None:
    html = _text(shop.get("/electronics.html?product_list_order=price&product_list_dir=desc&p=2"))
    main = html.split('class="column main"')[1].split('class="sidebar sidebar-main"')[0]
    prices = [float(p.replace(",", "")) for p in re.findall(r'<span class="price">\$([\d,.]+)</span>', main)]
    assert len(prices) == 24 and prices == sorted(prices, reverse=True)
    assert "Items 25-48 of" in html
    cheap = _text(shop.get("/electronics/headphones.html?price=0-25"))
    main = cheap.split('class="column main"')[1].split('class="sidebar sidebar-main"')[0]
    assert all(float(p) < 25 for p in re.findall(r'<span class="price">\$([\d.]+)</span>', main))
    current = cheap.split('class="filter-current"')[1].split("</ol>")[0]
    assert "Price" in current and "$0.00 - $24.99" in current
    # Layered navigation counts what the filters leave: the category facets add up to the listed total.
    listed = int(re.search(r"Items 1-\d+ of (\d+)", _text(shop.get("/electronics.html"))).group(1))
    facets = _text(shop.get("/electronics.html")).split('class="filter-options-item"')[1]
    assert sum(int(n) for n in re.findall(r'<span class="count">(\d+)<', facets)) == listed


def test_search_is_plural_insensitive_and_records_terms(shop, db: Path) -> None:
    html = _text(shop.get("/catalogsearch/result/?q=chairs"))
    assert "Office Chair" in html and "Search results for: 'chairs'" in html
    seeded = _rows(db, "SELECT uses FROM shop_search_term WHERE query = 'chairs'")[0][0]
    shop.get("/catalogsearch/result/?q=chairs")
    shop.get("/catalogsearch/result/?q=Office+Chairs")
    assert _rows(db, "SELECT uses FROM shop_search_term WHERE query IN ('chairs', 'office chairs') ORDER BY query") == [
        (seeded + 1,),
        (1,),
    ]
    assert "Your search returned no results." in _text(shop.get("/catalogsearch/result/?q=zzzqqq"))


def test_login_rejects_a_wrong_password(shop) -> None:
    html = _text(
        shop.post(
            "/customer/account/login/", data={"login[username]": "emma.lopez@gmail.com", "login[password]": "wrong"}
        )
    )
    assert any("sign-in was incorrect" in a for a in _alerts(html))
    assert shop.get("/sales/order/history/").status_code == 302


def test_checkout_validates_then_places_an_order(customer, db: Path) -> None:
    sandal = _rows(db, "SELECT id, sizes, colors, qty FROM shop_product WHERE name = ?", "Clarks Women's Sandal")[0]
    no_options = customer.post("/checkout/cart/add/", data={"product": sandal[0], "qty": "1"})
    assert "You need to choose options" in _text(customer.get(no_options.location))
    customer.post("/checkout/cart/add/", data={"product": sandal[0], "qty": "2", "size": "8", "color": "Blue"})
    address = {
        "firstname": "Emma",
        "lastname": "Lopez",
        "street1": "101 S San Mateo Dr",
        "city": "San Mateo",
        "region": "California",
        "postcode": "9401",
        "country": "United States",
        "phone": "6505551212",
        "shipping_method": "flatrate",
    }
    bad = _text(customer.post("/checkout/", data=address))
    assert "Provided Zip/Postal Code seems to be invalid" in bad
    before = _rows(db, "SELECT COUNT(*) FROM shop_order")[0][0]
    done = customer.post("/checkout/", data={**address, "postcode": "94010"})
    assert done.location.endswith("/checkout/onepage/success/")
    order = _rows(
        db, "SELECT id, increment_id, status, shipping_amount, grand_total FROM shop_order ORDER BY id DESC LIMIT 1"
    )[0]
    assert order[0] == before + 1 and order[1] == f"{order[0]:09d}" and order[2] == "pending" and order[3] == 10.0
    assert order[1] in _text(customer.get("/checkout/onepage/success/"))
    items = _text(customer.get(f"/sales/order/view/order_id/{order[0]}/"))
    assert "Ordered: 2" in items and "<dd>Blue</dd>" in items
    assert _rows(db, "SELECT qty FROM shop_product WHERE id = ?", sandal[0]) == [(sandal[3] - 2,)]
    assert "You have no items in your shopping cart." in _text(customer.get("/checkout/cart/"))


def test_address_form_validates_and_updates_default_boxes(customer, db: Path) -> None:
    address_id = _rows(db, "SELECT id FROM shop_address WHERE customer_id = 1 AND is_default_billing = 1")[0][0]
    form = {
        "firstname": "Emma",
        "lastname": "Lopez",
        "street1": "",
        "city": "Chicago",
        "region": "Illinois",
        "postcode": "60601",
        "country": "United States",
        "phone": "6505551212",
    }
    bad = _text(customer.post(f"/customer/address/edit/id/{address_id}/", data=form))
    assert "This is a required field." in bad
    customer.post(
        f"/customer/address/edit/id/{address_id}/", data={**form, "street1": "231 Willow Way", "street2": "Suite 100"}
    )
    book = _text(customer.get("/customer/address/"))
    billing = book.split("box-address-billing")[1].split("box-address-shipping")[0]
    assert "231 Willow Way<br>Suite 100<br>Chicago, Illinois, 60601" in billing


def test_review_contact_newsletter_and_wishlist_forms(customer, db: Path) -> None:
    pid = _rows(db, "SELECT id FROM shop_product WHERE status = 1 ORDER BY id LIMIT 1")[0][0]
    customer.post(f"/review/product/post/id/{pid}/", data={"nickname": "Emma Lopez", "title": "t", "detail": "d"})
    assert _rows(db, "SELECT COUNT(*) FROM shop_review WHERE nickname = 'Emma Lopez'") == [(0,)]
    customer.post(
        f"/review/product/post/id/{pid}/", data={"rating": "5", "nickname": "Emma Lopez", "title": "t", "detail": "d"}
    )
    assert _rows(db, "SELECT rating, status FROM shop_review WHERE nickname = 'Emma Lopez'") == [(5, 2)]
    bad = _text(customer.post("/contact/", data={"name": "Emma", "email": "not-an-email", "comment": ""}))
    assert "This is a required field." in bad and "Please enter a valid email address" in bad
    customer.post("/newsletter/manage/", data={"is_subscribed": "1"})
    assert 'title="General Subscription" checked' in _text(customer.get("/newsletter/manage/"))
    customer.post("/wishlist/index/add/", data={"product": pid})
    wish = _text(customer.get("/wishlist/"))
    name = _rows(db, "SELECT name FROM shop_product WHERE id = ?", pid)[0][0]
    assert name in wish.split("products-grid wishlist")[1]


def test_rest_api_needs_the_admin_token(shop) -> None:
    assert shop.get("/rest/V1/orders").status_code == 401
    assert (
        shop.post("/rest/default/V1/integration/admin/token", json={"username": "admin", "password": "x"}).status_code
        == 401
    )
    token = shop.post("/rest/default/V1/integration/admin/token", json=shopping_admin.ACCOUNT).get_json()
    headers = {"Authorization": f"Bearer {token}"}
    orders = shop.get(
        "/rest/V1/orders?searchCriteria[sortOrders][0][direction]=DESC&searchCriteria[pageSize]=1", headers=headers
    ).get_json()
    assert len(orders["items"]) == 1 and orders["total_count"] >= 200
    reviews = shop.get("/rest/V1/products/B04IWBZJ6L/reviews", headers=headers).get_json()
    assert reviews and all(r["ratings"][0]["rating_name"] == "Rating" for r in reviews)
    assert [r["created_at"] for r in reviews] == sorted(r["created_at"] for r in reviews)


# -- admin ------------------------------------------------------------------------------------


def test_admin_requires_login(admin_app, db: Path) -> None:
    client = admin_app.test_client()
    assert "/admin/auth/login/" in client.get("/catalog/product/").location
    html = _text(client.post("/admin/auth/login/", data={"login[username]": "admin", "login[password]": "nope"}))
    assert any("sign-in was incorrect" in a for a in _alerts(html))


@pytest.mark.parametrize(
    "path",
    [
        "/dashboard/",
        "/catalog/product/",
        "/sales/order/",
        "/customer/index/",
        "/review/product/",
        "/catalog/product/edit/id/5/",
        "/sales/order/view/order_id/42/",
    ],
)
def test_admin_pages_are_large(admin, path: str) -> None:
    assert len(INTERACTIVE.findall(_text(admin.get(path)))) >= 20, path


def test_admin_grids_search_filter_sort_and_page(admin) -> None:
    html = _text(admin.get("/catalog/product/?sort=price&dir=desc&limit=50"))
    prices = [float(p.replace(",", "")) for p in re.findall(r"<td>\$([\d,.]+)</td>", html)]
    assert len(prices) == 50 and prices == sorted(prices, reverse=True)
    assert "6 records found" in _text(admin.get("/catalog/product/?f_status=2"))
    hollister = _text(admin.get("/catalog/product/?search=hollister"))
    assert hollister.count("Hollister") >= 5 and "Nike" not in hollister
    page2 = _text(admin.get("/sales/order/?page=2"))
    assert "Page 2 of" in page2 and "Previous Page" in page2
    assert "We couldn't find any records." in _text(admin.get("/customer/index/?f_id_from=9999"))


def test_admin_product_edit_validates_and_shows_on_the_storefront(admin, shop, db: Path) -> None:
    url = "/catalog/product/edit/id/20/"
    before = _rows(db, "SELECT price, status FROM shop_product WHERE id = 20")[0]
    bad = _text(admin.post(url, data={"product[price]": "cheap"}))
    assert "Please enter a number 0 or greater" in bad
    assert _rows(db, "SELECT price, status FROM shop_product WHERE id = 20")[0] == before
    admin.post(url, data={"product[price]": "29.12"})
    assert 'name="product[price]" value="29.12"' in _text(admin.get(url))
    assert "$29.12" in _text(shop.get("/catalog/product/view/id/20/"))
    admin.post(url, data={"product[status]": "2"})
    assert shop.get("/catalog/product/view/id/20/").status_code == 404


def test_admin_order_life_cycle_invoice_shipment_tracking_and_cancel(admin, db: Path) -> None:
    admin.post(
        "/sales/order/addComment/order_id/202/",
        data={"history[status]": "pending", "history[comment]": "Soon!", "history[is_customer_notified]": "1"},
    )
    invoices = _rows(db, "SELECT COUNT(*) FROM shop_invoice")[0][0]
    admin.post("/sales/order/invoice/order_id/202/")
    assert _rows(db, "SELECT status FROM shop_order WHERE id = 202") == [("processing",)]
    assert _rows(db, "SELECT COUNT(*), MAX(increment_id) FROM shop_invoice") == [(invoices + 1, f"{invoices + 1:09d}")]
    admin.post(
        "/admin/order_shipment/new/order_id/202/",
        data={"tracking[0][carrier_code]": "dhl", "tracking[0][number]": "24353446464"},
    )
    assert _rows(db, "SELECT status FROM shop_order WHERE id = 202") == [("complete",)]
    history = _text(admin.get("/sales/order/commentsHistory/order_id/202/active_tab/order_shipments/"))
    assert "Tracking number 24353446464 for DHL assigned" in history and "Soon!" in history
    admin.post("/sales/order/cancel/order_id/202/")  # a complete order cannot be canceled
    view = _text(admin.get("/sales/order/view/order_id/202/"))
    assert '<span id="order_status">Complete</span>' in view and "Customer Notified" in view
    admin.post("/sales/order/cancel/order_id/204/")
    assert _rows(db, "SELECT status FROM shop_order WHERE id = 204") == [("canceled",)]


def test_admin_order_address_edit_validates(admin, db: Path) -> None:
    form = {
        "firstname": "Emma",
        "lastname": "Lopez",
        "street[0]": "456 Oak Avenue",
        "street[1]": "Apartment 5B",
        "city": "New York",
        "region": "New York",
        "postcode": "1000",
        "country": "United States",
        "phone": "6505551212",
    }
    bad = _text(admin.post("/sales/order/address/order_id/205/", data=form))
    assert "Zip/Postal Code seems to be invalid" in bad
    assert _rows(db, "SELECT ship_city FROM shop_order WHERE id = 205") == [("San Mateo",)]
    admin.post("/sales/order/address/order_id/205/", data={**form, "postcode": "10001"})
    shipping = (
        _text(admin.get("/sales/order/view/order_id/205/")).split("order-shipping-address")[1].split("</address>")[0]
    )
    assert "456 Oak Avenue, Apartment 5B" in shipping and "New York, New York, 10001" in shipping


def test_admin_mass_actions_change_only_the_ticked_rows(admin, db: Path) -> None:
    pending = [r[0] for r in _rows(db, "SELECT id FROM shop_review WHERE status = 2 ORDER BY id LIMIT 3")]
    admin.post("/review/product/pending/massAction/", data={"massaction": "approve", "selected": pending[:2]})
    assert [r[0] for r in _rows(db, "SELECT status FROM shop_review WHERE id IN (?, ?, ?) ORDER BY id", *pending)] == [
        1,
        1,
        2,
    ]
    admin.post("/review/product/massAction/", data={"massaction": "delete", "selected": [pending[2]]})
    assert _rows(db, "SELECT COUNT(*) FROM shop_review WHERE id = ?", pending[2]) == [(0,)]
    assert "Rating isn't Available" in _text(admin.get(f"/review/product/edit/id/{pending[2]}/"))
    admin.post(
        "/sales/order/massAction/", data={"massaction": "cancel", "selected": ["204", "181"]}
    )  # pending, complete
    assert _rows(db, "SELECT id, status FROM shop_order WHERE id IN (181, 204) ORDER BY id") == [
        (181, "complete"),
        (204, "canceled"),
    ]
    admin.post("/catalog/product/massAction/", data={"massaction": "disable", "selected": ["20", "21"]})
    assert _rows(db, "SELECT status FROM shop_product WHERE id IN (20, 21)") == [(2,), (2,)]
    no_action = admin.post("/catalog/product/massAction/", data={"selected": ["22"]}, follow_redirects=True)
    assert any("select an action" in a for a in _alerts(_text(no_action)))


def test_admin_grid_filters_show_as_active_filters(admin) -> None:
    html = _text(admin.get("/sales/order/?f_status=processing&f_grand_total_from=100"))
    current = html.split("admin__data-grid-filters-current")[1].split("</ul>")[0]
    assert "Status: Processing" in current and "Grand Total (Purchased): from 100" in current
    rows = html.split("<tbody>")[1].split("</tbody>")[0]
    assert rows.count('<tr class="data-row">') >= 1 and "Pending" not in rows


def test_admin_content_pages_themes_and_price_rules(admin, shop, db: Path) -> None:
    page_id = _rows(db, "SELECT id FROM shop_cms_page WHERE identifier = 'about-us'")[0][0]
    admin.post(f"/cms/page/edit/page_id/{page_id}/", data={"title": "", "identifier": "about-us", "is_active": "1"})
    assert _rows(db, "SELECT title FROM shop_cms_page WHERE id = ?", page_id) == [("About us",)]
    admin.post(
        f"/cms/page/edit/page_id/{page_id}/",
        data={"title": "Our Story", "identifier": "about-us", "is_active": "1", "content": "Hi."},
    )
    assert "<title>Our Story</title>" in _text(shop.get("/about-us"))
    themes = _text(admin.get("/admin/system_design_theme/"))
    assert "Magento Luma" in themes and "Magento 2 backend" not in themes  # the admin theme is not a storefront theme
    assert "Magento/luma" in _text(admin.get("/admin/system_design_theme/edit/id/3/"))
    rule = {
        "name": "spring sale",
        "website_ids": "1",
        "simple_action": "by_percent",
        "discount_amount": "20",
        "is_active": "1",
    }
    missing_groups = _text(admin.post("/sales_rule/promo_quote/new/", data=rule))
    assert "This is a required field." in missing_groups and _rows(db, "SELECT COUNT(*) FROM shop_sales_rule") == [(0,)]
    admin.post("/sales_rule/promo_quote/new/", data={**rule, "customer_group_ids": ["0", "1"]})
    assert _rows(db, "SELECT name, customer_group_ids, discount_amount FROM shop_sales_rule") == [
        ("spring sale", "0,1", 20.0)
    ]


def test_storefront_compare_list_and_recently_ordered_block(customer, db: Path) -> None:
    customer.post("/catalog/product_compare/add/", data={"product": "230", "return_url": "/electronics.html"})
    listing = _text(customer.get("/electronics.html"))
    side = listing.split("sidebar sidebar-additional")[1]
    assert "Sony Waterproof Over-Ear Studio Headphones, Silver" in side.split("block-wishlist")[0]
    assert "Recently Ordered" in side
    assert "Sony Waterproof Over-Ear Studio Headphones, Silver" in _text(customer.get("/catalog/product_compare/"))
    recent = _rows(
        db,
        "SELECT p.id FROM shop_order_item i JOIN shop_order o ON o.id = i.order_id JOIN shop_product p"
        " ON p.id = i.product_id WHERE o.customer_id = 1 AND p.sizes = '' ORDER BY o.created_at DESC LIMIT 1",
    )[0][0]
    customer.post("/checkout/cart/addgroup/", data={"order_items": [str(recent)]})
    assert _rows(db, "SELECT product_id, qty FROM shop_cart_item WHERE cart_key = 'c1'") == [(recent, 1)]


def test_admin_review_moderation(admin, db: Path) -> None:
    rid = _rows(db, "SELECT id FROM shop_review WHERE status = 2 ORDER BY id LIMIT 1")[0][0]
    admin.post(f"/review/product/edit/id/{rid}/", data={"status_id": "9", "nickname": "x", "title": "x", "detail": "x"})
    assert _rows(db, "SELECT status FROM shop_review WHERE id = ?", rid) == [(2,)]
    admin.post(f"/review/product/edit/id/{rid}/", data={"status_id": "1", "nickname": "x", "title": "x", "detail": "x"})
    assert _rows(db, "SELECT status FROM shop_review WHERE id = ?", rid) == [(1,)]


def test_admin_reports(admin, db: Path) -> None:
    report = _text(admin.get("/reports/report_sales/bestsellers/?report_period=year&from=1/1/22&to=12/31/22"))
    first = re.search(r"<tr><td>2022</td><td>([^<]+)</td>", report).group(1)
    top = _rows(
        db,
        "SELECT i.name FROM shop_order_item i JOIN shop_order o ON o.id = i.order_id WHERE o.status != 'canceled'"
        " AND o.created_at LIKE '2022%' GROUP BY i.product_id ORDER BY SUM(i.qty) DESC LIMIT 1",
    )[0][0]
    assert first.replace("&#39;", "'") == top
    sales = _text(admin.get("/reports/report_sales/sales/?report_period=month&from=2/1/23&to=2/28/23"))
    n = _rows(db, "SELECT COUNT(*) FROM shop_order WHERE created_at LIKE '2023-02%'")[0][0]
    assert f"<tr><td>2023-02</td><td>{n}</td>" in sales
    bad = _text(admin.get("/reports/report_sales/sales/?from=2/30/23&to=1/1/23"))
    assert any("From" in a for a in _alerts(bad)) and "report-grid" not in bad


# -- tasks ------------------------------------------------------------------------------------


def _tasks(site: str) -> list[dict]:
    return [t for t in load_tasks() if t["sites"] == [site]]


def _webarena_templates() -> dict[int, tuple[set[str], set[tuple[str, ...]]]]:
    """WebArena's template id -> (its intent template texts, the eval-type lists its tasks use)."""
    found: dict[int, tuple[set[str], set[tuple[str, ...]]]] = {}
    for t in json.loads((Path(__file__).parents[1] / "envs" / "data" / "test.raw.json").read_text()):
        texts, evals = found.setdefault(t["intent_template_id"], (set(), set()))
        texts.add(t["intent_template"])
        evals.add(tuple(t["eval"]["eval_types"]))
    return found


@pytest.mark.parametrize(
    "site, ranges, n_tasks, n_templates",
    [
        ("shopping", (range(0, 100), range(750, 800)), 99, 36),
        ("shopping_admin", (range(100, 200), range(800, 850)), 99, 31),
    ],
)
def test_task_files_instantiate_webarena_templates(
    site: str, ranges: tuple[range, ...], n_tasks: int, n_templates: int
) -> None:
    """WebArena's JSON format; linked tasks use a WebArena template word for word with the eval types WebArena
    uses for it, local-only ones a template id from 10000; every task has a reference solution."""
    tasks, solutions, webarena = _tasks(site), load_solutions(), _webarena_templates()
    linked = [t for t in tasks if t["intent_template_id"] < 10000]
    assert len(linked) >= n_tasks and len({t["intent_template_id"] for t in linked}) >= n_templates
    for task in tasks:
        assert set(task) == TASK_KEYS
        assert any(task["task_id"] in ids for ids in ranges), task["task_id"]
        if task["intent_template_id"] < 10000:
            texts, evals = webarena[task["intent_template_id"]]
            assert task["intent_template"] in texts, task["task_id"]
            assert tuple(task["eval"]["eval_types"]) in evals, task["task_id"]
        intent = task["intent_template"]
        for key, value in task["instantiation_dict"].items():
            intent = intent.replace("{{" + key + "}}", str(value))
        assert intent == task["intent"]
        assert check_eval_block(replace_placeholders(task, URLS)["eval"]) == [], task["task_id"]
        steps = solutions[task["task_id"]]
        assert steps and steps[-1]["action"] in ("send_msg_to_user", "report_infeasible")
    kinds = {(t["eval"]["eval_types"][0], *(t["eval"]["reference_answers"] or {})) for t in tasks}
    assert {
        ("string_match", "exact_match"),
        ("string_match", "must_include"),
        ("string_match", "fuzzy_match"),
        ("url_match",),
        ("program_html",),
    } <= kinds
    assert any(t["eval"]["reference_answers"] == {"fuzzy_match": "N/A"} for t in tasks)


# Plausible but wrong answers for the string tasks (another order, a neighbouring value, a wrong name).
WRONG_ANSWERS = {
    0: "000000187",
    1: "000000204",
    2: "000000173",
    3: "$1,061.37",
    4: "$211.73",
    5: "1/29/22",
    24: "92%",
    26: "B0I79PSSNT",
    25: "$98.02 - $149.56",
    100: "L'Oreal Paris Waterproof Setting Powder, Pack of 2",
    101: "Moleskine Ruled Picture Frame, Pack of 60",
    111: "$73.84",
    112: "$366.00",
    113: "Wei Brown",
    114: "Kevin Scott",
    121: "joust bag",
    122: "Jane Parker (jane.parker@gmail.com)",
    123: "49",
    124: "50",
    28: "000000207",  # another customer's processing order
    31: "$101.99",  # the complete order before the latest one
    58: "Best Way - Table Rate",
    59: "1/12/2023",
    63: "$1061.37",  # only one of the two March cancellations
    64: "$12.67",
    69: "March 7, 2023",
    77: "M",
    80: "$5.77 - $44.10",
    83: "Joseph B., Catso",  # misses the registered customer
    86: "Leaks from the lid when it is full.",  # one criticism of four
    126: "Bowflex Portable Adjustable Dumbbells, 6mm",
    131: "000000205",
    132: "Adam Campbell",
    133: "Hamilton Beach Stainless Steel Electric Kettle, 1.7 Liter - Auto Shut-Off and Boil-Dry Protection",
    134: "B0FC34FEB5",
    144: "287",
    149: "Harper Johnson, David Green",
    156: "charlotte.parker@gmail.com",
    159: "Kevin Scott",
    161: "3",
    164: "4350",
    165: "Grace Walker",
    167: "9",
    170: "$182.40",
    197: "$403.90",
    750: "The Electronics category has items on sale.",
    751: "The latest order, 000000205, is pending and arrives in three days.",  # an older order
    752: "Customers like its grip and thickness.",
    753: "Customers say the paper tears easily and the cover peels.",
    764: "Anker Magnetic Wireless Charger, 10ft - Value Pack for Home and Office; Anker Slim Wireless Charger, 10ft - "
    "Satisfaction Guaranteed; $44.80 to $65.32",  # counts the power banks' prices in
    765: "Oral-B Kids Extra Soft Replacement Brush Heads featuring Frozen, 2 Count; Oral-B Kids Stages Power Star Wars "
    "Replacement Brush Heads, 4 Pack; $8.98 to $15.96",  # pack prices, not prices per brush
    780: "Misba009, Amanda, Cally, Bethany Robertson, Amazon Customer, MH",  # misses the older case's reviewers
    781: "Evelyn Kurver",
    782: "Lisa Lee, Amanda",
    783: "Evelyn Kurver, N Randall",  # only the 1- and 2-star reviewers
    784: "Misba009, Bethany Robertson, Cally, Amazon Customer",
    800: "Nike, Yoga Mat",
}


@pytest.mark.parametrize("task_id", sorted(WRONG_ANSWERS))
def test_string_tasks_score_their_reference_and_reject_wrong_answers(task_id: int) -> None:
    task = replace_placeholders(next(t for t in load_tasks() if t["task_id"] == task_id), URLS)
    assert task["eval"]["eval_types"] == ["string_match"]
    answer = next(s["text"] for s in load_solutions()[task_id] if s["action"] == "send_msg_to_user")
    judge = Judge(mock_response="incorrect")
    assert evaluate(task, None, answer, judge=judge, last_url="", urls=URLS).score == 1.0
    assert evaluate(task, None, WRONG_ANSWERS[task_id], judge=judge, last_url="", urls=URLS).score == 0.0
