"""Cost before and after each stage: an estimate printed before the first call, what was spent after.

Estimates count the calls a stage still has to make, the prompt tokens of a sample of its real prompts
and each role's expected answer length, priced by litellm's price map; re-asks are not included, and a
model litellm has no price for shows tokens only. The demonstrator's episodes cannot be priced before
their pages are seen: their estimate assumes the paper's 11 steps per episode [P, A.11] and a prompt of
``DEMO_PROMPT_TOKENS`` per call [I]. Both lines are appended to ``costs.jsonl`` in the run directory.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from webarena_gym.experiments.synth.store import JsonlStore
from webarena_gym.experiments.synth.teacher import Spent
from webarena_gym.llm.tokens import price

DEMO_STEPS = 11  # average steps per episode of the paper's dynamic-replanning model (A.11: 11.12)
DEMO_PROMPT_TOKENS = 8000  # [I] a simplified-HTML page plus the prompt around it
DEMO_OUTPUT_TOKENS = 300  # [I]


def demonstrator_estimate(model: str, episodes: int, calls_per_step: int) -> dict[str, Any]:
    calls = episodes * DEMO_STEPS * calls_per_step
    prompt, completion = calls * DEMO_PROMPT_TOKENS, calls * DEMO_OUTPUT_TOKENS
    return {
        "role": "demonstrator",
        "model": model,
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cost": price(model, prompt, completion) if calls else 0.0,
    }


def _money(cost: float | None) -> str:
    return "price unknown" if cost is None else f"${cost:,.2f}"


class CostLog:
    """Prints and records the estimate and the spending of every stage."""

    def __init__(self, run_dir: Path, echo: Callable[[str], None] = print) -> None:
        self.store = JsonlStore(run_dir / "costs.jsonl")
        self.echo = echo
        self._count = len(self.store.load())

    def _append(self, record: dict[str, Any]) -> None:
        self._count += 1
        now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        self.store.append([{"key": f"{self._count}", "at": now, **record}])

    def estimate(self, stage: str, parts: list[dict[str, Any]]) -> None:
        parts = [p for p in parts if p["calls"]]
        if not parts:
            self.echo(f"[{stage}] nothing left to do")
            return
        costs = [p["cost"] for p in parts]
        total = None if None in costs else sum(costs)
        lines = [
            f"  {p['role']} ({p['model']}): {p['calls']:,} calls, ~{p['prompt_tokens']:,} prompt + "
            f"~{p['completion_tokens']:,} completion tokens, ~{_money(p['cost'])}"
            for p in parts
        ]
        self.echo(f"[{stage}] estimate before starting (re-asks not included): ~{_money(total)}\n" + "\n".join(lines))
        self._append({"stage": stage, "kind": "estimate", "total": total, "parts": parts})

    def spent(self, stage: str, teacher: Spent, demonstrator: dict[str, Any] | None = None) -> None:
        total = teacher.cost + (demonstrator or {}).get("cost", 0.0)
        unknown = teacher.unknown_cost_calls + (demonstrator or {}).get("unknown_cost_calls", 0)
        note = f" ({unknown} calls of models without a price)" if unknown else ""
        text = (
            f"[{stage}] spent: ${total:,.4f}{note}; teacher {teacher.calls:,} calls, "
            f"{teacher.prompt_tokens:,} prompt + {teacher.completion_tokens:,} completion tokens"
        )
        if demonstrator:
            text += f"; demonstrator {demonstrator['calls']:,} calls (${demonstrator['cost']:,.4f})"
        self.echo(text)
        record: dict[str, Any] = {
            "stage": stage,
            "kind": "spent",
            "total": round(total, 6),
            "teacher": teacher.to_dict(),
        }
        if demonstrator:
            record["demonstrator"] = demonstrator
        self._append(record)
