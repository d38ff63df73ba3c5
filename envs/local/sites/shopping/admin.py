"""The store's back office (Magento-admin-like): sign-in, dashboard, menu, grids, catalogue and customers.

It runs as its own site (``shopping_admin``) on the storefront's database, like Magento's ``/admin``,
so a price changed here is the price shoppers see. Sales (orders, invoices, shipments, reports) live in
:mod:`.admin_sales`, content and marketing (CMS pages, themes, cart price rules) in :mod:`.admin_content`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from flask import Flask, abort, flash, redirect, render_template, request, session, url_for

from webarena_gym.envs.local.framework import (
    SiteContext,
    current_user_id,
    execute,
    get_db,
    login_required,
    make_app,
    query,
    query_one,
    query_row,
    safe_next,
)

from . import admin_configurations, admin_content, admin_sales
from .catalog import APPAREL_SIZES, COLORS, SHOE_SIZES
from .common import ORDER_STATUSES, REVIEW_STATUSES, STATUS_LABELS, now_str, setup_jinja
from .grid import Column, Grid
from .seed import hash_password

ENABLED = (("1", "Enabled"), ("2", "Disabled"))
STATUS_OPTIONS = tuple((s, STATUS_LABELS[s]) for s in ORDER_STATUSES)
REVIEW_OPTIONS = tuple((str(k), v) for k, v in REVIEW_STATUSES.items())
PRODUCT_TYPE = "CASE WHEN p.sizes != '' THEN 'Configurable Product' ELSE 'Simple Product' END"

PRODUCTS = Grid(
    "Products",
    "FROM shop_product p JOIN shop_category c ON c.id = p.category_id",
    (
        Column("id", "ID", "p.id", "range"),
        Column("thumbnail", "Thumbnail", "''", "", render="thumbnail", sortable=False),
        Column("name", "Name", "p.name", keyword=True),
        Column(
            "type",
            "Type",
            PRODUCT_TYPE,
            "select",
            (("Simple Product", "Simple Product"), ("Configurable Product", "Configurable Product")),
        ),
        Column("attribute_set", "Attribute Set", "'Default'", ""),
        Column("sku", "SKU", "p.sku", keyword=True),
        Column("price", "Price", "p.price", "range", render="money"),
        Column("qty", "Quantity", "p.qty", "range"),
        Column("salable", "Salable Quantity", "'Default Stock: ' || p.qty", "", sortable=False),
        Column("category", "Category", "c.name", keyword=True),
        Column("visibility", "Visibility", "'Catalog, Search'", ""),
        Column("status", "Status", "p.status", "select", ENABLED, render="label"),
        Column("websites", "Websites", "'Main Website'", ""),
    ),
    default_sort="id",
    row_link="/catalog/product/edit/id/{id}/",
    mass_actions=(("delete", "Delete"), ("enable", "Enable"), ("disable", "Disable")),
    add_button=("Add Product", "product_new"),
)

CUSTOMERS = Grid(
    "Customers",
    "FROM shop_customer cu LEFT JOIN shop_address a ON a.customer_id = cu.id AND a.is_default_billing = 1",
    (
        Column("id", "ID", "cu.id", "range"),
        Column("name", "Name", "cu.firstname || ' ' || cu.lastname", keyword=True),
        Column("email", "Email", "cu.email", keyword=True),
        Column("group_name", "Group", "'General'", ""),
        Column("phone", "Phone", "COALESCE(a.phone, cu.phone)", keyword=True),
        Column("postcode", "ZIP", "COALESCE(a.postcode, '')"),
        Column("country", "Country", "COALESCE(a.country, '')", ""),
        Column("region", "State/Province", "COALESCE(a.region, '')"),
        Column("created_at", "Customer Since", "cu.created_at", "", render="datetime"),
        Column("website", "Web Site", "'Main Website'", ""),
        Column("billing", "Billing Address", "COALESCE(a.street1 || ' ' || a.city || ' ' || a.region, '')", ""),
        Column("dob", "Date of Birth", "cu.date_of_birth", ""),
        Column("gender", "Gender", "cu.gender", "select", (("Female", "Female"), ("Male", "Male"))),
    ),
    default_sort="id",
    row_link="/customer/index/edit/id/{id}/",
    mass_actions=(("subscribe", "Subscribe to Newsletter"), ("unsubscribe", "Unsubscribe from Newsletter")),
)

REVIEW_COLUMNS = (
    Column("id", "ID", "r.id", "range"),
    Column("created_at", "Created", "r.created_at", "text", render="datetime"),
    Column("status", "Status", "r.status", "select", REVIEW_OPTIONS, render="label"),
    Column("title", "Title", "r.title", keyword=True),
    Column("nickname", "Nickname", "r.nickname", keyword=True),
    Column("detail", "Review", "r.detail", keyword=True),
    Column("visibility", "Visibility", "'Main Website'", ""),
    Column("type", "Type", "CASE WHEN r.customer_id IS NULL THEN 'Guest' ELSE 'Customer' END", ""),
    Column("product", "Product", "p.name", keyword=True),
    Column("sku", "SKU", "p.sku"),
    Column(
        "rating",
        "Rating",
        "r.rating",
        "select",
        tuple((str(n), f"{n} star{'s' if n > 1 else ''}") for n in range(1, 6)),
    ),
)
REVIEW_MASS_ACTIONS = (
    ("delete", "Delete"),
    ("approve", "Update Status: Approved"),
    ("pending", "Update Status: Pending"),
)
REVIEWS = Grid(
    "Reviews",
    "FROM shop_review r JOIN shop_product p ON p.id = r.product_id",
    REVIEW_COLUMNS,
    default_sort="created_at",
    default_dir="desc",
    row_link="/review/product/edit/id/{id}/",
    mass_actions=REVIEW_MASS_ACTIONS,
)
PENDING_REVIEWS = Grid(
    "Pending Reviews",
    REVIEWS.source,
    REVIEW_COLUMNS,
    default_sort="created_at",
    default_dir="desc",
    row_link=REVIEWS.row_link,
    fixed_where=("r.status = 2",),
    mass_actions=REVIEW_MASS_ACTIONS,
)

SEARCH_TERMS = Grid(
    "Search Terms",
    "FROM shop_search_term t",
    (
        Column("id", "ID", "t.id", "range"),
        Column("query", "Search Query", "t.query", keyword=True),
        Column("store", "Store", "'Default Store View'", ""),
        Column("num_results", "Results", "t.num_results", "range"),
        Column("uses", "Uses", "t.uses", "range"),
        Column("updated_at", "Last Used", "t.updated_at", "", render="datetime"),
    ),
    default_sort="uses",
    default_dir="desc",
    mass_actions=(("delete", "Delete"),),
)

LOW_STOCK = Grid(
    "Low Stock Report",
    "FROM shop_product p",
    (
        Column("name", "Product", "p.name", keyword=True),
        Column("sku", "SKU", "p.sku", keyword=True),
        Column("qty", "Quantity", "p.qty", "range"),
        Column("id", "ID", "p.id", "", visible=False),
    ),
    default_sort="qty",
    fixed_where=("p.qty < 10",),
    row_link="/catalog/product/edit/id/{id}/",
)

# Magento's admin menu: (section, ((group title or "", ((label, endpoint), ...)), ...)).
MENU: tuple[tuple[str, tuple[tuple[str, tuple[tuple[str, str], ...]], ...]], ...] = (
    ("Dashboard", (("", (("Dashboard", "dashboard"),)),)),
    ("Sales", (("Operations", (("Orders", "orders"), ("Invoices", "invoices"), ("Shipments", "shipments"))),)),
    ("Catalog", (("Inventory", (("Products", "products"),)),)),
    ("Customers", (("", (("All Customers", "customers"),)),)),
    (
        "Marketing",
        (
            ("Promotions", (("Cart Price Rules", "price_rules"),)),
            ("SEO & Search", (("Search Terms", "search_terms"),)),
            ("User Content", (("All Reviews", "reviews"), ("Pending Reviews", "pending_reviews"))),
        ),
    ),
    ("Content", (("Elements", (("Pages", "cms_pages"),)), ("Design", (("Themes", "themes"),)))),
    (
        "Reports",
        (
            ("Marketing", (("Search Terms", "search_report"),)),
            (
                "Sales",
                (
                    ("Orders", "report_sales"),
                    ("Tax", "report_tax"),
                    ("Invoiced", "report_invoiced"),
                    ("Shipping", "report_shipping"),
                    ("Refunds", "report_refunded"),
                    ("Coupons", "report_coupons"),
                ),
            ),
            (
                "Products",
                (("Views", "report_viewed"), ("Bestsellers", "report_bestsellers"), ("Low Stock", "low_stock")),
            ),
        ),
    ),
)


def create_app(ctx: SiteContext) -> Flask:
    app = make_app(ctx, __name__)
    app.jinja_env.globals.update(admin_menu=MENU)
    setup_jinja(app)

    @app.context_processor
    def _layout() -> dict[str, Any]:
        uid = current_user_id()
        return {"admin": query_one("SELECT * FROM shop_admin_user WHERE id = ?", (uid,)) if uid else None}

    @app.route("/", methods=["GET"])
    def index() -> Any:
        return redirect(url_for("dashboard") if current_user_id() else url_for("login"))

    @app.route("/admin/auth/login/", methods=["GET", "POST"])
    def login() -> Any:
        error = ""
        if request.method == "POST":
            username, password = (
                request.form.get("login[username]", "").strip(),
                request.form.get("login[password]", ""),
            )
            row = query_one("SELECT * FROM shop_admin_user WHERE username = ?", (username,))
            if row and row["password_hash"] == hash_password(username, password):
                session.clear()
                session["user_id"] = row["id"]
                return redirect(safe_next(url_for("dashboard")))
            error = (
                "The account sign-in was incorrect or your account is disabled temporarily. "
                "Please wait and try again later."
            )
        return render_template("login.html", error=error)

    @app.get("/admin/auth/logout/")
    def logout() -> Any:
        session.clear()
        flash("You have logged out.", "success")
        return redirect(url_for("login"))

    @app.get("/dashboard/")
    @login_required
    def dashboard() -> str:
        totals = query_one(
            "SELECT COALESCE(SUM(grand_total), 0) AS lifetime, COALESCE(AVG(grand_total), 0) AS average,"
            " COUNT(*) AS n FROM shop_order WHERE status != 'canceled'"
        )
        last_orders = query(
            "SELECT o.*, cu.firstname || ' ' || cu.lastname AS customer_name,"
            " (SELECT SUM(qty) FROM shop_order_item i WHERE i.order_id = o.id) AS items"
            " FROM shop_order o JOIN shop_customer cu ON cu.id = o.customer_id"
            " ORDER BY o.created_at DESC LIMIT 5"
        )
        bestsellers = query(
            "SELECT i.name, p.price, SUM(i.qty) AS qty FROM shop_order_item i JOIN shop_order o"
            " ON o.id = i.order_id JOIN shop_product p ON p.id = i.product_id"
            " WHERE o.status != 'canceled' GROUP BY i.product_id ORDER BY qty DESC, i.name LIMIT 5"
        )
        customers = query(
            "SELECT cu.firstname || ' ' || cu.lastname AS name, COUNT(o.id) AS orders,"
            " COALESCE(SUM(o.grand_total), 0) AS total FROM shop_customer cu JOIN shop_order o"
            " ON o.customer_id = cu.id WHERE o.status != 'canceled' GROUP BY cu.id"
            " ORDER BY total DESC LIMIT 5"
        )
        last_terms = query("SELECT * FROM shop_search_term ORDER BY updated_at DESC, id DESC LIMIT 5")
        top_terms = query("SELECT * FROM shop_search_term ORDER BY uses DESC, id LIMIT 5")
        return render_template(
            "dashboard.html",
            totals=totals,
            last_orders=last_orders,
            bestsellers=bestsellers,
            customers=customers,
            last_terms=last_terms,
            top_terms=top_terms,
        )

    @app.get("/admin/index/globalSearch/")
    @login_required
    def global_search() -> str:
        """The header search: the keyword's matches in products, orders and customers, each a link to its grid."""
        keyword = request.args.get("query", "").strip()
        like = f"%{keyword}%"
        counts = {
            "products": query_row(
                "SELECT COUNT(*) AS n FROM shop_product WHERE name LIKE ? OR sku LIKE ?", (like, like)
            )["n"],
            "orders": query_row(
                "SELECT COUNT(*) AS n FROM shop_order o JOIN shop_customer cu ON cu.id = o.customer_id"
                " WHERE o.increment_id LIKE ? OR cu.firstname || ' ' || cu.lastname LIKE ?",
                (like, like),
            )["n"],
            "customers": query_row(
                "SELECT COUNT(*) AS n FROM shop_customer WHERE firstname || ' ' || lastname LIKE ? OR email LIKE ?",
                (like, like),
            )["n"],
        }
        return render_template("global_search.html", keyword=keyword, counts=counts)

    register_grid(app, PRODUCTS, "products", "/catalog/product/", _product_mass_action)
    register_grid(app, CUSTOMERS, "customers", "/customer/index/", _customer_mass_action)
    register_grid(app, REVIEWS, "reviews", "/review/product/", _review_mass_action)
    register_grid(app, PENDING_REVIEWS, "pending_reviews", "/review/product/pending/", _review_mass_action)
    register_grid(app, SEARCH_TERMS, "search_terms", "/search/term/index/", _search_term_mass_action)
    register_grid(app, SEARCH_TERMS, "search_report", "/search/term/report/")
    register_grid(app, LOW_STOCK, "low_stock", "/reports/report_product/lowstock/")
    _catalog_routes(app)
    _customer_routes(app)
    _review_routes(app)
    admin_sales.register(app)
    admin_content.register(app)
    admin_configurations.register(app)
    return app


