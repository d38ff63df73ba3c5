"""The study's HTML report: a summary page and one page per episode to step through its trajectory.

Plain static files (no server, no JavaScript needed), so a report can be opened from disk, copied or
attached to a paper's supplementary material.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from webarena_gym.experiments.report.plots import Plot
from webarena_gym.experiments.report.tables import all_tables
from webarena_gym.experiments.store import EpisodeResult, StudyStore, file_name
from webarena_gym.experiments.trajectory import expand_replies
from webarena_gym.llm.messages import IMAGE_REF_PREFIX
from webarena_gym.llm.redaction import write_text

_env = Environment(
    loader=PackageLoader("webarena_gym.experiments", "templates"), autoescape=select_autoescape(["html"])
)
# A header may break after a slash: a model label ("openai/Qwen/Qwen2.5-7B-Instruct") is one long word.
_env.filters["breakable"] = lambda text: escape(text).replace("/", Markup("/<wbr>"))


def page_name(policy: str, key: str) -> str:
    """The viewer's page of an episode (report tables link to it): named by its policy's label, for a
    reader, and its key, which tells apart configurations the label may not; bounded in length."""
    return file_name(f"ep_{policy}|{key}", ".html")


def _content(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    if isinstance(content, list):  # multimodal messages: their text parts (images are listed apart)
        return "\n".join(part.get("text", "[image]") for part in content if isinstance(part, dict))
    return str(content)


def _images(message: dict[str, Any], episode_dir: Path, out: Path) -> list[str]:
    """Paths (from the report) of the images a message carried, saved as ``images/<sha256>.png``."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    refs = [
        str((part.get("image_url") or {}).get("url", ""))
        for part in content
        if isinstance(part, dict) and part.get("type") == "image_url"
    ]
    return [
        os.path.relpath(episode_dir / "images" / f"{ref.split(':', 1)[1]}.png", out)
        for ref in refs
        if ref.startswith(IMAGE_REF_PREFIX)
    ]


def _tree(traj: dict[str, Any]) -> dict[str, Any] | None:
    """The search tree as nested nodes (children in creation order), the executed path marked."""
    tree = traj.get("tree")
    if not tree or not tree.get("nodes"):
        return None
    path = set(tree.get("final_path") or [])
    nodes = {n["id"]: {**n, "on_path": n["id"] in path, "children": []} for n in tree["nodes"]}
    roots: list[dict[str, Any]] = []
    for node in nodes.values():
        parent = nodes.get(node.get("parent"))
        (parent["children"] if parent is not None else roots).append(node)
    return {
        "roots": roots,
        "final_path": tree.get("final_path") or [],
        "size": len(nodes),
        "iterations": tree.get("iterations"),
        "iteration_budget": tree.get("iteration_budget"),
    }


def _load_trajectory(study: Path, r: EpisodeResult) -> dict[str, Any]:
    if not r.trajectory:
        return {}
    path = study / r.trajectory / "trajectory.json"
    try:
        traj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(traj, dict):
        return {}
    traj["steps"] = [expand_replies(step) for step in traj.get("steps") or () if isinstance(step, dict)]
    return traj


def _steps(traj: dict[str, Any], episode_dir: Path, out: Path) -> list[dict[str, Any]]:
    """The trajectory's steps in the shape the episode template shows."""
    steps = []
    for s in traj.get("steps", []):
        shot = s.get("screenshot")
        calls = [
            {
                "role": c.get("role", ""),
                "model": c.get("model", ""),
                "prompt_tokens": c.get("prompt_tokens", 0),
                "completion_tokens": c.get("completion_tokens", 0),
                "messages": [
                    {"role": m.get("role", ""), "content": _content(m), "images": _images(m, episode_dir, out)}
                    for m in c.get("messages", [])
                ],
                "response": "\n---\n".join(c.get("responses") or []),
                "error": c.get("error"),
                "note": c.get("note"),  # e.g. sent as text only to a server that refused images
            }
            for c in s.get("llm_calls", [])
        ]
        steps.append(
            {
                "url": s.get("url", ""),
                "action": s.get("action", ""),
                "error": "; ".join(e for e in (s.get("decision_error"), s.get("action_error")) if e),
                "observation": s.get("observation", ""),
                "screenshot": os.path.relpath(episode_dir / shot, out) if shot else None,
                "llm_calls": calls,
            }
        )
    return steps


def write_html(store: StudyStore, summary: dict[str, Any], plots: list[Plot], out: Path) -> Path:
    latest = sorted(store.latest().values(), key=lambda r: (r.policy, r.task_id, r.seed))
    pages = [page_name(r.policy, r.key) for r in latest]
    for i, r in enumerate(latest):
        traj = _load_trajectory(store.root, r)
        episode_dir = store.root / (r.trajectory or "")
        html = _env.get_template("episode.html").render(
            r=r,
            goal=(traj.get("task") or {}).get("goal", ""),
            evaluation=json.dumps(traj.get("evaluation"), indent=2) if traj.get("evaluation") else "",
            steps=_steps(traj, episode_dir, out),
            tree=_tree(traj),
            trials=traj.get("trials") or [],
            counters=traj.get("counters") or {},
            budget=traj.get("budget") or {},
            lookahead=traj.get("lookahead") or [],
            prev=pages[i - 1] if i > 0 else None,
            next=pages[i + 1] if i + 1 < len(pages) else None,
        )
        write_text(out / pages[i], html)
    by_policy: dict[str, list[dict[str, Any]]] = {}
    for r, page in zip(latest, pages, strict=True):
        by_policy.setdefault(r.policy, []).append(r.__dict__ | {"page": page, "success": r.success})
    index = _env.get_template("index.html").render(
        summary=summary,
        manifest=summary["manifest"],
        tables=all_tables(summary),
        plots=plots,
        errors=[e | {"page": page_name(e["policy"], e["key"])} for e in summary.get("errors", [])],
        by_policy=list(by_policy.items()),
    )
    write_text(out / "index.html", index)
    return out / "index.html"
