"""Reports rebuilt from a study's store: tables, plots and an HTML report with a trajectory viewer.

``build_report(study)`` writes ``<study>/report/``: ``summary.md``/``.csv``/``.json``, PNG plots and
``index.html`` with one page per episode. The parts: :mod:`.summary` (the numbers), :mod:`.tables`,
:mod:`.plots` and :mod:`.viewer` (the HTML pages).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from experiments.report.plots import write_plots
from experiments.report.summary import summarize
from experiments.report.tables import all_tables, markdown_report
from experiments.report.viewer import write_html
from experiments.store import StudyStore

__all__ = ["build_report", "summarize"]


def build_report(study: str | os.PathLike) -> Path:
    """Write report/ (summary.md/.csv/.json, PNG plots, index.html + episode pages) and return its path."""
    summary = summarize(study)
    out = Path(study) / "report"
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(markdown_report(summary))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    for table in all_tables(summary):
        with open(out / f"{table.name}.csv", "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(table.header)
            writer.writerows(table.rows)
    plots = write_plots(summary, out)
    write_html(StudyStore(study), summary, plots, out)
    return out