MassAction = Callable[[str, list[int]], str]


def register_grid(app: Flask, grid: Grid, endpoint: str, rule: str, mass_action: MassAction | None = None) -> None:
    """Serve ``grid`` at ``rule``; with ``mass_action``, also its ``massAction`` URL (``<endpoint>_mass``).

    ``mass_action(action, ids)`` applies the action and returns the success message; the selection comes
    back from the form's checkboxes.
    """

    def view() -> str:
        mass_url = url_for(f"{endpoint}_mass") if mass_action else ""
        return render_template("grid.html", endpoint=endpoint, mass_url=mass_url, **grid.run())

    app.add_url_rule(rule, endpoint, login_required(view))
    if mass_action is None:
        return

    def run_mass_action() -> Any:
        action = request.form.get("massaction", "")
        ids = [int(v) for v in request.form.getlist("selected") if v.isdigit()]
        if action not in dict(grid.mass_actions):
            flash("Please select an action.", "error")
        elif not ids:
            flash("Please select item(s).", "error")
        else:
            flash(mass_action(action, ids), "success")
        return redirect(request.referrer or url_for(endpoint))

    app.add_url_rule(f"{rule}massAction/", f"{endpoint}_mass", login_required(run_mass_action), methods=["POST"])


def _in(ids: list[int]) -> str:
    return ",".join("?" * len(ids))


