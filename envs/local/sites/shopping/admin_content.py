"""The back office's content and marketing pages: CMS pages, storefront themes and cart price rules."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask, abort, flash, redirect, render_template, request, url_for

from webarena_gym.envs.local.framework import execute, login_required, query_one

from .common import now_str
from .grid import Column, Grid

ACTIVE = (("1", "Enabled"), ("0", "Disabled"))
WEBSITES = (("1", "Main Website"),)
CUSTOMER_GROUPS = (("0", "NOT LOGGED IN"), ("1", "General"), ("2", "Wholesale"), ("3", "Retailer"))
RULE_ACTIONS = (
    ("by_percent", "Percent of product price discount"),
    ("by_fixed", "Fixed amount discount"),
    ("cart_fixed", "Fixed amount discount for whole cart"),
    ("buy_x_get_y", "Buy X get Y free (discount amount is Y)"),
)

CMS_PAGES = Grid(
    "Pages",
    "FROM shop_cms_page g",
    (
        Column("id", "ID", "g.id", "range"),
        Column("title", "Title", "g.title", keyword=True),
        Column("identifier", "URL Key", "g.identifier", keyword=True),
        Column(
            "layout",
            "Layout",
            "CASE WHEN g.identifier = 'home' THEN '1 column' ELSE '2 columns with right bar' END",
            "",
        ),
        Column("store", "Store View", "'All Store Views'", ""),
        Column("is_active", "Status", "g.is_active", "select", ACTIVE, render="label"),
        Column("created_at", "Created", "g.created_at", "", render="datetime"),
        Column("updated_at", "Modified", "g.updated_at", "", render="datetime"),
    ),
    default_sort="id",
    row_link="/cms/page/edit/page_id/{id}/",
    add_button=("Add New Page", "cms_page_new"),
)

THEMES = Grid(
    "Themes",
    "FROM shop_theme t LEFT JOIN shop_theme parent ON parent.id = t.parent_id",
    (
        Column("title", "Theme Title", "t.title", keyword=True),
        Column("parent", "Parent Theme", "COALESCE(parent.title, '')", ""),
        Column("path", "Theme Path", "t.path", keyword=True),
        Column("id", "ID", "t.id", "", visible=False),
    ),
    default_sort="id",
    fixed_where=("t.area = 'frontend'",),
    row_link="/admin/system_design_theme/edit/id/{id}/",
    link_label="View",
)

PRICE_RULES = Grid(
    "Cart Price Rules",
    "FROM shop_sales_rule r",
    (
        Column("id", "ID", "r.id", "range"),
        Column("name", "Rule", "r.name", keyword=True),
        Column("coupon_code", "Coupon Code", "r.coupon_code", keyword=True),
        Column("priority", "Priority", "r.priority", ""),
        Column("is_active", "Status", "r.is_active", "select", (("1", "Active"), ("0", "Inactive")), render="label"),
        Column("website", "Web Site", "'Main Website'", ""),
    ),
    default_sort="id",
    row_link="/sales_rule/promo_quote/edit/id/{id}/",
    add_button=("Add New Rule", "price_rule_new"),
)


def register(app: Flask) -> None:
    from .admin import register_grid

    register_grid(app, CMS_PAGES, "cms_pages", "/cms/page/")
    register_grid(app, THEMES, "themes", "/admin/system_design_theme/")
    register_grid(app, PRICE_RULES, "price_rules", "/sales_rule/promo_quote/")

    @app.route("/cms/page/new/", methods=["GET", "POST"], endpoint="cms_page_new")
    @app.route("/cms/page/edit/page_id/<int:page_id>/", methods=["GET", "POST"])
    @login_required
    def cms_page_edit(page_id: int | None = None) -> Any:
        page = query_one("SELECT * FROM shop_cms_page WHERE id = ?", (page_id,)) if page_id else None
        if page_id and page is None:
            abort(404)
        keys = ("title", "identifier", "content_heading", "content", "is_active")
        form = {k: str(page[k]) if page else "" for k in keys}
        form["is_active"] = form["is_active"] or "1"
        errors: dict[str, str] = {}
        if request.method == "POST":
            form.update({k: request.form.get(k, "").strip() for k in keys})
            if not form["title"]:
                errors["title"] = "This is a required field."
            form["identifier"] = form["identifier"] or re.sub(r"[^a-z0-9]+", "-", form["title"].lower()).strip("-")
            clash = query_one(
                "SELECT id FROM shop_cms_page WHERE identifier = ? AND id IS NOT ?", (form["identifier"], page_id)
            )
            if clash:
                errors["identifier"] = (
                    "The value specified in the URL Key field would generate a URL that already exists."
                )
            if form["is_active"] not in ("0", "1"):
                errors["is_active"] = "Please select a status."
            if not errors:
                values = (
                    form["title"],
                    form["identifier"],
                    form["content_heading"],
                    form["content"],
                    int(form["is_active"]),
                )
                if page:
                    execute(
                        "UPDATE shop_cms_page SET title = ?, identifier = ?, content_heading = ?, content = ?,"
                        " is_active = ?, updated_at = ? WHERE id = ?",
                        (*values, now_str(), page_id),
                    )
                else:
                    page_id = execute(
                        "INSERT INTO shop_cms_page (title, identifier, content_heading, content, is_active,"
                        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (*values, now_str(), now_str()),
                    )
                flash("You saved the page.", "success")
                return redirect(url_for("cms_page_edit", page_id=page_id))
        return render_template("cms_page_edit.html", page=page, form=form, errors=errors, statuses=ACTIVE)

    @app.get("/admin/system_design_theme/edit/id/<int:theme_id>/")
    @app.get("/admin/system_design_theme/edit/id/<int:theme_id>")
    @login_required
    def theme_view(theme_id: int) -> str:
        theme = query_one(
            "SELECT t.*, parent.title AS parent_title FROM shop_theme t LEFT JOIN shop_theme parent"
            " ON parent.id = t.parent_id WHERE t.id = ?",
            (theme_id,),
        ) or abort(404)
        return render_template("theme_view.html", theme=theme)

    @app.route("/sales_rule/promo_quote/new/", methods=["GET", "POST"], endpoint="price_rule_new")
    @app.route("/sales_rule/promo_quote/edit/id/<int:rule_id>/", methods=["GET", "POST"])
    @login_required
    def price_rule_edit(rule_id: int | None = None) -> Any:
        rule = query_one("SELECT * FROM shop_sales_rule WHERE id = ?", (rule_id,)) if rule_id else None
        if rule_id and rule is None:
            abort(404)
        form: dict[str, Any] = {
            "name": rule["name"] if rule else "",
            "description": rule["description"] if rule else "",
            "is_active": str(rule["is_active"]) if rule else "1",
            "website_ids": rule["website_ids"].split(",") if rule else [],
            "customer_group_ids": rule["customer_group_ids"].split(",") if rule else [],
            "coupon_code": rule["coupon_code"] if rule else "",
            "from_date": rule["from_date"] if rule else "",
            "to_date": rule["to_date"] if rule else "",
            "priority": str(rule["priority"]) if rule else "",
            "simple_action": rule["simple_action"] if rule else "by_percent",
            "discount_amount": f"{rule['discount_amount']:g}" if rule else "",
        }
        errors: dict[str, str] = {}
        if request.method == "POST":
            for key in form:
                form[key] = request.form.getlist(key) if key.endswith("_ids") else request.form.get(key, "").strip()
            errors = _validate_rule(form)
            if not errors:
                values = (
                    form["name"],
                    form["description"],
                    int(form["is_active"]),
                    ",".join(form["website_ids"]),
                    ",".join(form["customer_group_ids"]),
                    form["coupon_code"],
                    form["from_date"],
                    form["to_date"],
                    int(form["priority"] or 0),
                    form["simple_action"],
                    float(form["discount_amount"] or 0),
                )
                columns = (
                    "name, description, is_active, website_ids, customer_group_ids, coupon_code, from_date,"
                    " to_date, priority, simple_action, discount_amount"
                )
                if rule:
                    assignments = ", ".join(f"{c.strip()} = ?" for c in columns.split(","))
                    execute(f"UPDATE shop_sales_rule SET {assignments} WHERE id = ?", (*values, rule_id))
                else:
                    execute(f"INSERT INTO shop_sales_rule ({columns}) VALUES ({', '.join('?' * len(values))})", values)
                flash("You saved the rule.", "success")
                return redirect(url_for("price_rules"))
        return render_template(
            "price_rule_edit.html",
            rule=rule,
            form=form,
            errors=errors,
            websites=WEBSITES,
            groups=CUSTOMER_GROUPS,
            actions=RULE_ACTIONS,
        )


def _validate_rule(form: dict[str, Any]) -> dict[str, str]:
    errors = {}
    if not form["name"]:
        errors["name"] = "This is a required field."
    if not form["website_ids"] or not set(form["website_ids"]) <= {v for v, _ in WEBSITES}:
        errors["website_ids"] = "This is a required field."
    if not form["customer_group_ids"] or not set(form["customer_group_ids"]) <= {v for v, _ in CUSTOMER_GROUPS}:
        errors["customer_group_ids"] = "This is a required field."
    if form["simple_action"] not in {v for v, _ in RULE_ACTIONS}:
        errors["simple_action"] = "Please select an action."
    if form["discount_amount"] and not re.fullmatch(r"\d+(\.\d+)?", form["discount_amount"]):
        errors["discount_amount"] = "Please enter a number 0 or greater in this field."
    if form["priority"] and not form["priority"].isdigit():
        errors["priority"] = "Please enter a valid integer in this field."
    if form["is_active"] not in ("0", "1"):
        errors["is_active"] = "Please select a status."
    return errors
