"""Deterministic seed data: catalogue, customers, two years of orders, reviews, search terms, documents.

Everything is drawn from the RNG the framework passes in, in a fixed order, with fixed dates, so
two builds give byte-identical tables. The original wave (17 products per leaf of ``catalog.TREE``,
~200 orders, their reviews and search terms) comes first and never changes, because task answers
name its rows; the second wave (:mod:`.expansion`: more categories, 30 products per leaf, their
reviews) and the hand-written content (:mod:`.curated`) are appended after it. Invoices and shipments
are derived from the orders' status history.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import re
import sqlite3
import string

from webarena_gym.envs.local.framework import inserted_id

from .catalog import (
    APPAREL_SIZES,
    CITIES,
    COLORS,
    FIRST_NAMES,
    LAST_NAMES,
    REVIEW_TEXT,
    SEARCH_TERMS,
    SHOE_SIZES,
    STREETS,
    TREE,
    Branch,
    Leaf,
)
from .curated import add_content, add_featured
from .expansion import EXTENSIONS, TITLE_TAILS
from .expansion import PRODUCTS_PER_LEAF as GROWN_PER_LEAF

CUSTOMER_EMAIL = "emma.lopez@gmail.com"
CUSTOMER_PASSWORD = "Password.123"
ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = "admin1234"
PRODUCTS_PER_LEAF = 17
N_CUSTOMERS = 70
N_ORDERS = 210
ORDER_START = dt.datetime(2022, 1, 3, 9, 0)
ORDER_END = dt.datetime(2023, 5, 28, 18, 0)
FLAT_RATE = 5.0
VARIATION_QTY = 100


def hash_password(login: str, password: str) -> str:
    """Salted with the login so the hash is stable across builds (no random salt in seed data)."""
    return hashlib.sha256(f"{login.lower()}:{password}".encode()).hexdigest()


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def seed(conn: sqlite3.Connection, rng: random.Random) -> None:
    leaves, new_leaves = _categories(conn)
    products = _products(conn, rng, leaves)
    customers = _customers(conn, rng)
    _orders(conn, rng, products, customers)
    _reviews(conn, rng, products, customers)
    _extras(conn, rng, products)
    # The second wave draws from the same stream after everything above, so the original rows never change.
    grown = _grow(conn, rng, leaves + new_leaves, products)
    _reviews(conn, rng, grown, customers)
    add_featured(conn)
    add_content(conn)
    _documents(conn)
    _variations(conn)
    conn.commit()


def _categories(conn: sqlite3.Connection) -> tuple[list[tuple[int, Leaf]], list[tuple[int, Leaf]]]:
    """The original tree, then :data:`expansion.EXTENSIONS`; returns (original leaves, new leaves)."""
    leaves: list[tuple[int, Leaf]] = []

    def add(node: Branch | Leaf, parent: int | None, parent_path: str, position: int) -> None:
        path = f"{parent_path}/{node.slug}" if parent_path else node.slug
        cur = conn.execute(
            "INSERT INTO shop_category (parent_id, name, url_path, position) VALUES (?, ?, ?, ?)",
            (parent, node.name, path, position),
        )
        cid = inserted_id(cur)
        if isinstance(node, Leaf):
            leaves.append((cid, node))
        else:
            for i, child in enumerate(node.children):
                add(child, cid, path, i)

    for i, top in enumerate(TREE):
        add(top, None, "", i)
    original = list(leaves)
    leaves.clear()
    for parent_path, node in EXTENSIONS:
        parent = conn.execute("SELECT id FROM shop_category WHERE url_path = ?", (parent_path,)).fetchone()
        parent_id = parent[0] if parent else None
        position = conn.execute(
            "SELECT COALESCE(MAX(position), -1) + 1 FROM shop_category WHERE parent_id IS ?", (parent_id,)
        ).fetchone()[0]
        add(node, parent_id, parent_path, position)
    return original, list(leaves)


def _grow(
    conn: sqlite3.Connection, rng: random.Random, leaves: list[tuple[int, Leaf]], existing: list[dict]
) -> list[dict]:
    """Top every leaf up to :data:`expansion.PRODUCTS_PER_LEAF` products (names unique store-wide)."""
    held: dict[int, int] = {}
    for p in existing:
        held[p["category_id"]] = held.get(p["category_id"], 0) + 1
    plan = [(cid, leaf, GROWN_PER_LEAF - held.get(cid, 0)) for cid, leaf in leaves]
    grown = _make_products(conn, rng, plan, {p["name"] for p in existing}, TITLE_TAILS)
    # Merchandisers order each category by hand; a shuffle mixes the two waves on every listing page.
    for cid, _leaf in leaves:
        ids = [p["id"] for p in existing + grown if p["category_id"] == cid]
        rng.shuffle(ids)
        conn.executemany("UPDATE shop_product SET position = ? WHERE id = ?", list(enumerate(ids, start=1)))
    return grown


def _documents(conn: sqlite3.Connection) -> None:
    """Invoices for paid orders and shipments for delivered ones, dated by the order's status history."""
    paid = conn.execute(
        "SELECT o.id, o.grand_total, o.status, c.created_at FROM shop_order o JOIN shop_order_comment c"
        " ON c.order_id = o.id AND c.status = o.status WHERE o.status IN ('processing', 'complete')"
        " ORDER BY c.created_at, o.id"
    ).fetchall()
    for n, (order_id, total, _status, when) in enumerate(paid, start=1):
        conn.execute(
            "INSERT INTO shop_invoice (increment_id, order_id, created_at, grand_total) VALUES (?, ?, ?, ?)",
            (f"{n:09d}", order_id, when, total),
        )
    shipped = [row for row in paid if row[2] == "complete"]
    for n, (order_id, _total, _status, when) in enumerate(shipped, start=1):
        qty = conn.execute("SELECT SUM(qty) FROM shop_order_item WHERE order_id = ?", (order_id,)).fetchone()[0]
        conn.execute(
            "INSERT INTO shop_shipment (increment_id, order_id, created_at, total_qty) VALUES (?, ?, ?, ?)",
            (f"{n:09d}", order_id, when, qty),
        )


