"""The one place that decides which Chromium runs and with which flags.

BrowserGym launches Chromium in two places (the task browser and its chat window) and only the first
accepts launch keywords, so we patch Playwright's ``BrowserType.launch`` once: every launch in the
process then gets our executable and flags. In headless runs the chat window is replaced by an
in-memory chat, which halves reset time and saves a second browser per environment.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import shutil
import sys
import time
import traceback
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from envs.pool import IdlePool

CHROMIUM_ENV_VAR = "WEBARENA_GYM_CHROMIUM"
CHROMIUM_ARGS_ENV_VAR = "WEBARENA_GYM_CHROMIUM_ARGS"  # extra flags, space-separated
REUSE_BROWSER_ENV_VAR = "WEBARENA_GYM_REUSE_BROWSER"

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
            defaults = launch_options(kwargs.get("args"), headless=kwargs.get("headless", True) is not False)
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


def _light_extract_stack(f: types.FrameType | None = None, limit: int | None = None) -> traceback.StackSummary:
    """``traceback.extract_stack()`` without the source lines: Playwright records a stack per call
    for its error messages, and reading (and stat-ing) the source of every frame cost more than the
    call. The lines are still read, lazily, if an error message is ever formatted."""
    frame = f if f is not None else sys._getframe(1)
    frames = []
    while frame is not None and (limit is None or len(frames) < limit):
        frames.append(traceback.FrameSummary(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name,
                                             lookup_line=False))  # fmt: skip
        frame = frame.f_back
    frames.reverse()
    return traceback.StackSummary.from_list(frames)


# The result of the message being dispatched, when its raw text holds no object reference at all
# (every CDP result, every AX tree): Playwright's walk looking for references can then be skipped.
_reference_free_result: Any = None


def _deserialize_message(self, data: str | bytes) -> dict:
    """Playwright's message parsing, noting whether the message can contain object references."""
    global _reference_free_result
    message = json.loads(data)
    marker = b'"guid"' if isinstance(data, bytes) else '"guid"'
    _reference_free_result = message.get("result") if marker not in data else None
    return message


def _replace_guids_with_channels(self, payload: Any) -> Any:
    """Playwright's walk over every received message, without a call per scalar (same result)."""
    if payload is not None and payload is _reference_free_result:
        return payload
    if isinstance(payload, list):
        return [_replace_guids_with_channels(self, item) if isinstance(item, (dict, list)) else item
                for item in payload]  # fmt: skip
    if isinstance(payload, dict):
        guid = payload.get("guid")
        if guid is not None and guid in self._objects:
            return self._objects[guid]._channel
        return {key: _replace_guids_with_channels(self, value) if isinstance(value, (dict, list)) else value
                for key, value in payload.items()}  # fmt: skip
    return payload


def _cdp_send(self, method: str, params: dict | None = None) -> dict:
    """``CDPSession.send`` returning the protocol's JSON as received.

    The generated wrapper deep-copies every result looking for Playwright objects, which a CDP
    result never contains; on an AX tree or DOM snapshot that copy cost more than the fetch.
    """
    from playwright._impl._sync_base import mapping

    return self._sync(self._impl_obj.send(method=method, params=mapping.to_impl(params)))


def _speedup_targets() -> list[tuple[Any, str, Any]]:
    """(owner, attribute, fast replacement) for every Playwright speed-up."""
    import playwright._impl._connection as connection
    import playwright._impl._network as network
    import playwright._impl._sync_base as sync_base
    import playwright._impl._transport as transport
    from playwright.sync_api._generated import CDPSession

    light_inspect = types.SimpleNamespace(**{**vars(inspect), "stack": _light_stack})
    light_traceback = types.SimpleNamespace(**{**vars(traceback), "extract_stack": _light_extract_stack})
    return [
        (connection, "inspect", light_inspect),
        (network, "inspect", light_inspect),
        (sync_base, "inspect", light_inspect),
        (connection, "traceback", light_traceback),
        (sync_base, "traceback", light_traceback),
        (transport.Transport, "deserialize_message", _deserialize_message),
        (connection.Connection, "_replace_guids_with_channels", _replace_guids_with_channels),
        (CDPSession, "send", _cdp_send),
    ]


_originals: dict[tuple[int, str], Any] = {}


def install_playwright_speedups() -> None:
    """Make Playwright 1.44's Python side cheap per call (idempotent, reversible).

    - it calls ``inspect.stack()`` two or three times per API call to label its protocol messages,
      which reads and tokenises the source of every frame; the labels need only file names, lines
      and function names, which a light stack provides;
    - it records ``traceback.extract_stack()`` per call, reading the source of every frame again;
    - it walks every received message with one Python call per value looking for object references,
      and the CDP wrapper then deep-copies the result again; a message whose text holds no reference
      is not walked, and the walk and the copy are cheap for plain JSON.
    On a 1,100-node page these were about half of an ``env.step``.
    """
    for owner, name, fast in _speedup_targets():
        _originals.setdefault((id(owner), name), getattr(owner, name))
        setattr(owner, name, fast)


def remove_playwright_speedups() -> None:
    """Undo :func:`install_playwright_speedups` (benchmarks time plain BrowserGym without them)."""
    for owner, name, _ in _speedup_targets():
        if (id(owner), name) in _originals:
            setattr(owner, name, _originals[(id(owner), name)])


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
    import browsergym.core as bgym_core

    playwright = bgym_core._PLAYWRIGHT
    bgym_core._set_global_playwright(None)
    if playwright is not None:
        try:
            playwright.stop()
        except Exception:  # noqa: BLE001 - a crashed driver cannot be stopped twice
            pass


class BrowserPool(IdlePool[Any]):
    """A closed environment's Chromium, kept for the next environment of this process.

    Everything an episode leaves in a browser lives in its context (cookies, storage, cache, tabs),
    and contexts are closed before a browser is parked, so a reused browser carries nothing from one
    task to the next. The key is the launch configuration; a parked browser holds a driver lease.
    """

    def __init__(self, max_idle: int = 1) -> None:
        super().__init__(REUSE_BROWSER_ENV_VAR, max_idle)

    def _alive(self, item: Any) -> bool:
        return bool(item.is_connected())

    def _park(self, item: Any) -> None:
        for context in list(item.contexts):
            context.close()
        acquire_playwright()

    def _unpark(self, item: Any) -> None:
        release_playwright()

    def _close(self, item: Any) -> None:
        item.close()


BROWSERS = BrowserPool()
