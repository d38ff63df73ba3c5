"""The one place that decides which Chromium runs and with which flags.

BrowserGym launches Chromium in two places (the task browser and its chat window) and only the first
accepts launch keywords, so we patch Playwright's ``BrowserType.launch`` once: every launch in the
process then gets our executable and flags. In headless runs the chat window is replaced by an
in-memory chat, which halves reset time and saves a second browser per environment.
"""

from __future__ import annotations

import functools
import os
import shutil
import time
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
