"""``webarena-gym serve``: start local sites by hand, print their URLs, stop on Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import time

from webarena_gym.envs.local.launcher import LocalSites, LocalSitesError
from webarena_gym.envs.local.sites import SITE_NAMES, load_site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="webarena-gym serve", description=__doc__)
    parser.add_argument(
        "sites", nargs="*", help=f"sites to start (default: all available; known: {', '.join(SITE_NAMES)})"
    )
    args = parser.parse_args(argv)

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        sites = LocalSites(args.sites or None)
        sites.start()
    except LocalSitesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        print("Local WebArena sites (state resets when you stop this command):")
        for site, url in sites.urls.items():
            account = getattr(load_site(site), "ACCOUNT", None)
            login = f"  login: {account['username']} / {account['password']}" if account else ""
            print(f"  {site:<15} {url}/{login}")
        print("Press Ctrl-C to stop.", flush=True)
        while True:
            time.sleep(1.0)
            sites.ensure_running()
    except KeyboardInterrupt:
        print("\nstopping.")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not orphan the server
        sites.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
