"""The storefront (OneStopMarket): catalogue, search, product pages, cart, checkout and the customer account.

URLs follow Magento's, so WebArena-style tasks and reference URLs read the same
(``/catalogsearch/result/?q=``, ``/sales/order/view/order_id/<id>/``, ``/customer/address/``, ...).
A small read-only slice of Magento's REST API serves the evaluator's ``func:`` helpers.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from flask import Flask, abort, flash, jsonify, redirect, render_template, request, session, url_for

from webarena_gym.envs.local.framework import (
    SiteContext,
    current_user_id,
    execute,
    get_db,
    inserted_id,
    int_arg,
    login_required,
    make_app,
    page_url,
    paginate,
    query,
    query_one,
    query_row,
    safe_next,
)

from .catalog import REGIONS
from .common import (
    RATING_SQL,
    SHIPPING_METHODS,
    address_lines,
    admin_token,
    breadcrumbs,
    category_tree,
    now_str,
    setup_jinja,
    subtree_ids,
)
from .seed import hash_password

SORTS = {"position": "p.position", "name": "p.name", "price": "p.price"}
LIMITS = (12, 24, 36)
DEFAULT_LIMIT = 24
PRICE_BUCKETS = ((0, 25), (25, 50), (50, 100), (100, 200), (200, 500), (500, 1000), (1000, 2000))
ADDRESS_FIELDS = (
    "firstname",
    "lastname",
    "company",
    "street1",
    "street2",
    "city",
    "region",
    "postcode",
    "country",
    "phone",
)
REQUIRED_ADDRESS = ("firstname", "lastname", "street1", "city", "region", "postcode", "country", "phone")
ZIP_RE = re.compile(r"^\d{5}(-\d{4})?$")
PHONE_RE = re.compile(r"^[+\d][\d\s().-]{6,}$")
REQUIRED_MSG = "This is a required field."


def _stem(word: str) -> str:
    """Plural-insensitive matching ("chairs" finds "Office Chair"), as Magento's search does."""
    if len(word) > 3 and word.lower().endswith("s") and not word.lower().endswith("ss"):
        return word[:-1]
    return word


def _default_address(customer_id: int | None, kind: str) -> Any:
    column = "is_default_billing" if kind == "billing" else "is_default_shipping"
    return query_one(f"SELECT * FROM shop_address WHERE customer_id = ? AND {column} = 1", (customer_id,))