def _product_mass_action(action: str, ids: list[int]) -> str:
    db = get_db()
    if action == "delete":
        db.execute(f"DELETE FROM shop_wishlist WHERE product_id IN ({_in(ids)})", ids)
        db.execute(f"DELETE FROM shop_cart_item WHERE product_id IN ({_in(ids)})", ids)
        db.execute(f"DELETE FROM shop_review WHERE product_id IN ({_in(ids)})", ids)
        ordered = {
            r[0] for r in db.execute(f"SELECT product_id FROM shop_order_item WHERE product_id IN ({_in(ids)})", ids)
        }
        # Ordered products must stay in the order history, so they are disabled instead of deleted.
        gone = [i for i in ids if i not in ordered]
        if gone:
            db.execute(f"DELETE FROM shop_product_child WHERE parent_id IN ({_in(gone)})", gone)
            db.execute(f"DELETE FROM shop_product WHERE id IN ({_in(gone)})", gone)
        if ordered:
            db.execute(f"UPDATE shop_product SET status = 2 WHERE id IN ({_in(list(ordered))})", list(ordered))
        db.commit()
        kept = f" {len(ordered)} ordered product(s) were disabled instead." if ordered else ""
        return f"A total of {len(gone)} record(s) have been deleted.{kept}"
    status = 1 if action == "enable" else 2
    db.execute(f"UPDATE shop_product SET status = ? WHERE id IN ({_in(ids)})", [status, *ids])
    db.commit()
    return f"A total of {len(ids)} record(s) have been updated."


