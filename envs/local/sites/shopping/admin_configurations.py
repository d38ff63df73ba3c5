"""A configurable product's variations in the back office, as Magento's product edit page keeps them.

The edit page's Configurations section lists the child products ("Current Variations"); "Edit
Configurations" opens the wizard where the size and colour values are ticked, and "Generate Products"
makes one child per combination: the combinations that are new are added, the ones no longer ticked
removed. A single child goes with its row's "Remove Product". The parent's ``sizes`` and ``colors`` follow
its children, so the storefront offers what the back office configured.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, abort, flash, redirect, render_template, request, url_for

from webarena_gym.envs.local.framework import get_db, login_required, query, query_one

from .catalog import APPAREL_SIZES, COLORS, SHOE_SIZES

# The size attribute's options: more than the seeded products use, as in Magento's sample catalogue.
SIZES = ("XXS", *APPAREL_SIZES, "XXL", "XXXL", *SHOE_SIZES)
ATTRIBUTES = (("size", "Size", SIZES), ("color", "Color", COLORS))


def children(product_id: int) -> list[Any]:
    """The product's variations in the attributes' option order (sizes, then colours)."""
    rows = query("SELECT * FROM shop_product_child WHERE parent_id = ?", (product_id,))
    return sorted(rows, key=lambda c: (SIZES.index(c["size"]), COLORS.index(c["color"])))


def _sync_options(product_id: int) -> None:
    """The parent's size and colour lists from its remaining children."""
    rows = children(product_id)
    sizes = [s for s in SIZES if any(c["size"] == s for c in rows)]
    colors = [c for c in COLORS if any(r["color"] == c for r in rows)]
    get_db().execute(
        "UPDATE shop_product SET sizes = ?, colors = ? WHERE id = ?", (",".join(sizes), ",".join(colors), product_id)
    )


def register(app: Flask) -> None:
    @app.route("/catalog/product/wizard/id/<int:product_id>/", methods=["GET", "POST"])
    @login_required
    def product_wizard(product_id: int) -> Any:
        product = query_one("SELECT * FROM shop_product WHERE id = ?", (product_id,)) or abort(404)
        current = children(product_id)
        selected = {code: {c[code] for c in current} for code, _label, _options in ATTRIBUTES}
        errors: dict[str, str] = {}
        qty = ""
        if request.method == "POST":
            selected = {code: set(request.form.getlist(f"{code}[]")) for code, _label, _options in ATTRIBUTES}
            qty = request.form.get("quantity", "").strip()
            for code, label, options in ATTRIBUTES:
                if not selected[code] & set(options):
                    errors[code] = f"Please select values for {label}."
            if qty and not qty.isdigit():
                errors["quantity"] = "Please enter a valid integer in this field."
            if not errors:
                _generate(product, current, selected, int(qty or 0))
                flash("You saved the product.", "success")
                return redirect(url_for("product_edit", product_id=product_id))
        return render_template(
            "product_configurations.html",
            product=product,
            attributes=ATTRIBUTES,
            selected=selected,
            qty=qty,
            errors=errors,
        )

    @app.post("/catalog/product/child/delete/id/<int:child_id>/")
    @login_required
    def product_child_delete(child_id: int) -> Any:
        child = query_one("SELECT parent_id FROM shop_product_child WHERE id = ?", (child_id,)) or abort(404)
        get_db().execute("DELETE FROM shop_product_child WHERE id = ?", (child_id,))
        _sync_options(child["parent_id"])
        get_db().commit()
        flash("You removed the product from the configurations.", "success")
        return redirect(url_for("product_edit", product_id=child["parent_id"]))


def _generate(product: Any, current: list[Any], selected: dict[str, set[str]], qty: int) -> None:
    """One child per ticked size and colour: keep the existing ones, add the new, drop the unticked."""
    wanted = [(s, c) for s in SIZES if s in selected["size"] for c in COLORS if c in selected["color"]]
    db = get_db()
    have = {(c["size"], c["color"]): c["id"] for c in current}
    dropped = [child_id for combo, child_id in have.items() if combo not in wanted]
    db.executemany("DELETE FROM shop_product_child WHERE id = ?", [(i,) for i in dropped])
    db.executemany(
        "INSERT INTO shop_product_child (parent_id, name, sku, size, color, price, qty, status)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, 1)",
        [
            (product["id"], f"{product['name']}-{s}-{c}", f"{product['sku']}-{s}-{c}", s, c, product["price"], qty)
            for s, c in wanted
            if (s, c) not in have
        ],
    )
    _sync_options(product["id"])
    db.commit()
