"""The process table, read from /proc (no psutil): what leftover-process checks and memory figures need."""

from __future__ import annotations

import os
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
