"""reddit: a Postmill-like forum (forums, submissions, nested comments, votes, profiles, search)."""

from __future__ import annotations

from typing import Any

from webarena_gym.envs.local.framework import form_login

from .data import ACCOUNT, SCHEMA, seed
from .views import create_app

__all__ = ["ACCOUNT", "SCHEMA", "create_app", "login", "seed"]


def login(page: Any, base_url: str, account: dict[str, str]) -> None:
    """Log a Playwright page in through the site's own form, as WebArena's auto-login does."""
    form_login(page, f"{base_url}/login", "Username", "Log in", account)
