"""One server process for one environment instance: ``python -m webarena_gym.envs.local.server --db PATH --sites a,b``.

Every site gets its own werkzeug threaded server on ``127.0.0.1`` (port 0 = a free port chosen by the
OS, or the ``--ports`` it had before a restart when still free). The process prints one JSON line,
``{"urls": {site: base_url}, "pid": ...}``, and then serves until its stdin closes (the parent died or
closed the pipe) or it gets SIGTERM/SIGINT, so an orphaned server never outlives its environment.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server

from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.sites import load_site

HOST = "127.0.0.1"


class _LateApp:
    """WSGI callable whose app is attached after binding: apps need every site's URL, URLs need ports."""

    def __init__(self) -> None:
        self.app: Callable[..., Any] | None = None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        assert self.app is not None, "request before the app was attached"
        return self.app(environ, start_response)


def _port_free(port: int) -> bool:
    """Whether ``port`` can be bound (with address reuse, as the HTTP server binds it)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _bind(port: int, app: _LateApp) -> BaseWSGIServer:
    """Bind the wanted port; on a clash fall back to a fresh free port (werkzeug would exit instead)."""
    return make_server(HOST, port if port and _port_free(port) else 0, app, threaded=True)


def start(
    db_path: str, sites: list[str], secret: str, ports: dict[str, int] | None = None
) -> tuple[dict[str, str], list[BaseWSGIServer]]:
    """Bind, build and start every site's server in a daemon thread; returns ``(urls, servers)``."""
    ports = ports or {}
    holders = {site: _LateApp() for site in sites}
    servers = {site: _bind(ports.get(site, 0), holders[site]) for site in sites}
    urls = {site: f"http://{HOST}:{server.server_port}" for site, server in servers.items()}
    for site in sites:
        ctx = SiteContext(site=site, db_path=db_path, urls=urls, secret_key=secret)
        holders[site].app = load_site(site).create_app(ctx)
    for site, server in servers.items():
        threading.Thread(target=server.serve_forever, name=f"serve-{site}", daemon=True).start()
    return urls, list(servers.values())


def _parse_ports(text: str) -> dict[str, int]:
    ports = {}
    for item in filter(None, text.split(",")):
        site, _, port = item.partition("=")
        ports[site] = int(port)
    return ports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", required=True, help="the instance's SQLite file")
    parser.add_argument("--sites", required=True, help="comma-separated site names")
    parser.add_argument("--secret", default=os.environ.get("WEBARENA_GYM_LOCAL_SECRET", "webarena-gym-local"))
    parser.add_argument("--ports", default="", help="site=port,... to reuse after a restart")
    args = parser.parse_args(argv)

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    urls, servers = start(args.db, args.sites.split(","), args.secret, _parse_ports(args.ports))
    print(json.dumps({"urls": urls, "pid": os.getpid()}), flush=True)
    # Nothing else may go to stdout: the parent stops reading it after the first line.
    sys.stdout = sys.stderr

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def watch_parent() -> None:
        sys.stdin.read()  # returns at EOF, i.e. when the parent is gone
        stop.set()

    threading.Thread(target=watch_parent, name="watch-parent", daemon=True).start()
    stop.wait()
    for server in servers:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
