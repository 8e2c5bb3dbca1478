"""The four evaluation dimensions, the composite, the diagnosis; retrieval metrics; agreement.

Pure functions over labels and ids: no widgets, no plotting, no I/O.  Each
formula is in the docstring of the function that computes it.

Four dimensions, each a proportion over *labelled* units only (an unlabelled
unit is not in the denominator; a dimension with no labelled unit has no data,
which is neither 0% nor an error):

==================  =================  ==================================
dimension           label dimension    rate
==================  =================  ==================================
context_relevance   ``relevant``       relevant / labelled passages
faithfulness        ``supported``      supported / labelled claims
correctness         ``correct``        correct / judged claims
coverage            ``covered``        covered / labelled reference facts
==================  =================  ==================================

"supported" (by the retrieved context) and "correct" (against the reference)
are separate judgements of the same claim and never stand in for each other.
Every rate carries a Wilson interval (:func:`playground.stats.wilson_interval`).
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from playground.model import DIMENSION_NAMES
from playground.stats import (
    AgreementStat,
    KappaResult,
    cohens_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    matthews_corrcoef,
    pabak,
    wilson_interval,
)

__all__ = [
    "CAUSES",
    "COMPOSITE_LABEL",
    "DEFAULT_THRESHOLDS",
    "DIMENSION_LABELS",
    "DIMENSION_ORDER",
    "LABEL_DIMENSION",
    "RETRIEVAL_METRICS",
    "Agreement",
    "Composite",
    "Diagnosis",
    "DimensionRate",
    "Failure",
    "MultiRater",
    "PairAgreement",
    "RateCounter",
    "RetrievalScores",
    "RetrievalSummary",
    "agreement",
    "composite",
    "diagnose",
    "hit_at_k",
    "mean_defined",
    "multi_rater",
    "ndcg_at_k",
    "precision_at_k",
    "rate_from_counts",
    "rates_by_group",
    "rates_from_labels",
    "recall_at_k",
    "reciprocal_rank",
    "retrieval_scores",
    "retrieval_summary",
]

#: The four evaluation dimensions, in the order every output lists them.
DIMENSION_ORDER: tuple[str, ...] = ("context_relevance", "faithfulness", "correctness", "coverage")
#: Human-readable names, for text.
DIMENSION_LABELS: dict[str, str] = {
    "context_relevance": "context relevance",
    "faithfulness": "faithfulness",
    "correctness": "correctness",
    "coverage": "coverage",
}
#: Evaluation dimension -> the label dimension that feeds it (inverse of model.DIMENSION_NAMES).
LABEL_DIMENSION: dict[str, str] = {v: k for k, v in DIMENSION_NAMES.items()}
#: Plain-language cause of a low rate, per dimension.
CAUSES: dict[str, str] = {
    "context_relevance": "poor evidence retrieval",
    "faithfulness": "unsupported generation",
    "correctness": "incorrect answer",
    "coverage": "missing reference facts",
}
#: Teaching thresholds of the diagnosis: a rate below its threshold fails.
DEFAULT_THRESHOLDS: dict[str, float] = {
    "context_relevance": 0.50,
    "faithfulness": 0.70,
    "correctness": 0.70,
    "coverage": 0.70,
}
COMPOSITE_LABEL = "weighted composite (not a standard score)"

# label dimension ("relevant") -> position in DIMENSION_ORDER
_LABEL_INDEX: dict[str, int] = {
    label_dim: DIMENSION_ORDER.index(dim) for label_dim, dim in DIMENSION_NAMES.items()
}
assert set(_LABEL_INDEX.values()) == {0, 1, 2, 3}


# --------------------------------------------------------------------------- rates


@dataclass(frozen=True)
class DimensionRate:
    """One dimension's rate: ``successes / n`` with its Wilson interval.

    ``rate``, ``low`` and ``high`` are None when ``n == 0`` (no data).
    """

    dimension: str
    successes: int
    n: int
    rate: float | None
    low: float | None
    high: float | None
    confidence: float = 0.95

    @property
    def has_data(self) -> bool:
        return self.n > 0


def rate_from_counts(dimension: str, successes: int, n: int,
                     confidence: float = 0.95) -> DimensionRate:
    """A :class:`DimensionRate` from counts: ``rate = successes / n``, Wilson ``(low, high)``."""
    if dimension not in DIMENSION_ORDER:
        raise ValueError(f"unknown dimension {dimension!r}; expected one of {DIMENSION_ORDER}")
    ci = wilson_interval(successes, n, confidence)
    if ci is None:
        return DimensionRate(dimension, 0, 0, None, None, None, confidence)
    return DimensionRate(dimension, successes, n, successes / n, ci[0], ci[1], confidence)


def _label_index(dimension: Any) -> int:
    try:
        return _LABEL_INDEX[dimension]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown label dimension {dimension!r}; expected one of {tuple(_LABEL_INDEX)}"
        ) from None


def _label_value(value: Any, where: str) -> int:
    if isinstance(value, bool) or (isinstance(value, numbers.Real) and value in (0, 1)):
        return int(value)  # type: ignore[arg-type]
    raise ValueError(f"{where}: label value must be 0 or 1, got {value!r}")


def _counts_to_rates(succ: Sequence[int], n: Sequence[int], confidence: float
                     ) -> dict[str, DimensionRate]:
    return {dim: rate_from_counts(dim, succ[i], n[i], confidence)
            for i, dim in enumerate(DIMENSION_ORDER)}


def _count_labels(labels: Iterable[Any], group_of: Callable[[Any], Hashable] | None) -> dict[Any, list[int]]:
    counts: dict[Any, list[int]] = {}
    seen: set[tuple[Any, str]] = set()
    for label in labels:
        idx = _label_index(label.dimension)
        unit_id = getattr(label, "unit_id", None)
        value = _label_value(label.value, f"unit {unit_id!r} {label.dimension!r}")
        if unit_id is not None:
            key = (unit_id, label.dimension)
            if key in seen:
                raise ValueError(
                    f"two labels for unit {unit_id!r} on {label.dimension!r}: rates assume one "
                    f"label per unit and dimension (pass one annotator's labels)")
            seen.add(key)
        group = None if group_of is None else group_of(label)
        c = counts.get(group)
        if c is None:
            c = counts[group] = [0] * 8  # successes x4, n x4
        c[idx] += value
        c[4 + idx] += 1
    return counts


def rates_from_labels(labels: Iterable[Any], confidence: float = 0.95) -> dict[str, DimensionRate]:
    """The four rates, pooled over ``labels`` (e.g. a selection of cases).

    ``labels`` are :class:`playground.model.Label` (or anything with
    ``.dimension`` in ``relevant/supported/correct/covered`` and ``.value`` in
    {0, 1}).  For each dimension ``rate = sum(value) / count(labels)`` with a
    Wilson interval.  All four keys are always present, in
    :data:`DIMENSION_ORDER`; a dimension without labels has ``n == 0`` and
    ``rate is None``.  Raises ValueError on an unknown dimension, a value not
    in {0, 1}, or (for labels with a ``unit_id``) two labels of the same unit
    and dimension, which would count one unit twice.
    """
    c = _count_labels(labels, None).get(None, [0] * 8)
    return _counts_to_rates(c[:4], c[4:], confidence)


def rates_by_group(labels: Iterable[Any], group_of: Callable[[Any], Hashable],
                   confidence: float = 0.95) -> dict[Any, dict[str, DimensionRate]]:
    """The four rates per group (``group_of(label)``: a case id, a case type ...).

    Returns ``{group: {dimension: DimensionRate}}`` sorted by group key; only
    groups with at least one label appear.  Pooled rates are
    :func:`rates_from_labels` over the same labels (pooling counts units, so a
    case with many claims weighs more than one with few: a micro-average).
    """
    counts = _count_labels(labels, group_of)
    return {g: _counts_to_rates(c[:4], c[4:], confidence)
            for g, c in sorted(counts.items(), key=lambda kv: _sort_key(kv[0]))}


def _sort_key(value: Any) -> tuple[str, Any]:
    # Sort like-typed keys naturally; mixed types by type name first (deterministic).
    return (type(value).__name__, value) if value is not None else ("", "")


class RateCounter:
    """Incremental counts of the four dimensions, for live recomputation.

    ``set(unit_id, dimension, value)`` records, changes or (``value=None``)
    removes one label in O(1); ``rates()`` turns the counts into four
    :class:`DimensionRate` (four Wilson calls, cached by ``(successes, n)``).
    With ``group_of_unit`` (a mapping or callable unit id -> group, e.g. case id
    or case type) the counts are also kept per group: ``rates(group=...)``.
    A group nobody labelled yet returns four "no data" rates.
    """

    def __init__(self, group_of_unit: Mapping[Hashable, Hashable] | Callable[[Hashable], Hashable] | None = None,
                 confidence: float = 0.95) -> None:
        if group_of_unit is None or callable(group_of_unit):
            self._group_fn = group_of_unit
        else:
            mapping = group_of_unit

            def lookup(unit_id: Hashable) -> Hashable:
                try:
                    return mapping[unit_id]
                except KeyError:
                    raise ValueError(f"unit {unit_id!r} has no group") from None
            self._group_fn = lookup
        self.confidence = confidence
        self._values: dict[tuple[Hashable, int], tuple[int, Hashable]] = {}
        self._total = [0] * 8
        self._groups: dict[Hashable, list[int]] = {}

    @classmethod
    def from_labels(cls, labels: Iterable[Any], group_of_unit: Any = None,
                    confidence: float = 0.95) -> RateCounter:
        """A counter loaded with ``labels`` (a later label of a unit replaces an earlier one)."""
        counter = cls(group_of_unit, confidence)
        for label in labels:
            counter.set(label.unit_id, label.dimension, label.value)
        return counter

    def set(self, unit_id: Hashable, dimension: str, value: int | None) -> None:
        """Record ``value`` (0/1) for ``(unit_id, dimension)``; ``None`` removes the label."""
        idx = _label_index(dimension)
        key = (unit_id, idx)
        old = self._values.get(key)
        if value is not None:
            value = _label_value(value, f"unit {unit_id!r} {dimension!r}")
        if old is not None:
            old_value, group = old
            if value == old_value:
                return
            self._add(group, idx, old_value, -1)
            if value is None:
                del self._values[key]
                return
        elif value is None:
            return
        else:
            group = None if self._group_fn is None else self._group_fn(unit_id)
        self._values[key] = (value, group)
        self._add(group, idx, value, +1)

    def _add(self, group: Hashable, idx: int, value: int, sign: int) -> None:
        self._total[idx] += sign * value
        self._total[4 + idx] += sign
        if self._group_fn is not None:
            c = self._groups.get(group)
            if c is None:
                c = self._groups[group] = [0] * 8
            c[idx] += sign * value
            c[4 + idx] += sign

    def get(self, unit_id: Hashable, dimension: str) -> int | None:
        """The recorded value of ``(unit_id, dimension)``, or None."""
        old = self._values.get((unit_id, _label_index(dimension)))
        return None if old is None else old[0]

    def __len__(self) -> int:
        return len(self._values)

    def counts(self, group: Hashable | None = None) -> dict[str, tuple[int, int]]:
        """``{dimension: (successes, n)}`` pooled, or for one group."""
        c = self._counts(group)
        return {dim: (c[i], c[4 + i]) for i, dim in enumerate(DIMENSION_ORDER)}

    def _counts(self, group: Hashable | None) -> list[int]:
        if group is None:
            return self._total
        if self._group_fn is None:
            raise ValueError("this RateCounter has no grouping; pass group_of_unit")
        return self._groups.get(group, [0] * 8)

    def rates(self, group: Hashable | None = None) -> dict[str, DimensionRate]:
        """The four rates with intervals, pooled (``group=None``) or for one group."""
        c = self._counts(group)
        return _counts_to_rates(c[:4], c[4:], self.confidence)

    def groups(self) -> list[Any]:
        """Groups that currently hold at least one label, sorted."""
        return sorted((g for g, c in self._groups.items() if any(c[4:])), key=_sort_key)

    def rates_by_group(self) -> dict[Any, dict[str, DimensionRate]]:
        """``{group: rates}`` for every group with labels, sorted by group."""
        return {g: self.rates(g) for g in self.groups()}


# --------------------------------------------------------------------------- composite


@dataclass(frozen=True)
class Composite:
    """A weighted mean of the rates with data; not a standard score.

    ``value`` is None when no positively weighted dimension has data
    (``reason`` says so).  ``weights_used`` are the weights actually applied,
    normalised to sum 1 over the dimensions with data and positive weight.
    ``dropped`` lists dimensions with positive weight but no data (their weight
    was redistributed), ``zero_weight`` those the user weighted 0 (or left
    out).  ``gated`` is True when any hard gate fails; ``gate_failures``
    explains each one (the value is still reported: a gated composite must not
    be used to rank).
    """

    value: float | None
    weights_used: dict[str, float]
    dropped: list[str]
    zero_weight: list[str]
    gated: bool
    gate_failures: list[str]
    label: str = COMPOSITE_LABEL
    reason: str = ""


def _fmt_num(x: float, other: float | None = None, decimals: int = 2) -> str:
    """``x`` with ``decimals`` places, more if needed so that it differs from ``other``."""
    d = decimals
    while other is not None and x != other and d < 6 and f"{x:.{d}f}" == f"{other:.{d}f}":
        d += 1
    return f"{x:.{d}f}"


def _check_known(mapping: Mapping[str, Any], what: str) -> None:
    for key in mapping:
        if key not in DIMENSION_ORDER:
            raise ValueError(f"unknown dimension {key!r} in {what}; expected one of "
                             f"{DIMENSION_ORDER}")


def _check_number(value: Any, where: str, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{where} must be a finite number, got {value!r}")
    if not (low <= float(value) <= high):
        raise ValueError(f"{where} must be between {low} and {high}, got {value!r}")
    return float(value)


def composite(rates: Mapping[str, DimensionRate], weights: Mapping[str, float],
              gates: Mapping[str, float] | None = None) -> Composite:
    """Weighted composite of the four rates, with optional hard gates.

    With user weights ``w_d >= 0`` and D the dimensions that have data and
    ``w_d > 0``::

        value = sum_{d in D} w_d * rate_d / sum_{d in D} w_d

    so the applied weights ``w_d / sum_D w`` sum to 1 and ``value`` lies
    between the smallest and largest rate in D.  A dimension missing from
    ``weights`` has weight 0.  ``gates`` maps a dimension to a floor: the
    composite is gated when ``rate_d < floor`` or when the gated dimension has
    no data (a floor that cannot be checked is not passed).  Raises ValueError
    for unknown dimensions, negative or non-finite weights, all-zero weights,
    or floors outside [0, 1].
    """
    _check_known(weights, "weights")
    w = {d: _check_number(weights.get(d, 0.0), f"weight of {d}") for d in DIMENSION_ORDER}
    if not any(v > 0 for v in w.values()):
        raise ValueError("at least one weight must be positive")
    gates = dict(gates or {})
    _check_known(gates, "gates")
    floors = {d: _check_number(gates[d], f"gate of {d}", 0.0, 1.0)
              for d in DIMENSION_ORDER if d in gates}

    def rate_of(d: str) -> float | None:
        r = rates.get(d)
        return None if r is None or not r.has_data else r.rate

    used = [d for d in DIMENSION_ORDER if w[d] > 0 and rate_of(d) is not None]
    dropped = [d for d in DIMENSION_ORDER if w[d] > 0 and rate_of(d) is None]
    zero = [d for d in DIMENSION_ORDER if w[d] == 0]
    total = sum(w[d] for d in used)
    weights_used = {d: w[d] / total for d in used}
    value: float | None
    if used:
        used_rates = {d: float(rate_of(d) or 0.0) for d in used}  # every used dimension has a rate
        value = sum(weights_used[d] * used_rates[d] for d in used)
        lo = min(used_rates.values())
        hi = max(used_rates.values())
        value = min(hi, max(lo, value))  # guard against rounding outside [min, max]
        reason = ""
    else:
        value = None
        reason = "no weighted dimension has data"
    failures = []
    for d, floor in floors.items():
        r = rate_of(d)
        if r is None:
            failures.append(f"{d} has no data (gate {_fmt_num(floor)} cannot be checked)")
        elif r < floor:
            failures.append(f"{d} {_fmt_num(r, floor)} < gate {_fmt_num(floor, r)}")
    return Composite(value, weights_used, dropped, zero, bool(failures), failures,
                     COMPOSITE_LABEL, reason)


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


# --------------------------------------------------------------------------- retrieval


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    return int(k)


def _dedupe(retrieved_ids: Iterable[Hashable]) -> list[Hashable]:
    seen: set[Hashable] = set()
    out: list[Hashable] = []
    for r in retrieved_ids:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out


def _top_k(retrieved_ids: Iterable[Hashable], k: Any) -> list[Hashable]:
    return _dedupe(retrieved_ids)[:_check_k(k)]


def recall_at_k(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable],
                k: int) -> float | None:
    """``|relevant ∩ top-k| / |relevant|`` (trec_eval ``recall_k``); None when nothing is relevant.

    A case with no relevant source (out of scope, cross-tenant) has no recall:
    trec_eval leaves such a query out of every mean, and so do
    :func:`retrieval_summary` and the harness (the hard assertions judge those
    cases instead).  ``retrieved_ids`` is in rank order; a repeated id counts
    once, at its first rank, and later ids move up (ranks are among distinct ids).
    """
    relevant = set(relevant_ids)
    top = _top_k(retrieved_ids, k)
    if not relevant:
        return None
    return sum(1 for r in top if r in relevant) / len(relevant)


def precision_at_k(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable],
                   k: int) -> float | None:
    """``|relevant ∩ top-k| / k`` (trec_eval ``P_k``); None when nothing is relevant.

    The denominator is k even when fewer than k passages were retrieved (the
    missing ranks count as irrelevant): retrieved [a], relevant {a, b}, k = 5
    gives 0.2.  Undefined without a relevant id, as :func:`recall_at_k`.
    """
    relevant = set(relevant_ids)
    k = _check_k(k)
    top = _top_k(retrieved_ids, k)
    if not relevant:
        return None
    return sum(1 for r in top if r in relevant) / k


def hit_at_k(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable],
             k: int) -> float | None:
    """1.0 if any relevant id is in the top k, else 0.0 (trec_eval ``success_k``); None when nothing is relevant."""
    relevant = set(relevant_ids)
    top = _top_k(retrieved_ids, k)
    if not relevant:
        return None
    return 1.0 if any(r in relevant for r in top) else 0.0


def ndcg_at_k(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable],
              k: int) -> float | None:
    """Normalised discounted cumulative gain, binary gains (trec_eval ``ndcg_cut_k``); None if nothing is relevant.

    ``DCG@k = sum_{rank r <= k, id relevant} 1 / log2(r + 1)``;
    ``IDCG@k = sum_{r=1}^{min(k, |relevant|)} 1 / log2(r + 1)`` (the ideal
    ranking puts every relevant id first, but only k of them fit);
    ``nDCG@k = DCG@k / IDCG@k``.  E.g. relevant {a, b}, retrieved [x, a, b],
    k = 3: DCG = 1/log2(3) + 1/log2(4) = 1.1309, IDCG = 1 + 1/log2(3) = 1.6309,
    nDCG = 0.6934.
    """
    relevant = set(relevant_ids)
    top = _top_k(retrieved_ids, k)
    if not relevant:
        return None
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(top) if r in relevant)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(int(k), len(relevant))))
    return dcg / idcg


def reciprocal_rank(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable]) -> float | None:
    """``1 / rank`` of the first relevant id (ranks from 1, over the whole list); 0.0 if none is retrieved.

    trec_eval ``recip_rank``; the mean over cases is MRR.  None when nothing
    is relevant, as :func:`recall_at_k`.
    """
    relevant = set(relevant_ids)
    if not relevant:
        return None
    for i, r in enumerate(_dedupe(retrieved_ids)):
        if r in relevant:
            return 1.0 / (i + 1)
    return 0.0


#: Names of the per-case retrieval metrics, in display order.
RETRIEVAL_METRICS: tuple[str, ...] = ("recall", "precision", "hit", "ndcg", "reciprocal_rank")


@dataclass(frozen=True)
class RetrievalScores:
    """The retrieval metrics of one case at cut-off ``k``; all None when the case has no relevant id."""

    case_id: str
    case_type: str
    k: int
    recall: float | None
    precision: float | None
    hit: float | None
    ndcg: float | None
    reciprocal_rank: float | None
    n_relevant: int
    n_retrieved: int

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in (
            "case_id", "case_type", "k", *RETRIEVAL_METRICS, "n_relevant", "n_retrieved")}


def retrieval_scores(case_id: str, case_type: str, retrieved_ids: Sequence[Hashable],
                     relevant_ids: Iterable[Hashable], k: int) -> RetrievalScores:
    """All retrieval metrics of one case."""
    relevant = set(relevant_ids)
    retrieved = _dedupe(retrieved_ids)
    return RetrievalScores(
        case_id, case_type, _check_k(k),
        recall_at_k(retrieved, relevant, k), precision_at_k(retrieved, relevant, k),
        hit_at_k(retrieved, relevant, k), ndcg_at_k(retrieved, relevant, k),
        reciprocal_rank(retrieved, relevant), len(relevant), len(retrieved))


@dataclass(frozen=True)
class RetrievalSummary:
    """Per-case retrieval scores and their means (macro averages over cases), as trec_eval.

    ``rows`` sorted by case id (every case, including those without a
    relevant id); ``overall`` the mean over the ``n_with_expected`` cases
    that expect at least one source, ``by_case_type`` the same per case type
    (a type none of whose cases expects a source has None means).
    ``n_without_relevant`` counts the cases left out of the means, and
    ``n_by_case_type`` / ``n_with_expected_by_case_type`` count cases per type.
    """

    k: int
    rows: list[RetrievalScores]
    by_case_type: dict[str, dict[str, float | None]]
    n_by_case_type: dict[str, int]
    overall: dict[str, float | None]
    n_cases: int
    n_with_expected: int
    n_with_expected_by_case_type: dict[str, int] = field(default_factory=dict)

    @property
    def n_without_relevant(self) -> int:
        """Cases with no relevant id: left out of every mean."""
        return self.n_cases - self.n_with_expected

    def as_rows(self) -> list[dict[str, Any]]:
        """Per-case rows as plain dicts (e.g. for ``pandas.DataFrame``)."""
        return [r.as_dict() for r in self.rows]


def mean_defined(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None; None when there is none (how trec_eval averages)."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _means(rows: Sequence[RetrievalScores]) -> dict[str, float | None]:
    return {m: mean_defined(getattr(r, m) for r in rows) for m in RETRIEVAL_METRICS}


def retrieval_summary(per_case: Iterable[tuple[str, str, Sequence[Hashable], Iterable[Hashable]]],
                      k: int) -> RetrievalSummary:
    """Score every case ``(case_id, case_type, retrieved_ids, relevant_ids)`` and average.

    Each mean is the unweighted mean over the cases with at least one
    relevant id (mean of ``reciprocal_rank`` is MRR), so the figures equal
    trec_eval's (``recall_k``, ``P_k``, ``success_k``, ``ndcg_cut_k``,
    ``recip_rank``).  Raises ValueError on a repeated case id.
    """
    k = _check_k(k)
    rows = []
    seen = set()
    for case_id, case_type, retrieved, relevant in per_case:
        if case_id in seen:
            raise ValueError(f"case {case_id!r} appears twice")
        seen.add(case_id)
        rows.append(retrieval_scores(case_id, case_type, retrieved, relevant, k))
    rows.sort(key=lambda r: _sort_key(r.case_id))
    types = sorted({r.case_type for r in rows}, key=_sort_key)
    by_type = {t: _means([r for r in rows if r.case_type == t]) for t in types}
    n_by_type = {t: sum(1 for r in rows if r.case_type == t) for t in types}
    n_exp_by_type = {t: sum(1 for r in rows if r.case_type == t and r.n_relevant) for t in types}
    return RetrievalSummary(k, rows, by_type, n_by_type, _means(rows), len(rows),
                            sum(1 for r in rows if r.n_relevant), n_exp_by_type)


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class Agreement:
    """Two labellings ``a`` (reference) and ``b`` compared on the units both labelled.

    ``percent`` is the observed agreement as a fraction (None with no shared
    unit); ``kappa`` the :class:`playground.stats.KappaResult`; ``confusion``
    rows ``a``, columns ``b``; ``disagreements`` ``(unit_id, a_value,
    b_value)`` sorted by unit id; ``only_a``/``only_b`` count units labelled
    by one side only (not compared).  ``pabak`` and ``mcc`` are None when
    undefined.
    """

    n_shared: int
    only_a: int
    only_b: int
    kappa: KappaResult
    percent: float | None
    confusion: tuple[tuple[int, int], tuple[int, int]]
    disagreements: list[tuple[Any, int, int]]
    pabak: float | None = None
    mcc: float | None = None


def agreement(a: Mapping[Hashable, int], b: Mapping[Hashable, int],
              confidence: float = 0.95) -> Agreement:
    """Compare two labellings ``{unit_id: 0/1}`` over their shared unit ids (sorted).

    Percent agreement ``(n_00 + n_11) / n``, Cohen's kappa with its interval
    (:func:`playground.stats.cohens_kappa`), PABAK ``2 p_o - 1``, MCC, the
    confusion matrix and every disagreeing unit.  No shared unit gives an
    undefined kappa ("no units") and ``percent`` None, not an error.
    """
    shared = sorted(set(a) & set(b), key=_sort_key)
    av = [_label_value(a[u], f"a[{u!r}]") for u in shared]
    bv = [_label_value(b[u], f"b[{u!r}]") for u in shared]
    k = cohens_kappa(av, bv, confidence)
    dis = [(u, x, y) for u, x, y in zip(shared, av, bv, strict=True) if x != y]
    return Agreement(len(shared), len(set(a) - set(b)), len(set(b) - set(a)), k, k.agreement,
                     k.confusion, dis, pabak(av, bv), matthews_corrcoef(av, bv))


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of one pair of annotators (``annotator_a`` sorts first)."""

    annotator_a: Hashable
    annotator_b: Hashable
    agreement: Agreement


