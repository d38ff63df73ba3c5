"""reddit: a Postmill-like forum (forums, submissions, nested comments, votes, profiles, search)."""

from __future__ import annotations

from typing import Any

from .data import ACCOUNT, SCHEMA, seed
from .views import create_app

__all__ = ["ACCOUNT", "SCHEMA", "create_app", "login", "seed"]


def login(page: Any, base_url: str, account: dict[str, str]) -> None:
    """Log a Playwright page in through the site's own form, as WebArena's auto-login does."""
    page.goto(f"{base_url}/login")
    page.get_by_label("Username").fill(account["username"])
    page.get_by_label("Password").fill(account["password"])
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    if "/login" in page.url:
        raise RuntimeError(f"reddit login failed for {account['username']!r}")
