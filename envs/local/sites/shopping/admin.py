"""The store's back office (Magento-admin-like): dashboard, grids, edit forms, order handling, reports.

It runs as its own site (``shopping_admin``) on the storefront's database, like Magento's ``/admin``,
so a price changed here is the price shoppers see.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from flask import Flask, abort, flash, redirect, render_template, request, session, url_for

from envs.local.framework import (
    SiteContext,
    current_user_id,
    execute,
    get_db,
    login_required,
    make_app,
    query,
    query_one,
    safe_next,
)

from .common import ORDER_STATUSES, REVIEW_STATUSES, STATUS_LABELS, now_str, setup_jinja
from .grid import Column, Grid
from .seed import hash_password

_ENABLED = (("1", "Enabled"), ("2", "Disabled"))
_STATUS_OPTS = tuple((s, STATUS_LABELS[s]) for s in ORDER_STATUSES)
_REVIEW_OPTS = tuple((str(k), v) for k, v in REVIEW_STATUSES.items())

PRODUCTS = Grid(
    "Products",
    "FROM shop_product p JOIN shop_category c ON c.id = p.category_id",
    (
        Column("id", "ID", "p.id", "range"),
        Column("name", "Name", "p.name", keyword=True),
        Column(
            "type",
            "Type",
            "CASE WHEN p.sizes != '' THEN 'Configurable Product' ELSE 'Simple Product' END",
            "select",
            (("Simple Product", "Simple Product"), ("Configurable Product", "Configurable Product")),
        ),
        Column("sku", "SKU", "p.sku", keyword=True),
        Column("price", "Price", "p.price", "range", money=True),
        Column("qty", "Quantity", "p.qty", "range"),
        Column("category", "Category", "c.name", keyword=True),
        Column("visibility", "Visibility", "'Catalog, Search'", ""),
        Column("status", "Status", "p.status", "select", _ENABLED),
    ),
    default_sort="id",
    row_link="/catalog/product/edit/id/{id}/",
)

ORDERS = Grid(
    "Orders",
    "FROM shop_order o JOIN shop_customer cu ON cu.id = o.customer_id",
    (
        Column("id", "ID", "o.increment_id", keyword=True),
        Column("created_at", "Purchase Date", "o.created_at", "text"),
        Column("bill_to", "Bill-to Name", "cu.firstname || ' ' || cu.lastname", keyword=True),
        Column("ship_to", "Ship-to Name", "o.ship_firstname || ' ' || o.ship_lastname", keyword=True),
        Column("grand_total", "Grand Total (Purchased)", "o.grand_total", "range", money=True),
        Column("status", "Status", "o.status", "select", _STATUS_OPTS),
        Column("entity", "Order ID", "o.id", ""),
    ),
    default_sort="created_at",
    default_dir="desc",
    row_link="/sales/order/view/order_id/{entity}/",
    link_label="View",
)

CUSTOMERS = Grid(
    "Customers",
    "FROM shop_customer cu LEFT JOIN shop_address a ON a.customer_id = cu.id AND a.is_default_billing = 1",
    (
        Column("id", "ID", "cu.id", "range"),
        Column("name", "Name", "cu.firstname || ' ' || cu.lastname", keyword=True),
        Column("email", "Email", "cu.email", keyword=True),
        Column("phone", "Phone", "COALESCE(a.phone, cu.phone)", keyword=True),
        Column("postcode", "ZIP", "COALESCE(a.postcode, '')"),
        Column("country", "Country", "COALESCE(a.country, '')", ""),
        Column("region", "State/Province", "COALESCE(a.region, '')"),
        Column("created_at", "Customer Since", "cu.created_at", ""),
    ),
    default_sort="id",
    row_link="/customer/index/edit/id/{id}/",
)

REVIEW_COLUMNS = (
    Column("id", "ID", "r.id", "range"),
    Column("created_at", "Created", "r.created_at", "text"),
    Column("status", "Status", "r.status", "select", _REVIEW_OPTS),
    Column("title", "Title", "r.title", keyword=True),
    Column("nickname", "Nickname", "r.nickname", keyword=True),
    Column("detail", "Review", "r.detail", keyword=True),
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
REVIEWS = Grid(
    "Reviews",
    "FROM shop_review r JOIN shop_product p ON p.id = r.product_id",
    REVIEW_COLUMNS,
    default_sort="created_at",
    default_dir="desc",
    row_link="/review/product/edit/id/{id}/",
)
PENDING_REVIEWS = Grid(
    "Pending Reviews",
    REVIEWS.source,
    REVIEW_COLUMNS,
    default_sort="created_at",
    default_dir="desc",
    row_link=REVIEWS.row_link,
    fixed_where=("r.status = 2",),
)

SEARCH_TERMS = Grid(
    "Search Terms",
    "FROM shop_search_term t",
    (
        Column("id", "ID", "t.id", "range"),
        Column("query", "Search Query", "t.query", keyword=True),
        Column("num_results", "Results", "t.num_results", "range"),
        Column("uses", "Uses", "t.uses", "range"),
    ),
    default_sort="uses",
    default_dir="desc",
)

MENU = (
    ("Dashboard", (("Dashboard", "dashboard"),)),
    ("Sales", (("Orders", "orders"),)),
    ("Catalog", (("Products", "products"),)),
    ("Customers", (("All Customers", "customers"),)),
    (
        "Marketing",
        (("All Reviews", "reviews"), ("Pending Reviews", "pending_reviews"), ("Search Terms", "search_terms")),
    ),
    ("Reports", (("Orders", "report_sales"), ("Bestsellers", "report_bestsellers"), ("Search Terms", "search_report"))),
)
PERIODS = (("day", "Day"), ("month", "Month"), ("year", "Year"))
_PERIOD_FMT = {"day": "%Y-%m-%d", "month": "%Y-%m", "year": "%Y"}


def parse_us_date(text: str) -> dt.date | None:
    """M/D/YY or M/D/YYYY, as the admin's date pickers write them."""
    match = re.fullmatch(r"\s*(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})\s*", text or "")
    if not match:
        return None
    month, day, year = (int(g) for g in match.groups())
    year += 2000 if year < 100 else 0
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _report_filter() -> dict[str, Any]:
    """The report form's state; ``errors`` lists what is wrong, ``ready`` says whether to run the report."""
    form = {
        "period": request.args.get("report_period", "day"),
        "from": request.args.get("from", ""),
        "to": request.args.get("to", ""),
        "status": request.args.get("order_status", ""),
    }
    if form["period"] not in _PERIOD_FMT:
        form["period"] = "day"
    errors = []
    start, end = parse_us_date(form["from"]), parse_us_date(form["to"])
    submitted = "from" in request.args or "to" in request.args
    if submitted:
        if start is None:
            errors.append('"From" date is required and must look like M/D/YY.')
        if end is None:
            errors.append('"To" date is required and must look like M/D/YY.')
        if start and end and start > end:
            errors.append('"From" date must be before "To" date.')
    return {**form, "start": start, "end": end, "errors": errors, "ready": submitted and not errors}