def _customer_mass_action(action: str, ids: list[int]) -> str:
    execute(f"UPDATE shop_customer SET newsletter = ? WHERE id IN ({_in(ids)})", [int(action == "subscribe"), *ids])
    return f"A total of {len(ids)} record(s) were updated."


def _review_mass_action(action: str, ids: list[int]) -> str:
    if action == "delete":
        execute(f"DELETE FROM shop_review WHERE id IN ({_in(ids)})", ids)
        return f"A total of {len(ids)} record(s) have been deleted."
    execute(f"UPDATE shop_review SET status = ? WHERE id IN ({_in(ids)})", [1 if action == "approve" else 2, *ids])
    return f"A total of {len(ids)} record(s) have been updated."


def _search_term_mass_action(_action: str, ids: list[int]) -> str:
    execute(f"DELETE FROM shop_search_term WHERE id IN ({_in(ids)})", ids)
    return f"A total of {len(ids)} record(s) have been deleted."


# -- catalogue -----------------------------------------------------------------------------------

PRODUCT_FIELDS = {  # form key -> posted name
    "name": "product[name]",
    "sku": "product[sku]",
    "price": "product[price]",
    "qty": "product[quantity_and_stock_status][qty]",
    "is_in_stock": "product[quantity_and_stock_status][is_in_stock]",
    "status": "product[status]",
    "category_id": "product[category_id]",
    "weight": "product[weight]",
    "description": "product[description]",
    "sale": "product[sale]",
}