@dataclass(frozen=True)
class MultiRater:
    """Agreement among several annotators.

    ``pairwise`` for every pair (sorted), ``fleiss`` over the units with at
    least two labels (a varying number of labels per unit is allowed, see
    :func:`playground.stats.fleiss_kappa`), ``krippendorff`` nominal alpha with
    missing labels.  ``units`` is the sorted union of labelled unit ids.
    """

    annotators: list[Any]
    units: list[Any]
    pairwise: list[PairAgreement]
    fleiss: AgreementStat
    krippendorff: AgreementStat


def multi_rater(labels_by_annotator: Mapping[Any, Mapping[Any, int]],
                confidence: float = 0.95) -> MultiRater:
    """Pairwise Cohen's kappas, Fleiss' kappa and Krippendorff's alpha of several annotators."""
    annotators = sorted(labels_by_annotator, key=_sort_key)
    units = sorted({u for ann in annotators for u in labels_by_annotator[ann]}, key=_sort_key)
    pairs = [PairAgreement(x, y, agreement(labels_by_annotator[x], labels_by_annotator[y],
                                           confidence))
             for i, x in enumerate(annotators) for y in annotators[i + 1:]]
    ratings = [[labels_by_annotator[ann][u] for ann in annotators if u in labels_by_annotator[ann]]
               for u in units]
    reliability = [[labels_by_annotator[ann].get(u) for u in units] for ann in annotators]
    return MultiRater(annotators, units, pairs, fleiss_kappa(ratings),
                      krippendorff_alpha(reliability))
