"""shopping_admin: the store's Magento-like back office, a separate site on the shopping database.

Its tables are the storefront's (``SCHEMA`` is empty); the admin login is WebArena's
(admin / admin1234) and goes through the admin's own sign-in form.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Mapping
from typing import Any

from webarena_gym.envs.local.framework import form_login
from webarena_gym.envs.local.sites.shopping.admin import create_app
from webarena_gym.envs.local.sites.shopping.seed import ADMIN_PASSWORD, ADMIN_USERNAME

SCHEMA = ""
ACCOUNT = {"username": ADMIN_USERNAME, "password": ADMIN_PASSWORD}


def seed(conn: sqlite3.Connection, rng: random.Random) -> None:
    """Nothing of its own: the admin user and all data come with the shopping seed."""


def login(page: Any, base_url: str, account: Mapping[str, str]) -> None:
    """Sign in through the admin form (Username, Password, "Sign in")."""
    form_login(page, f"{base_url}/admin/auth/login/", "Username", "Sign in", account)


__all__ = ["SCHEMA", "seed", "create_app", "ACCOUNT", "login"]
