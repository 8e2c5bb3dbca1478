"""How stable a non-deterministic scorer (an LLM judge) is: its verdicts on the same samples over K runs.

Given K result tables of the same scorer on the same samples (the first run and
K − 1 reruns), per metric column and per sample scored in every run, the
verdicts are ``score >= threshold``.  With ``m`` "pass" verdicts of ``K``:

* the sample's **stability** is the share of the majority verdict, ``max(m, K − m) / K``;
* its **flip probability** is the chance that two different runs disagree,
  ``2 m (K − m) / (K (K − 1))``; the column's **flip rate** is its mean over samples;
* **unstable** samples are those whose verdict is not the same in all K runs.

The calibration record carries ``{k, flip_rate, unstable_units, n_units, mean_stability}``
per column; the gate refuses above :data:`playground.harness.score_gate.MAX_FLIP_RATE`
and widens the run's interval below it (:mod:`playground.harness.corrected`).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["stability"]


def stability(runs: Sequence[dict[str, dict[str, float | None]]], columns: Sequence[str],
              threshold: float) -> dict[str, dict[str, Any]]:
    """Per column the figures of the module docstring; ``runs``: per run, scores by case id and column."""
    k = len(runs)
    if k < 2:
        raise ValueError("stability needs at least two runs of the scorer")
    out: dict[str, dict[str, Any]] = {}
    for column in columns:
        cases = sorted(set.intersection(*(
            {c for c, scores in run.items() if scores.get(column) is not None} for run in runs)))
        flips, stable, unstable = [], [], 0
        for case in cases:
            m = sum(1 for run in runs if (run[case][column] or 0.0) >= threshold)
            flips.append(2 * m * (k - m) / (k * (k - 1)))
            stable.append(max(m, k - m) / k)
            unstable += 0 < m < k
        n = len(cases)
        out[column] = {"k": k, "n_units": n, "unstable_units": unstable,
                       "flip_rate": sum(flips) / n if n else None,
                       "mean_stability": sum(stable) / n if n else None}
    return out
