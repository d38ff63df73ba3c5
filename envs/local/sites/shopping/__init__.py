"""shopping: a OneStopMarket-like Magento storefront (Flask + SQLite), shared tables with shopping_admin.

Exports the site contract of docs/design.md: ``SCHEMA``, ``seed``, ``create_app``, ``ACCOUNT`` and
``login`` (which signs a Playwright page in through the storefront's own form).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webarena_gym.envs.local.framework import form_login

from .schema import SCHEMA
from .seed import CUSTOMER_EMAIL, CUSTOMER_PASSWORD, seed
from .store import create_app

ACCOUNT = {"username": CUSTOMER_EMAIL, "password": CUSTOMER_PASSWORD}


def login(page: Any, base_url: str, account: Mapping[str, str]) -> None:
    """Sign in at ``/customer/account/login/`` with Email and Password, as a customer would."""
    form_login(page, f"{base_url}/customer/account/login/", "Email", "Sign In", account)


__all__ = ["SCHEMA", "seed", "create_app", "ACCOUNT", "login"]
