"""LocalSiteHost: the SiteHost of docs/design.md on top of :class:`LocalSites`.

The instance serves the task's sites plus the homepage (WebArena's "go home" target); serving only
those keeps the server's start-up short. Logging in goes through each site's real
form once per instance; the cookies it set are cached and re-added on later resets, which keeps reset
fast and stays valid because the pristine accounts and the instance's secret key never change.

Closing the site host parks its instance in the process's pool (:data:`envs.local.launcher.POOL`), and a
new host serving the same sites leases it instead of starting a server, cookies included; see
:mod:`envs.local.launcher` for the option that turns this off.
"""

from __future__ import annotations

from typing import Any

from webarena_gym.envs.local.launcher import POOL, LocalSites, LocalSitesError
from webarena_gym.envs.local.sites import load_site
from webarena_gym.envs.sites import SitesUnavailableError


class LocalSiteHost:
    """Local sites for one environment instance (see :class:`envs.sites.SiteHost`)."""

    kind = "local"

    def __init__(self, sites: list[str] | tuple[str, ...] = ()) -> None:
        self.sites = tuple(sites)
        self._local: LocalSites | None = None

    @property
    def local(self) -> LocalSites:
        if self._local is None:
            served = sorted(set(self.sites) | {"homepage"})
            try:
                self._local = POOL.lease(served) or LocalSites(served)
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
        cookies = self.local.login_cookies
        for site in sites:
            module = load_site(site)
            account = getattr(module, "ACCOUNT", None)
            if account is None or not hasattr(module, "login"):
                continue
            if site not in cookies:
                cookies[site] = self._login_once(context, module, urls[site], account)
            context.add_cookies(cookies[site])

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

    def check(self) -> None:
        if self._local is None or not self._local.is_alive():
            raise SitesUnavailableError("the local site server is not running (it stopped during the episode)")

    def close(self) -> None:
        """Hand the instance back to the pool (which closes it when reuse is off or it is unhealthy)."""
        if self._local is not None:
            local, self._local = self._local, None
            POOL.release(local)
