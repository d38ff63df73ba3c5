"""The browser runtime: which Chromium runs with which flags, the shared Playwright driver, and reuse.

- :func:`find_chromium` / :func:`launch_options`: the executable and flags every launch gets (the
  launch patch in :mod:`envs.playwright_patches` applies them to BrowserGym's own launches too);
- :func:`acquire_playwright` / :func:`release_playwright`: leases on the one driver of the process;
- :class:`BrowserLease`: an environment's Chromium, taken from :data:`BROWSERS` (the browser a closed
  environment left) or launched, and handed back there when the environment closes;
- :class:`HeadlessChat`: in headless runs the chat window is an in-memory log, which halves reset
  time and saves a second browser per environment.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from webarena_gym.envs import playwright_patches
from webarena_gym.envs.bgym import current_shared_playwright, get_shared_playwright, set_shared_playwright
from webarena_gym.envs.pool import IdlePool

logger = logging.getLogger(__name__)

CHROMIUM_ENV_VAR = "WEBARENA_GYM_CHROMIUM"
CHROMIUM_ARGS_ENV_VAR = "WEBARENA_GYM_CHROMIUM_ARGS"  # extra flags, space-separated
REUSE_BROWSER_ENV_VAR = "WEBARENA_GYM_REUSE_BROWSER"
# How long a live browser process may take to answer :meth:`BrowserLease.alive`'s probe (it answers in ms).
PROBE_TIMEOUT_S = 5.0

# Flags that make Chromium start quietly as root on a closed network (see docs/design.md).
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
)

_SYSTEM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Chromium's headless shell: the same engine without the desktop browser around it. For headless runs
# it starts faster and takes about a third less CPU and memory (docs/benchmarks.md, "study").
_HEADLESS_SHELL_CANDIDATES = ("chromium-headless-shell", "chrome-headless-shell")
_DEBIAN_REAL_BINARY = Path("/usr/lib/chromium/chromium")
_DEBIAN_HEADLESS_SHELL = Path("/usr/lib/chromium/chromium-headless-shell")


class BrowserNotFoundError(RuntimeError):
    """No usable Chromium: the message says how to provide one."""


def _first_installed(direct: Path, names: tuple[str, ...]) -> str | None:
    """``direct`` if it is an executable file, else the first of ``names`` on PATH."""
    if direct.exists() and os.access(direct, os.X_OK):
        return str(direct)
    return next((path for path in map(shutil.which, names) if path), None)


def find_chromium(headless: bool = True) -> str | None:
    """Return the Chromium to use: the env-var override, else a system browser, else None.

    Headless runs prefer the headless shell when one is installed. ``None`` means "let Playwright use
    its own download", which only exists where ``playwright install chromium`` could reach the internet.
    """
    override = os.environ.get(CHROMIUM_ENV_VAR)
    if override:
        if not os.access(override, os.X_OK):
            raise BrowserNotFoundError(f"{CHROMIUM_ENV_VAR}={override!r} is not an executable file")
        return override
    shell = _first_installed(_DEBIAN_HEADLESS_SHELL, _HEADLESS_SHELL_CANDIDATES) if headless else None
    # Debian's /usr/bin/chromium is a shell wrapper; the real binary starts faster and quieter.
    return shell or _first_installed(_DEBIAN_REAL_BINARY, _SYSTEM_CANDIDATES)


def launch_options(extra_args: list[str] | None = None, headless: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``BrowserType.launch`` that every launch in this project uses."""
    args = list(extra_args or [])
    extra = os.environ.get(CHROMIUM_ARGS_ENV_VAR, "").split()
    args += [flag for flag in (*CHROMIUM_FLAGS, *extra) if flag not in args]
    options: dict[str, Any] = {"args": args}
    path = find_chromium(headless)
    if path:
        options["executable_path"] = path
    return options


class HeadlessChat:
    """In-memory stand-in for BrowserGym's chat window, used when no human watches.

    Keeps the same message log (roles user, user_image, assistant, info, infeasible) that tasks
    and observations read, without launching a second browser.
    """

    _ROLES = ("user", "user_image", "assistant", "info", "infeasible")

    def __init__(self, headless: bool = True, chat_size=(500, 800), record_video_dir=None, modern=True):
        self.messages: list[dict[str, Any]] = []
        self.recording_start_time = None

    def add_message(self, role: str, msg: str) -> None:
        if role not in self._ROLES:
            raise ValueError(f"invalid chat role {role!r}")
        self.messages.append({"role": role, "timestamp": time.time(), "message": msg})

    def wait_for_user_message(self) -> None:
        raise RuntimeError("this environment runs headless: there is no user to wait for")

    def close(self) -> None:
        pass


# One Playwright driver (a node process) per Python process: sync Playwright cannot run two in one
# thread, and BrowserGym keeps its instance in a module global. Our environments lease it and the last
# one to close stops it, so a closed environment leaves no driver process behind.
_leases = 0


def acquire_playwright():
    """The process-wide Playwright (BrowserGym's global instance), started if needed."""
    global _leases
    playwright_patches.install()
    playwright = live_playwright()
    _leases += 1
    return playwright


def live_playwright():
    """The shared Playwright, started anew when its driver process died (was killed, crashed)."""
    current = current_shared_playwright()
    if current is not None and not playwright_patches.driver_alive(current):
        stop_playwright()
    return get_shared_playwright()


def release_playwright() -> None:
    """Give back one lease; the last one stops the driver (a later lease starts a fresh one)."""
    global _leases
    _leases = max(0, _leases - 1)
    if _leases == 0:
        stop_playwright()