def create_app(ctx: SiteContext) -> Flask:
    app = make_app(ctx, __name__)
    setup_jinja(app)
    app.jinja_env.globals.update(admin_menu=MENU)

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

    def _grid_view(grid: Grid, endpoint: str) -> str:
        return render_template("grid.html", endpoint=endpoint, **grid.run())

    for grid, endpoint, rule in (
        (PRODUCTS, "products", "/catalog/product/"),
        (ORDERS, "orders", "/sales/order/"),
        (CUSTOMERS, "customers", "/customer/index/"),
        (REVIEWS, "reviews", "/review/product/"),
        (PENDING_REVIEWS, "pending_reviews", "/review/product/pending/"),
        (SEARCH_TERMS, "search_terms", "/search/term/index/"),
    ):
        app.add_url_rule(rule, endpoint, login_required(lambda g=grid, e=endpoint: _grid_view(g, e)))

    # -- products ----------------------------------------------------------------------------

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
        }
        errors: dict[str, str] = {}
        if request.method == "POST":
            posted = {
                "name": "product[name]",
                "sku": "product[sku]",
                "price": "product[price]",
                "qty": "product[quantity_and_stock_status][qty]",
                "is_in_stock": "product[quantity_and_stock_status][is_in_stock]",
                "status": "product[status]",
                "category_id": "product[category_id]",
                "weight": "product[weight]",
                "description": "product[description]",
            }
            form.update({k: request.form.get(v, form[k]).strip() for k, v in posted.items()})
            errors = _validate_product(form, product_id)
            if not errors:
                execute(
                    "UPDATE shop_product SET name = ?, sku = ?, price = ?, qty = ?, is_in_stock = ?, status = ?,"
                    " category_id = ?, weight = ?, description = ? WHERE id = ?",
                    (
                        form["name"],
                        form["sku"],
                        round(float(form["price"]), 2),
                        int(form["qty"]),
                        int(form["is_in_stock"]),
                        int(form["status"]),
                        int(form["category_id"]),
                        float(form["weight"] or 0),
                        form["description"],
                        product_id,
                    ),
                )
                flash("You saved the product.", "success")
                return redirect(url_for("product_edit", product_id=product_id))
            flash("The product was not saved: please correct the highlighted fields.", "error")
        categories = query(
            "SELECT id, url_path FROM shop_category c WHERE NOT EXISTS"
            " (SELECT 1 FROM shop_category k WHERE k.parent_id = c.id) ORDER BY url_path"
        )
        return render_template("product_edit.html", product=product, form=form, errors=errors, categories=categories)

    def _validate_product(form: dict[str, str], product_id: int) -> dict[str, str]:
        errors = {k: "This is a required field." for k in ("name", "sku", "price", "qty") if not form[k]}
        if form["price"] and not re.fullmatch(r"\d+(\.\d{1,2})?", form["price"]):
            errors["price"] = "Please enter a number 0 or greater in this field."
        if form["qty"] and not re.fullmatch(r"-?\d+", form["qty"]):
            errors["qty"] = "Please enter a valid integer in this field."
        if form["weight"] and not re.fullmatch(r"\d+(\.\d+)?", form["weight"]):
            errors["weight"] = "Please enter a valid number in this field."
        if form["status"] not in ("1", "2"):
            errors["status"] = "Please select a valid status."
        if form["is_in_stock"] not in ("0", "1"):
            errors["is_in_stock"] = "Please select a valid stock status."
        if not form["category_id"].isdigit() or not query_one(
            "SELECT id FROM shop_category WHERE id = ?", (int(form["category_id"]),)
        ):
            errors["category_id"] = "Please select a category."
        if form["sku"] and query_one(
            "SELECT id FROM shop_product WHERE sku = ? AND id != ?", (form["sku"], product_id)
        ):
            errors["sku"] = "The value specified in the SKU field is already used by another product."
        return errors

    # -- orders ------------------------------------------------------------------------------

    def _order(order_id: int) -> Any:
        return query_one(
            "SELECT o.*, cu.firstname || ' ' || cu.lastname AS customer_name, cu.email AS customer_email"
            " FROM shop_order o JOIN shop_customer cu ON cu.id = o.customer_id WHERE o.id = ?",
            (order_id,),
        ) or abort(404)

    @app.get("/sales/order/view/order_id/<int:order_id>/")
    @login_required
    def order_view(order_id: int) -> str:
        order = _order(order_id)
        items = query("SELECT * FROM shop_order_item WHERE order_id = ? ORDER BY id", (order_id,))
        comments = query("SELECT * FROM shop_order_comment WHERE order_id = ? ORDER BY id DESC", (order_id,))
        return render_template("order_view.html", order=order, items=items, comments=comments, statuses=_STATUS_OPTS)

    @app.post("/sales/order/addComment/order_id/<int:order_id>/")
    @login_required
    def order_comment(order_id: int) -> Any:
        order = _order(order_id)
        comment = request.form.get("history[comment]", "").strip()
        status = request.form.get("history[status]", order["status"])
        if status not in ORDER_STATUSES:
            flash("Please select a valid order status.", "error")
        elif not comment and status == order["status"]:
            flash("Please enter a comment.", "error")
        else:
            notify = int(request.form.get("history[is_customer_notified]") == "1")
            db = get_db()
            db.execute(
                "INSERT INTO shop_order_comment (order_id, created_at, status, comment, notify) VALUES (?, ?, ?, ?, ?)",
                (order_id, now_str(), status, comment, notify),
            )
            db.execute("UPDATE shop_order SET status = ? WHERE id = ?", (status, order_id))
            db.commit()
            flash("You added a comment to the order." if comment else "You updated the order status.", "success")
        return redirect(url_for("order_view", order_id=order_id))

    @app.post("/sales/order/<action>/order_id/<int:order_id>/")
    @login_required
    def order_action(action: str, order_id: int) -> Any:
        order = _order(order_id)
        moves = {
            "cancel": (("pending", "processing"), "canceled", "You canceled the order."),
            "invoice": (("pending",), "processing", "The invoice has been created."),
            "ship": (("processing",), "complete", "The shipment has been created."),
        }
        if action not in moves:
            abort(404)
        allowed, new_status, message = moves[action]
        if order["status"] not in allowed:
            flash(f"You cannot {action} an order that is {STATUS_LABELS[order['status']].lower()}.", "error")
        else:
            db = get_db()
            db.execute("UPDATE shop_order SET status = ? WHERE id = ?", (new_status, order_id))
            db.execute(
                "INSERT INTO shop_order_comment (order_id, created_at, status, comment, notify) VALUES (?, ?, ?, ?, 0)",
                (order_id, now_str(), new_status, message),
            )
            db.commit()
            flash(message, "success")
        return redirect(url_for("order_view", order_id=order_id))

    # -- customers ---------------------------------------------------------------------------

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

    # -- reviews -----------------------------------------------------------------------------

    @app.route("/review/product/edit/id/<int:review_id>/", methods=["GET", "POST"])
    @app.route("/review/product/edit/id/<int:review_id>", methods=["GET", "POST"])
    @login_required
    def review_edit(review_id: int) -> Any:
        review = query_one(
            "SELECT r.*, p.name AS product, p.sku FROM shop_review r JOIN shop_product p"
            " ON p.id = r.product_id WHERE r.id = ?",
            (review_id,),
        ) or abort(404)
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
        return render_template("review_edit.html", review=review, errors=errors, statuses=_REVIEW_OPTS)

    @app.post("/review/product/delete/id/<int:review_id>/")
    @login_required
    def review_delete(review_id: int) -> Any:
        execute("DELETE FROM shop_review WHERE id = ?", (review_id,))
        flash("The review has been deleted.", "success")
        return redirect(url_for("reviews"))

    # -- reports -----------------------------------------------------------------------------

    def _report(kind: str) -> str:
        """Bestsellers (products by quantity) or orders (counts and totals), per day/month/year bucket."""
        f = _report_filter()
        rows: list[Any] = []
        if f["ready"]:
            bucket = f"strftime('{_PERIOD_FMT[f['period']]}', o.created_at)"
            where, params = ["date(o.created_at) BETWEEN ? AND ?"], [f["start"].isoformat(), f["end"].isoformat()]
            if kind == "bestsellers":
                rows = query(
                    f"SELECT {bucket} AS interval, i.name AS product, p.price, SUM(i.qty) AS qty"
                    " FROM shop_order_item i JOIN shop_order o ON o.id = i.order_id"
                    f" JOIN shop_product p ON p.id = i.product_id WHERE o.status != 'canceled' AND {where[0]}"
                    " GROUP BY interval, i.product_id ORDER BY interval, qty DESC, i.name",
                    params,
                )
            else:
                if f["status"] in ORDER_STATUSES:
                    where.append("o.status = ?")
                    params.append(f["status"])
                rows = query(
                    f"SELECT {bucket} AS interval, COUNT(*) AS orders,"
                    " SUM((SELECT SUM(qty) FROM shop_order_item i WHERE i.order_id = o.id)) AS items,"
                    " ROUND(SUM(o.subtotal), 2) AS sales, ROUND(SUM(o.shipping_amount), 2) AS shipping,"
                    " ROUND(SUM(o.grand_total), 2) AS total"
                    f" FROM shop_order o WHERE {' AND '.join(where)} GROUP BY interval ORDER BY interval",
                    params,
                )
        title = "Bestsellers Report" if kind == "bestsellers" else "Orders Report"
        return render_template(
            "report.html", kind=kind, title=title, f=f, rows=rows, periods=PERIODS, statuses=_STATUS_OPTS
        )

    app.add_url_rule(
        "/reports/report_sales/bestsellers/", "report_bestsellers", login_required(lambda: _report("bestsellers"))
    )
    app.add_url_rule("/reports/report_sales/sales/", "report_sales", login_required(lambda: _report("sales")))

    @app.get("/search/term/report/")
    @login_required
    def search_report() -> str:
        return render_template("grid.html", endpoint="search_report", **SEARCH_TERMS.run())

    return app
