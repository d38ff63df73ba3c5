"""Where episodes run: a pool of local processes, or Ray actors on a cluster.

Both executors keep one long-lived worker per slot; the worker owns its browser and its local site
instance, so workers never share state. An executor only starts jobs, reports finished ones and kills a
slot on demand; scheduling, deadlines and the store belong to the study loop (experiments.compare).

A process worker runs with its own temporary directory (``TMPDIR``): its site databases, browser
profiles and driver files all land there, and the executor deletes it when the worker stops, however
it stops (finished, timed out and killed, or the study interrupted with Ctrl-C).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import signal
import tempfile
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, cast

from webarena_gym.experiments.store import EpisodeResult

JobRunner = Callable[[Any], EpisodeResult]


@dataclass
class Finished:
    """A job that left a slot: with a result, or with the reason its worker died."""

    job: Any
    result: EpisodeResult | None
    error: str | None = None


class Executor(ABC):
    n_slots: int

    @abstractmethod
    def submit(self, slot: int, job: Any) -> None: ...

    @abstractmethod
    def poll(self, timeout: float) -> list[tuple[int, Finished]]:
        """Jobs that finished (or whose worker died) since the last poll, by slot."""

    @abstractmethod
    def kill(self, slot: int) -> None:
        """Stop the slot's worker and everything it started, then give the slot a fresh worker."""

    @abstractmethod
    def close(self) -> None: ...


# -- local processes -------------------------------------------------------------------------------

WORKER_IMPORTS = "webarena_gym.experiments.worker_imports"
WorkerContext = mp.context.ForkServerContext | mp.context.SpawnContext
# The fork server listens on a Unix socket at <temporary directory>/pymp-XXXXXXXX/listener-XXXXXXXX, and
# such a path holds at most 107 bytes: under a deep TMPDIR the server could not start at all.
_SOCKET_PATH_MAX = 107
_SERVER_SOCKET_TAIL = len("/pymp-XXXXXXXX/listener-XXXXXXXX")


def worker_context() -> WorkerContext:
    """Workers are forked from a server that has already imported :data:`WORKER_IMPORTS`: they
    start at once and share those modules' memory, and no Playwright state or threads of the study
    process leak into them (the server forks from a clean single thread). Spawn where fork is missing,
    or where the temporary directory's path is too long for the server's socket."""
    socket_path = len(os.fsencode(tempfile.gettempdir())) + _SERVER_SOCKET_TAIL
    if "forkserver" not in mp.get_all_start_methods() or socket_path > _SOCKET_PATH_MAX:
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([WORKER_IMPORTS])
    return ctx


def _worker_main(conn: Connection, runner: JobRunner, environ: dict[str, str], cwd: str) -> None:
    # The fork server started earlier: take the study's current environment and directory, as a
    # freshly spawned process would.
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    tempfile.tempdir = None  # the fork server may have cached another temporary directory
    from webarena_gym.llm.redaction import install_log_redaction

    install_log_redaction()
    # Own session: a timeout kills the worker's whole process group (browser, driver, site server),
    # and Ctrl-C in the terminal reaches only the study loop, which then stops the workers itself.
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _serve_jobs(conn, runner)
    finally:
        _release_resources()


def _serve_jobs(conn: Connection, runner: JobRunner) -> None:
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            conn.send(Finished(job, runner(job)))
        except BaseException:  # noqa: BLE001 - a job must never take its worker down silently
            conn.send(Finished(job, None, traceback.format_exc(limit=20)))


def _release_resources() -> None:
    """Stop what the worker keeps for a next episode (a multiprocessing worker exits without running
    ``atexit`` handlers): site servers, browsers, and the Playwright driver even if a lease is left."""
    from webarena_gym import envs
    from webarena_gym.envs.browser import stop_playwright

    for release in (envs.shutdown, stop_playwright):
        try:
            release()
        except Exception:  # noqa: BLE001 - the worker is exiting; its directory goes anyway
            pass


WORKER_TMP_PREFIX = "webarena-gym-worker-"


class _Slot:
    def __init__(self, ctx: WorkerContext, runner: JobRunner) -> None:
        self.conn, child = ctx.Pipe()
        self.tmp = tempfile.mkdtemp(prefix=WORKER_TMP_PREFIX)
        environ = {**os.environ, "TMPDIR": self.tmp}
        self.proc = ctx.Process(target=_worker_main, args=(child, runner, environ, os.getcwd()), daemon=True)
        self.proc.start()
        child.close()
        self.job: Any = None

    def stop(self, hard: bool) -> None:
        pid = self.proc.pid  # None only before start(), which __init__ called
        if pid is not None and self.proc.is_alive():
            if hard:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    self.proc.kill()
            else:
                try:
                    self.conn.send(None)
                except (BrokenPipeError, OSError):
                    pass
        self.proc.join(timeout=10)
        if pid is not None and self.proc.is_alive():
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.join(timeout=5)
        self.conn.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