def create_app(ctx: SiteContext) -> Flask:
    app = make_app(ctx, __name__)
    setup_jinja(app)
    app.jinja_env.globals.update(address_lines=address_lines, regions=REGIONS)

    @app.context_processor
    def _layout() -> dict[str, Any]:
        uid = current_user_id()
        customer = query_one("SELECT * FROM shop_customer WHERE id = ?", (uid,)) if uid else None
        cart = query_one(
            "SELECT COALESCE(SUM(c.qty), 0) AS n, COALESCE(SUM(c.qty * p.price), 0) AS total"
            " FROM shop_cart_item c JOIN shop_product p ON p.id = c.product_id WHERE cart_key = ?",
            (_cart_key(create=False) or "-",),
        )
        wish_count = query_row("SELECT COUNT(*) AS n FROM shop_wishlist WHERE customer_id = ?", (uid,))["n"]
        return {
            "customer": customer,
            "menu": category_tree(),
            "mini_cart": cart,
            "wish_count": wish_count,
            "compare_ids": session.get("compare", []),
        }

    # -- catalogue ---------------------------------------------------------------------------

    @app.get("/")
    def home() -> str:
        products = query(
            f"SELECT p.*, {RATING_SQL} FROM shop_product p WHERE p.status = 1 ORDER BY review_count DESC, p.id LIMIT 12"
        )
        home_page = query_one("SELECT * FROM shop_cms_page WHERE identifier = 'home'")
        return render_template("home.html", products=products, home_page=home_page)

    @app.get("/<path:slug>.html")
    def slug_page(slug: str) -> Any:
        category = query_one("SELECT * FROM shop_category WHERE url_path = ?", (slug,))
        if category is not None:
            return _listing(category=category)
        product = query_one("SELECT id FROM shop_product WHERE url_key = ? AND status = 1", (slug,))
        if product is None:
            abort(404)
        return _product_page(product["id"])

    @app.get("/catalog/product/view/id/<int:product_id>")
    @app.get("/catalog/product/view/id/<int:product_id>/")
    def product_by_id(product_id: int) -> Any:
        return _product_page(product_id)

    @app.get("/catalogsearch/result/")
    @app.get("/catalogsearch/result/index/")
    def search() -> Any:
        q = request.args.get("q", "").strip()
        if not q:
            flash("Please enter a search term.", "error")
            return redirect(url_for("home"))
        words = q.split()
        row = query_one("SELECT id FROM shop_search_term WHERE query = ?", (q.lower(),))
        if row:
            execute("UPDATE shop_search_term SET uses = uses + 1, updated_at = ? WHERE id = ?", (now_str(), row["id"]))
        else:
            hits = _count_matches(words)
            execute(
                "INSERT INTO shop_search_term (query, num_results, uses, updated_at) VALUES (?, ?, 1, ?)",
                (q.lower(), hits, now_str()),
            )
        return _listing(words=words, q=q)

    @app.get("/search/term/popular/")
    def popular_terms() -> str:
        terms = query("SELECT query, uses FROM shop_search_term WHERE num_results > 0 ORDER BY query")
        return render_template("popular_terms.html", terms=terms, top=max((t["uses"] for t in terms), default=1))

    def _count_matches(words: list[str]) -> int:
        where, params = _word_filter(words)
        return query_row(f"SELECT COUNT(*) AS n FROM shop_product p WHERE p.status = 1 AND {where}", params)["n"]

    def _word_filter(words: list[str]) -> tuple[str, list[Any]]:
        clauses, params = [], []
        for w in words:
            stem = _stem(w)
            clauses.append("(p.name LIKE ? OR p.sku = ? OR p.brand LIKE ? OR p.description LIKE ?)")
            params += [f"%{stem}%", w.upper(), f"%{stem}%", f"% {stem} %"]
        return " AND ".join(clauses) or "1", params

    def _listing(category: Any = None, words: list[str] | None = None, q: str = "") -> str:
        """A category or search result page: Luma's toolbar, 24 products, layered navigation and side blocks."""
        where = ["p.status = 1"]
        params: list[Any] = []
        active: list[tuple[str, str, str]] = []  # (filter label, value label, query parameter)
        if category is not None:
            ids = subtree_ids(category["id"])
            where.append(f"p.category_id IN ({','.join('?' * len(ids))})")
            params += ids
        if words is not None:
            clause, wparams = _word_filter(words)
            where.append(clause)
            params += wparams
        cat = query_one("SELECT * FROM shop_category WHERE id = ?", (request.args.get("cat", type=int),))
        if cat is not None:
            ids = subtree_ids(cat["id"])
            where.append(f"p.category_id IN ({','.join('?' * len(ids))})")
            params += ids
            active.append(("Category", cat["name"], "cat"))
        unfiltered_where, unfiltered_params = list(where), list(params)  # price facets ignore the price filter
        price = request.args.get("price", "")
        match = re.fullmatch(r"(\d*(?:\.\d+)?)-(\d*(?:\.\d+)?)", price)
        if match and any(match.groups()):
            lo, hi = match.groups()
            if lo:
                where.append("p.price >= ?")
                params.append(float(lo))
            if hi:
                where.append("p.price < ?")
                params.append(float(hi))
            label = f"${float(lo or 0):,.2f} - " + (f"${float(hi) - 0.01:,.2f}" if hi else "and above")
            active.append(("Price", label, "price"))
        default_order = "relevance" if words is not None else "position"
        order = request.args.get("product_list_order", default_order)
        if order not in SORTS and not (order == "relevance" and words is not None):
            order = default_order
        direction = "desc" if request.args.get("product_list_dir") == "desc" else "asc"
        order_sql = SORTS["position"] if order == "relevance" else SORTS[order]
        limit = int_arg("product_list_limit", DEFAULT_LIMIT, 1, max(LIMITS))
        limit = limit if limit in LIMITS else DEFAULT_LIMIT
        filtered = " AND ".join(where)
        page = paginate(
            f"SELECT p.*, {RATING_SQL} FROM shop_product p WHERE {filtered} ORDER BY {order_sql} {direction.upper()},"
            " p.id",
            params,
            per_page=limit,
            page=int_arg("p", 1),
        )
        counts = {
            r["id"]: r["n"]
            for r in query(
                f"SELECT p.category_id AS id, COUNT(*) AS n FROM shop_product p WHERE {filtered}"
                " GROUP BY p.category_id",
                params,
            )
        }
        return render_template(
            "listing.html",
            category=category,
            q=q,
            page=page,
            order=order,
            direction=direction,
            limit=limit,
            limits=LIMITS,
            mode="list" if request.args.get("product_list_mode") == "list" else "grid",
            sorts=(["relevance"] if words is not None else []) + ["position", "name", "price"],
            active=active,
            category_facets=_category_facets(category, counts) if cat is None else [],
            price_facets=_price_facets(" AND ".join(unfiltered_where), unfiltered_params) if not price else [],
            crumbs=breadcrumbs(category["id"]) if category is not None else [],
            **_side_blocks(),
        )

    def _category_facets(category: Any, counts: dict[int, int]) -> list[tuple[dict[str, str], int]]:
        """Child categories (or, on a search page, second-level ones) with how many listed products each holds."""
        if category is not None:
            children = query("SELECT * FROM shop_category WHERE parent_id = ? ORDER BY position", (category["id"],))
        else:
            children = query(
                "SELECT c.* FROM shop_category c JOIN shop_category t ON t.id = c.parent_id"
                " WHERE t.parent_id IS NULL ORDER BY t.position, c.position"
            )
        facets = []
        for child in children:
            n = sum(counts.get(i, 0) for i in subtree_ids(child["id"]))
            if n:
                href = f"/{child['url_path']}.html" if category is not None else page_url(cat=child["id"], p=None)
                facets.append(({"name": child["name"], "href": href}, n))
        return facets

    def _price_facets(where: str, params: list[Any]) -> list[tuple[int, int, int]]:
        row = query_row(
            "SELECT "
            + ", ".join(f"SUM(p.price >= {lo} AND p.price < {hi})" for lo, hi in PRICE_BUCKETS)
            + f" FROM shop_product p WHERE {where}",
            params,
        )
        return [(lo, hi, row[i] or 0) for i, (lo, hi) in enumerate(PRICE_BUCKETS) if row[i]]

    def _side_blocks() -> dict[str, Any]:
        """Luma's additional sidebar: compared products, the wish list's last items, recently ordered products."""
        compare_ids = session.get("compare", [])
        compare_items = (
            query(f"SELECT * FROM shop_product WHERE id IN ({','.join('?' * len(compare_ids))})", compare_ids)
            if compare_ids
            else []
        )
        uid = current_user_id()
        wish_items = query(
            "SELECT w.id AS wid, p.* FROM shop_wishlist w JOIN shop_product p ON p.id = w.product_id"
            " WHERE w.customer_id = ? ORDER BY w.id DESC LIMIT 3",
            (uid,),
        )
        recent_items = query(
            "SELECT p.id, p.name, p.url_key FROM shop_order_item i JOIN shop_order o ON o.id = i.order_id"
            " JOIN shop_product p ON p.id = i.product_id WHERE o.customer_id = ? AND p.status = 1"
            " GROUP BY p.id ORDER BY MAX(o.created_at) DESC, p.id LIMIT 5",
            (uid,),
        )
        return {"compare_items": compare_items, "wish_items": wish_items, "recent_items": recent_items}

    def _product_page(product_id: int) -> str:
        product = query_one(
            f"SELECT p.*, {RATING_SQL} FROM shop_product p WHERE p.id = ? AND p.status = 1", (product_id,)
        )
        if product is None:
            abort(404)
        reviews = query(
            "SELECT * FROM shop_review WHERE product_id = ? AND status = 1 ORDER BY created_at DESC", (product_id,)
        )
        related = query(
            f"SELECT p.*, {RATING_SQL} FROM shop_product p WHERE p.category_id = ? AND p.id != ?"
            " AND p.status = 1 ORDER BY p.id LIMIT 4",
            (product["category_id"], product_id),
        )
        return render_template(
            "product.html",
            product=product,
            reviews=reviews,
            related=related,
            crumbs=breadcrumbs(product["category_id"]),
            errors=session.pop("review_errors", {}),
        )

    @app.post("/review/product/post/id/<int:product_id>/")
    def post_review(product_id: int) -> Any:
        product = query_one("SELECT * FROM shop_product WHERE id = ?", (product_id,)) or abort(404)
        form = {k: request.form.get(k, "").strip() for k in ("rating", "nickname", "title", "detail")}
        errors = {k: REQUIRED_MSG for k, v in form.items() if not v}
        if form["rating"] and form["rating"] not in {"1", "2", "3", "4", "5"}:
            errors["rating"] = "Please select one of each of the ratings above."
        if errors:
            session["review_errors"] = errors
            flash("Please fill in every field of the review form.", "error")
        else:
            execute(
                "INSERT INTO shop_review (product_id, customer_id, nickname, title, detail, rating, status,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, 2, ?)",
                (
                    product_id,
                    current_user_id(),
                    form["nickname"],
                    form["title"],
                    form["detail"],
                    int(form["rating"]),
                    now_str(),
                ),
            )
            flash("You submitted your review for moderation.", "success")
        return redirect(url_for("slug_page", slug=product["url_key"]))

    # -- compare list and content pages -----------------------------------------------------

    @app.post("/catalog/product_compare/add/")
    def compare_add() -> Any:
        product = query_one(
            "SELECT * FROM shop_product WHERE id = ? AND status = 1", (request.form.get("product", type=int),)
        ) or abort(404)
        ids = session.get("compare", [])
        if product["id"] not in ids:
            session["compare"] = [*ids, product["id"]]
        flash(f"You added product {product['name']} to the comparison list.", "success")
        return redirect(request.form.get("return_url") or url_for("compare"))

    @app.post("/catalog/product_compare/remove/<int:product_id>/")
    def compare_remove(product_id: int) -> Any:
        session["compare"] = [i for i in session.get("compare", []) if i != product_id]
        return redirect(request.referrer or url_for("compare"))

    @app.post("/catalog/product_compare/clear/")
    def compare_clear() -> Any:
        session.pop("compare", None)
        flash("You cleared the comparison list.", "success")
        return redirect(request.referrer or url_for("home"))

    @app.get("/catalog/product_compare/")
    def compare() -> str:
        ids = session.get("compare", [])
        items = (
            query(f"SELECT p.*, {RATING_SQL} FROM shop_product p WHERE p.id IN ({','.join('?' * len(ids))})", ids)
            if ids
            else []
        )
        return render_template("compare.html", items=items)

    @app.get("/<identifier>")
    def cms_page(identifier: str) -> Any:
        page = query_one("SELECT * FROM shop_cms_page WHERE identifier = ? AND is_active = 1", (identifier,))
        if page is None:
            abort(404)
        return render_template("cms_page.html", page=page)

    @app.errorhandler(404)
    def not_found(_error: Exception) -> Any:
        page = query_one("SELECT * FROM shop_cms_page WHERE identifier = 'no-route'")
        return render_template("cms_page.html", page=page), 404

    # -- cart and checkout -------------------------------------------------------------------

    def _cart_key(create: bool = True) -> str | None:
        uid = current_user_id()
        if uid:
            return f"c{uid}"
        if "guest_cart" not in session and create:
            session["guest_cart"] = "g" + secrets.token_hex(8)
        return session.get("guest_cart")

    def _cart_rows(key: str) -> list[Any]:
        return query(
            "SELECT c.id, c.qty, c.options, p.id AS product_id, p.name, p.sku, p.price, p.url_key,"
            " c.qty * p.price AS row_total FROM shop_cart_item c JOIN shop_product p ON p.id = c.product_id"
            " WHERE c.cart_key = ? ORDER BY c.id",
            (key,),
        )

    @app.post("/checkout/cart/add/")
    def cart_add() -> Any:
        product = query_one(
            "SELECT * FROM shop_product WHERE id = ? AND status = 1", (request.form.get("product", type=int),)
        )
        if product is None:
            abort(404)
        back = url_for("slug_page", slug=product["url_key"])
        qty = request.form.get("qty", "1").strip()
        if not qty.isdigit() or int(qty) < 1:
            flash("Please enter a quantity greater than 0.", "error")
            return redirect(back)
        opts = []
        for field, label in (("size", "Size"), ("color", "Color")):
            allowed = product[field + "s"].split(",") if product[field + "s"] else []
            if allowed:
                value = request.form.get(field, "")
                if value not in allowed:
                    flash("You need to choose options for your item.", "error")
                    return redirect(back)
                opts.append(f"{label}: {value}")
        if not product["is_in_stock"] or product["qty"] < int(qty):
            flash("The requested qty is not available", "error")
            return redirect(back)
        key = _cart_key()
        options = "; ".join(opts)
        existing = query_one(
            "SELECT id FROM shop_cart_item WHERE cart_key = ? AND product_id = ? AND options = ?",
            (key, product["id"], options),
        )
        if existing:
            execute("UPDATE shop_cart_item SET qty = qty + ? WHERE id = ?", (int(qty), existing["id"]))
        else:
            execute(
                "INSERT INTO shop_cart_item (cart_key, product_id, options, qty) VALUES (?, ?, ?, ?)",
                (key, product["id"], options, int(qty)),
            )
        flash(f"You added {product['name']} to your shopping cart.", "success")
        return redirect(request.form.get("return_url") or back)

    @app.post("/checkout/cart/addgroup/")
    def cart_add_group() -> Any:
        """The "Recently Ordered" block: one of each ticked product (options-free products only)."""
        ids = [int(v) for v in request.form.getlist("order_items") if v.isdigit()]
        products = (
            query(
                f"SELECT * FROM shop_product WHERE status = 1 AND sizes = '' AND is_in_stock = 1"
                f" AND id IN ({','.join('?' * len(ids))})",
                ids,
            )
            if ids
            else []
        )
        key = _cart_key()
        for product in products:
            execute(
                "INSERT INTO shop_cart_item (cart_key, product_id, options, qty) VALUES (?, ?, '', 1)",
                (key, product["id"]),
            )
        if products:
            flash(f"You added {len(products)} item(s) to your shopping cart.", "success")
        else:
            flash("Please select the products you want to add to the cart.", "error")
        return redirect(url_for("cart"))

    @app.get("/checkout/cart/")
    def cart() -> str:
        rows = _cart_rows(_cart_key(create=False) or "-")
        return render_template("cart.html", rows=rows, subtotal=sum(r["row_total"] for r in rows))

    @app.post("/checkout/cart/updatePost/")
    def cart_update() -> Any:
        key = _cart_key(create=False) or "-"
        for row in _cart_rows(key):
            value = request.form.get(f"cart[{row['id']}][qty]", str(row["qty"])).strip()
            if not value.isdigit():
                flash("Please enter a valid number in this field.", "error")
                return redirect(url_for("cart"))
            if int(value) == 0:
                execute("DELETE FROM shop_cart_item WHERE id = ?", (row["id"],))
            else:
                execute("UPDATE shop_cart_item SET qty = ? WHERE id = ?", (int(value), row["id"]))
        flash("Your shopping cart has been updated.", "success")
        return redirect(url_for("cart"))

    @app.post("/checkout/cart/delete/<int:item_id>/")
    def cart_delete(item_id: int) -> Any:
        execute("DELETE FROM shop_cart_item WHERE id = ? AND cart_key = ?", (item_id, _cart_key(create=False) or "-"))
        return redirect(url_for("cart"))

    @app.route("/checkout/", methods=["GET", "POST"])
    def checkout() -> Any:
        key = _cart_key(create=False) or "-"
        rows = _cart_rows(key)
        if not rows:
            flash("You have no items in your shopping cart.", "error")
            return redirect(url_for("cart"))
        uid = current_user_id()
        default = _default_address(uid, "shipping") if uid else None
        form: dict[str, str] = {f: (default[f] if default else "") for f in ADDRESS_FIELDS}
        form.setdefault("country", "United States")
        form["country"] = form["country"] or "United States"
        form.update(email="", shipping_method="flatrate")
        errors: dict[str, str] = {}
        if request.method == "POST":
            form.update({k: request.form.get(k, "").strip() for k in (*ADDRESS_FIELDS, "email", "shipping_method")})
            errors = _validate_address(form)
            if not uid and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", form["email"]):
                errors["email"] = "Please enter a valid email address (Ex: johndoe@domain.com)."
            if form["shipping_method"] not in SHIPPING_METHODS:
                errors["shipping_method"] = "The shipping method is missing. Select the shipping method and try again."
            if not errors:
                order_id = _place_order(uid, key, rows, form)
                session["last_order_id"] = order_id
                return redirect(url_for("checkout_success"))
            flash("Please correct the highlighted fields.", "error")
        subtotal = sum(r["row_total"] for r in rows)
        n_items = sum(r["qty"] for r in rows)
        return render_template(
            "checkout.html",
            rows=rows,
            form=form,
            errors=errors,
            subtotal=subtotal,
            methods=SHIPPING_METHODS,
            n_items=n_items,
        )

    def _place_order(uid: int | None, key: str, rows: list[Any], form: dict[str, str]) -> int:
        label, rate, per_item = SHIPPING_METHODS[form["shipping_method"]]
        n_items = sum(r["qty"] for r in rows)
        shipping = rate * n_items if per_item else rate
        subtotal = round(sum(r["row_total"] for r in rows), 2)
        if uid is None:
            guest = query_one("SELECT id FROM shop_customer WHERE email = ?", (form["email"],))
            uid = (
                guest["id"]
                if guest
                else execute(
                    "INSERT INTO shop_customer (firstname, lastname, email, password_hash, phone, gender,"
                    " date_of_birth, created_at) VALUES (?, ?, ?, '', ?, 'Not Specified', '', ?)",
                    (form["firstname"], form["lastname"], form["email"], form["phone"], now_str()),
                )
            )
        db = get_db()
        when = now_str()
        street = form["street1"] + (f", {form['street2']}" if form["street2"] else "")
        cur = db.execute(
            "INSERT INTO shop_order (increment_id, customer_id, created_at, status, ship_firstname, ship_lastname,"
            " ship_street, ship_city, ship_region, ship_postcode, ship_country, ship_phone, shipping_method,"
            " shipping_amount, subtotal, grand_total) VALUES ('', ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                uid,
                when,
                form["firstname"],
                form["lastname"],
                street,
                form["city"],
                form["region"],
                form["postcode"],
                form["country"],
                form["phone"],
                label,
                shipping,
                subtotal,
                round(subtotal + shipping, 2),
            ),
        )
        order_id = inserted_id(cur)
        db.execute("UPDATE shop_order SET increment_id = ? WHERE id = ?", (f"{order_id:09d}", order_id))
        for r in rows:
            db.execute(
                "INSERT INTO shop_order_item (order_id, product_id, sku, name, options, price, qty)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (order_id, r["product_id"], r["sku"], r["name"], r["options"], r["price"], r["qty"]),
            )
            db.execute("UPDATE shop_product SET qty = MAX(qty - ?, 0) WHERE id = ?", (r["qty"], r["product_id"]))
        db.execute(
            "INSERT INTO shop_order_comment (order_id, created_at, status, comment, notify)"
            " VALUES (?, ?, 'pending', 'Order placed.', 0)",
            (order_id, when),
        )
        db.execute("DELETE FROM shop_cart_item WHERE cart_key = ?", (key,))
        db.commit()
        return order_id

    @app.get("/checkout/onepage/success/")
    def checkout_success() -> Any:
        order_id = session.get("last_order_id")
        if not order_id:
            return redirect(url_for("cart"))
        order = query_one("SELECT * FROM shop_order WHERE id = ?", (order_id,))
        return render_template("success.html", order=order)

    # -- customer account --------------------------------------------------------------------

    @app.route("/customer/account/login/", methods=["GET", "POST"])
    def login() -> Any:
        if request.method == "POST":
            email = request.form.get("login[username]", "").strip()
            password = request.form.get("login[password]", "")
            errors = {k: REQUIRED_MSG for k, v in (("email", email), ("password", password)) if not v}
            if not errors:
                row = query_one("SELECT * FROM shop_customer WHERE lower(email) = lower(?)", (email,))
                if row and row["password_hash"] and row["password_hash"] == hash_password(email, password):
                    guest = session.pop("guest_cart", None)
                    session["user_id"] = row["id"]
                    if guest:
                        execute("UPDATE shop_cart_item SET cart_key = ? WHERE cart_key = ?", (f"c{row['id']}", guest))
                    return redirect(safe_next(url_for("account")))
                flash(
                    "The account sign-in was incorrect or your account is disabled temporarily. "
                    "Please wait and try again later.",
                    "error",
                )
            return render_template("login.html", errors=errors, email=email), 200
        return render_template("login.html", errors={}, email="")

    @app.get("/customer/account/logout/")
    def logout() -> Any:
        session.clear()
        flash("You are signed out.", "success")
        return redirect(url_for("home"))

    @app.route("/customer/account/create/", methods=["GET", "POST"])
    def register() -> Any:
        form = {k: request.form.get(k, "").strip() for k in ("firstname", "lastname", "email")}
        errors: dict[str, str] = {}
        if request.method == "POST":
            password, confirm = request.form.get("password", ""), request.form.get("password_confirmation", "")
            errors = {k: REQUIRED_MSG for k, v in form.items() if not v}
            if form["email"] and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", form["email"]):
                errors["email"] = "Please enter a valid email address (Ex: johndoe@domain.com)."
            if len(password) < 8 or not (re.search(r"\d", password) and re.search(r"[A-Za-z]", password)):
                errors["password"] = (
                    "Minimum length of this field must be equal or greater than 8 symbols, with letters and digits."
                )
            elif password != confirm:
                errors["password_confirmation"] = "Please enter the same value again."
            if not errors and query_one("SELECT id FROM shop_customer WHERE lower(email) = lower(?)", (form["email"],)):
                errors["email"] = "There is already an account with this email address."
            if not errors:
                uid = execute(
                    "INSERT INTO shop_customer (firstname, lastname, email, password_hash, phone, gender,"
                    " date_of_birth, created_at) VALUES (?, ?, ?, ?, '', 'Not Specified', '', ?)",
                    (
                        form["firstname"],
                        form["lastname"],
                        form["email"],
                        hash_password(form["email"], password),
                        now_str(),
                    ),
                )
                session["user_id"] = uid
                flash("Thank you for registering with One Stop Market.", "success")
                return redirect(url_for("account"))
        return render_template("register.html", form=form, errors=errors)

    @app.get("/customer/account/")
    @login_required
    def account() -> str:
        uid = current_user_id()
        recent = query("SELECT * FROM shop_order WHERE customer_id = ? ORDER BY created_at DESC LIMIT 5", (uid,))
        billing, shipping = _default_address(uid, "billing"), _default_address(uid, "shipping")
        return render_template("account.html", recent=recent, billing=billing, shipping=shipping, section="account")

    @app.get("/sales/order/history/")
    @login_required
    def order_history() -> str:
        limit = int_arg("limit", 10, 1, 50)
        limit = limit if limit in (10, 20, 50) else 10
        page = paginate(
            "SELECT * FROM shop_order WHERE customer_id = ? ORDER BY created_at DESC",
            (current_user_id(),),
            per_page=limit,
            page=int_arg("p", 1),
        )
        return render_template("orders.html", page=page, limit=limit, section="orders")

    @app.get("/sales/order/view/order_id/<int:order_id>/")
    @login_required
    def order_view(order_id: int) -> str:
        order = query_one("SELECT * FROM shop_order WHERE id = ? AND customer_id = ?", (order_id, current_user_id()))
        if order is None:
            abort(404)
        items = query("SELECT * FROM shop_order_item WHERE order_id = ? ORDER BY id", (order_id,))
        comments = query("SELECT * FROM shop_order_comment WHERE order_id = ? AND notify = 1 ORDER BY id", (order_id,))
        billing = _default_address(current_user_id(), "billing")
        return render_template(
            "order_view.html", order=order, items=items, comments=comments, billing=billing, section="orders"
        )

    @app.post("/sales/order/reorder/order_id/<int:order_id>/")
    @login_required
    def reorder(order_id: int) -> Any:
        key = _cart_key()
        items = query(
            "SELECT i.* FROM shop_order_item i JOIN shop_order o ON o.id = i.order_id"
            " JOIN shop_product p ON p.id = i.product_id WHERE o.id = ? AND o.customer_id = ? AND p.status = 1",
            (order_id, current_user_id()),
        )
        for item in items:
            execute(
                "INSERT INTO shop_cart_item (cart_key, product_id, options, qty) VALUES (?, ?, ?, ?)",
                (key, item["product_id"], item["options"], item["qty"]),
            )
        flash(f"{len(items)} item(s) from order were added to your shopping cart.", "success")
        return redirect(url_for("cart"))

    @app.get("/customer/address/")
    @login_required
    def address_book() -> str:
        uid = current_user_id()
        billing, shipping = _default_address(uid, "billing"), _default_address(uid, "shipping")
        others = query(
            "SELECT * FROM shop_address WHERE customer_id = ? AND is_default_billing = 0"
            " AND is_default_shipping = 0 ORDER BY id",
            (uid,),
        )
        return render_template(
            "address_book.html", billing=billing, shipping=shipping, others=others, section="address"
        )

    @app.route("/customer/address/new/", methods=["GET", "POST"])
    @app.route("/customer/address/edit/id/<int:address_id>/", methods=["GET", "POST"])
    @login_required
    def address_edit(address_id: int | None = None) -> Any:
        uid = current_user_id()
        existing = None
        if address_id is not None:
            existing = query_one("SELECT * FROM shop_address WHERE id = ? AND customer_id = ?", (address_id, uid))
            if existing is None:
                abort(404)
        form = {f: (existing[f] if existing else "") for f in ADDRESS_FIELDS}
        form["country"] = form["country"] or "United States"
        flags = {
            "default_billing": bool(existing and existing["is_default_billing"]),
            "default_shipping": bool(existing and existing["is_default_shipping"]),
        }
        errors: dict[str, str] = {}
        if request.method == "POST":
            form.update({k: request.form.get(k, "").strip() for k in ADDRESS_FIELDS})
            flags = {k: flags[k] or request.form.get(k) == "1" for k in flags}
            errors = _validate_address(form)
            if not errors:
                db = get_db()
                for flag, column in (
                    ("default_billing", "is_default_billing"),
                    ("default_shipping", "is_default_shipping"),
                ):
                    if flags[flag]:
                        db.execute(f"UPDATE shop_address SET {column} = 0 WHERE customer_id = ?", (uid,))
                values = [form[f] for f in ADDRESS_FIELDS] + [
                    int(flags["default_billing"]),
                    int(flags["default_shipping"]),
                ]
                if existing:
                    db.execute(
                        f"UPDATE shop_address SET {', '.join(f + ' = ?' for f in ADDRESS_FIELDS)},"
                        " is_default_billing = ?, is_default_shipping = ? WHERE id = ?",
                        (*values, existing["id"]),
                    )
                else:
                    db.execute(
                        f"INSERT INTO shop_address (customer_id, {', '.join(ADDRESS_FIELDS)}, is_default_billing,"
                        f" is_default_shipping) VALUES (?, {', '.join('?' * (len(ADDRESS_FIELDS) + 2))})",
                        (uid, *values),
                    )
                db.commit()
                flash("You saved the address.", "success")
                return redirect(url_for("address_book"))
            flash("Please correct the highlighted fields.", "error")
        return render_template(
            "address_form.html", form=form, flags=flags, errors=errors, existing=existing, section="address"
        )

    @app.post("/customer/address/delete/id/<int:address_id>/")
    @login_required
    def address_delete(address_id: int) -> Any:
        execute(
            "DELETE FROM shop_address WHERE id = ? AND customer_id = ? AND is_default_billing = 0"
            " AND is_default_shipping = 0",
            (address_id, current_user_id()),
        )
        flash("You deleted the address.", "success")
        return redirect(url_for("address_book"))

    def _validate_address(form: dict[str, str]) -> dict[str, str]:
        errors = {f: REQUIRED_MSG for f in REQUIRED_ADDRESS if not form.get(f)}
        if form.get("postcode") and not ZIP_RE.match(form["postcode"]):
            errors["postcode"] = "Provided Zip/Postal Code seems to be invalid. Example: 12345-6789; 12345."
        if form.get("phone") and not PHONE_RE.match(form["phone"]):
            errors["phone"] = "Please enter a valid phone number."
        if form.get("region") and form.get("country") == "United States" and form["region"] not in REGIONS:
            errors["region"] = "Please select a state/province."
        return errors

    @app.get("/wishlist/")
    @login_required
    def wishlist() -> str:
        items = query(
            f"SELECT w.id AS wid, w.added_at, p.*, {RATING_SQL} FROM shop_wishlist w JOIN shop_product p"
            " ON p.id = w.product_id WHERE w.customer_id = ? ORDER BY w.id",
            (current_user_id(),),
        )
        return render_template("wishlist.html", items=items, section="wishlist")

    @app.post("/wishlist/index/add/")
    @login_required
    def wishlist_add() -> Any:
        product = query_one(
            "SELECT * FROM shop_product WHERE id = ? AND status = 1", (request.form.get("product", type=int),)
        ) or abort(404)
        execute(
            "INSERT OR IGNORE INTO shop_wishlist (customer_id, product_id, added_at) VALUES (?, ?, ?)",
            (current_user_id(), product["id"], now_str()),
        )
        flash(f"{product['name']} has been added to your Wish List.", "success")
        return redirect(url_for("wishlist"))

    @app.post("/wishlist/index/remove/<int:item_id>/")
    @login_required
    def wishlist_remove(item_id: int) -> Any:
        execute("DELETE FROM shop_wishlist WHERE id = ? AND customer_id = ?", (item_id, current_user_id()))
        flash("The item has been removed from your Wish List.", "success")
        return redirect(url_for("wishlist"))

    @app.route("/newsletter/manage/", methods=["GET", "POST"])
    @login_required
    def newsletter() -> Any:
        if request.method == "POST":
            on = request.form.get("is_subscribed") == "1"
            execute("UPDATE shop_customer SET newsletter = ? WHERE id = ?", (int(on), current_user_id()))
            flash(
                "We have saved your subscription." if on else "We have removed your newsletter subscription.", "success"
            )
            return redirect(url_for("account"))
        return render_template("newsletter.html", section="newsletter")

    @app.post("/newsletter/subscriber/new/")
    def newsletter_footer() -> Any:
        email = request.form.get("email", "").strip()
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
            flash("Please enter a valid email address (Ex: johndoe@domain.com).", "error")
        else:
            execute("UPDATE shop_customer SET newsletter = 1 WHERE lower(email) = lower(?)", (email,))
            flash("Thank you for your subscription.", "success")
        return redirect(request.referrer or url_for("home"))

    @app.route("/contact/", methods=["GET", "POST"])
    @app.route("/contact", methods=["GET", "POST"])
    def contact() -> Any:
        form = {k: request.form.get(k, "").strip() for k in ("name", "email", "telephone", "comment")}
        errors: dict[str, str] = {}
        if request.method == "POST":
            errors = {k: REQUIRED_MSG for k in ("name", "email", "comment") if not form[k]}
            if form["email"] and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", form["email"]):
                errors["email"] = "Please enter a valid email address (Ex: johndoe@domain.com)."
            if not errors:
                execute(
                    "INSERT INTO shop_contact (name, email, phone, comment, created_at) VALUES (?, ?, ?, ?, ?)",
                    (form["name"], form["email"], form["telephone"], form["comment"], now_str()),
                )
                flash(
                    "Thanks for contacting us with your comments and questions. We'll respond to you very soon.",
                    "success",
                )
                return redirect(url_for("contact"))
        elif current_user_id():
            c = query_row("SELECT * FROM shop_customer WHERE id = ?", (current_user_id(),))
            form.update(name=f"{c['firstname']} {c['lastname']}", email=c["email"])
        return render_template("contact.html", form=form, errors=errors)

    # -- Magento REST (read-only slice for evaluation helpers) ------------------------------

    @app.post("/rest/default/V1/integration/admin/token")
    @app.post("/rest/V1/integration/admin/token")
    def rest_token() -> Any:
        body = request.get_json(silent=True) or {}
        username, password = str(body.get("username", "")), str(body.get("password", ""))
        row = query_one("SELECT * FROM shop_admin_user WHERE username = ?", (username,))
        if row is None or row["password_hash"] != hash_password(username, password):
            return jsonify(message="The account sign-in was incorrect."), 401
        return jsonify(admin_token(ctx.secret_key, username))

    def _rest_authorized() -> bool:
        header = request.headers.get("Authorization", "")
        users = query("SELECT username FROM shop_admin_user")
        return any(header == f"Bearer {admin_token(ctx.secret_key, u['username'])}" for u in users)

    @app.get("/rest/V1/orders")
    def rest_orders() -> Any:
        if not _rest_authorized():
            return jsonify(message="The consumer isn't authorized to access %resources."), 401
        direction = (
            "ASC" if request.args.get("searchCriteria[sortOrders][0][direction]", "DESC").upper() == "ASC" else "DESC"
        )
        size = int_arg("searchCriteria[pageSize]", 20, 1, 1000)
        rows = query(
            f"SELECT o.*, c.email, c.firstname, c.lastname FROM shop_order o JOIN shop_customer c"
            f" ON c.id = o.customer_id ORDER BY o.created_at {direction}, o.id {direction} LIMIT ?",
            (size,),
        )
        items = [
            {
                "entity_id": r["id"],
                "increment_id": r["increment_id"],
                "created_at": r["created_at"],
                "status": r["status"],
                "grand_total": r["grand_total"],
                "customer_email": r["email"],
                "customer_firstname": r["firstname"],
                "customer_lastname": r["lastname"],
            }
            for r in rows
        ]
        total = query_row("SELECT COUNT(*) AS n FROM shop_order")["n"]
        return jsonify(items=items, total_count=total)

    @app.get("/rest/V1/products/<sku>/reviews")
    def rest_reviews(sku: str) -> Any:
        if not _rest_authorized():
            return jsonify(message="The consumer isn't authorized to access %resources."), 401
        rows = query(
            "SELECT r.* FROM shop_review r JOIN shop_product p ON p.id = r.product_id WHERE p.sku = ?"
            " ORDER BY r.created_at, r.id",
            (sku,),
        )
        return jsonify(
            [
                {
                    "id": r["id"],
                    "title": r["title"],
                    "detail": r["detail"],
                    "nickname": r["nickname"],
                    "created_at": r["created_at"],
                    "status": r["status"],
                    "ratings": [{"rating_name": "Rating", "percent": r["rating"] * 20, "value": r["rating"]}],
                }
                for r in rows
            ]
        )

    return app
