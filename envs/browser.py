"""The one place that decides which Chromium runs and with which flags.

BrowserGym launches Chromium in two places (the task browser and its chat window) and only the first
accepts launch keywords, so we patch Playwright's ``BrowserType.launch`` once: every launch in the
process then gets our executable and flags. In headless runs the chat window is replaced by an
in-memory chat, which halves reset time and saves a second browser per environment.
"""

from __future__ import annotations

import functools
import inspect
import os
import shutil
import sys
import time
import types
from pathlib import Path
from typing import Any

CHROMIUM_ENV_VAR = "WEBARENA_GYM_CHROMIUM"

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
_DEBIAN_REAL_BINARY = Path("/usr/lib/chromium/chromium")


class BrowserNotFoundError(RuntimeError):
    """No usable Chromium: the message says how to provide one."""


def find_chromium() -> str | None:
    """Return the Chromium to use: the env-var override, else a system browser, else None.

    ``None`` means "let Playwright use its own download", which only exists where
    ``playwright install chromium`` could reach the internet.
    """
    override = os.environ.get(CHROMIUM_ENV_VAR)
    if override:
        if not os.access(override, os.X_OK):
            raise BrowserNotFoundError(f"{CHROMIUM_ENV_VAR}={override!r} is not an executable file")
        return override
    # Debian's /usr/bin/chromium is a shell wrapper; the real binary starts faster and quieter.
    if _DEBIAN_REAL_BINARY.exists() and os.access(_DEBIAN_REAL_BINARY, os.X_OK):
        return str(_DEBIAN_REAL_BINARY)
    for name in _SYSTEM_CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def launch_options(extra_args: list[str] | None = None) -> dict[str, Any]:
    """Keyword arguments for ``BrowserType.launch`` that every launch in this project uses."""
    args = list(extra_args or [])
    args += [flag for flag in CHROMIUM_FLAGS if flag not in args]
    options: dict[str, Any] = {"args": args}
    path = find_chromium()
    if path:
        options["executable_path"] = path
    return options


def install_launch_patch() -> None:
    """Route every Playwright Chromium launch in this process through :func:`launch_options`.

    Idempotent; safe to call in every worker process (spawned workers start unpatched).
    """
    from playwright.sync_api import BrowserType

    if getattr(BrowserType.launch, "_webarena_gym", False):
        return
    original = BrowserType.launch

    @functools.wraps(original)
    def launch(self, *args, **kwargs):
        if self.name == "chromium":
            defaults = launch_options(kwargs.get("args"))
            kwargs["args"] = defaults["args"]
            if "executable_path" in defaults:
                kwargs.setdefault("executable_path", defaults["executable_path"])
        return original(self, *args, **kwargs)

    launch._webarena_gym = True  # type: ignore[attr-defined]
    BrowserType.launch = launch  # type: ignore[method-assign]


def _light_stack(context: int = 1) -> list[inspect.FrameInfo]:
    """``inspect.stack()`` without reading source files (no ``code_context``)."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        frames.append(inspect.FrameInfo(frame, code.co_filename, frame.f_lineno, code.co_name, None, None))
        frame = frame.f_back
    return frames


def install_fast_stack_patch() -> None:
    """Make Playwright's per-call stack capture cheap.

    Playwright 1.44 calls ``inspect.stack()`` two or three times per API call to label its protocol
    messages; that reads and tokenises the source of every frame, which on this machine was about a
    third of an ``env.step``. The labels only need file names, lines and function names, which the
    light stack provides. Only Playwright's own modules see the replacement.
    """
    import playwright._impl._connection as connection
    import playwright._impl._network as network
    import playwright._impl._sync_base as sync_base

    light_inspect = types.SimpleNamespace(**{**vars(inspect), "stack": _light_stack})
    for module in (connection, network, sync_base):
        module.inspect = light_inspect


def remove_fast_stack_patch() -> None:
    """Undo :func:`install_fast_stack_patch` (benchmarks time plain BrowserGym without it)."""
    import playwright._impl._connection as connection
    import playwright._impl._network as network
    import playwright._impl._sync_base as sync_base

    for module in (connection, network, sync_base):
        module.inspect = inspect


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
    from browsergym.core import _get_global_playwright

    install_launch_patch()
    playwright = _get_global_playwright()
    _leases += 1
    return playwright


def release_playwright() -> None:
    """Give back one lease; the last one stops the driver (a later lease starts a fresh one)."""
    global _leases
    _leases = max(0, _leases - 1)
    if _leases == 0:
        stop_playwright()


def stop_playwright() -> None:
    """Stop the shared driver even if it is already dead, and forget it."""
    import browsergym.core as bgym_core

    playwright = bgym_core._PLAYWRIGHT
    bgym_core._set_global_playwright(None)
    if playwright is not None:
        try:
            playwright.stop()
        except Exception:  # noqa: BLE001 - a crashed driver cannot be stopped twice
            pass