def _catalog_routes(app: Flask) -> None:
    size_options, color_options = ("", *APPAREL_SIZES, *SHOE_SIZES), ("", *COLORS)

    @app.route("/catalog/product/edit/id/<int:product_id>/", methods=["GET", "POST"])
    @login_required
    def product_edit(product_id: int) -> Any:
        product = query_one("SELECT * FROM shop_product WHERE id = ?", (product_id,)) or abort(404)
        form = {
            "name": product["name"],
            "sku": product["sku"],
            "price": f"{product['price']:.2f}",
            "qty": str(product["qty"]),
            "is_in_stock": str(product["is_in_stock"]),
            "status": str(product["status"]),
            "category_id": str(product["category_id"]),
            "weight": str(product["weight"]),
            "description": product["description"],
            "sale": str(product["sale"]),
            "size": product["sizes"],
            "color": product["colors"],
        }
        # A simple product carries at most one size and colour, set on its own form; a configurable one
        # lists its variations, edited through the configuration wizard (:mod:`.admin_configurations`).
        simple = "," not in product["sizes"] + product["colors"]
        errors: dict[str, str] = {}
        if request.method == "POST":
            form.update({k: request.form.get(v, form[k]).strip() for k, v in PRODUCT_FIELDS.items()})
            if simple:
                form.update(_option_fields(form))
            errors = _validate_product(form, product_id)
            if not errors:
                execute(
                    "UPDATE shop_product SET name = ?, sku = ?, price = ?, qty = ?, is_in_stock = ?, status = ?,"
                    " category_id = ?, weight = ?, description = ?, sale = ?, sizes = ?, colors = ? WHERE id = ?",
                    (*_product_values(form), form["size"], form["color"], product_id),
                )
                flash("You saved the product.", "success")
                return redirect(url_for("product_edit", product_id=product_id))
            flash("The product was not saved: please correct the highlighted fields.", "error")
        return render_template(
            "product_edit.html",
            product=product,
            simple=simple,
            variations=admin_configurations.children(product_id),
            form=form,
            errors=errors,
            **_product_choices(),
        )

    @app.route("/catalog/product/new/", methods=["GET", "POST"])
    @login_required
    def product_new() -> Any:
        """A new simple product (the form Magento opens for "Add Product")."""
        form = dict.fromkeys(PRODUCT_FIELDS, "") | {"status": "1", "is_in_stock": "1", "weight": "1", "sale": "0"}
        form.update(size="", color="")
        errors: dict[str, str] = {}
        if request.method == "POST":
            form.update({k: request.form.get(v, form[k]).strip() for k, v in PRODUCT_FIELDS.items()})
            form.update(_option_fields(form))
            errors = _validate_product(form, None)
            if not errors:
                name = form["name"]
                product_id = execute(
                    "INSERT INTO shop_product (name, sku, price, qty, is_in_stock, status, category_id, weight,"
                    " description, sale, url_key, brand, sizes, colors, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?)",
                    (
                        *_product_values(form),
                        re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") + f"-{form['sku'].lower()}",
                        form["size"],
                        form["color"],
                        now_str(),
                    ),
                )
                flash("You saved the product.", "success")
                return redirect(url_for("product_edit", product_id=product_id))
            flash("The product was not saved: please correct the highlighted fields.", "error")
        return render_template("product_edit.html", product=None, form=form, errors=errors, **_product_choices())

    def _option_fields(form: dict[str, str]) -> dict[str, str]:
        """The posted size and colour of a simple product; a value outside the choices keeps the current one."""
        choices = {"size": size_options, "color": color_options}
        posted = {key: request.form.get(f"product[{key}]", form[key]).strip() for key in choices}
        return {key: value if value in choices[key] else form[key] for key, value in posted.items()}

    def _product_choices() -> dict[str, Any]:
        return {
            "categories": query("SELECT id, url_path FROM shop_category ORDER BY url_path"),
            "size_options": size_options,
            "color_options": color_options,
        }

    def _product_values(form: dict[str, str]) -> tuple[Any, ...]:
        return (
            form["name"],
            form["sku"],
            round(float(form["price"]), 2),
            int(form["qty"]),
            int(form["is_in_stock"]),
            int(form["status"]),
            int(form["category_id"]),
            float(form["weight"] or 0),
            form["description"],
            int(form["sale"]),
        )

    def _validate_product(form: dict[str, str], product_id: int | None) -> dict[str, str]:
        errors = {k: "This is a required field." for k in ("name", "sku", "price", "qty") if not form[k]}
        if form["price"] and not re.fullmatch(r"\d+(\.\d{1,2})?", form["price"]):
            errors["price"] = "Please enter a number 0 or greater in this field."
        if form["qty"] and not re.fullmatch(r"-?\d+", form["qty"]):
            errors["qty"] = "Please enter a valid integer in this field."
        if form["weight"] and not re.fullmatch(r"\d+(\.\d+)?", form["weight"]):
            errors["weight"] = "Please enter a valid number in this field."
        if form["status"] not in ("1", "2"):
            errors["status"] = "Please select a valid status."
        if form["sale"] not in ("0", "1"):
            errors["sale"] = "Please select Yes or No."
        if form["is_in_stock"] not in ("0", "1"):
            errors["is_in_stock"] = "Please select a valid stock status."
        if not form["category_id"].isdigit() or not query_one(
            "SELECT id FROM shop_category WHERE id = ?", (int(form["category_id"]),)
        ):
            errors["category_id"] = "Please select a category."
        if form["sku"] and query_one(
            "SELECT id FROM shop_product WHERE sku = ? AND id IS NOT ?", (form["sku"], product_id)
        ):
            errors["sku"] = "The value specified in the SKU field is already used by another product."
        return errors


