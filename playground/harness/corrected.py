"""A scorer's pass rate on a new, unlabelled run, corrected for the error rates its calibration record measured.

A scorer that says "pass" to a sample with probability TPR when people would
pass it and 1 − TNR when they would not has an expected pass rate
``p = π·TPR + (1 − π)(1 − TNR)`` where π is the true (human) pass rate.
Solving for π gives the Rogan–Gladen (1978) estimator::

    π̂ = (p + TNR − 1) / (TPR + TNR − 1),  clipped to [0, 1]

defined only when ``TPR + TNR > 1`` (a scorer better than chance).

Interval (:func:`corrected_rate`): a seeded parametric bootstrap over *both*
sources of error — the run's own sampling error (``p`` from ``N`` scored
samples) and the calibration's (TPR from the record's human-"yes" samples,
TNR from its human-"no" ones).  Each resample draws ``p*``, ``TPR*``,
``TNR*`` from the Jeffreys posteriors ``Beta(k + ½, n − k + ½)`` of the three
proportions (which, unlike a plain binomial resample, still varies when a
proportion is 0 or 1), computes π̂* (clipped), and the interval is the
(α/2, 1 − α/2) percentiles.  Resamples with ``TPR* + TNR* <= 1`` have no
estimate; they are counted (``undefined``), and more than
:data:`MAX_UNDEFINED_SHARE` of them makes the result unusable for gating.
An LLM judge whose record carries a flip rate φ (as :mod:`playground.calibrate.repeats`
defines it: the chance that two of its K runs, drawn without replacement, give a
sample different verdicts, averaged over samples; for K = 2, the share of verdicts
that change on a rerun) has its run rate widened: ``p*`` is drawn from a Beta
with the effective sample size ``N·(1 − 2φ)`` (at least 1), because a
verdict that flips carries at most half the information.
The draws come from ``numpy.random.Generator(PCG64(stable_hash(seed, "corrected")))``:
the same inputs and seed give the same interval on every machine.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..sampling import stable_hash

__all__ = ["MAX_UNDEFINED_SHARE", "CorrectedRate", "corrected_rate", "rogan_gladen"]

#: More resamples than this share without an estimate (TPR* + TNR* <= 1): the interval is not given.
MAX_UNDEFINED_SHARE = 0.01


def rogan_gladen(p: float, tpr: float, tnr: float) -> float | None:
    """``(p + tnr − 1) / (tpr + tnr − 1)`` clipped to [0, 1]; None when ``tpr + tnr <= 1``."""
    j = tpr + tnr - 1.0
    if j <= 0:
        return None
    return min(1.0, max(0.0, (p + tnr - 1.0) / j))


@dataclass(frozen=True)
class CorrectedRate:
    """The raw pass rate of the run, the corrected rate with its interval, and the bootstrap's bookkeeping."""

    raw: float
    n: int
    estimate: float | None
    low: float | None
    high: float | None
    n_boot: int
    undefined: int
    reason: str = ""


def _jeffreys(rng: np.random.Generator, k: float, n: float, size: int) -> np.ndarray:
    return rng.beta(k + 0.5, n - k + 0.5, size)


def corrected_rate(passed: int, n: int, tpr: tuple[int, int], tnr: tuple[int, int], *, n_boot: int = 2000,
                   seed: int | str = 0, confidence: float = 0.95, flip_rate: float = 0.0) -> CorrectedRate:
    """The corrected pass rate of a run with ``passed`` of ``n`` samples passing (module docstring).

    ``tpr``/``tnr``: ``(successes, n)`` of the record's true positive and true negative rates.
    """
    if n <= 0:
        return CorrectedRate(0.0, 0, None, None, None, n_boot, 0, "the run has no scored sample")
    (tp, npos), (tn, nneg) = tpr, tnr
    if npos <= 0 or nneg <= 0:
        return CorrectedRate(passed / n, n, None, None, None, n_boot, 0,
                             "the record has no human 'yes' or no human 'no' sample: TPR or TNR is unknown")
    p = passed / n
    est = rogan_gladen(p, tp / npos, tn / nneg)
    if est is None:
        return CorrectedRate(p, n, None, None, None, n_boot, 0,
                             "TPR + TNR <= 1: the scorer is no better than chance, nothing to correct with")
    rng = np.random.Generator(np.random.PCG64(stable_hash(seed, "corrected")))
    n_eff = max(1.0, n * (1.0 - 2.0 * min(0.5, max(0.0, flip_rate))))
    ps = _jeffreys(rng, p * n_eff, n_eff, n_boot)
    tprs = _jeffreys(rng, tp, npos, n_boot)
    tnrs = _jeffreys(rng, tn, nneg, n_boot)
    j = tprs + tnrs - 1.0
    ok = j > 0
    undefined = int((~ok).sum())
    if undefined > MAX_UNDEFINED_SHARE * n_boot:
        return CorrectedRate(p, n, est, None, None, n_boot, undefined,
                             f"{undefined} of {n_boot} resamples have TPR + TNR <= 1: the calibration is too "
                             "uncertain for an interval")
    draws = np.clip((ps[ok] + tnrs[ok] - 1.0) / j[ok], 0.0, 1.0)
    alpha = 1.0 - confidence
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return CorrectedRate(p, n, est, float(low), float(high), n_boot, undefined)
