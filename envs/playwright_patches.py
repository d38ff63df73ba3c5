"""Every process-wide change this project makes to Playwright, applied in one place.

:func:`install` is called by :func:`envs.browser.acquire_playwright`, the one route by which the
project starts or leases the shared Playwright driver, so no environment, test or tool patches
Playwright itself. Three kinds of change:

- the launch patch: BrowserGym launches Chromium in two places (the task browser and its chat window)
  and only the first accepts launch keywords, so ``BrowserType.launch`` is wrapped once and every
  Chromium launch in the process gets this project's executable and flags (:mod:`envs.browser`);
- the call bound (:func:`install_call_bound`): every sync Playwright call returns or raises within
  a bounded time, also when the driver process died (Playwright 1.44 then spins forever) or Chromium
  stopped answering;
- speed-ups of Playwright 1.44's Python side, measured to be about half of an ``env.step`` on a
  1,100-node page (:func:`install_speedups`); benchmarks can remove them to time plain BrowserGym.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import json
import os
import sys
import traceback
import types
from collections.abc import Iterator
from typing import Any

import greenlet
from playwright._impl._errors import Error as PlaywrightError
from playwright._impl._errors import TargetClosedError
from playwright._impl._errors import TimeoutError as PlaywrightTimeoutError

CALL_TIMEOUT_ENV_VAR = "WEBARENA_GYM_BROWSER_CALL_TIMEOUT"
# Longer than any wait the harness asks Playwright for (page loads 10-30 s, Chromium's launch 30 s):
# only a call that can no longer return reaches it.
DEFAULT_CALL_TIMEOUT_S = 180.0
# A tighter bound for the calls inside :func:`call_bound` (a liveness probe must not wait the full bound).
_tighter_bound_s: contextvars.ContextVar[float | None] = contextvars.ContextVar("tighter_bound_s", default=None)


class DriverExitedError(TargetClosedError):
    """The Playwright driver process is gone: no browser call can succeed until a new one starts."""

    def __init__(self, detail: str = "") -> None:
        super().__init__("the Playwright driver exited" + (f" ({detail})" if detail else ""))


class BrowserCallTimeout(PlaywrightTimeoutError):
    """A browser call did not return within the process-wide bound: Chromium stopped answering."""


def install() -> None:
    """Apply every patch (idempotent)."""
    install_launch_patch()
    install_call_bound()
    install_speedups()


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
            from webarena_gym.envs.browser import launch_options

            defaults = launch_options(kwargs.get("args"), headless=kwargs.get("headless", True) is not False)
            kwargs["args"] = defaults["args"]
            if "executable_path" in defaults:
                kwargs.setdefault("executable_path", defaults["executable_path"])
        return original(self, *args, **kwargs)

    launch._webarena_gym = True  # type: ignore[attr-defined]
    BrowserType.launch = launch  # type: ignore[method-assign]


def call_timeout_s() -> float:
    """The bound on one browser call: ``$WEBARENA_GYM_BROWSER_CALL_TIMEOUT`` seconds, else 180; less
    inside :func:`call_bound`."""
    try:
        limit = float(os.environ.get(CALL_TIMEOUT_ENV_VAR) or DEFAULT_CALL_TIMEOUT_S)
    except ValueError:
        limit = DEFAULT_CALL_TIMEOUT_S
    tighter = _tighter_bound_s.get()
    return limit if tighter is None or 0 < limit <= tighter else tighter


@contextlib.contextmanager
def call_bound(seconds: float) -> Iterator[None]:
    """``with call_bound(5):`` the browser calls inside return or raise within ``seconds`` (or the
    process-wide bound, if shorter)."""
    token = _tighter_bound_s.set(seconds)
    try:
        yield
    finally:
        _tighter_bound_s.reset(token)


def _bounded_sync(self: Any, coro: Any) -> Any:
    """Playwright's ``SyncBase._sync`` (run one call on the driver's event loop), bounded.

    Playwright passes control to its dispatcher greenlet until the call's task is done. When the
    driver process dies, that greenlet ends and Playwright keeps switching to it forever; here the
    call raises :class:`DriverExitedError` instead. A call that does not finish within
    :func:`call_timeout_s` (a stopped or wedged Chromium) is cancelled and raises
    :class:`BrowserCallTimeout`.
    """
    from playwright._impl import _sync_base as sync_base

    if self._loop.is_closed():
        coro.close()
        raise PlaywrightError("Event loop is closed! Is Playwright already stopped?")
    fiber = self._dispatcher_fiber
    if fiber.dead:
        coro.close()
        raise DriverExitedError()
    caller = greenlet.getcurrent()
    task = self._loop.create_task(coro)
    task.__pw_stack__ = sync_base.inspect.stack()  # Playwright names its protocol calls from these
    task.__pw_stack_trace__ = sync_base.traceback.extract_stack()
    task.add_done_callback(lambda _: caller.switch())
    limit = call_timeout_s()
    timer = self._loop.call_later(limit, task.cancel) if limit > 0 else None
    try:
        while not task.done():
            fiber.switch()
            if fiber.dead and not task.done():
                raise DriverExitedError()
    finally:
        if timer is not None:
            timer.cancel()
    asyncio._set_running_loop(self._loop)
    if task.cancelled():
        raise BrowserCallTimeout(f"a browser call did not return within {limit:.0f} s")
    error = task.exception()
    if error is not None and not isinstance(error, PlaywrightError):
        # The driver's pipe closed: Playwright re-raises that error as a plain Exception with the
        # call's name in front (a new object), which can arrive before the dispatcher greenlet ends.
        closed = self._impl_obj._connection._transport.on_error_future
        if closed.done() and not closed.cancelled() and closed.exception() is not None:
            raise DriverExitedError(str(error)) from error
    return task.result()


def install_call_bound() -> None:
    """Bound every sync Playwright call (see :func:`_bounded_sync`); idempotent."""
    from playwright._impl._sync_base import SyncBase

    if getattr(SyncBase._sync, "_webarena_gym", False):
        return
    _bounded_sync._webarena_gym = True  # type: ignore[attr-defined]
    SyncBase._sync = _bounded_sync  # type: ignore[method-assign]


def driver_alive(playwright: Any) -> bool:
    """Whether ``playwright``'s driver can still take calls (no call is made to find out)."""
    connection = playwright._impl_obj._connection
    return not connection._dispatcher_fiber.dead and not connection._transport.on_error_future.done()


