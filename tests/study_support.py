"""Stopping a study with Ctrl-C at a known point, whatever the machine's load.

The study's policy calls a model on a fake server (``model_server``) behind a :class:`Gate`: the first
episode's call is answered at once, every later call is held until the test opens the gate. So when
the test sends SIGINT after the first result line, the study is certainly still running (a second
episode waits on its model), however slowly the test process is scheduled. The study starts with
SIGINT ignored, as a shell starts a command in the background (``cmd &``), which is how a loaded
machine's ``make test`` often runs: the study must stop on SIGINT all the same.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

from model_server import ModelServer, Request

MODEL = "openai/fake"
HELD_S = 600.0  # a held call waits this long, or until its client hangs up
ANSWER = "The page says it. In summary, the next action I will perform is ```stop [1796]```"


class Gate:
    """A ``ModelServer.delay_s``: the first ``free`` policy calls go through, later ones wait until
    :meth:`open` (the judge's calls are never held)."""

    def __init__(self, free: int = 1) -> None:
        self.free = free
        self.opened = threading.Event()
        self._seen = 0
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> float:
        if request.is_judge:
            return 0.0
        with self._lock:
            self._seen += 1
            seen = self._seen
        return 0.0 if seen <= self.free or self.opened.is_set() else HELD_S

    def open(self) -> None:
        self.opened.set()


def gated_server() -> tuple[ModelServer, Gate]:
    gate = Gate()
    return ModelServer(lambda request: ANSWER, delay_s=gate), gate


def model_options(server: ModelServer) -> list[str]:
    """The compare options that run ReAct on the gated server."""
    return ["--policy", "react", "--model", MODEL, "--api-base", server.url]


def _as_a_background_job() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_after_first_episode(args: list[str], env: dict[str, str], results: Path) -> tuple[int, str]:
    """Run the study ``args``, send SIGINT once ``results`` holds a line; (exit code, stderr)."""
    env = {**env, "OPENAI_API_KEY": "local-dummy"}
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=_as_a_background_job
    )
    deadline = time.monotonic() + 600
    while not (results.exists() and results.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err
