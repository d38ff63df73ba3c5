"""Counts per stage and per site of a run, as ``summary.json`` and a Markdown table (``summary.md``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from webarena_gym.experiments.synth.context import FILES
from webarena_gym.experiments.synth.store import JsonlStore
from webarena_gym.llm.redaction import write_text


def _load(run_dir: Path, name: str) -> list[dict[str, Any]]:
    return JsonlStore(run_dir / FILES[name]).load()


def _row(stage: str, item: str, records: Iterable[dict[str, Any]], when: Callable[[dict], bool] = bool) -> dict:
    sites = Counter(r.get("site", "?") for r in records if when(r))
    return {"stage": stage, "item": item, "total": sum(sites.values()), "per_site": dict(sites)}


def summarize(run_dir: str | Path) -> dict[str, Any]:
    run_dir = Path(run_dir)
    q, t = _load(run_dir, "queries"), _load(run_dir, "trajectories")
    cot = _load(run_dir, "cot")
    failures = _load(run_dir, "failures")
    classified = _load(run_dir, "classified")
    rows = [
        _row("1", "queries generated", q, lambda r: True),
        _row("1", "queries feasible", q, lambda r: r["feasible"]),
        _row("1", "queries usable (feasible, not dropped)", q, lambda r: r["feasible"] and not r["dropped"]),
        _row("1", "episodes judged", t, lambda r: True),
        _row("1", "trajectories kept", t, lambda r: r["kept"]),
        _row("1", "  of them synthetic queries", t, lambda r: r["kept"] and r["source"] == "synthetic"),
        _row("1", "  of them seed tasks", t, lambda r: r["kept"] and r["source"] == "seed"),
        _row("1", "  of them imported", t, lambda r: r["kept"] and r["source"] == "imported"),
        _row("2", "grounded plans", _load(run_dir, "plans"), lambda r: True),
        _row("2", "replans", _load(run_dir, "replans"), lambda r: True),
        *(
            _row("2", f"CoT traces ({kind})", [r for r in cot if r["kind"] == kind], lambda r: True)
            for kind in ("plan", "replan", "action")
        ),
        _row("3", "expansion pairs", _load(run_dir, "expansion"), lambda r: True),
        _row("4", "failed episodes classified", failures, lambda r: True),
        _row("4", "  in a failure class", failures, lambda r: r["label"] != "Other"),
        _row("4", "training points in a failure class", classified, lambda r: r["label"] != "Other"),
        _row("4", "targeted pairs", _load(run_dir, "targeted"), lambda r: True),
    ]
    rejected = {
        str(stage): len(JsonlStore(run_dir / f"stage{stage}" / "rejected.jsonl").load()) for stage in (1, 2, 3, 4)
    }
    sites = sorted({s for r in rows for s in r["per_site"]})
    return {"rows": rows, "sites": sites, "rejected": rejected}


def markdown(summary: dict[str, Any]) -> str:
    sites = summary["sites"]
    lines = [
        "| stage | item | total | " + " | ".join(sites) + " |",
        "|---|---|---|" + "---|" * len(sites),
    ]
    for r in summary["rows"]:
        cells = [str(r["per_site"].get(s, 0)) for s in sites]
        lines.append(f"| {r['stage']} | {r['item']} | {r['total']} | " + " | ".join(cells) + " |")
    rejected = ", ".join(f"stage {k}: {v}" for k, v in summary["rejected"].items())
    return "\n".join(lines) + f"\n\nRejected (teacher answers that stayed unusable): {rejected}\n"


def write(run_dir: str | Path) -> str:
    run_dir = Path(run_dir)
    summary = summarize(run_dir)
    text = markdown(summary)
    write_text(run_dir / "summary.json", json.dumps(summary, indent=1))
    write_text(run_dir / "summary.md", text)
    return text