def forget_dead_driver(playwright: Any) -> None:
    """Let go of a driver that exited: its event loop is closed and no longer marked as running, so
    a new driver can start in this thread."""
    connection = playwright._impl_obj._connection
    closed = connection._transport.on_error_future
    if closed.done() and not closed.cancelled():
        closed.exception()  # seen: asyncio would otherwise report it as never retrieved
    loop = playwright._impl_obj._loop
    if asyncio._get_running_loop() is loop:
        asyncio._set_running_loop(None)
    if not loop.is_closed():
        for task in asyncio.all_tasks(loop):
            task._log_destroy_pending = False  # type: ignore[attr-defined]  # asyncio's private flag; calls the dead driver never answered: nothing to report
        loop.close()


def _light_stack(context: int = 1) -> list[inspect.FrameInfo]:
    """``inspect.stack()`` without reading source files (no ``code_context``)."""
    frames: list[inspect.FrameInfo] = []
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        frames.append(inspect.FrameInfo(frame, code.co_filename, frame.f_lineno, code.co_name, None, None))
        frame = frame.f_back
    return frames


def _light_extract_stack(f: types.FrameType | None = None, limit: int | None = None) -> traceback.StackSummary:
    """``traceback.extract_stack()`` without the source lines: Playwright records a stack per call
    for its error messages, and reading (and stat-ing) the source of every frame cost more than the
    call. The lines are still read, lazily, if an error message is ever formatted."""
    frame: types.FrameType | None = f if f is not None else sys._getframe(1)
    frames: list[traceback.FrameSummary] = []
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
    has_reference = b'"guid"' in data if isinstance(data, bytes) else '"guid"' in data
    _reference_free_result = None if has_reference else message.get("result")
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


def install_speedups() -> None:
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


def remove_speedups() -> None:
    """Undo :func:`install_speedups` (benchmarks time plain BrowserGym without them)."""
    for owner, name, _ in _speedup_targets():
        if (id(owner), name) in _originals:
            setattr(owner, name, _originals[(id(owner), name)])
