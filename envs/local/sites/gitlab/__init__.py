"""gitlab: a GitLab-like code host (projects, files, commits, issues, merge requests, members, profiles)."""

from __future__ import annotations

from typing import Any

from .data import ACCOUNT, SCHEMA, seed
from .views import create_app

__all__ = ["ACCOUNT", "SCHEMA", "create_app", "login", "seed"]


def login(page: Any, base_url: str, account: dict[str, str]) -> None:
    """Log a Playwright page in through the sign-in form, as WebArena's auto-login does."""
    page.goto(f"{base_url}/users/sign_in")
    page.get_by_label("Username or email").fill(account["username"])
    page.get_by_label("Password").fill(account["password"])
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()
    if "/users/sign_in" in page.url:
        raise RuntimeError(f"gitlab login failed for {account['username']!r}")
