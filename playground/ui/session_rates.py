"""The numbers: rates with intervals, weights and gates, the composite, agreement, the URL state, export.

One part of :class:`~playground.ui.session.LabelSession`, composed into it (``session.rates``, issue 40.1):
a :class:`Rates` object given the page state it reads and sets (:class:`RatesState`) in its constructor;
the session hands its methods on under their old names.  See :mod:`playground.ui.session` for the rules."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from ..metrics import (
    DIMENSION_ORDER,
    Agreement,
    Composite,
    DimensionRate,
    composite,
    diagnose,
    rate_from_counts,
)
from ..model import DIMENSION_NAMES, DIMENSIONS
from ..store import EXPORT_COLUMNS, export_table, format_bytes
from .session_types import (
    DEFAULT_WEIGHTS,
    EXPORT_MIME,
    CaseFilter,
    Progress,
    Scores,
    SessionError,
    format_weights,
)

__all__ = ["Rates", "RatesState", "agreement_from_table", "may_export_everyone"]


def agreement_from_table(table: Sequence[int], confidence: float = 0.95) -> Agreement:
    """Agreement from the (human, harness) table ``(n_00, n_01, n_10, n_11)`` (rows human), in O(1).

    The same numbers as :func:`playground.metrics.agreement` on the labels the
    table counts (kappa by :func:`playground.stats.cohens_kappa_table`,
    ``PABAK = 2 p_o - 1``, ``MCC = (n_11 n_00 - n_10 n_01) / sqrt(n_1. n_.1 n_0. n_.0)``), without the list of
    disagreeing units, which the page does not show.
    """
    import math

    from ..stats import cohens_kappa_table

    n00, n01, n10, n11 = (int(x) for x in table)
    conf = ((n00, n01), (n10, n11))
    k = cohens_kappa_table(conf, confidence)
    n = n00 + n01 + n10 + n11
    pabak = None if n == 0 else 2 * (n00 + n11) / n - 1
    denominator = (n11 + n10) * (n11 + n01) * (n00 + n10) * (n00 + n01)
    mcc = None if denominator == 0 else (n11 * n00 - n10 * n01) / math.sqrt(denominator)
    return Agreement(n, 0, 0, k, k.agreement, conf, [], pabak, mcc)


class RatesState(Protocol):
    """What :class:`Rates` reads of the page's state (a :class:`~playground.ui.session.LabelSession` is one), and
    sets (``weights``, ``gates``): the view on screen, who labels, the label counts, the store to export from."""

    dataset_name: str
    store: Any
    read_only: bool
    reveal_all: bool
    annotator: str | None
    case_id: str | None
    response_id: str | None
    queue_name: str | None
    queue_sample: bool
    filter: CaseFilter
    weights: dict[str, float]
    gates: dict[str, float]
    thresholds: dict[str, float]
    counter: Any
    stale: dict[tuple[str, str], int]
    _units: dict[str, Any]
    _tables: dict[str, list[int]]
    _agreement_cache: dict[str, Any]
    _case_stats: dict[str, tuple[int, int, int, int, int]]
    _group_of_response: Callable[[str], str]

    @property
    def ties(self) -> int: ...

    def _build_labelled(self, everyone: bool = False, labels: Iterable[Any] | None = None) -> None: ...


class Rates:
    """The numbers: rates with intervals, weights and gates, the composite, agreement, the URL state, export."""

    def __init__(self, state: RatesState):
        self.state = state

    def rates_current(self) -> dict[str, DimensionRate]:
        """The four rates over the view on screen (its passages plus the response's claims and facts)."""
        cid, rid = self.state.case_id, self.state.response_id
        if cid is None:
            return self.state.counter.rates(("", ""))
        groups = [(cid, "")] + ([(cid, rid)] if rid else [])
        return self._rates_of(groups)

    def rates_response(self, response_id: str) -> dict[str, DimensionRate]:
        """Rates of one response of the case on screen (its claims and facts plus the case's passages)."""
        cid = self.state._group_of_response(response_id)
        return self._rates_of([(cid, ""), (cid, response_id)])

    def _rates_of(self, groups) -> dict[str, DimensionRate]:
        succ = [0] * 4
        n = [0] * 4
        for g in groups:
            for i, (s, m) in enumerate(self.state.counter.counts(g).values()):
                succ[i] += s
                n[i] += m
        level = self.state.counter.confidence
        return {d: rate_from_counts(d, succ[i], n[i], level) for i, d in enumerate(DIMENSION_ORDER)}

    def rates_pooled(self) -> dict[str, DimensionRate]:
        """The four rates over every current label of this annotator (or the consensus)."""
        return self.state.counter.rates()

    def set_weights(self, weights: Mapping[str, float]) -> None:
        """Composite weights (any non-negative numbers; normalised over dimensions with data)."""
        w = dict(self.state.weights)
        for d, v in weights.items():
            if d not in DIMENSION_ORDER:
                raise SessionError(f"unknown dimension {d!r}")
            v = float(v)
            if not v >= 0:
                raise SessionError(f"a weight cannot be negative ({d}: {v})")
            w[d] = v
        self.state.weights = w

    def set_gate(self, dimension: str, floor: float | None) -> None:
        """A hard gate: the composite is gated when ``dimension`` is below ``floor`` (None removes it)."""
        if dimension not in DIMENSION_ORDER:
            raise SessionError(f"unknown dimension {dimension!r}")
        if floor is None:
            self.state.gates.pop(dimension, None)
        else:
            floor = float(floor)
            if not 0.0 <= floor <= 1.0:
                raise SessionError("a gate floor is between 0 and 1")
            self.state.gates[dimension] = floor

    def normalised_weights(self) -> dict[str, float]:
        """The weights as shares of their total (what the sliders mean), before dropping dimensions without data."""
        total = sum(self.state.weights.values())
        return {d: (self.state.weights[d] / total if total > 0 else 0.0) for d in DIMENSION_ORDER}

    def composite(self, rates: Mapping[str, DimensionRate]) -> Composite | None:
        """The weighted composite of ``rates`` with the session's weights and gates (None if all weights are 0)."""
        try:
            return composite(rates, self.state.weights, self.state.gates)
        except ValueError:
            return None

    def agreement(self) -> dict[str, Agreement]:
        """Human (reference) versus harness, per dimension, on the units this annotator labelled."""
        out = {}
        for label_dim in DIMENSIONS:
            cached = self.state._agreement_cache.get(label_dim)
            if cached is None:
                cached = self.state._agreement_cache[label_dim] = agreement_from_table(self.state._tables[label_dim])
            out[DIMENSION_NAMES[label_dim]] = cached
        return out

    def progress(self) -> Progress:
        """Overall progress of this annotator: units with every dimension labelled / all units."""
        lu = tu = lp = tp = 0
        for stats in self.state._case_stats.values():
            lu += stats[0]
            tu += stats[1]
            lp += stats[2]
            tp += stats[3]
        return Progress("", lu, tu, lp, tp, len(self.state.stale))

    def scores(self) -> Scores:
        """Everything the score panel shows (rates, composite, diagnosis, agreement, progress)."""
        current = self.rates_current()
        pooled = self.rates_pooled()
        cc = self.composite(current)
        cp = self.composite(pooled)
        error = "" if cc is not None else "Every weight is 0: give at least one dimension a weight."
        s = self.state
        return Scores(
            current, pooled, cc, cp, error, diagnose(current, s.thresholds), diagnose(pooled, s.thresholds),
            self.agreement(), self.progress(), dict(s.weights), self.normalised_weights(), dict(s.gates), s.ties,
        )

    def url_params(self) -> dict[str, str]:
        """What the page's URL holds so that a link reopens this view (issue 13.6), in a fixed order.

        ``annotator``, ``dataset`` (unless the shipped set), ``sample`` (a
        calibration sample being walked), ``case``, ``response``, ``weights``
        and ``gates`` (``dimension:value,...``, only when not the defaults) and
        ``reveal=1``, ``q`` (the case list's search).
        """
        out: dict[str, str] = {}
        if self.state.annotator and not self.state.read_only:
            out["annotator"] = self.state.annotator
        if self.state.dataset_name != "golden":
            out["dataset"] = self.state.dataset_name
        if self.state.queue_name and self.state.queue_sample:
            out["sample"] = self.state.queue_name
        if self.state.case_id:
            out["case"] = self.state.case_id
        if self.state.response_id:
            out["response"] = self.state.response_id
        if self.state.weights != DEFAULT_WEIGHTS:
            out["weights"] = format_weights(self.state.weights)
        if self.state.gates:
            out["gates"] = format_weights(self.state.gates)
        if self.state.reveal_all and not self.state.read_only:
            out["reveal"] = "1"
        if self.state.filter.text:
            out["q"] = self.state.filter.text
        return out

    def export_rows(self, scope: str = "mine") -> list[dict[str, str]]:
        """The store's export table (:func:`playground.store.export_table`) of ``mine``, ``all`` or ``consensus``.

        Columns :data:`EXPORT_COLUMNS` (issue 14.7), every value a string:
        ``value`` is ``1``, ``0`` or ``unsure``; ``comment`` the annotator's
        comment on the unit (an adjudicated consensus row: ``adjudicated by
        NAME``); ``time`` when the label was last set.  A unit commented on but
        not labelled gives one row with empty ``dimension`` and ``value``.
        Only this dataset's units; stale labels (on text that changed since)
        are left out.  Sorted by (annotator, unit_id, dimension).
        """
        if scope not in ("mine", "all", "consensus"):
            raise SessionError(f"unknown export scope {scope!r} (mine, all, consensus)")
        if scope == "mine" and self.state.annotator is None:
            raise SessionError("Type your name first (or choose an annotator) to export their labels.")
        if scope == "all" and not may_export_everyone(self.state.read_only):  # issue 29: roles, checked in the kernel
            raise SessionError("Every annotator's labels are for the instructor's link; export your own labels.")
        self.state._build_labelled(everyone=scope != "mine")
        mine = self.state.annotator if scope == "mine" else None
        return export_table(self.state.store, self.state._units, annotator=mine, consensus=scope == "consensus")

    def export_file(self, fmt: str = "csv", scope: str = "mine") -> tuple[str, bytes, int]:
        """``(filename, content, rows)`` of an export, for a download link: :meth:`export_rows` in ``fmt``.

        ``fmt`` is one of :data:`EXPORT_MIME` (``csv``, ``jsonl``, ``parquet``),
        written by :func:`playground.store.format_bytes`: CSV cells that a
        spreadsheet would run as a formula get a leading ``'``.
        """
        if fmt not in EXPORT_MIME:
            raise SessionError(f"unknown export format {fmt!r} ({', '.join(EXPORT_MIME)})")
        rows = self.export_rows(scope)
        who = self.state.annotator if scope == "mine" else scope
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in (who or "labels")).strip("-") or "labels"
        return f"labels-{safe}.{fmt}", format_bytes(rows, fmt, EXPORT_COLUMNS), len(rows)

    def export_text(self, fmt: str = "csv", scope: str = "mine") -> tuple[str, str, int]:
        """:meth:`export_file` of a text format (``csv`` or ``jsonl``), decoded from UTF-8."""
        if fmt == "parquet":
            raise SessionError("parquet is binary: use export_file")
        name, content, n = self.export_file(fmt, scope)
        return name, content.decode("utf-8"), n


def may_export_everyone(read_only: bool) -> bool:
    """Whether this page may export every annotator's labels and comments (issue 29): the instructor's or an
    observer's page (the room's roles, :func:`playground.ui.request.role`), or a read-only dashboard; never a
    student's page, where it would show other students' answers and comments."""
    from .request import role

    return read_only or role() in ("instructor", "observer")
