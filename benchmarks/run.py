"""The benchmark runner: ``python -m webarena_gym.benchmarks [--quick] [--only NAME] [--out FILE]`` (``make bench``).

Every module ``benchmarks/<name>.py`` (this package, except the runner and ``support``) exposes
``run(quick: bool) -> list[dict]``; each row has ``name``, ``value``, ``unit``, ``target`` and ``note``.
The rows are printed and written, with a description of the machine they were measured on, into one
section per module of ``docs/benchmarks.md`` (sections of modules not run are kept).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import importlib.metadata
import json
import os
import pkgutil
import platform
import re
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

from webarena_gym import benchmarks

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
_SECTION = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /bench:(?P=name) -->\n", re.S)
_MEASURED_FULL = re.compile(r"^Measured [^\n]*UTC on: ", re.M)  # a quick run's line says "UTC (quick mode) on:"
_HEADER = (
    "# Benchmarks\n\n"
    "Written by `python -m webarena_gym.benchmarks` (one section per module of `benchmarks/`; "
    "`--only NAME` re-runs one and keeps the others). Each section names the machine it ran on.\n\n"
)


def discover() -> list[str]:
    """Names of the benchmark modules (every module of this package but the runner and ``support``)."""
    return sorted(
        info.name
        for info in pkgutil.iter_modules(benchmarks.__path__)
        if not info.ispkg and info.name not in {"run", "__main__"}
    )


def machine() -> str:
    """One line on the hardware and software a figure came from."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = f", load average {os.getloadavg()[0]:.1f} at the start"
    versions = []
    for package in ("playwright", "browsergym-core", "gymnasium"):
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    try:
        from webarena_gym.envs.browser import find_chromium

        chromium = find_chromium()
        if chromium:
            version = subprocess.run([chromium, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
            versions.append(f"{version} ({Path(chromium).name})")
    except (OSError, subprocess.SubprocessError, RuntimeError):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores{memory}{load}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; {', '.join(versions)}"
    )


def run_module(name: str, quick: bool) -> list[dict[str, Any]]:
    module = importlib.import_module(f"{benchmarks.__name__}.{name}")
    return list(module.run(quick=quick))


def describe(name: str) -> str:
    """What a benchmark measures: its module docstring."""
    try:
        return (importlib.import_module(f"{benchmarks.__name__}.{name}").__doc__ or "").strip()
    except ImportError:
        return ""


def _format_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def render_section(name: str, rows: list[dict[str, Any]], machine_line: str, quick: bool, error: str = "") -> str:
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"## {name}", "", describe(name), "",
             f"Measured {when}{' (quick mode)' if quick else ''} on: {machine_line}.", ""]  # fmt: skip
    if error:
        lines += ["Run failed:", "", "```", error.strip(), "```", ""]
    if rows:
        lines += ["| figure | value | unit | target | note |", "|---|---|---|---|---|"]
        for row in rows:
            cells = [row.get("name", ""), _format_value(row.get("value", "")), row.get("unit", ""),
                     row.get("target", "") or "", row.get("note", "") or ""]  # fmt: skip
            lines.append("| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |")
        lines.append("")
    return f"<!-- bench:{name} -->\n" + "\n".join(lines) + f"<!-- /bench:{name} -->\n"


def _is_full(section: str) -> bool:
    return bool(_MEASURED_FULL.search(section))


def write_report(out: Path, sections: dict[str, str]) -> list[str]:
    """Replace the given sections in ``out`` (creating it), keeping every other section, the
    hand-written text between the header paragraph and the first section (a summary of the targets) and
    the hand-written notes after each section (they stay with the section they follow).

    A quick-mode section never replaces one measured in full (a smoke run must not overwrite the figures a
    target is judged by); returns the names of the sections kept for that reason."""
    text = out.read_text() if out.exists() else ""
    found = list(_SECTION.finditer(text))
    existing = {m["name"]: m.group(0) for m in found}
    ends = [m.start() for m in found[1:]] + [len(text)] if found else []
    notes = {m["name"]: text[m.end() : end] for m, end in zip(found, ends, strict=True)}
    kept = sorted(n for n, s in sections.items() if n in existing and _is_full(existing[n]) and not _is_full(s))
    existing.update({n: s for n, s in sections.items() if n not in kept})
    first = text.find("<!-- bench:")
    head = text[:first] if first >= 0 else text
    preamble = ""
    if head.startswith("# Benchmarks"):  # drop the title and the paragraph under it, whatever its wording
        _, _, rest = head.partition("\n\n")
        _, _, preamble = rest.partition("\n\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(existing[name] + notes.get(name, "\n") for name in sorted(existing))
    out.write_text(_HEADER + preamble + body.rstrip("\n") + "\n")
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webarena_gym.benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="run only this benchmark (repeatable); default: all")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="markdown file to update")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    names = discover()
    unknown = sorted(set(args.only or ()) - set(names))
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; available: {', '.join(names)}")
    machine_line = machine()
    sections, failed = {}, False
    for name in args.only or names:
        print(f"== bench {name}", file=sys.stderr)
        try:
            rows, error = run_module(name, args.quick), ""
        except Exception:  # noqa: BLE001 - one broken benchmark must not hide the others
            rows, error, failed = [], traceback.format_exc(), True
            print(error, file=sys.stderr)
        for row in rows:
            print(json.dumps({"bench": name, **row}, default=str))
        sections[name] = render_section(name, rows, machine_line, args.quick, error)
    if not args.no_write:
        for name in write_report(args.out, sections):
            print(f"kept the full-run section {name!r}: a --quick run does not overwrite it", file=sys.stderr)
        print(f"wrote {args.out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
