"""The MiniWoB++ pages on a static HTTP server of the environment's own process (127.0.0.1, free port)."""

from __future__ import annotations

import functools
import http.server
import logging
import sys
import threading
from collections.abc import Iterable
from typing import Any

from webarena_gym.envs.miniwob import SITE, html_root

logger = logging.getLogger(__name__)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, no request log on stderr."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        pass


class _PageServer(http.server.ThreadingHTTPServer):
    """A threading server whose request threads never outlive the process, and which stays quiet when the
    browser drops a connection mid-response (a page left while it loaded)."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            logger.debug("client %s went away: %s", client_address, error)
            return
        super().handle_error(request, client_address)


class MiniWoBSiteHost:
    """The MiniWoB++ pages on a static server of this process (127.0.0.1, free port), started on
    :meth:`prepare` and stopped on :meth:`close`. Pages are static, so there is no state to reset or
    snapshot: a restore replays the episode from its seed."""

    sites: tuple[str, ...] = (SITE,)

    def __init__(self) -> None:
        self._server: _PageServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def urls(self) -> dict[str, str]:
        self.prepare()
        assert self._server is not None
        return {SITE: f"http://127.0.0.1:{self._server.server_address[1]}"}

    def prepare(self) -> None:
        with self._lock:
            if self._server is not None:
                return
            handler = functools.partial(_QuietHandler, directory=str(html_root()))
            server = _PageServer(("127.0.0.1", 0), handler)
            self._thread = threading.Thread(target=server.serve_forever, name="miniwob-pages", daemon=True)
            self._thread.start()
            self._server = server

    def reset_state(self) -> None:
        """Static pages: nothing to reset (each episode loads its page anew)."""

    def login(self, context: Any, sites: Iterable[str]) -> None:
        """No accounts."""

    def snapshot_state(self) -> None:
        return None

    def restore_state(self, token: Any) -> None:
        raise NotImplementedError("MiniWoB++ pages hold no server state; restore replays the episode")

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
            thread, self._thread = self._thread, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)
