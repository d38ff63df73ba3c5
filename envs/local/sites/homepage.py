"""homepage: the start page that lists every site with a link, as WebArena's homepage (port 4399) does.

It has no account and no database; it only needs the other sites' URLs, which the server passes in.
Like WebArena's, it also serves ``/password.html``, the page of every site's account that WebArena's
agent prompt points the model to.
"""

from __future__ import annotations

import random
import sqlite3

from flask import Flask, render_template

from webarena_gym.envs.local.framework import SiteContext, make_app

SCHEMA = ""

# (site, title, description) in the order the page shows them.
CARDS: tuple[tuple[str, str, str], ...] = (
    (
        "shopping",
        "OneStopMarket",
        "An online shopping site: browse categories, search products, manage your cart and orders.",
    ),
    (
        "shopping_admin",
        "Merchant Admin Portal",
        "The store's back office: catalog, orders, customers, reviews and sales reports.",
    ),
    ("reddit", "Postmill Forums", "A discussion forum: subscribe to forums, read and write posts, comment and vote."),
    ("gitlab", "GitLab", "Code hosting: projects, repositories, issues, merge requests and team members."),
    ("wikipedia", "Wikipedia", "An offline encyclopedia of countries, cities, people and science topics."),
    (
        "map",
        "OpenStreetMap",
        "Find places, see their coordinates and addresses, and get directions by car, bike or foot.",
    ),
)


def seed(conn: sqlite3.Connection, rng: random.Random) -> None:
    """Nothing to seed: the homepage is static."""


def create_app(ctx: SiteContext) -> Flask:
    app = make_app(ctx, __name__)

    @app.get("/")
    def index() -> str:
        cards = [
            {"site": site, "title": title, "description": description, "url": ctx.urls.get(site)}
            for site, title, description in CARDS
        ]
        return render_template("index.html", cards=cards)

    @app.get("/scratchpad")
    def scratchpad() -> str:
        return render_template("scratchpad.html")

    @app.get("/password.html")
    def passwords() -> str:
        from webarena_gym.envs.local.sites import load_site

        accounts = []
        for site, title, _ in CARDS:
            account = getattr(load_site(site), "ACCOUNT", None)
            if account:
                accounts.append({"title": title, "url": ctx.urls.get(site), **account})
        return render_template("password.html", accounts=accounts)

    return app