def _variations(conn: sqlite3.Connection) -> None:
    """A child product per size and colour of each configurable product, named and stocked as Magento's
    configuration wizard makes them (derived, not drawn, so no random draw moves)."""
    rows = conn.execute(
        "SELECT id, name, sku, price, status, sizes, colors FROM shop_product"
        " WHERE sizes LIKE '%,%' AND colors LIKE '%,%' ORDER BY id"
    ).fetchall()
    conn.executemany(
        "INSERT INTO shop_product_child (parent_id, name, sku, size, color, price, qty, status)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (pid, f"{name}-{size}-{color}", f"{sku}-{size}-{color}", size, color, price, VARIATION_QTY, status)
            for pid, name, sku, price, status, sizes, colors in rows
            for size in sizes.split(",")
            for color in colors.split(",")
        ],
    )


def _sku(rng: random.Random) -> str:
    return "B0" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(8))


def _description(rng: random.Random, name: str, leaf: Leaf, brand: str) -> str:
    features = rng.sample(
        [
            "Built from durable, tested materials for everyday use.",
            "Backed by a 1-year manufacturer warranty.",
            "Designed and quality-checked by {brand}.",
            "Easy to clean and simple to store.",
            "Ships in recyclable, frustration-free packaging.",
            "Thousands of customers choose it as their go-to {leaf}.",
            "Compact design that fits most spaces and bags.",
            "Satisfaction guaranteed: return within 30 days.",
        ],
        4,
    )
    body = " ".join(f.format(brand=brand, leaf=leaf.name.lower()) for f in features)
    return f"{name}. {body}"


def _products(conn: sqlite3.Connection, rng: random.Random, leaves: list[tuple[int, Leaf]]) -> list[dict]:
    products = _make_products(conn, rng, [(cid, leaf, PRODUCTS_PER_LEAF) for cid, leaf in leaves], set())
    # A few disabled products, as in a real store's back office.
    for p in rng.sample(products, 6):
        conn.execute("UPDATE shop_product SET status = 2 WHERE id = ?", (p["id"],))
        p["status"] = 2
    return products


def _make_products(
    conn: sqlite3.Connection,
    rng: random.Random,
    plan: list[tuple[int, Leaf, int]],
    seen: set[str],
    tails: tuple[str, ...] = (),
) -> list[dict]:
    """``count`` new products in each planned leaf; names stay unique across ``seen`` (which grows).

    With ``tails``, each name gets a marketplace-style selling point ("..., Black - Ships from USA").
    """
    products: list[dict] = []
    created = dt.datetime(2021, 6, 1)
    for cid, leaf, count in plan:
        made = 0
        while made < count:
            brand = rng.choice(leaf.brands)
            name = f"{brand} {rng.choice(leaf.modifiers)} {rng.choice(leaf.nouns)}"
            variant = rng.choice(leaf.variants)
            if variant:
                name = f"{name}, {variant}"
            if tails:
                name = f"{name} - {rng.choice(tails)}"
            if name in seen:
                continue
            seen.add(name)
            made += 1
            lo, hi = leaf.price
            price = round(rng.uniform(lo, hi), 2)
            sizes = colors = ""
            if leaf.option_kind:
                pool = APPAREL_SIZES if leaf.option_kind == "apparel" else SHOE_SIZES
                sizes = ",".join(pool)
                colors = ",".join(sorted(rng.sample(COLORS, 3), key=COLORS.index))
            qty = rng.choice([0, 3, 8, 15, 25, 40, 60, 100, 120, 150, 200])
            sku = _sku(rng)
            row = dict(
                sku=sku,
                name=name,
                url_key=slugify(name),
                category_id=cid,
                brand=brand,
                price=price,
                qty=qty,
                is_in_stock=1 if qty > 0 else 0,
                status=1,
                sizes=sizes,
                colors=colors,
                weight=round(rng.uniform(0.1, 12.0), 1),
                description=_description(rng, name, leaf, brand),
                created_at=(created + dt.timedelta(days=rng.randrange(0, 200))).strftime("%Y-%m-%d %H:%M:%S"),
            )
            cur = conn.execute(
                f"INSERT INTO shop_product ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
            )
            row["id"] = inserted_id(cur)
            products.append(row)
    return products


