"""shopping: a OneStopMarket-like Magento storefront (Flask + SQLite), shared tables with shopping_admin.

Exports the site contract of docs/design.md: ``SCHEMA``, ``seed``, ``create_app``, ``ACCOUNT`` and
``login`` (which signs a Playwright page in through the storefront's own form).
"""

from __future__ import annotations

from typing import Any, Mapping

from .schema import SCHEMA
from .seed import CUSTOMER_EMAIL, CUSTOMER_PASSWORD, seed
from .store import create_app

ACCOUNT = {"username": CUSTOMER_EMAIL, "password": CUSTOMER_PASSWORD}


def login(page: Any, base_url: str, account: Mapping[str, str]) -> None:
    """Sign in at ``/customer/account/login/`` by filling Email and Password, as a customer would."""
    page.goto(f"{base_url}/customer/account/login/")
    page.get_by_label("Email", exact=True).fill(account["username"])
    page.get_by_label("Password", exact=True).fill(account["password"])
    with page.expect_navigation():
        page.get_by_role("button", name="Sign In").click()
    if "/customer/account/login" in page.url:
        raise RuntimeError(f"shopping rejected the login of {account['username']!r}")


__all__ = ["SCHEMA", "seed", "create_app", "ACCOUNT", "login"]
