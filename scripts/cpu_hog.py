"""Keep CPU cores busy while a command runs, to check that tests hold on a loaded machine.

    python scripts/cpu_hog.py --procs 2 --seconds 1800 -- .venv/bin/python -P -m pytest -q tests/test_x.py

starts ``--procs`` busy-loop processes, runs the command, and stops them when it ends (or on Ctrl-C);
without a command it hogs for ``--seconds`` and stops. Each busy loop also ends by itself after
``--seconds``, so none outlives a killed parent for long. Exits with the command's exit code.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

BUSY_LOOP = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=os.cpu_count() or 2, help="busy processes (default: cores)")
    parser.add_argument("--seconds", type=float, default=600.0, help="longest time a busy process runs")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run under load")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed hog still stops its busy loops
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    code = [sys.executable, "-c", BUSY_LOOP.format(seconds=args.seconds)]
    hogs = [subprocess.Popen(code) for _ in range(args.procs)]
    started = time.monotonic()
    try:
        if command:
            status = subprocess.call(command)
        else:
            while time.monotonic() - started < args.seconds and any(h.poll() is None for h in hogs):
                time.sleep(0.5)
            status = 0
    except KeyboardInterrupt:
        status = 130
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(f"cpu_hog: {args.procs} busy processes for {time.monotonic() - started:.0f} s", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
