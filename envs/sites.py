"""Where a task's websites live: the ``SiteHost`` protocol and the real self-hosted WebArena sites.

A task only knows site *names* and placeholders (``__GITLAB__``); a site host turns them into base URLs,
gets the sites ready, resets their state and logs the browser in. The same task JSON therefore runs
against the real WebArena containers (:class:`RealSiteHost`) or the embedded local suite.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

SITES: tuple[str, ...] = ("shopping", "shopping_admin", "reddit", "gitlab", "wikipedia", "map", "homepage")
PLACEHOLDERS: dict[str, str] = {site: f"__{site.upper()}__" for site in SITES}
# BrowserGym's variable names for the self-hosted sites.
ENV_VARS: dict[str, str] = {site: f"WA_{site.upper()}" for site in SITES}


class SitesUnavailableError(RuntimeError):
    """The sites a task needs cannot be reached or configured; the message says how to fix it."""


@runtime_checkable
class SiteHost(Protocol):
    """What an environment needs from the sites behind a task (see docs/design.md)."""

    sites: tuple[str, ...]

    def urls(self) -> dict[str, str]:
        """Site name -> base URL without a trailing slash."""

    def prepare(self) -> None:
        """Make the sites reachable (idempotent); raise :class:`SitesUnavailableError` if impossible."""

    def reset_state(self) -> None:
        """Bring the sites' data back to the state a task expects at its start."""

    def login(self, context: Any, sites: Iterable[str]) -> None:
        """Log the Playwright browser ``context`` in to each of ``sites`` that has an account."""

    def snapshot_state(self) -> Any | None:
        """A token for the current site data, or None if the site host cannot snapshot."""

    def restore_state(self, token: Any) -> None:
        """Put the site data back to what ``token`` recorded."""

    def check(self) -> None:
        """Raise :class:`SitesUnavailableError` if a site stopped answering (asked before evaluating,
        so a dead server is the episode's error, not a score of 0); never restarts anything."""

    def close(self) -> None:
        """Release servers and files (idempotent)."""


PROBE_TIMEOUT_S = 10.0


