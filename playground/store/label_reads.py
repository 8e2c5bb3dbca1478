"""Label reads: the event log, current labels and comments, stale labels, progress, and consensus.

Everything here is derived on demand from the current views and the log;
nothing is stored.  Current labels leave unsure answers (:data:`UNSURE`) out
unless asked for.  A label is *stale* when its unit's text hash differs from
the catalog's (``changed``) or its unit is not in the catalog (``orphaned``).
Consensus (:meth:`LabelReads.consensus`) is the majority of the 1/0
votes (:func:`majority`), a tie reported and never broken, unless the item
was adjudicated.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from ..model import DIMENSIONS, Unit
from .checks import CONSENSUS_ANNOTATOR, RESERVED_ANNOTATORS
from .handle import StoreHandle
from .label_writes import ADJUDICATED_BY
from .statements import EVENT_COLUMNS
from .types import UNSURE, CaseProgress, Comment, ConsensusRow, Event, Progress, StaleLabel, StoredLabel

__all__ = ["LabelReads", "majority"]


def majority(yes: int, no: int) -> tuple[int | None, str]:
    """``(value, status)`` of a vote: status ``single``, ``unanimous``, ``majority`` or ``tie`` (value None)."""
    if yes == no:
        return None, "tie"
    value = 1 if yes > no else 0
    return value, "single" if yes + no == 1 else ("unanimous" if min(yes, no) == 0 else "majority")


class LabelReads:
    """Reading labels: events, current labels and comments, stale labels, progress, consensus (one handle)."""

    def __init__(self, handle: StoreHandle):
        self._h = handle
        self._b = handle.db

    def history(self, unit_id: str, dimension: str | None = None, annotator: str | None = None) -> list[Event]:
        """Every event of ``unit_id`` (optionally one dimension / annotator), oldest first."""
        where, params = ["e.unit_id = ?"], [unit_id]
        if dimension is not None:
            where.append("e.dimension = ?")
            params.append(dimension)
        return self._events_where(where, params, annotator)

    def events(self, annotator: str | None = None, after: int = 0) -> list[Event]:
        """The event log (optionally one annotator's, and only ids above ``after``), oldest first."""
        return self._events_where(["e.event_id > ?"], [after], annotator)

    def _events_where(self, where: list[str], params: list[Any], annotator: str | None) -> list[Event]:
        """The events meeting every condition of ``where`` (and of ``annotator``'s, if given), by event id."""
        if annotator is not None:
            where, params = [*where, "a.name = ?"], [*params, annotator]
        sql = (f"SELECT {EVENT_COLUMNS} FROM events e JOIN annotators a ON a.annotator_id = e.annotator_id"
               f" WHERE {' AND '.join(where)} ORDER BY e.event_id")
        return [self._h.event(r) for r in self._b.read(lambda cur: cur.execute(sql, params).fetchall())]

    def labels(self, annotator: str | None = None, unit_ids: Iterable[str] | None = None,
               case_id: str | None = None, include_unsure: bool = False) -> list[StoredLabel]:
        """Current labels, sorted by (unit_id, dimension, annotator); filters combine with AND.

        Unsure answers (value :data:`UNSURE`) are left out unless
        ``include_unsure=True``, so every rate computed from these labels sees 1 and 0 only.
        Labels of the reserved ``consensus`` name (adjudications) are included.
        """
        base = ("SELECT a.name, lb.unit_kind, lb.unit_id, lb.case_id, lb.dimension, lb.value, lb.text_hash,"
                " lb.updated_at FROM labels lb JOIN annotators a ON a.annotator_id = lb.annotator_id WHERE 1 = 1")
        params: list[Any] = []
        if annotator is not None:
            base += " AND a.name = ?"
            params.append(annotator)
        if case_id is not None:
            base += " AND lb.case_id = ?"
            params.append(case_id)
        if not include_unsure:
            base += f" AND lb.value <> {UNSURE}"
        rows = self._b.read(lambda cur: self._h.chunked(cur, base, params, "lb.unit_id", unit_ids))
        out = [StoredLabel(n, k, u, c, d, v, h, self._b.ts_out(t)) for n, k, u, c, d, v, h, t in rows]
        out.sort(key=lambda lb: (lb.unit_id, lb.dimension, lb.annotator))
        return out
    def comments(self, unit_ids: Iterable[str] | None = None, annotator: str | None = None) -> list[Comment]:
        """Current comments, sorted by (unit_id, annotator); filters combine with AND."""
        base = ("SELECT a.name, c.unit_kind, c.unit_id, c.case_id, c.text, c.updated_at"
                " FROM comments c JOIN annotators a ON a.annotator_id = c.annotator_id WHERE 1 = 1")
        params: list[Any] = []
        if annotator is not None:
            base += " AND a.name = ?"
            params.append(annotator)
        rows = self._b.read(lambda cur: self._h.chunked(cur, base, params, "c.unit_id", unit_ids))
        out = [Comment(n, k, u, c, t, self._b.ts_out(ts)) for n, k, u, c, t, ts in rows]
        out.sort(key=lambda c: (c.unit_id, c.annotator))
        return out

    def stale(self, catalog: Mapping[str, Unit], annotator: str | None = None) -> list[StaleLabel]:
        """Labels whose unit text changed (``changed``) or whose unit is not in ``catalog`` (``orphaned``).

        They stay in the store untouched; setting the label again on the
        current text (even to the same value) makes it current.
        """
        out = []
        for lb in self.labels(annotator=annotator, include_unsure=True):
            unit = catalog.get(lb.unit_id)
            if unit is None:
                out.append(StaleLabel(lb.annotator, lb.unit_kind, lb.unit_id, lb.case_id, lb.dimension, lb.value,
                                      lb.text_hash, None, "orphaned", lb.updated_at))
            elif unit.text_hash != lb.text_hash:
                out.append(StaleLabel(lb.annotator, lb.unit_kind, lb.unit_id, lb.case_id, lb.dimension, lb.value,
                                      lb.text_hash, unit.text_hash, "changed", lb.updated_at))
        return out

    def current_labels(self, catalog: Mapping[str, Unit], annotator: str | None = None,
                       include_unsure: bool = False) -> list[StoredLabel]:
        """Labels that still apply: unit in ``catalog`` with the same text hash (stale ones left out).

        Unsure answers only with ``include_unsure=True`` (as :meth:`labels`).
        """
        return [lb for lb in self.labels(annotator=annotator, include_unsure=include_unsure)
                if (u := catalog.get(lb.unit_id)) is not None and u.text_hash == lb.text_hash]

    def unsure_counts(self, catalog: Mapping[str, Unit] | None = None) -> dict[tuple[str, str], int]:
        """Number of unsure answers per (annotator, dimension); with a ``catalog``, current ones only.

        Only keys with at least one unsure answer appear; reserved names never do.
        """
        labels = (self.labels(include_unsure=True) if catalog is None
                  else self.current_labels(catalog, include_unsure=True))
        counts = Counter((lb.annotator, lb.dimension) for lb in labels
                         if lb.value == UNSURE and lb.annotator not in RESERVED_ANNOTATORS)
        return dict(sorted(counts.items()))

    def progress(self, catalog: Mapping[str, Unit], annotator: str | None = None) -> Progress:
        """Labelled / total (unit, dimension) pairs and units, per case and overall.

        A pair is labelled when ``annotator`` (or, with ``None``, any annotator
        but the reserved names) has a current, non-stale label on it — an
        unsure answer counts as answered here, it is the person's judgement;
        a unit when all its dimensions are.  ``stale_pairs`` counts pairs whose only labels are stale.
        """
        fresh: set[tuple[str, str]] = set()
        stale: set[tuple[str, str]] = set()
        for lb in self.labels(annotator=annotator, include_unsure=True):
            unit = catalog.get(lb.unit_id)
            if unit is None or (annotator is None and lb.annotator in RESERVED_ANNOTATORS):
                continue
            (fresh if unit.text_hash == lb.text_hash else stale).add((lb.unit_id, lb.dimension))
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
        for unit in catalog.values():
            c = counts[unit.case_id]
            dims = [d for d in unit.dimensions if d in DIMENSIONS]
            done = sum((unit.unit_id, d) in fresh for d in dims)
            c[0] += bool(dims) and done == len(dims)
            c[1] += 1
            c[2] += done
            c[3] += len(dims)
            c[4] += sum((unit.unit_id, d) in stale and (unit.unit_id, d) not in fresh for d in dims)
        cases = {cid: CaseProgress(cid, *v) for cid, v in sorted(counts.items())}
        overall = CaseProgress("", *(sum(c[i] for c in counts.values()) for i in range(5)))
        return Progress(annotator, overall, cases)

    def consensus(self, dimension: str | None = None, catalog: Mapping[str, Unit] | None = None,
                  unit_ids: Iterable[str] | None = None) -> list[ConsensusRow]:
        """Consensus of each labelled or adjudicated (unit, dimension), sorted by unit and dimension.

        Every annotator's current 1/0 label is one vote; unsure answers and
        the reserved names (:data:`RESERVED_ANNOTATORS`) never vote.  With a
        ``catalog``, stale and orphaned labels (and adjudications) do not count
        either.  An adjudication (:meth:`adjudicate`) decides: the row has
        status ``adjudicated``, the adjudicated value and the adjudicator,
        with the votes still counted in ``yes``/``no``.  Otherwise the
        majority; a tie is a row with ``status == "tie"`` and ``value is
        None``: reported, never broken.  Derived on demand, never stored.
        """
        votes: dict[tuple[str, str], list[Any]] = {}
        settled: dict[tuple[str, str], StoredLabel] = {}
        for lb in self.labels(unit_ids=unit_ids):
            if dimension is not None and lb.dimension != dimension:
                continue
            if catalog is not None:
                unit = catalog.get(lb.unit_id)
                if unit is None or unit.text_hash != lb.text_hash:
                    continue
            if lb.annotator == CONSENSUS_ANNOTATOR:
                settled[(lb.unit_id, lb.dimension)] = lb
                continue
            if lb.annotator in RESERVED_ANNOTATORS:
                continue
            v = votes.setdefault((lb.unit_id, lb.dimension), [lb.unit_kind, lb.case_id, 0, 0])
            v[2 if lb.value == 1 else 3] += 1
        who = self._adjudicators() if settled else {}
        out = []
        for key in sorted(set(votes) | set(settled)):
            uid, dim = key
            if key in settled:
                s = settled[key]
                yes, no = votes[key][2:] if key in votes else (0, 0)
                out.append(ConsensusRow(s.unit_kind, uid, s.case_id, dim, s.value, "adjudicated", yes, no,
                                        who.get(key)))
                continue
            kind, case_id, yes, no = votes[key]
            value, status = majority(yes, no)
            out.append(ConsensusRow(kind, uid, case_id, dim, value, status, yes, no))
        return out

    def _adjudicators(self) -> dict[tuple[str, str], str | None]:
        """(unit_id, dimension) -> adjudicator's name (from the consensus label's event note) or None."""
        rows = self._b.read(lambda cur: cur.execute(
            "SELECT lb.unit_id, lb.dimension, e.note FROM labels lb"
            " JOIN annotators a ON a.annotator_id = lb.annotator_id"
            " JOIN events e ON e.event_id = lb.event_id WHERE a.name = ?", (CONSENSUS_ANNOTATOR,)).fetchall())
        return {(u, d): (n[len(ADJUDICATED_BY):] if isinstance(n, str) and n.startswith(ADJUDICATED_BY) else None)
                for u, d, n in rows}