# -- customers -----------------------------------------------------------------------------------


def _customer_routes(app: Flask) -> None:
    @app.route("/customer/index/edit/id/<int:customer_id>/", methods=["GET", "POST"])
    @login_required
    def customer_edit(customer_id: int) -> Any:
        cust = query_one("SELECT * FROM shop_customer WHERE id = ?", (customer_id,)) or abort(404)
        errors: dict[str, str] = {}
        form = {k: cust[k] for k in ("firstname", "lastname", "email", "phone")}
        if request.method == "POST":
            form.update({k: request.form.get(f"customer[{k}]", "").strip() for k in form})
            errors = {k: "This is a required field." for k in ("firstname", "lastname", "email") if not form[k]}
            if form["email"] and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", form["email"]):
                errors["email"] = "Please enter a valid email address."
            if not errors:
                execute(
                    "UPDATE shop_customer SET firstname = ?, lastname = ?, email = ?, phone = ? WHERE id = ?",
                    (form["firstname"], form["lastname"], form["email"], form["phone"], customer_id),
                )
                flash("You saved the customer.", "success")
                return redirect(url_for("customer_edit", customer_id=customer_id))
        orders = query("SELECT * FROM shop_order WHERE customer_id = ? ORDER BY created_at DESC", (customer_id,))
        addresses = query("SELECT * FROM shop_address WHERE customer_id = ? ORDER BY id", (customer_id,))
        reviews = query(
            "SELECT r.*, p.name AS product FROM shop_review r JOIN shop_product p ON p.id = r.product_id"
            " WHERE r.customer_id = ? ORDER BY r.created_at DESC",
            (customer_id,),
        )
        return render_template(
            "customer_edit.html",
            cust=cust,
            form=form,
            errors=errors,
            orders=orders,
            addresses=addresses,
            reviews=reviews,
        )


