"""How two evaluators' verdicts on the same episodes agree: both success rates per policy and per site,
the confusion matrix of the two verdicts, Cohen's kappa, and the episodes they disagree on.

The pairs are the study's own verdict and a re-scoring's (:mod:`experiments.rescore`); an episode one of
the two could not score (an error, or a check that needs the live site) is counted apart, never as a
failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from webarena_gym.experiments.rescore import Rescored


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two binary raters; None without pairs, and 1.0 when both always give one and the
    same verdict (chance agreement 1: they agree and there is nothing to correct for)."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    p_a, p_b = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    chance = p_a * p_b + (1 - p_a) * (1 - p_b)
    if chance == 1.0:
        return 1.0
    return (observed - chance) / (1 - chance)


def _rates(rows: Sequence[Rescored]) -> dict[str, Any]:
    return {
        "n": len(rows),
        "original": sum(r.original_score == 1.0 for r in rows) / len(rows) if rows else None,
        "rescored": sum(r.score == 1.0 for r in rows) / len(rows) if rows else None,
    }


def agreement(rows: Sequence[Rescored]) -> dict[str, Any]:
    """The agreement of ``rows``' original and re-scored verdicts (one evaluator's re-scoring)."""
    paired = [r for r in rows if r.score is not None and r.original_score is not None]
    pairs = [(r.original_score == 1.0, r.score == 1.0) for r in paired]
    by = {"policy": sorted({r.policy for r in paired}), "site": sorted({r.site_group for r in paired})}
    return {
        "evaluator": rows[0].evaluator if rows else None,
        "original_evaluators": sorted({r.original_evaluator for r in rows}),
        "episodes": len(rows),
        "paired": len(paired),
        "unscored": [{"key": r.key, "reason": r.reason} for r in rows if r.score is None],
        "by_policy": {p: _rates([r for r in paired if r.policy == p]) for p in by["policy"]},
        "by_site": {s: _rates([r for r in paired if r.site_group == s]) for s in by["site"]},
        "confusion": {
            "both_pass": sum(a and b for a, b in pairs),
            "original_only": sum(a and not b for a, b in pairs),
            "rescored_only": sum(b and not a for a, b in pairs),
            "both_fail": sum(not a and not b for a, b in pairs),
        },
        "kappa": cohen_kappa(pairs),
        "disagreements": [
            {
                "key": r.key,
                "policy": r.policy,
                "env_id": r.env_id,
                "seed": r.seed,
                "original": r.original_score,
                "original_reason": r.original_reason,
                "rescored": r.score,
                "reason": r.reason,
            }
            for r in paired
            if (r.original_score == 1.0) != (r.score == 1.0)
        ],
    }