def _phone(rng: random.Random) -> str:
    return f"+1 {rng.randrange(201, 989)}{rng.randrange(200, 999)}{rng.randrange(1000, 9999)}"


def _customers(conn: sqlite3.Connection, rng: random.Random) -> list[dict]:
    people = [("Emma", "Lopez", CUSTOMER_EMAIL, "San Mateo", "California", "94010", "101 S San Mateo Dr")]
    used = {("Emma", "Lopez")}
    while len(people) < N_CUSTOMERS:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        if (first, last) in used:
            continue
        used.add((first, last))
        city, region, zip3 = rng.choice(CITIES)
        street = f"{rng.randrange(10, 9999)} {rng.choice(STREETS)}"
        suffix = rng.choice(["", "", "88", ".xyz", "2020"])
        email = f"{first.lower()}.{last.lower()}{suffix}@{rng.choice(['gmail.com', 'yahoo.com', 'outlook.com'])}"
        people.append((first, last, email, city, region, f"{zip3}{rng.randrange(10, 99)}", street))
    customers = []
    for i, (first, last, email, city, region, postcode, street) in enumerate(people):
        phone = "+1 6505551212" if i == 0 else _phone(rng)
        created = (dt.datetime(2021, 3, 1) + dt.timedelta(days=rng.randrange(0, 280))).strftime("%Y-%m-%d %H:%M:%S")
        dob = f"{rng.randrange(1960, 2001)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
        password = CUSTOMER_PASSWORD if i == 0 else f"Pass.{rng.randrange(1000, 9999)}"
        cur = conn.execute(
            "INSERT INTO shop_customer (firstname, lastname, email, password_hash, phone, gender, date_of_birth,"
            " newsletter, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                first,
                last,
                email,
                hash_password(email, password),
                phone,
                rng.choice(["Female", "Male", "Not Specified"]),
                dob,
                0 if i == 0 else int(rng.random() < 0.3),
                created,
            ),
        )
        cid = inserted_id(cur)
        conn.execute(
            "INSERT INTO shop_address (customer_id, firstname, lastname, street1, city, region, postcode, country,"
            " phone, is_default_billing, is_default_shipping) VALUES (?, ?, ?, ?, ?, ?, ?, 'United States', ?, 1, 1)",
            (cid, first, last, street, city, region, postcode, phone),
        )
        customers.append(
            dict(
                id=cid,
                firstname=first,
                lastname=last,
                street=street,
                city=city,
                region=region,
                postcode=postcode,
                phone=phone,
            )
        )
    return customers


def _status_for(when: dt.datetime, rng: random.Random) -> str:
    if when > ORDER_END - dt.timedelta(days=45):
        return rng.choice(["pending", "pending", "processing", "complete", "canceled"])
    return rng.choices(["complete", "canceled", "processing"], weights=[70, 25, 5])[0]


