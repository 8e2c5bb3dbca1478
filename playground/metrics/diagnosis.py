"""The diagnosis: which dimensions fall below their teaching thresholds, and the likely cause."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .composite_score import _check_known, _check_number
from .rates import CAUSES, DEFAULT_THRESHOLDS, DIMENSION_LABELS, DIMENSION_ORDER, DimensionRate

__all__ = ["Diagnosis", "Failure", "diagnose"]

# --------------------------------------------------------------------------- diagnosis


@dataclass(frozen=True)
class Failure:
    """A dimension whose rate is below its threshold.

    ``uncertain`` is True when the interval's upper end still reaches the
    threshold (``high >= threshold``): the failure is not established yet.
    """

    dimension: str
    rate: float
    threshold: float
    low: float
    high: float
    cause: str
    uncertain: bool
    successes: int = 0
    n: int = 0


@dataclass(frozen=True)
class Diagnosis:
    """Every failing dimension at once, never one arbitrary pick.

    ``failures`` in :data:`DIMENSION_ORDER`; ``no_data`` the dimensions without
    labelled units; ``borderline`` the dimensions that pass but whose interval
    reaches below the threshold (``low < threshold``).  ``healthy`` is True when
    no dimension fails and at least one has data; ``complete`` when every
    dimension has data.
    """

    failures: list[Failure]
    no_data: list[str]
    healthy: bool
    thresholds: dict[str, float]
    borderline: list[str] = field(default_factory=list)
    rates: dict[str, DimensionRate] = field(default_factory=dict)
    confidence: float = 0.95

    @property
    def complete(self) -> bool:
        return not self.no_data

    def summary(self) -> str:
        """Plain-English sentences naming every failing dimension, with rate, interval, cause."""
        ci = f"{_fmt_pct(self.confidence)} CI"
        parts = []
        with_data = [d for d in DIMENSION_ORDER if d not in self.no_data]
        if not with_data:
            return "No labelled units yet: no dimension can be diagnosed."
        if self.failures:
            k = len(self.failures)
            items = []
            for f in self.failures:
                item = (f"{DIMENSION_LABELS[f.dimension]} {_fmt_pct(f.rate, f.threshold)} "
                        f"({ci} {_fmt_pct(f.low)}-{_fmt_pct(f.high)}) < "
                        f"{_fmt_pct(f.threshold, f.rate)} — {f.cause}")
                if f.uncertain:
                    item += " (interval still crosses the threshold: more labels needed)"
                items.append(item)
            verb = "dimension fails" if k == 1 else "dimensions fail"
            parts.append(f"{k} {verb}: " + "; ".join(items) + ".")
        else:
            m = len(with_data)
            if m == 1:
                parts.append("The one dimension with data meets its threshold.")
            else:
                parts.append(f"All {m} dimensions with data meet their thresholds.")
        if self.borderline:
            items = []
            for d in self.borderline:
                r = self.rates[d]
                t = self.thresholds[d]
                assert r.rate is not None and r.low is not None and r.high is not None  # borderline rates have data
                items.append(f"{DIMENSION_LABELS[d]} {_fmt_pct(r.rate, t)} "
                             f"({ci} {_fmt_pct(r.low)}-{_fmt_pct(r.high)}) "
                             f">= {_fmt_pct(t, r.rate)}")
            parts.append("Passing, but the interval reaches below the threshold: "
                         + "; ".join(items) + ".")
        if self.no_data:
            parts.append("No data: " + ", ".join(DIMENSION_LABELS[d] for d in self.no_data) + ".")
        return " ".join(parts)


def _fmt_pct(x: float, other: float | None = None) -> str:
    """``x`` as a percentage, 0 decimals unless more are needed to differ from ``other``."""
    d = 0
    while (other is not None and x != other and d < 4
           and f"{100 * x:.{d}f}" == f"{100 * other:.{d}f}"):
        d += 1
    return f"{100 * x:.{d}f}%"


def diagnose(rates: Mapping[str, DimensionRate],
             thresholds: Mapping[str, float] | None = None) -> Diagnosis:
    """Name every dimension whose rate is below its threshold, with a plain-language cause.

    ``thresholds`` override :data:`DEFAULT_THRESHOLDS` per dimension (context
    relevance < 0.50; faithfulness, correctness, coverage < 0.70).  A dimension
    fails when ``rate < threshold``; the failure is ``uncertain`` when the
    Wilson interval's upper end still reaches the threshold (``high >=
    threshold``).  Causes: context relevance -> poor evidence retrieval;
    faithfulness -> unsupported generation; correctness -> incorrect answer;
    coverage -> missing reference facts.  A dimension without data is listed
    in ``no_data``, never as a failure.
    """
    th = dict(DEFAULT_THRESHOLDS)
    if thresholds:
        _check_known(thresholds, "thresholds")
        for d, t in thresholds.items():
            th[d] = _check_number(t, f"threshold of {d}", 0.0, 1.0)
    failures, no_data, borderline = [], [], []
    kept: dict[str, DimensionRate] = {}
    confidence = 0.95
    for d in DIMENSION_ORDER:
        r = rates.get(d)
        if r is None or not r.has_data:
            no_data.append(d)
            continue
        kept[d] = r
        confidence = r.confidence
        t = th[d]
        assert r.rate is not None and r.low is not None and r.high is not None  # has_data
        if r.rate < t:
            failures.append(Failure(d, r.rate, t, r.low, r.high, CAUSES[d], r.high >= t,
                                    r.successes, r.n))
        elif r.low < t:
            borderline.append(d)
    healthy = not failures and len(no_data) < len(DIMENSION_ORDER)
    return Diagnosis(failures, no_data, healthy, th, borderline, kept, confidence)
