"""Queries and formatting both shopping apps use (category tree, ratings, money and dates)."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import sqlite3
from typing import Any
from urllib.parse import quote

from flask import Flask, Response

from webarena_gym.envs.local.framework import query

ORDER_STATUSES = ("pending", "processing", "complete", "canceled")
STATUS_LABELS = {"pending": "Pending", "processing": "Processing", "complete": "Complete", "canceled": "Canceled"}
REVIEW_STATUSES = {1: "Approved", 2: "Pending", 3: "Not Approved"}
SHIPPING_METHODS = {
    "flatrate": ("Flat Rate - Fixed", 5.0, True),  # (label, price, per item)
    "tablerate": ("Best Way - Table Rate", 15.0, False),
}
NOW = dt.datetime(2023, 6, 1, 12, 0)  # the store's "today": seed data ends just before it


def now_str() -> str:
    """Timestamps for new rows: the store's clock is frozen after its seed data, so order is stable."""
    latest = query("SELECT MAX(created_at) AS m FROM shop_order")[0]["m"]
    base = max(NOW, _parse(latest) if latest else NOW)
    return (base + dt.timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M:%S")


def _parse(value: str) -> dt.datetime:
    return dt.datetime.strptime(value, "%Y-%m-%d %H:%M:%S")


def money(value: float | None) -> str:
    return f"${(value or 0):,.2f}"


def short_date(value: str) -> str:
    """Magento's short format, e.g. 3/2/22."""
    d = _parse(value)
    return f"{d.month}/{d.day}/{d.strftime('%y')}"


def long_date(value: str) -> str:
    d = _parse(value)
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def datetime_label(value: str) -> str:
    d = _parse(value)
    return f"{d.strftime('%b')} {d.day}, {d.year} {d.strftime('%I:%M:%S %p').lstrip('0')}"


# Inline images: a page is one request, so navigation stays fast on a loaded machine.
_LOGO_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="160" height="40"><rect width="160" height="40" rx="6"'
    ' fill="#1979c3"/><text x="80" y="26" font-family="Arial" font-size="16" fill="#fff"'
    ' text-anchor="middle">One Stop Market</text></svg>'
)
_PRODUCT_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="120"><rect width="120" height="120"'
    ' fill="#eee"/><path d="M30 80 L55 50 L70 65 L80 55 L95 80 Z" fill="#bbb"/></svg>'
)


# Magento serves resized catalogue images under a cache directory named by the resize parameters.
MEDIA_CACHE = "/media/catalog/product/cache/3f8b5e1bb0a2fd7c5b2a8c1e4d6f9a07"


def product_image(product: Any) -> str:
    """The product's image URL, laid out as Magento's (``.../B/0/B0ABCDEFGH.jpg``)."""
    sku = product["sku"]
    return f"{MEDIA_CACHE}/{sku[0]}/{sku[1]}/{sku}.jpg"


def setup_jinja(app: Flask) -> None:
    """Filters, globals and the image route both apps use; templates are compiled now, not on a first visit."""
    app.jinja_env.globals.update(logo_src="data:image/svg+xml," + quote(_LOGO_SVG), product_image=product_image)
    app.jinja_env.filters.update(
        money=money,
        short_date=short_date,
        long_date=long_date,
        datetime_label=datetime_label,
        status_label=lambda s: STATUS_LABELS.get(s, s),
        review_status=lambda s: REVIEW_STATUSES.get(s, str(s)),
    )

    @app.get(f"{MEDIA_CACHE}/<path:_file>")
    def product_image_file(_file: str) -> Response:
        """Every catalogue image is the same small placeholder, which browsers cache."""
        response = Response(_PRODUCT_SVG, mimetype="image/svg+xml")
        response.headers["Cache-Control"] = "public, max-age=86400, immutable"
        return response

    for name in app.jinja_env.list_templates(filter_func=lambda n: n.endswith(".html")):
        app.jinja_env.get_template(name)


def category_tree() -> list[dict[str, Any]]:
    """Nested categories, each with its children and product count (descendants included)."""
    rows = query(
        "SELECT c.*, (SELECT COUNT(*) FROM shop_product p WHERE p.category_id = c.id AND p.status = 1) AS n"
        " FROM shop_category c ORDER BY position"
    )
    nodes = {r["id"]: {**dict(r), "children": []} for r in rows}
    roots: list[dict[str, Any]] = []
    for node in nodes.values():
        (nodes[node["parent_id"]]["children"] if node["parent_id"] else roots).append(node)

    def total(node: dict[str, Any]) -> int:
        node["count"] = node["n"] + sum(total(c) for c in node["children"])
        return node["count"]

    for root in roots:
        total(root)
    return roots


def subtree_ids(category_id: int) -> list[int]:
    rows = query(
        "WITH RECURSIVE t(id) AS (SELECT ? UNION ALL SELECT c.id FROM shop_category c JOIN t"
        " ON c.parent_id = t.id) SELECT id FROM t",
        (category_id,),
    )
    return [r["id"] for r in rows]


def breadcrumbs(category_id: int) -> list[sqlite3.Row]:
    rows = query(
        "WITH RECURSIVE t(id, parent_id, name, url_path, depth) AS ("
        " SELECT id, parent_id, name, url_path, 0 FROM shop_category WHERE id = ?"
        " UNION ALL SELECT c.id, c.parent_id, c.name, c.url_path, t.depth + 1 FROM shop_category c"
        " JOIN t ON c.id = t.parent_id) SELECT * FROM t ORDER BY depth DESC",
        (category_id,),
    )
    return rows


RATING_SQL = (
    "(SELECT ROUND(AVG(r.rating) * 20) FROM shop_review r WHERE r.product_id = p.id AND r.status = 1)"
    " AS rating, (SELECT COUNT(*) FROM shop_review r WHERE r.product_id = p.id AND r.status = 1)"
    " AS review_count"
)


def address_lines(a: Any) -> list[str]:
    """An address as Magento prints it (the city line is 'City, Region, Zip')."""
    lines = [f"{a['firstname']} {a['lastname']}"]
    if a["company"]:
        lines.append(a["company"])
    lines.append(a["street1"])
    if a["street2"]:
        lines.append(a["street2"])
    lines += [f"{a['city']}, {a['region']}, {a['postcode']}", a["country"], f"T: {a['phone']}"]
    return lines


def admin_token(secret: str, username: str) -> str:
    """Bearer token for the REST API: derived from the app secret, so no token table is needed."""
    return hmac.new(secret.encode(), f"admin-token:{username}".encode(), hashlib.sha256).hexdigest()[:32]