def probe(urls: Iterable[str], timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Raise :class:`SitesUnavailableError` unless every URL answers over HTTP without a gateway or
    server-unavailable status (any page, a redirect or a 4xx means the server is up)."""
    import urllib.error
    import urllib.request

    for url in urls:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout_s):
                pass
        except urllib.error.HTTPError as exc:
            if exc.code in (502, 503, 504):
                raise SitesUnavailableError(f"{url} answers {exc.code} {exc.reason}") from None
        except (OSError, ValueError) as exc:
            raise SitesUnavailableError(f"{url} does not answer: {exc}") from None


SiteHostFactory = Callable[[], SiteHost]


def sites_in_config(config: dict) -> tuple[str, ...]:
    """Sites a task touches: its ``sites`` list plus any site whose placeholder appears anywhere in it."""
    text = repr(config)
    found = set(config.get("sites", ())) | {site for site, ph in PLACEHOLDERS.items() if ph in text}
    return tuple(site for site in SITES if site in found)


def replace_placeholders(value: Any, urls: dict[str, str]) -> Any:
    """Deep copy of ``value`` with every ``__SITE__`` placeholder replaced by that site's base URL."""
    if isinstance(value, str):
        # Longest placeholders first so __SHOPPING__ never eats the start of __SHOPPING_ADMIN__.
        for site in sorted(urls, key=lambda s: -len(PLACEHOLDERS.get(s, ""))):
            if site in PLACEHOLDERS:
                value = value.replace(PLACEHOLDERS[site], urls[site])
        return value
    if isinstance(value, dict):
        return {key: replace_placeholders(item, urls) for key, item in value.items()}
    if isinstance(value, list):
        return [replace_placeholders(item, urls) for item in value]
    return value


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower-cased, default ports dropped."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


# WebArena's accounts and how each site's login form is filled.
ACCOUNTS: dict[str, dict[str, str]] = {
    "shopping": {"username": "emma.lopez@gmail.com", "password": "Password.123"},
    "shopping_admin": {"username": "admin", "password": "admin1234"},
    "reddit": {"username": "MarvelsGrandpa", "password": "test1234"},
    "gitlab": {"username": "byteblaze", "password": "hello1234"},
}


def _login_shopping(page: Any, base: str, account: dict[str, str]) -> None:
    page.goto(f"{base}/customer/account/login/")
    page.get_by_label("Email", exact=True).fill(account["username"])
    page.get_by_label("Password", exact=True).fill(account["password"])
    page.get_by_role("button", name="Sign In").click()


def _login_shopping_admin(page: Any, base: str, account: dict[str, str]) -> None:
    page.goto(base)
    page.get_by_placeholder("user name").fill(account["username"])
    page.get_by_placeholder("password").fill(account["password"])
    page.get_by_role("button", name="Sign in").click()


def _login_reddit(page: Any, base: str, account: dict[str, str]) -> None:
    page.goto(f"{base}/login")
    page.get_by_label("Username").fill(account["username"])
    page.get_by_label("Password").fill(account["password"])
    page.get_by_role("button", name="Log in").click()


def _login_gitlab(page: Any, base: str, account: dict[str, str]) -> None:
    page.goto(f"{base}/users/sign_in")
    # BrowserGym re-targets get_by_test_id to its own ``bid`` attribute, so use CSS for GitLab's test ids.
    page.locator('[data-testid="username-field"]').or_(page.get_by_label("Username or email")).first.fill(
        account["username"]
    )
    page.locator('[data-testid="password-field"]').or_(page.get_by_label("Password")).first.fill(account["password"])
    page.get_by_role("button", name="Sign in").click()


_LOGIN_FORMS: dict[str, Callable[[Any, str, dict[str, str]], None]] = {
    "shopping": _login_shopping,
    "shopping_admin": _login_shopping_admin,
    "reddit": _login_reddit,
    "gitlab": _login_gitlab,
}


class FixedSiteHost:
    """Sites already running at known URLs, with no accounts and no resettable state.

    For pages you serve yourself (benchmarks, tests, a quick look at a task's JSON on a mirror).
    """

    def __init__(self, urls: dict[str, str]) -> None:
        self._urls = {site: url.rstrip("/") for site, url in urls.items()}
        self.sites = tuple(self._urls)

    def urls(self) -> dict[str, str]:
        return dict(self._urls)

    def prepare(self) -> None:
        """Nothing to start: the sites are already up."""

    def reset_state(self) -> None:
        """Static sites have no state to reset."""

    def login(self, context: Any, sites: Iterable[str]) -> None:
        """No accounts."""

    def snapshot_state(self) -> None:
        return None

    def restore_state(self, token: Any) -> None:
        raise NotImplementedError("fixed sites cannot be snapshotted; restore replays actions")

    def check(self) -> None:
        probe(self._urls.values())

    def close(self) -> None:
        """The sites belong to whoever started them."""


class RealSiteHost:
    """The self-hosted WebArena sites, found through BrowserGym's ``WA_*`` variables.

    Nothing here can reset the real containers (that needs a reset server or recreating them), so
    ``reset_state`` is a no-op and snapshots are unsupported: restores replay actions instead.
    """

    def __init__(self, sites: Iterable[str] = SITES, environ: dict[str, str] | None = None) -> None:
        unknown = set(sites) - set(SITES)
        if unknown:
            raise ValueError(f"unknown WebArena sites {sorted(unknown)}; known: {', '.join(SITES)}")
        self.sites = tuple(site for site in SITES if site in set(sites))
        self._environ = os.environ if environ is None else environ

    def missing_variables(self) -> list[str]:
        return [ENV_VARS[site] for site in self.sites if not self._environ.get(ENV_VARS[site], "").strip()]

    def urls(self) -> dict[str, str]:
        """Base URLs of every site whose variable is set (the task's sites and any others)."""
        return {
            site: self._environ[ENV_VARS[site]].strip().rstrip("/")
            for site in SITES
            if self._environ.get(ENV_VARS[site], "").strip()
        }

    def prepare(self) -> None:
        missing = self.missing_variables()
        if missing:
            example = "\n".join(f"  export {name}=http://<host>:<port>" for name in missing)
            raise SitesUnavailableError(
                f"this task needs the self-hosted WebArena sites {', '.join(self.sites)}, but "
                f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set. Point each variable at "
                f"the site's base URL, e.g.\n{example}\n(WebArena's default ports: shopping 7770, "
                "shopping_admin 7780/admin, reddit 9999, gitlab 8023, wikipedia 8888, map 3000, homepage 4399). "
                "Without the real sites, use the embedded suite: webarena/local.<id>."
            )

    def reset_state(self) -> None:
        """The real containers are reset outside this process (recreate them between runs)."""

    def login(self, context: Any, sites: Iterable[str]) -> None:
        urls = self.urls()
        for site in sites:
            if site not in _LOGIN_FORMS:
                continue
            page = context.new_page()
            try:
                _LOGIN_FORMS[site](page, urls[site], ACCOUNTS[site])
                page.wait_for_load_state("domcontentloaded")
            finally:
                page.close()

    def snapshot_state(self) -> None:
        return None

    def restore_state(self, token: Any) -> None:
        raise NotImplementedError("the real WebArena sites cannot be snapshotted; restore replays actions")

    def check(self) -> None:
        urls = self.urls()
        probe(urls[site] for site in self.sites if site in urls)

    def close(self) -> None:
        """Nothing to release: the sites run outside this process."""
