"""LocalBackend: the SiteBackend of docs/design.md on top of :class:`LocalSites`.

The instance serves the task's sites plus the homepage (WebArena's "go home" target); serving only
those keeps the server's start-up short. Logging in goes through each site's real
form once per instance; the cookies it set are cached and re-added on later resets, which keeps reset
fast and stays valid because the pristine accounts and the instance's secret key never change.
"""

from __future__ import annotations

from typing import Any

from envs.backends import SitesUnavailableError
from envs.local.launcher import LocalSites, LocalSitesError
from envs.local.sites import load_site


class LocalBackend:
    """Local sites for one environment instance (see :class:`envs.backends.SiteBackend`)."""

    kind = "local"

    def __init__(self, sites: list[str] | tuple[str, ...] = ()) -> None:
        self.sites = tuple(sites)
        self._local: LocalSites | None = None
        self._cookies: dict[str, list[dict[str, Any]]] = {}

    @property
    def local(self) -> LocalSites:
        if self._local is None:
            try:
                self._local = LocalSites(sorted(set(self.sites) | {"homepage"}))
            except LocalSitesError as exc:
                raise SitesUnavailableError(str(exc)) from exc
        return self._local

    def urls(self) -> dict[str, str]:
        return self.local.urls

    def prepare(self) -> None:
        try:
            self.local.ensure_running()
        except (LocalSitesError, OSError) as exc:
            raise SitesUnavailableError(f"could not start the local sites: {exc}") from exc

    def reset_state(self) -> None:
        self.local.reset_state()

    def login(self, context: Any, sites: list[str] | tuple[str, ...]) -> None:
        """Log ``context`` (a Playwright BrowserContext) into every site of ``sites`` that has accounts."""
        urls = self.urls()
        for site in sites:
            module = load_site(site)
            account = getattr(module, "ACCOUNT", None)
            if account is None or not hasattr(module, "login"):
                continue
            if site not in self._cookies:
                self._cookies[site] = self._login_once(context, module, urls[site], account)
            context.add_cookies(self._cookies[site])

    @staticmethod
    def _login_once(context: Any, module: Any, base_url: str, account: dict[str, str]) -> list[dict[str, Any]]:
        """Log in through the site's form in a scratch tab; return the cookies the login added or changed."""
        def key(cookie: dict[str, Any]) -> tuple[str, ...]:
            return (cookie["name"], cookie["domain"], cookie["path"], cookie["value"])

        before = {key(c) for c in context.cookies()}
        page = context.new_page()
        try:
            module.login(page, base_url, account)
        finally:
            page.close()
        return [c for c in context.cookies() if key(c) not in before]

    def snapshot_state(self) -> bytes:
        return self.local.snapshot()

    def restore_state(self, token: bytes) -> None:
        self.local.restore(token)

    def close(self) -> None:
        if self._local is not None:
            self._local.close()
            self._local = None
        self._cookies.clear()
