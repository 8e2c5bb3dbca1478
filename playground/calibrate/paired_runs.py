"""Did a fix work?  A paired test between two runs on the same samples: exact McNemar per metric, Holm across.

Each sample has a verdict (1 pass, 0 fail) in the run **before** the fix and in the run **after** it.  Only
the discordant samples move the comparison: ``fixed`` (0 before, 1 after) and ``broke`` (1 before, 0 after).
Under "the fix changed nothing" each discordant sample is fixed or broke with probability 1/2, so the exact
McNemar p-value is the two-sided binomial test of ``fixed`` successes in ``fixed + broke`` trials at 1/2
(:func:`scipy.stats.binomtest`; 1 when there is no discordant sample).  It equals statsmodels'
``mcnemar(table, exact=True)`` (the reference in tests/test_paired_runs.py).

Several metrics are tested at once, so the p-values are adjusted with Holm's step-down rule: with the
``m`` p-values sorted ``p_(1) ≤ … ≤ p_(m)``, ``holm_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j))``
(statsmodels' ``multipletests(method="holm")`` is the test's reference).  A metric's change is shown as
**significant** when its Holm p-value is below ``alpha`` (0.05).

The verdicts come from one of two slices:

* **the human-checked slice** (:func:`human_verdicts`): the samples people labelled in both runs' datasets
  (the run imported before and after the fix, each labelled in the store), the human verdict per sample
  being its consensus rate ``>=`` the record's human threshold, on the metric's dimension.  The samples of
  the two datasets are paired by sample id (a case id is ``<dataset>:<sample id>``; a sample with no id of
  its own has the hash of its question, the same in both runs).
* **the scorer's verdicts** (:func:`scorer_verdicts`): ``score >= threshold`` on every sample both result
  tables scored, paired by the row's id, else its question.  It says whether the *scorer's* pass rate
  moved; the human-checked slice says whether the answers got better.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import DataError, Problem
from .external_samples import ResultTable

__all__ = ["PairedTest", "holm", "human_verdicts", "mcnemar_exact", "paired_lines", "paired_tests",
           "scorer_verdicts"]

Verdicts = Mapping[str, Mapping[str, int]]  # sample key -> metric -> 0/1


@dataclass(frozen=True)
class PairedTest:
    """One metric's paired comparison (module docstring); ``holm`` is set across the metrics tested together."""

    metric: str
    slice: str
    n: int
    fixed: int
    broke: int
    before: float | None
    after: float | None
    p_value: float
    holm: float


def mcnemar_exact(fixed: int, broke: int) -> float:
    """The exact (binomial) two-sided McNemar p-value of ``fixed`` vs ``broke`` discordant samples."""
    if fixed < 0 or broke < 0:
        raise ValueError(f"discordant counts must be >= 0, got fixed={fixed}, broke={broke}")
    if fixed + broke == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(min(1.0, binomtest(fixed, fixed + broke, 0.5).pvalue))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (module docstring)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def paired_tests(before: Verdicts, after: Verdicts, metrics: Sequence[str], slice_name: str) -> list[PairedTest]:
    """Per metric, the exact McNemar test on the samples with a verdict of it in both runs; Holm across them."""
    tests = []
    for metric in metrics:
        keys = sorted(k for k in before if metric in before[k] and k in after and metric in after[k])
        pairs = [(before[k][metric], after[k][metric]) for k in keys]
        fixed = sum(1 for b, a in pairs if b == 0 and a == 1)
        broke = sum(1 for b, a in pairs if b == 1 and a == 0)
        n = len(pairs)
        tests.append(PairedTest(metric, slice_name, n, fixed, broke,
                                sum(b for b, _a in pairs) / n if n else None,
                                sum(a for _b, a in pairs) / n if n else None, mcnemar_exact(fixed, broke), 1.0))
    adjusted = holm([t.p_value for t in tests])
    return [replace(t, holm=h) for t, h in zip(tests, adjusted, strict=True)]


def scorer_verdicts(table: ResultTable, thresholds: Mapping[str, float], source: str) -> dict[str, dict[str, int]]:
    """Per sample (its id, else its question) the verdict ``score >= threshold`` of each metric it has a score of.

    A DataError names the rows when two rows share a key (they cannot be paired) or a row has neither.
    """
    out: dict[str, dict[str, int]] = {}
    problems = []
    for place, row_id, match, scores in table.rows:
        key = row_id if row_id is not None else (match[0] if match is not None else None)
        if key is None:
            problems.append(Problem(source, "no id and no question: the row cannot be paired", place))
            continue
        if key in out:
            problems.append(Problem(source, f"sample {key!r} again: rows cannot be paired", place))
            continue
        out[key] = {c: int(s >= thresholds[c]) for c, s in scores.items() if s is not None and c in thresholds}
    if problems:
        raise DataError(problems, f"{source}: not a run whose rows can be paired")
    return out


def human_verdicts(votes: Mapping[tuple[str, str], Sequence[int]], dataset: str, human_threshold: float,
                   metric_dimensions: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """Per sample id (the case id without ``<dataset>:``) the human verdict of each metric's dimension."""
    out: dict[str, dict[str, int]] = {}
    prefix = f"{dataset}:"
    for (case, dim), v in votes.items():
        if not v or not case.startswith(prefix):
            continue
        verdict = int(sum(v) / len(v) >= human_threshold)
        for metric, d in metric_dimensions.items():
            if d == dim:
                out.setdefault(case[len(prefix):], {})[metric] = verdict
    return out


def paired_lines(tests: Sequence[PairedTest], corrected: Mapping[str, Any], alpha: float = 0.05) -> list[str]:
    """The paired tests as printed beside the corrected rates (``corrected``: metric -> the run's CorrectedRate)."""
    if not tests:
        return []
    lines = [f"paired test, before vs after the fix, on the {tests[0].slice} (exact McNemar; Holm across "
             f"{len(tests)} metric(s), alpha {alpha:g}):",
             f"{'metric':<28} {'n':>5} {'fixed':>6} {'broke':>6} {'before':>7} {'after':>7} {'corrected':>9} "
             f"{'McNemar p':>10} {'Holm p':>8}  change"]
    for t in tests:
        rate = corrected.get(t.metric)
        est = "—" if rate is None or rate.estimate is None else f"{rate.estimate:.3f}"
        change = ("no paired sample" if not t.n else "significant: " + ("better" if t.fixed > t.broke else "worse")
                  if t.holm < alpha else "not significant")
        lines.append(f"{t.metric:<28} {t.n:>5} {t.fixed:>6} {t.broke:>6} {_f(t.before):>7} {_f(t.after):>7} "
                     f"{est:>9} {_p(t.p_value):>10} {_p(t.holm):>8}  {change}")
    return lines


def _p(p: float) -> str:
    """A p-value: 4 decimals, or 2 significant digits under 0.0001 (never a bare 0.0000)."""
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"
