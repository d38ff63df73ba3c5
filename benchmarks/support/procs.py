"""The process table, read from /proc (no psutil): what leftover-process checks and memory figures need."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def process_table() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, state letter, command line) of every process we can read."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # the command name may contain spaces or ")"
        table[int(entry)] = (int(fields[1]), fields[0], cmdline)
    return table


def children_map(table: dict[int, tuple[int, str, str]]) -> dict[int, list[int]]:
    """parent pid -> its child pids."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    return children


def tree_cpu_s(kind_of: Callable[[str], str] = lambda cmdline: "descendants") -> dict[str, float]:
    """CPU seconds (user + system) used so far by this process (``"self"``) and its descendants, live
    or reaped, summed by ``kind_of(command line)`` of each descendant.

    A descendant that exited and was waited for by its parent is in that parent's children time, so
    the sum over the live tree counts it once (under its parent's kind); one that outlived its parent
    and was adopted by init would be lost, which the processes an environment starts do not do. The
    descendants are read before this process's own time, so over successive calls each walk's own
    cost is counted once.
    """
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    by_kind: dict[str, float] = {}
    stack = list(children.get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmdline = ""
        kind = kind_of(cmdline)
        by_kind[kind] = by_kind.get(kind, 0.0) + times[pid] / ticks
        stack.extend(children.get(pid, []))
    mine = os.times()
    by_kind["self"] = mine.user + mine.system + mine.children_user + mine.children_system
    return by_kind