class ProcessExecutor(Executor):
    def __init__(self, n_workers: int, runner: JobRunner):
        self.n_slots = n_workers
        self._runner = runner
        self._ctx = worker_context()
        self._slots = [_Slot(self._ctx, runner) for _ in range(n_workers)]

    def submit(self, slot: int, job: Any) -> None:
        self._slots[slot].job = job
        self._slots[slot].conn.send(job)

    def poll(self, timeout: float) -> list[tuple[int, Finished]]:
        busy = {s.conn: i for i, s in enumerate(self._slots) if s.job is not None}
        sentinels = {self._slots[i].proc.sentinel: i for i in busy.values()}
        if not busy:
            time.sleep(min(timeout, 0.05))
            return []
        out: list[tuple[int, Finished]] = []
        for ready in wait([*busy, *sentinels], timeout=timeout):
            # wait() returns the objects it was given: the busy slots' connections and their sentinels
            i = sentinels[ready] if isinstance(ready, int) else busy[cast(Connection, ready)]
            slot = self._slots[i]
            if slot.job is None:
                continue
            try:
                finished = slot.conn.recv() if slot.conn.poll() else None
            except (EOFError, OSError):
                finished = None
            if finished is None and slot.proc.is_alive():
                continue
            if finished is None:
                finished = Finished(slot.job, None, f"worker process died (exit code {slot.proc.exitcode})")
                self._replace(i)
            slot = self._slots[i]
            slot.job = None
            out.append((i, finished))
        return out

    def _replace(self, i: int) -> None:
        self._slots[i].stop(hard=True)
        self._slots[i] = _Slot(self._ctx, self._runner)

    def kill(self, slot: int) -> None:
        self._replace(slot)

    def close(self) -> None:
        for s in self._slots:
            s.stop(hard=s.job is not None)


# -- Ray ---------------------------------------------------------------------------------------------


class RayExecutor(Executor):
    """Workers are Ray actors; each owns its environments for the whole study.

    ``address`` connects to a running cluster ("auto" or "ray://host:10001"); ``None`` starts a local
    Ray instance. Every node needs this package installed (the actors import it).
    """

    def __init__(self, n_workers: int, runner: JobRunner, address: str | None = None, cpus_per_worker: float = 1.0):
        import ray

        self._ray = ray
        if not ray.is_initialized():
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                runtime_env={"env_vars": {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}},
            )
        self._owns_ray = address is None
        # Any: Ray's annotations type neither the actor class's nor its methods' ``.remote``.
        self._actor_cls: Any = ray.remote(num_cpus=cpus_per_worker, max_restarts=0)(_RayWorker)
        self._runner = runner
        self.n_slots = n_workers
        self._actors: list[Any] = [self._actor_cls.remote(runner) for _ in range(n_workers)]
        self._pending: dict[Any, tuple[int, Any]] = {}  # object ref -> (slot, job)

    def submit(self, slot: int, job: Any) -> None:
        ref = self._actors[slot].run.remote(job)
        self._pending[ref] = (slot, job)

    def poll(self, timeout: float) -> list[tuple[int, Finished]]:
        if not self._pending:
            time.sleep(min(timeout, 0.05))
            return []
        ready, _ = self._ray.wait(list(self._pending), num_returns=1, timeout=timeout)
        out = []
        for ref in ready:
            slot, job = self._pending.pop(ref)
            try:
                out.append((slot, self._ray.get(ref)))
            except Exception as exc:  # noqa: BLE001 - an actor that died is a recorded error
                out.append((slot, Finished(job, None, f"Ray worker failed: {exc!r}")))
                self._restart(slot)
        return out

    def _restart(self, slot: int) -> None:
        self._ray.kill(self._actors[slot], no_restart=True)
        self._actors[slot] = self._actor_cls.remote(self._runner)

    def kill(self, slot: int) -> None:
        for ref, (s, _) in list(self._pending.items()):
            if s == slot:
                del self._pending[ref]
        self._restart(slot)

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor, no_restart=True)
        if self._owns_ray:
            self._ray.shutdown()


class _RayWorker:
    def __init__(self, runner: JobRunner):
        from webarena_gym.llm.redaction import install_log_redaction

        install_log_redaction()
        self._runner = runner

    def run(self, job: Any) -> Finished:
        try:
            return Finished(job, self._runner(job))
        except BaseException:  # noqa: BLE001
            return Finished(job, None, traceback.format_exc(limit=20))


def make_executor(name: str, n_workers: int, runner: JobRunner, ray_address: str | None = None) -> Executor:
    if name == "process":
        return ProcessExecutor(n_workers, runner)
    if name == "ray":
        return RayExecutor(n_workers, runner, address=ray_address)
    raise ValueError(f"unknown executor {name!r}: use 'process' or 'ray'")