def _orders(conn: sqlite3.Connection, rng: random.Random, products: list[dict], customers: list[dict]) -> None:
    span = (ORDER_END - ORDER_START).total_seconds()
    times = sorted(ORDER_START + dt.timedelta(seconds=rng.uniform(0, span)) for _ in range(N_ORDERS))
    enabled = [p for p in products if p["status"] == 1]
    for n, when in enumerate(times, start=1):
        cust = customers[0] if rng.random() < 0.22 else rng.choice(customers[1:])
        items = []
        for prod in rng.sample(enabled, rng.choice([1, 1, 1, 2, 2, 3, 4])):
            opts = ""
            if prod["sizes"]:
                opts = f"Size: {rng.choice(prod['sizes'].split(','))}; Color: {rng.choice(prod['colors'].split(','))}"
            items.append((prod, opts, rng.choice([1, 1, 1, 2, 3])))
        subtotal = round(sum(p["price"] * q for p, _, q in items), 2)
        shipping = FLAT_RATE * sum(q for _, _, q in items)
        status = _status_for(when, rng)
        cur = conn.execute(
            "INSERT INTO shop_order (increment_id, customer_id, created_at, status, ship_firstname, ship_lastname,"
            " ship_street, ship_city, ship_region, ship_postcode, ship_country, ship_phone, shipping_method,"
            " shipping_amount, subtotal, grand_total) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'United States', ?,"
            " 'Flat Rate - Fixed', ?, ?, ?)",
            (
                f"{n:09d}",
                cust["id"],
                when.strftime("%Y-%m-%d %H:%M:%S"),
                status,
                cust["firstname"],
                cust["lastname"],
                cust["street"],
                cust["city"],
                cust["region"],
                cust["postcode"],
                cust["phone"],
                shipping,
                subtotal,
                round(subtotal + shipping, 2),
            ),
        )
        oid = inserted_id(cur)
        for prod, opts, qty in items:
            conn.execute(
                "INSERT INTO shop_order_item (order_id, product_id, sku, name, options, price, qty)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (oid, prod["id"], prod["sku"], prod["name"], opts, prod["price"], qty),
            )
        conn.execute(
            "INSERT INTO shop_order_comment (order_id, created_at, status, comment, notify) VALUES (?, ?, ?, ?, 0)",
            (oid, when.strftime("%Y-%m-%d %H:%M:%S"), "pending", "Order placed."),
        )
        if status != "pending":
            later = (when + dt.timedelta(hours=rng.randrange(2, 72))).strftime("%Y-%m-%d %H:%M:%S")
            note = {
                "complete": "Shipped and delivered.",
                "canceled": "Canceled at the customer's request.",
                "processing": "Payment received; preparing shipment.",
            }[status]
            conn.execute(
                "INSERT INTO shop_order_comment (order_id, created_at, status, comment, notify) VALUES (?, ?, ?, ?, 1)",
                (oid, later, status, note),
            )


def _reviews(conn: sqlite3.Connection, rng: random.Random, products: list[dict], customers: list[dict]) -> None:
    start = dt.datetime(2021, 8, 1)
    handles = (
        "Amazon Customer",
        "MH",
        "Cally",
        "N Randall",
        "Misba009",
        "TechGuy",
        "happyshopper",
        "J.R.",
        "Mom of 3",
        "outdoorsy",
        "Kindle Fan",
        "bargainhunter",
    )
    for prod in products:
        for _ in range(rng.choice([0, 1, 2, 2, 3, 3, 4, 5, 6])):
            rating = rng.choices([1, 2, 3, 4, 5], weights=[8, 7, 12, 28, 45])[0]
            band = "good" if rating >= 4 else "mixed" if rating == 3 else "bad"
            titles, sentences = REVIEW_TEXT[band]
            if rng.random() < 0.35:
                cust = rng.choice(customers[1:])
                nickname, customer_id = f"{cust['firstname']} {cust['lastname']}", cust["id"]
            else:
                nickname, customer_id = (
                    rng.choice(handles + tuple(f"{f} {rng.choice(LAST_NAMES)[0]}." for f in FIRST_NAMES[:8])),
                    None,
                )
            status = rng.choices([1, 2, 3], weights=[94, 4, 2])[0]
            when = start + dt.timedelta(minutes=rng.randrange(0, 60 * 24 * 640))
            conn.execute(
                "INSERT INTO shop_review (product_id, customer_id, nickname, title, detail, rating, status, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    prod["id"],
                    customer_id,
                    nickname,
                    rng.choice(titles),
                    " ".join(rng.sample(sentences, 2)),
                    rating,
                    status,
                    when.strftime("%Y-%m-%d %H:%M:%S"),
                ),
            )


def _extras(conn: sqlite3.Connection, rng: random.Random, products: list[dict]) -> None:
    uses = sorted(rng.sample(range(3, 400), len(SEARCH_TERMS)), reverse=True)
    for term, n in zip(SEARCH_TERMS, uses, strict=True):
        hits = conn.execute("SELECT COUNT(*) FROM shop_product WHERE name LIKE ?", (f"%{term}%",)).fetchone()[0]
        conn.execute(
            "INSERT INTO shop_search_term (query, num_results, uses, updated_at) VALUES (?, ?, ?, ?)",
            (term, hits, n, "2023-05-20 10:00:00"),
        )
    for i, prod in enumerate(rng.sample([p for p in products if p["status"] == 1], 3)):
        conn.execute(
            "INSERT INTO shop_wishlist (customer_id, product_id, added_at) VALUES (1, ?, ?)",
            (prod["id"], f"2023-0{i + 2}-1{i} 12:00:00"),
        )
    conn.execute(
        "INSERT INTO shop_admin_user (username, password_hash, firstname, lastname, email)"
        " VALUES (?, ?, 'Admin', 'User', 'admin@onestopmarket.com')",
        (ADMIN_USERNAME, hash_password(ADMIN_USERNAME, ADMIN_PASSWORD)),
    )
