"""Bias probes of a scorer with per-sample scores: does it favour long answers?  (``playground calibrate bias``)

**Length (verbosity) bias.**  Among the samples people labelled *alike* — every human-"yes" sample, then
every human-"no" one — a fair scorer's score does not follow the answer's length.  Per class with at least
:data:`MIN_PER_CLASS` samples: Spearman's rank correlation ``rho`` between the score and the response's
length in characters (:func:`scipy.stats.spearmanr`, ties at their mean rank), with a 95% interval from
Fisher's z with the Fieller–Hartley–Pearson (1957) standard error for Spearman's rho::

    z = atanh(rho),  se = sqrt(1.06 / (n − 3)),  interval = tanh(z ∓ 1.959964 · se)

(``rho`` of ±1 is taken as ±0.999999 so the interval stays finite).  The scorer is **length-biased** when
in either class the whole interval lies beyond ±:data:`MAX_RHO` (0.2 exactly does not count): the scores
move with length among answers people judged the same, by more than a small effect.  A class with fewer
samples, or whose scores (or lengths) are all equal, is reported without a figure and decides nothing.

The result goes into the scorer's entry of the calibration record (``bias: {length: …}``), and the gate
turns a biased record advisory with the reason (:func:`playground.calibrate.score_gate.below_bar`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["MAX_RHO", "MIN_PER_CLASS", "length_bias", "rho_interval"]

#: A human class needs this many samples for its correlation to count.
MIN_PER_CLASS = 10
#: A correlation whose whole interval lies beyond this (in absolute value) is a bias.
MAX_RHO = 0.2
_Z95 = 1.959964


def rho_interval(rho: float, n: int) -> tuple[float, float]:
    """The 95% interval of Spearman's ``rho`` over ``n`` pairs (module docstring); ``n`` must be at least 4."""
    if n < 4:
        raise ValueError(f"an interval of Spearman's rho needs n >= 4, got {n}")
    z = math.atanh(max(-0.999999, min(0.999999, rho)))
    se = math.sqrt(1.06 / (n - 3))
    return math.tanh(z - _Z95 * se), math.tanh(z + _Z95 * se)


def _class_figure(scores: Sequence[float], lengths: Sequence[int]) -> dict[str, Any]:
    n = len(scores)
    if n < MIN_PER_CLASS:
        return {"n": n, "rho": None, "low": None, "high": None, "note": f"fewer than {MIN_PER_CLASS} samples"}
    if len(set(scores)) < 2 or len(set(lengths)) < 2:
        return {"n": n, "rho": None, "low": None, "high": None, "note": "scores or lengths all equal"}
    from scipy.stats import spearmanr

    rho = float(spearmanr(scores, lengths).statistic)
    low, high = rho_interval(rho, n)
    return {"n": n, "rho": rho, "low": low, "high": high, "note": ""}


def length_bias(scores: Sequence[float], lengths: Sequence[int], human: Sequence[int]) -> dict[str, Any]:
    """The length probe of one scorer: per human class (``yes``, ``no``) its figure, and the verdict.

    ``{"measure", "by_class": {"yes": {n, rho, low, high, note}, "no": …}, "biased", "reason"}``.
    """
    if not len(scores) == len(lengths) == len(human):
        raise ValueError(f"scores, lengths and human verdicts differ in length: "
                         f"{len(scores)}, {len(lengths)}, {len(human)}")
    by_class = {}
    reasons = []
    for name, value in (("yes", 1), ("no", 0)):
        idx = [i for i, h in enumerate(human) if h == value]
        fig = _class_figure([scores[i] for i in idx], [lengths[i] for i in idx])
        by_class[name] = fig
        if fig["rho"] is not None and (fig["low"] > MAX_RHO or fig["high"] < -MAX_RHO):
            reasons.append(f"among human-'{name}' samples score follows length (Spearman rho {fig['rho']:.2f} "
                           f"[{fig['low']:.2f}, {fig['high']:.2f}], n = {fig['n']})")
    return {"measure": "response length in characters", "by_class": by_class, "biased": bool(reasons),
            "reason": "; ".join(reasons)}
