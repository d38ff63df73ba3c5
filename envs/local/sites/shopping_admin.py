"""shopping_admin: the store's Magento-like back office, a separate site on the shopping database.

Its tables are the storefront's (``SCHEMA`` is empty); the admin login is WebArena's
(admin / admin1234) and goes through the admin's own sign-in form.
"""

from __future__ import annotations

import random
import sqlite3
from typing import Any, Mapping

from envs.local.sites.shopping.admin import create_app
from envs.local.sites.shopping.seed import ADMIN_PASSWORD, ADMIN_USERNAME

SCHEMA = ""
ACCOUNT = {"username": ADMIN_USERNAME, "password": ADMIN_PASSWORD}


def seed(conn: sqlite3.Connection, rng: random.Random) -> None:
    """Nothing of its own: the admin user and all data come with the shopping seed."""


def login(page: Any, base_url: str, account: Mapping[str, str]) -> None:
    """Sign in through the admin form (Username, Password, "Sign in")."""
    page.goto(f"{base_url}/admin/auth/login/")
    page.get_by_label("Username", exact=True).fill(account["username"])
    page.get_by_label("Password", exact=True).fill(account["password"])
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()
    if "/admin/auth/login" in page.url:
        raise RuntimeError(f"shopping_admin rejected the login of {account['username']!r}")


__all__ = ["SCHEMA", "seed", "create_app", "ACCOUNT", "login"]
