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
from experiments.report.tables import cells, header, markdown_table
from experiments.report.viewer import write_html
from experiments.store import StudyStore

__all__ = ["build_report", "summarize"]


def build_report(study: str | os.PathLike) -> Path:
    """Write report/ (summary.md/.csv/.json, PNG plots, index.html + episode pages) and return its path."""
    summary = summarize(study)
    out = Path(study) / "report"
    out.mkdir(parents=True, exist_ok=True)
    md = markdown_table(summary)
    (out / "summary.md").write_text(md)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    with open(out / "summary.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header(summary))
        w.writerows(cells(r, summary) for r in summary["rows"])
    plots = write_plots(summary, out)
    write_html(StudyStore(study), summary, plots, out)
    return out