@contextlib.contextmanager
def playwright_lease() -> Iterator[Any]:
    """``with playwright_lease() as pw:`` the shared Playwright for code that is not an environment.

    Anything else driving a browser in a process that also runs environments (tests, tools) must hold
    a lease: the last environment to close would otherwise stop the driver under it, and a private
    ``sync_playwright()`` cannot start while the shared one runs in the same thread.
    """
    playwright = acquire_playwright()
    try:
        yield playwright
    finally:
        release_playwright()


def stop_playwright() -> None:
    """Stop the shared driver even if it is already dead, and forget it."""
    playwright = current_shared_playwright()
    set_shared_playwright(None)
    if playwright is None:
        return
    if not playwright_patches.driver_alive(playwright):
        playwright_patches.forget_dead_driver(playwright)
        return
    try:
        playwright.stop()
    except Exception:  # noqa: BLE001 - a crashed driver cannot be stopped twice
        pass


def usable(browser: Any) -> bool:
    """Chromium is connected and its Playwright driver still runs (a killed driver leaves the browser
    object claiming to be connected)."""
    if not browser.is_connected():
        return False
    playwright = current_shared_playwright()
    return playwright is not None and playwright_patches.driver_alive(playwright)


class BrowserPool(IdlePool[Any]):
    """A closed environment's Chromium, kept for the next environment of this process.

    Everything an episode leaves in a browser lives in its context (cookies, storage, cache, tabs),
    and contexts are closed before a browser is parked, so a reused browser carries nothing from one
    task to the next. The key is the launch configuration; a parked browser holds a driver lease.
    """

    def __init__(self, max_idle: int = 1) -> None:
        super().__init__(REUSE_BROWSER_ENV_VAR, max_idle)

    def _alive(self, item: Any) -> bool:
        return usable(item)

    def _park(self, item: Any) -> None:
        for context in list(item.contexts):
            context.close()
        acquire_playwright()

    def _unpark(self, item: Any) -> None:
        release_playwright()

    def _close(self, item: Any) -> None:
        item.close()


BROWSERS = BrowserPool()


class BrowserLease:
    """One environment's Chromium: reused while alive, taken from :data:`BROWSERS` or launched, and
    handed back there (healthy) when the environment closes. Holds a driver lease while it has a browser.

    ``launch_kwargs`` are ``BrowserType.launch`` keywords; pooled browsers are matched on them.
    """

    def __init__(self, headless: bool, slow_mo: int, launch_kwargs: dict[str, Any]) -> None:
        self.headless = headless
        self.slow_mo = slow_mo or 0
        self.launch_kwargs = dict(launch_kwargs)
        self.browser: Any = None
        self._leased = False
        self._relaunch = False

    @property
    def key(self) -> str:
        """What a pooled browser must have been launched with to serve this lease."""
        return repr((self.headless, self.slow_mo, sorted(self.launch_kwargs.items())))

    def alive(self, probe: bool = False) -> bool:
        """Whether the browser can take calls: connected with a running driver (no call made) and, with
        ``probe``, its browser process answering a call that waits on no page within a short bound, so
        a stopped Chromium is told apart from a page that stopped answering."""
        if self.browser is None or not usable(self.browser):
            return False
        if not probe:
            return True
        from playwright.sync_api import Error as PlaywrightError

        try:
            with playwright_patches.call_bound(PROBE_TIMEOUT_S):
                session = self.browser.new_browser_cdp_session()
                session.send("Browser.getVersion")
                session.detach()
        except PlaywrightError as exc:
            logger.debug("the browser does not answer: %s", exc)
            return False
        return True

    def mark_dead(self) -> None:
        """The browser failed: the next :meth:`ensure` starts a new one (a disconnect may lag behind)."""
        self._relaunch = True

    def ensure(self) -> Any:
        """The running browser, else one a closed environment left in this process, else a new one
        (restarting a dead driver once)."""
        if self.alive() and not self._relaunch:
            return self.browser
        self._relaunch = False
        self.close()
        if not self._leased:
            acquire_playwright()
            self._leased = True
        self.browser = BROWSERS.take(self.key)
        if self.browser is not None:
            return self.browser
        from playwright.sync_api import Error as PlaywrightError

        try:
            self.browser = self._launch()
        except PlaywrightError:
            logger.warning("Playwright driver unusable, restarting it")
            stop_playwright()
            self.browser = self._launch()
        return self.browser

    def _launch(self) -> Any:
        from browsergym.core.constants import BROWSERGYM_ID_ATTRIBUTE

        pw = live_playwright()
        pw.selectors.set_test_id_attribute(BROWSERGYM_ID_ATTRIBUTE)
        return pw.chromium.launch(
            headless=self.headless,
            slow_mo=self.slow_mo,
            # Scrollbars stay visible so screenshots show them (as in BrowserGym).
            args=["--disable-features=OverlayScrollbars,ExtendedOverlayScrollbars"],
            ignore_default_args=["--hide-scrollbars"],
            **self.launch_kwargs,
        )

    def close(self, keep: bool = False) -> None:
        """Close the browser, or with ``keep`` hand a healthy one to the process's pool."""
        browser, self.browser = self.browser, None
        if browser is None:
            return
        if keep and not self._relaunch:
            BROWSERS.give(self.key, browser)
            return
        try:
            browser.close()
        except Exception as exc:  # noqa: BLE001 - a crashed browser cannot close cleanly
            logger.debug("closing the browser failed: %s", exc)

    def release(self) -> None:
        """Give back the driver lease (after :meth:`close`)."""
        if self._leased:
            self._leased = False
            release_playwright()
