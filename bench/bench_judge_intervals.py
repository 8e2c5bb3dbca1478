#!/usr/bin/env python
"""Side by side (issue 37.8): our intervals against judgegate's and judgekeeper's, on the same seeded draws.

A judge of known TPR and TNR labels ``n`` samples (50 to 500) whose human labels are "yes" with probability
``base``; each draw gives a confusion matrix, and each tool's 95% interval of the judge's **TPR** and of
**Cohen's kappa** (judge vs human) is checked against the truth: coverage (the share of draws whose
interval holds the true value; a draw with no interval counts as a miss) and mean width (over the draws
with an interval).

* ours: :func:`playground.stats.wilson_interval` (Wilson, z = 1.959964) for TPR, and
  :func:`playground.stats.cohens_kappa` (kappa ± z · ASE, Fleiss–Cohen–Everitt 1969) for kappa;
* judgekeeper 0.1.3 (MIT; ``judgekeeper/metrics.py``, ``wilson_interval``): Wilson with z = 1.96 for TPR;
  it reports kappa without an interval;
* judgegate 0.1.0 (MIT; ``judgegate/stats/intervals.py`` ``wilson_proportion_interval`` and
  ``judgegate/stats/bootstrap.py`` ``kappa_interval``): Wilson with the normal quantile and the interval
  widened to hold p-hat, for TPR; for kappa a bias-corrected and accelerated (BCa) bootstrap of 10,000
  multinomial resamples of the confusion matrix with a grouped jackknife, and at perfect agreement the
  Wilson lower bound of the observed agreement mapped through kappa.  Both rules are re-implemented here
  line for line from those files (neither package is a dependency of the project); the bootstrap is seeded
  per draw.

The true kappa of a judge: with ``q = base · TPR + (1 − base)(1 − TNR)`` (the judge's "yes" rate),
``p_o = base · TPR + (1 − base) · TNR`` and ``p_e = base · q + (1 − base)(1 − q)``, ``kappa = (p_o − p_e) /
(1 − p_e)``.  Draws use numpy's PCG64 seeded per setting, so the table is the same on every run with the
same numpy.

Run ``python bench/bench_judge_intervals.py [--trials 500]``; prints the table (markdown) and the time.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe  # noqa: E402  (bench/machine.py)

from playground.stats import cohens_kappa, wilson_interval  # noqa: E402

SETTINGS = ((0.9, 0.85, 0.5), (0.8, 0.7, 0.5), (0.95, 0.95, 0.3))
SIZES = (50, 100, 200, 500)
_N = NormalDist()


# --------------------------------------------------------------------------- judgekeeper 0.1.3, metrics.py


def jk_wilson(p: float, n: int, z: float = 1.96) -> tuple[float, float]:
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


# --------------------------------------------------------------------------- judgegate 0.1.0, stats/


def jg_wilson(p_hat: float, total: int, confidence: float = 0.95) -> tuple[float, float]:
    z = _N.inv_cdf(0.5 + confidence / 2.0)
    z2 = z * z
    denom = 1.0 + z2 / total
    center = (p_hat + z2 / (2.0 * total)) / denom
    half = z * ((p_hat * (1.0 - p_hat) / total + z2 / (4.0 * total * total)) ** 0.5) / denom
    return min(max(0.0, center - half), p_hat), max(min(1.0, center + half), p_hat)


def _kappa_batch(counts: np.ndarray) -> np.ndarray:
    """judgegate's kappa_from_counts_batch, unweighted: ``1 − observed / expected disagreement``; a matrix with
    no expected disagreement is 1 when it has no observed disagreement either, else 0."""
    n = counts.sum(axis=(1, 2))
    p = counts / n[:, None, None]
    expected = p.sum(axis=2)[:, :, None] * p.sum(axis=1)[:, None, :]
    weights = 1.0 - np.eye(counts.shape[1])
    observed_dis = (p * weights).sum(axis=(1, 2))
    expected_dis = (expected * weights).sum(axis=(1, 2))
    return np.where(expected_dis > 1e-12, 1.0 - observed_dis / np.maximum(expected_dis, 1e-12),
                    np.where(observed_dis <= 1e-12, 1.0, 0.0))


def jg_kappa_interval(counts: np.ndarray, seed: int, confidence: float = 0.95,
                      resamples: int = 10_000) -> tuple[float, float]:
    n = int(counts.sum())
    observed = float(_kappa_batch(counts[None].astype(float))[0])
    if int(n - np.trace(counts)) == 0:  # perfect agreement: Wilson lower bound of p_o through kappa
        p = counts / n
        chance = float(np.sum(p.sum(axis=1) * p.sum(axis=0)))
        po_low = jg_wilson(1.0, n, confidence)[0]
        return max(-1.0, min((po_low - chance) / (1.0 - chance), 1.0)), 1.0
    flat = counts.flatten().astype(np.float64)
    if int(np.count_nonzero(flat)) <= 1:
        return observed, observed
    rng = np.random.default_rng(seed)
    boot = _kappa_batch(rng.multinomial(n, flat / n, size=resamples).astype(np.float64).reshape(resamples, 2, 2))
    if float(boot.max() - boot.min()) < 1e-12:
        return min(float(boot[0]), observed), max(float(boot[0]), observed)
    below = float(np.count_nonzero(boot < observed))
    ties = float(np.count_nonzero(boot == observed))
    p0 = min(max((below + 0.5 * ties) / resamples, 1.0 / (resamples + 1.0)), resamples / (resamples + 1.0))
    z0 = _N.inv_cdf(p0)
    values, weights = [], []
    for index in np.flatnonzero(flat):
        reduced = flat.copy()
        reduced[index] -= 1.0
        values.append(float(_kappa_batch(reduced.reshape(1, 2, 2))[0]))
        weights.append(flat[index])
    v, w = np.asarray(values), np.asarray(weights)
    centred = float(np.sum(w * v) / n) - v
    denom = 6.0 * float(np.sum(w * centred**2)) ** 1.5
    accel = float(np.sum(w * centred**3)) / denom if denom > 1e-12 else 0.0
    alpha = 1.0 - confidence
    quantiles = []
    for z_alpha in (_N.inv_cdf(alpha / 2.0), _N.inv_cdf(1.0 - alpha / 2.0)):
        correction = 1.0 - accel * (z0 + z_alpha)
        quantiles.append(_N.cdf(z_alpha) if correction <= 1e-12 else _N.cdf(z0 + (z0 + z_alpha) / correction))
    low, high = float(np.quantile(boot, quantiles[0])), float(np.quantile(boot, quantiles[1]))
    return (low, high) if low <= high else (high, low)


# --------------------------------------------------------------------------- the simulation


def true_kappa(tpr: float, tnr: float, base: float) -> float:
    q = base * tpr + (1 - base) * (1 - tnr)
    po = base * tpr + (1 - base) * tnr
    pe = base * q + (1 - base) * (1 - q)
    return (po - pe) / (1 - pe)


class Tally:
    def __init__(self) -> None:
        self.hits = self.draws = self.with_interval = 0
        self.width = 0.0

    def add(self, interval: tuple[float | None, float | None] | None, truth: float) -> None:
        self.draws += 1
        if interval is None or interval[0] is None or interval[1] is None:
            return
        low, high = float(interval[0]), float(interval[1])
        self.with_interval += 1
        self.width += high - low
        self.hits += low - 1e-12 <= truth <= high + 1e-12

    def cell(self) -> str:
        width = f"{self.width / self.with_interval:.3f}" if self.with_interval else "—"
        return f"{self.hits / self.draws:.3f} / {width}"


def simulate(trials: int) -> list[str]:
    rows = ["| TPR, TNR, base | n | TPR ours | TPR judgekeeper | TPR judgegate | kappa ours | kappa judgegate |",
            "| --- | ---: | --- | --- | --- | --- | --- |"]
    for s, (tpr, tnr, base) in enumerate(SETTINGS):
        kappa = true_kappa(tpr, tnr, base)
        for n in SIZES:
            rng = np.random.default_rng([20261207, s, n])
            t = {k: Tally() for k in ("ours", "jk", "jg", "k_ours", "k_jg")}
            for trial in range(trials):
                human = rng.random(n) < base
                judge = np.where(human, rng.random(n) < tpr, rng.random(n) >= tnr)
                pos, tp = int(human.sum()), int((human & judge).sum())
                t["ours"].add(wilson_interval(tp, pos) if pos else None, tpr)
                t["jk"].add(jk_wilson(tp / pos, pos) if pos else None, tpr)
                t["jg"].add(jg_wilson(tp / pos, pos) if pos else None, tpr)
                k = cohens_kappa(human.astype(int).tolist(), judge.astype(int).tolist())
                t["k_ours"].add((k.low, k.high), kappa)
                counts = np.array([[int((~human & ~judge).sum()), int((~human & judge).sum())],
                                   [int((human & ~judge).sum()), tp]])
                t["k_jg"].add(jg_kappa_interval(counts, seed=trial), kappa)
            rows.append(f"| {tpr}, {tnr}, {base} | {n} | {t['ours'].cell()} | {t['jk'].cell()} | {t['jg'].cell()} "
                        f"| {t['k_ours'].cell()} | {t['k_jg'].cell()} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=500, help="draws per setting and size (default 500)")
    args = parser.parse_args()
    print(describe())
    start = time.perf_counter()
    rows = simulate(args.trials)
    print(f"{args.trials} draws per row; each cell: coverage of the true value / mean width of the 95% interval")
    print("\n".join(rows))
    print(f"time: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
