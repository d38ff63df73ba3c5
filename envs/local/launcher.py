"""LocalSites: the local sites of one environment instance, in one child server process.

Each instance owns a temporary directory with its own SQLite file (so two instances never share
state), a server process running ``envs.local.server`` and a stable secret key (so
cached login cookies stay valid across resets and server restarts). State operations work on the
database file directly with SQLite's backup API; the server opens a connection per request, so a
restore is visible on the next page load without restarting anything.

Starting a server costs seconds, so a closed environment's instance is not stopped but parked in
:data:`POOL` (at most :data:`MAX_IDLE` per process, reset to pristine) and leased exclusively by the
next environment of this process that serves the same sites. Reuse is on by default;
``WEBARENA_GYM_REUSE_SITES=0`` turns it off (every environment then starts and stops its own server).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from webarena_gym.envs.local import data
from webarena_gym.envs.local.sites import available_sites
from webarena_gym.envs.pool import IdlePool

START_TIMEOUT_S = 30.0
_PRISTINE = object()  # what LocalSites._content holds after a pristine copy
HEALTH_TTL_S = 0.5  # a health check this recent stands for the server's health
REUSE_ENV_VAR = "WEBARENA_GYM_REUSE_SITES"
MAX_IDLE = 2

# The server runs ``webarena_gym.envs.local.server`` without running the packages' ``__init__``: the
# server needs only ``envs.local``, and ``webarena_gym``'s import registers 952 Gymnasium ids and loads
# gymnasium and numpy into every server (a third of its memory, 0.2 s of each start). Two empty package
# modules stand in for ``webarena_gym`` and ``webarena_gym.envs``; argv[1] is the ``envs`` directory.
_SERVER_BOOT = (
    "import sys, types; root = types.ModuleType('webarena_gym'); root.__path__ = []; "
    "package = types.ModuleType('webarena_gym.envs'); package.__path__ = [sys.argv.pop(1)]; "
    "sys.modules.update({'webarena_gym': root, 'webarena_gym.envs': package}); "
    "from webarena_gym.envs.local.server import main; sys.exit(main())"
)


class LocalSitesError(RuntimeError):
    """The local server could not be started (the message carries its stderr)."""


class LocalSites:
    """Start, reset, snapshot and stop the local sites of one instance."""

    def __init__(self, sites: list[str] | None = None) -> None:
        known = available_sites()
        wanted = list(sites) if sites else known
        missing = [site for site in wanted if site not in known]
        if missing:
            raise LocalSitesError(f"local sites not available: {', '.join(missing)} (available: {', '.join(known)})")
        self.sites = wanted
        self.secret = secrets.token_hex(16)
        self._dir: Path | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._urls: dict[str, str] = {}
        self._pristine: Path | None = None
        # What the database holds (_PRISTINE or a snapshot token) and the file's change counter when it
        # was known to hold it; while the counter is unchanged no transaction has written to the
        # database, and a reset or a restore to that content has nothing to do.
        self._content: tuple[object, bytes | None] | None = None
        self._healthy_at = float("-inf")  # when the server last answered a health check
        # Login cookies clients obtained from this instance (per site). They stay valid as long as the
        # secret does, i.e. for the instance's whole life, so a later lessee reuses them.
        self.login_cookies: dict[str, list[dict]] = {}

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def db_path(self) -> Path:
        if self._dir is None:
            raise LocalSitesError("LocalSites is not started")
        return self._dir / "sites.sqlite"

    @property
    def urls(self) -> dict[str, str]:
        """Base URL per site (no trailing slash); starts the server on first use."""
        if self._proc is None:
            self.ensure_running()
        return dict(self._urls)

    def start(self) -> None:
        """Create the instance database from the pristine copy and start the server."""
        if self._dir is None:
            self._pristine = data.pristine_db()
            self._dir = Path(tempfile.mkdtemp(prefix="webarena-gym-local-"))
            self._copy_pristine()
        self._spawn()

    def ensure_running(self) -> None:
        """Start the server, or restart it (on the same ports when free) if it died."""
        if self._dir is None:
            self.start()
        elif not self.is_alive():
            self._stop_process()
            self._spawn()

    def is_alive(self) -> bool:
        """The server process runs and answers; an answer within the last :data:`HEALTH_TTL_S` counts,
        so the several checks of one reset (prepare, state reset, pool hand-over) cost one request."""
        if self._proc is None or self._proc.poll() is not None or not self._urls:
            return False
        if time.monotonic() - self._healthy_at < HEALTH_TTL_S:
            return True
        url = next(iter(self._urls.values())) + "/__health"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                healthy = response.status == 200
        except OSError:
            healthy = False
        self._healthy_at = time.monotonic() if healthy else float("-inf")
        return healthy

    def close(self) -> None:
        """Stop the server and delete the instance's files. Idempotent."""
        self._stop_process()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        self._urls = {}

    def __enter__(self) -> LocalSites:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # last resort; close() is the API
        try:
            self._stop_process()
        except Exception:
            pass

    # -- state -------------------------------------------------------------------------------------

    def reset_state(self) -> None:
        """Put the pristine database back (and restart a dead server). A database nothing has written
        to since it was last made pristine (a parked instance's, at the next lease) is left as it is."""
        self.ensure_running()
        if not self._holds(_PRISTINE):
            self._copy_pristine()

    def snapshot(self) -> bytes:
        """The whole database as an opaque, picklable token."""
        self.ensure_running()
        # The counter is read first: a write that slips in before the dump only costs a later restore
        # of this token its shortcut, never its exactness.
        counter = data.change_counter(self.db_path)
        token = data.dump(self.db_path)
        self._content = (token, counter)
        return token

    def restore(self, token: bytes) -> None:
        """Put back a database captured by :meth:`snapshot`. Nothing is written when the database still
        holds exactly that token's content (the search methods restore the node they just left, and
        most steps only read)."""
        self.ensure_running()
        if not self._holds(token):
            data.load(self.db_path, token)
            self._content = (token, data.change_counter(self.db_path))

    def _holds(self, content: object) -> bool:
        """Whether the database holds ``content`` (compared by value: a token may come back pickled)."""
        if self._content is None:
            return False
        known, counter = self._content
        same = known is content or (isinstance(known, bytes) and known == content)
        return same and counter is not None and data.change_counter(self.db_path) == counter

    def _copy_pristine(self) -> None:
        assert self._pristine is not None
        data.copy_db(self._pristine, self.db_path)
        self._content = (_PRISTINE, data.change_counter(self.db_path))

    # -- process -----------------------------------------------------------------------------------

    def _spawn(self) -> None:
        assert self._dir is not None
        ports = ",".join(f"{site}={url.rsplit(':', 1)[1]}" for site, url in self._urls.items())
        cmd = [
            sys.executable,
            "-c",
            _SERVER_BOOT,
            str(Path(__file__).resolve().parents[1]),
            "--db",
            str(self.db_path),
            "--sites",
            ",".join(self.sites),
            "--secret",
            self.secret,
        ]
        if ports:
            cmd += ["--ports", ports]
        log = open(self._dir / "server.log", "a")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
            cwd=str(Path(__file__).resolve().parents[2]),
        )
        log.close()
        line = _read_line(self._proc, START_TIMEOUT_S)
        try:
            self._urls = json.loads(line)["urls"]
        except (ValueError, KeyError, TypeError):
            self._stop_process()
            raise LocalSitesError(f"local server failed to start; its log:\n{self._log_tail()}") from None

    def _stop_process(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()  # the server exits at EOF on stdin
                proc.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait(timeout=5)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()

    def _log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join((self._dir / "server.log").read_text().splitlines()[-n:])  # type: ignore[operator]
        except OSError:
            return "(no log)"


class SitesPool(IdlePool[LocalSites]):
    """Idle :class:`LocalSites` of this process, keyed by the sites they serve, parked in pristine state."""

    def __init__(self, max_idle: int = MAX_IDLE) -> None:
        super().__init__(REUSE_ENV_VAR, max_idle)

    def lease(self, sites: list[str]) -> LocalSites | None:
        return self.take(tuple(sites))

    def release(self, instance: LocalSites) -> None:
        self.give(tuple(instance.sites), instance)

    def _alive(self, item: LocalSites) -> bool:
        return item.is_alive()

    def _park(self, item: LocalSites) -> None:
        item.reset_state()

    def _close(self, item: LocalSites) -> None:
        item.close()


POOL = SitesPool()


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """First stdout line of ``proc``, or ``""`` on timeout or exit (never blocks forever)."""
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    deadline = time.monotonic() + timeout
    while reader.is_alive() and time.monotonic() < deadline and proc.poll() is None:
        reader.join(0.05)
    reader.join(0.2)
    return result[0] if result else ""
