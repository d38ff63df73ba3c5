"""Reports rebuilt from a study's store: tables, plots and an HTML report with a trajectory viewer.

``build_report(study)`` writes ``<study>/report/``: ``summary.md``/``.csv``/``.json``, PNG plots and
``index.html`` with one page per episode. The parts: :mod:`.summary` (the numbers), :mod:`.tables`,
:mod:`.plots`, :mod:`.viewer` (the HTML pages) and :mod:`.console` (the one-screen summary commands print).
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from webarena_gym.experiments.report.plots import write_plots
from webarena_gym.experiments.report.summary import summarize
from webarena_gym.experiments.report.tables import all_tables, markdown_report
from webarena_gym.experiments.report.viewer import write_html
from webarena_gym.experiments.store import StudyStore
from webarena_gym.llm.redaction import write_text

__all__ = ["build_report", "summarize"]


def build_report(study: str | os.PathLike, *, errors_as_failures: bool = False) -> Path:
    """Write report/ (summary.md/.csv/.json, PNG plots, index.html + episode pages) and return its path.

    Episodes that ended in an error are left out of the success rates unless ``errors_as_failures``.
    Every file is redacted as it is written (:mod:`llm.redaction`).
    """
    summary = summarize(study, errors_as_failures=errors_as_failures)
    out = Path(study) / "report"
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "summary.md", markdown_report(summary))
    write_text(out / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False))
    for table in all_tables(summary):
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(table.header)
        writer.writerows(table.rows)
        write_text(out / f"{table.name}.csv", buffer.getvalue())
    plots = write_plots(summary, out)
    write_html(StudyStore(study), summary, plots, out)
    return out