# -- reviews -------------------------------------------------------------------------------------


def _review_routes(app: Flask) -> None:
    @app.route("/review/product/edit/id/<int:review_id>/", methods=["GET", "POST"])
    @app.route("/review/product/edit/id/<int:review_id>", methods=["GET", "POST"])
    @login_required
    def review_edit(review_id: int) -> Any:
        review = query_one(
            "SELECT r.*, p.name AS product, p.sku, cu.firstname || ' ' || cu.lastname AS customer_name"
            " FROM shop_review r JOIN shop_product p ON p.id = r.product_id"
            " LEFT JOIN shop_customer cu ON cu.id = r.customer_id WHERE r.id = ?",
            (review_id,),
        )
        if review is None:
            # Magento opens an empty form for a review that no longer exists.
            return render_template("review_edit.html", review=None, errors={}, statuses=REVIEW_OPTIONS)
        errors: dict[str, str] = {}
        if request.method == "POST":
            form = {
                "status": request.form.get("status_id", ""),
                "nickname": request.form.get("nickname", "").strip(),
                "title": request.form.get("title", "").strip(),
                "detail": request.form.get("detail", "").strip(),
            }
            errors = {k: "This is a required field." for k, v in form.items() if not v}
            if form["status"] not in {"1", "2", "3"}:
                errors["status"] = "Please select a review status."
            if not errors:
                execute(
                    "UPDATE shop_review SET status = ?, nickname = ?, title = ?, detail = ? WHERE id = ?",
                    (int(form["status"]), form["nickname"], form["title"], form["detail"], review_id),
                )
                flash("You saved the review.", "success")
                return redirect(request.form.get("back") or url_for("reviews"))
        return render_template("review_edit.html", review=review, errors=errors, statuses=REVIEW_OPTIONS)

    @app.post("/review/product/delete/id/<int:review_id>/")
    @login_required
    def review_delete(review_id: int) -> Any:
        execute("DELETE FROM shop_review WHERE id = ?", (review_id,))
        flash("The review has been deleted.", "success")
        return redirect(url_for("reviews"))
