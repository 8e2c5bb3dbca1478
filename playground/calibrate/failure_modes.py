"""A gate per failure mode: the open-coded tags of a run as rates with Wilson intervals, each against a baseline.

A run is a dataset whose responses people judged and tagged (``playground tags``); a mode's rate is the share
of judged responses tagged with it, with its 95% Wilson interval (:func:`playground.verdicts.failure_mode_table`
counts them).  Against a baseline of rates (written by ``--write-baseline``), a mode **regresses** when the
run's lower Wilson bound lies above ``base × (1 + tol)`` — the rise is beyond both the noise of the run's
count and the tolerance (equal passes); lower is better for a failure.  A mode of the baseline that the run
has no count of, or a run with no judged response, cannot be checked: the verdict is then INCONCLUSIVE
unless a mode regressed (FAIL).  A mode the baseline lacks is listed, not gated.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ModeGateResult", "gate_modes", "modes_baseline"]


@dataclass
class ModeGateResult:
    """The verdict (PASS, FAIL, INCONCLUSIVE), the printed lines and every regression or unchecked mode."""

    verdict: str = "PASS"
    lines: list[str] = field(default_factory=list)
    regressions: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)


def modes_baseline(rows: Sequence[Any], dataset: str, tolerance: float) -> dict[str, Any]:
    """The baseline body: each mode's rate (rounded to 6 places) and the tolerance."""
    return {"kind": "failure-mode-rates", "dataset": dataset, "max_relative_rise": tolerance,
            "modes": {r.name: round(r.rate, 6) for r in rows if r.rate is not None}}


def gate_modes(rows: Sequence[Any], baseline: Mapping[str, Any] | None, tolerance: float) -> ModeGateResult:
    """Apply the rule (module docstring) to ``rows`` (:class:`playground.verdicts.FailureModeRow`)."""
    if not 0 <= tolerance < 1:
        raise ValueError(f"the tolerance must be in [0, 1), got {tolerance!r}")
    result = ModeGateResult()
    base = dict((baseline or {}).get("modes", {}))
    by_name = {r.name: r for r in rows}
    result.lines.append(f"{'failure mode':<24} {'tagged':>7} {'judged':>7} {'rate':>7} {'95% Wilson':>17} "
                        f"{'baseline':>8}  verdict")
    for name in sorted(set(by_name) | set(base)):
        r = by_name.get(name)
        b = base.get(name)
        if r is None or r.low is None:
            shown = f"{name:<24} {'—':>7} {'—':>7} {'—':>7} {'—':>17} {_f(b):>8}"
            if b is not None:
                result.unchecked.append(f"{name}: no judged response in the run")
            result.lines.append(f"{shown}  not checked")
            continue
        shown = (f"{name:<24} {r.responses_tagged:>7} {r.responses_judged:>7} {r.rate:>7.3f} "
                 f"{'[' + f'{r.low:.3f}, {r.high:.3f}' + ']':>17} {_f(b):>8}")
        if b is None:
            result.lines.append(f"{shown}  not in the baseline")
        elif r.low > b * (1 + tolerance) + 1e-12:
            result.regressions.append(f"{name}: {b:.4f} → {r.rate:.4f}, lower bound {r.low:.4f} above "
                                      f"{b * (1 + tolerance):.4f} (tolerance {tolerance:.0%})")
            result.lines.append(f"{shown}  REGRESSED")
        else:
            result.lines.append(f"{shown}  ok")
    if result.regressions:
        result.verdict = "FAIL"
    elif result.unchecked or not base or not any(r.low is not None for r in rows):
        result.verdict = "INCONCLUSIVE"
    return result


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"
