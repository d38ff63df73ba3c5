"""Per-process pools of expensive resources that a closed environment hands to the next one.

Starting a site server or a Chromium costs far more than an episode's own work, and a study worker
runs episode after episode in one process. A pool keeps at most ``max_idle`` healthy resources of a
kind, each under a key saying what it can serve; an environment takes one with the same key, or
makes its own. Resources are handed out exclusively (a taken one leaves the pool), checked for
health on the way out, and closed when the pool is full, reuse is off, or the process exits.
Each pool has an environment switch (``<NAME>=0`` turns reuse off) so its saving can be measured.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Hashable
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


class IdlePool(ABC, Generic[T]):
    """Idle resources of this process, keyed by what they serve; subclasses say how to check and close one."""

    def __init__(self, switch: str, max_idle: int) -> None:
        self.switch = switch
        self.max_idle = max_idle
        self._idle: list[tuple[Hashable, T]] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        atexit.register(self.shutdown)

    # -- what a kind of resource defines ------------------------------------------------------------

    @abstractmethod
    def _alive(self, item: T) -> bool:
        """Whether ``item`` can still be used."""

    @abstractmethod
    def _close(self, item: T) -> None:
        """Free ``item`` for good (must not raise for an already dead one)."""

    def _park(self, item: T) -> None:
        """Make ``item`` ready for its next user before it goes idle; raising closes it instead."""

    def _unpark(self, item: T) -> None:
        """Let go of what :meth:`_park` holds on behalf of the pool, as ``item`` leaves the pool."""

    # -- the pool -----------------------------------------------------------------------------------

    def enabled(self) -> bool:
        return os.environ.get(self.switch, "1").strip() != "0"

    def take(self, key: Hashable) -> T | None:
        """A healthy idle resource for ``key``, or None; dead ones found on the way are closed."""
        while True:
            with self._lock:
                self._forget_if_forked()
                index = next((i for i, (k, _) in enumerate(self._idle) if k == key), None)
                if index is None:
                    return None
                _, item = self._idle.pop(index)
            if self._alive(item):
                self._unpark(item)
                return item
            self._retire(item)

    def give(self, key: Hashable, item: T) -> None:
        """Park ``item`` for a later :meth:`take`, or close it (reuse off, unhealthy, pool full)."""
        if not self.enabled() or not self._alive(item):
            self._close_quietly(item)
            return
        try:
            self._park(item)
        except Exception as exc:  # noqa: BLE001 - a resource that cannot be made ready is not kept
            logger.debug("not keeping %r: %s", item, exc)
            self._close_quietly(item)
            return
        with self._lock:
            self._forget_if_forked()
            self._idle.append((key, item))
            cut = max(0, len(self._idle) - self.max_idle)
            evicted = [it for _, it in self._idle[:cut]]
            del self._idle[:cut]
        for old in evicted:
            self._retire(old)
        # Exit hooks run last-registered first: moving ours behind the hooks registered since (litellm's
        # closes its async clients on a new event loop, which fails while a Playwright driver still runs)
        # makes the idle resources close before them.
        atexit.unregister(self.shutdown)
        atexit.register(self.shutdown)

    def idle(self) -> int:
        with self._lock:
            return len(self._idle)

    def shutdown(self) -> None:
        """Close every idle resource (also run at interpreter exit)."""
        with self._lock:
            self._forget_if_forked()
            idle, self._idle = self._idle, []
        for _, item in idle:
            self._retire(item)

    def _retire(self, item: T) -> None:
        """Close a parked resource, then let go of what the pool held for it."""
        self._close_quietly(item)
        self._unpark(item)

    def _close_quietly(self, item: T) -> None:
        try:
            self._close(item)
        except Exception as exc:  # noqa: BLE001 - closing must never fail a caller
            logger.debug("closing %r failed: %s", item, exc)

    def _forget_if_forked(self) -> None:
        # A forked child must not use or close its parent's resources.
        if os.getpid() != self._pid:
            self._idle, self._pid = [], os.getpid()
