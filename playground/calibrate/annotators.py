"""Annotators versus each other, versus the answer key, and settling their disagreements.

* Agreement (:func:`annotator_agreement`): pairwise Cohen's kappa, Fleiss'
  kappa and Krippendorff's alpha over (unit, dimension) items, and each
  annotator against the majority of the *other* annotators (items where that
  majority is a tie are skipped).  Labels of ``consensus`` never count.
* Adjudication queue (:func:`adjudication_queue`): items with at least one
  yes and one no; ``tie`` when yes == no, else ``majority``; items not yet
  adjudicated first, ties before majorities, then by unit id and dimension.
* :func:`adjudicate`: the settled value is stored as the ``consensus``
  label, the adjudicator's name in the event's note.
* Accuracy against the key (:func:`accuracy_against_key`): ``correct / n``
  with its Wilson interval, and kappa with the key.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..metrics import multi_rater
from ..stats import AgreementStat, cohens_kappa, wilson_interval
from .labellings import CONSENSUS, HumanLabelling
from .store_labels import _current
from .tables import _dim_key, _r

__all__ = ["AnnotatorAgreement", "accuracy_against_key", "adjudicate", "adjudication_queue", "annotator_agreement"]


def _by_annotator(labels: Any, dimension: str | None) -> dict[str, dict[tuple[str, str], int]]:
    """``{annotator: {(unit_id, dimension): value}}`` from label objects or such a mapping
    (``consensus`` left out)."""
    out: dict[str, dict[tuple[str, str], int]] = {}
    if isinstance(labels, Mapping):
        for ann, items in labels.items():
            if ann == CONSENSUS:
                continue
            for key, v in items.items():
                uid, dim = key if isinstance(key, tuple) else (key, dimension or "")
                if dimension is None or dim == dimension:
                    out.setdefault(ann, {})[(uid, dim)] = int(v)
        return out
    for label in labels:
        if label.annotator == CONSENSUS or (dimension is not None and label.dimension != dimension):
            continue
        out.setdefault(label.annotator, {})[(label.unit_id, label.dimension)] = int(label.value)
    return out


@dataclass(frozen=True, eq=False)
class AnnotatorAgreement:
    """Annotators versus each other on shared units.

    ``pairwise``: one row per pair (n shared, agreement, kappa with interval,
    PABAK); ``fleiss``/``krippendorff``: over units with at least two labels;
    ``vs_majority``: each annotator against the majority of the *other*
    annotators on units where that majority exists (no tie), so nobody agrees
    with themselves.
    """

    dimension: str | None
    annotators: list[str]
    n_items: int
    n_shared: int
    pairwise: pd.DataFrame
    fleiss: AgreementStat
    krippendorff: AgreementStat
    vs_majority: pd.DataFrame

    def summary(self) -> dict[str, Any]:
        return {"dimension": self.dimension or "all", "annotators": len(self.annotators), "items": self.n_items,
                "shared_items": self.n_shared, "fleiss_kappa": _r(self.fleiss.value),
                "krippendorff_alpha": _r(self.krippendorff.value),
                "note": "; ".join(x for x in (self.fleiss.reason, self.krippendorff.reason, self.fleiss.note) if x)}


def annotator_agreement(labels: Any, dimension: str | None = None, confidence: float = 0.95) -> AnnotatorAgreement:
    """Pairwise Cohen's kappa, Fleiss' kappa, Krippendorff's alpha and agreement with the majority.

    ``labels``: label objects with ``annotator, unit_id, dimension, value``
    (e.g. ``store.labels()``) or ``{annotator: {(unit_id, dimension): 0/1}}``.
    An item is a (unit, dimension) pair; ``dimension`` restricts to one.
    Labels under ``consensus`` are left out (they are derived, not a person's).
    """
    by = _by_annotator(labels, dimension)
    mr = multi_rater(by, confidence)
    pair_rows = []
    for pa in mr.pairwise:
        ag = pa.agreement
        k = ag.kappa
        pair_rows.append({"annotator_a": pa.annotator_a, "annotator_b": pa.annotator_b, "n_shared": ag.n_shared,
                          "agreement": _r(ag.percent), "kappa": _r(k.kappa), "kappa_low": _r(k.low),
                          "kappa_high": _r(k.high), "pabak": _r(ag.pabak), "disagreements": len(ag.disagreements),
                          "note": k.reason or k.note})
    pcols = ["annotator_a", "annotator_b", "n_shared", "agreement", "kappa", "kappa_low", "kappa_high", "pabak",
             "disagreements", "note"]
    maj_rows = []
    for ann in mr.annotators:
        mine, ref = [], []
        for item, v in sorted(by[ann].items()):
            others = [by[o][item] for o in mr.annotators if o != ann and item in by[o]]
            yes = sum(others)
            if not others or 2 * yes == len(others):
                continue
            mine.append(v)
            ref.append(int(2 * yes > len(others)))
        k = cohens_kappa(ref, mine, confidence)
        maj_rows.append({"annotator": ann, "n": len(mine), "agreement": _r(k.agreement), "kappa": _r(k.kappa),
                         "kappa_low": _r(k.low), "kappa_high": _r(k.high), "note": k.reason or k.note})
    mcols = ["annotator", "n", "agreement", "kappa", "kappa_low", "kappa_high", "note"]
    counts: dict[tuple[Any, ...], int] = {}
    for items in by.values():
        for item in items:
            counts[item] = counts.get(item, 0) + 1
    return AnnotatorAgreement(dimension, list(mr.annotators), len(counts), sum(1 for c in counts.values() if c >= 2),
                              pd.DataFrame(pair_rows, columns=pcols), mr.fleiss, mr.krippendorff,
                              pd.DataFrame(maj_rows, columns=mcols))


def adjudication_queue(store: Any, catalog: Mapping[str, Any] | None = None, dimension: str | None = None, *,
                       link_base: str | None = "", include_adjudicated: bool = True,
                       dataset: str | None = None) -> pd.DataFrame:
    """Units on which annotators disagree (at least one yes and one no), for a person to settle.

    Columns: ``unit_id, unit_kind, case_id, dimension, yes, no, status`` (``tie``
    or ``majority``), ``majority`` (value or None), ``votes`` ("name=1, ..."),
    ``adjudicated`` (the ``consensus`` label if set, else None), ``text``
    (from the catalog), ``link`` (``{link_base}?dataset=NAME&case=ID`` with a
    ``dataset`` other than the shipped set, else ``{link_base}?case=ID``).  Ties
    first, then by unit id and dimension.  With a ``catalog`` stale labels do not count.
    """
    from ..datasets import dataset_link

    labels = _current(store, catalog)
    votes: dict[tuple[str, str], list[Any]] = {}
    adjudicated: dict[tuple[str, str], int] = {}
    for label in labels:
        if dimension is not None and label.dimension != dimension:
            continue
        if label.annotator == CONSENSUS:
            adjudicated[(label.unit_id, label.dimension)] = int(label.value)
            continue
        votes.setdefault((label.unit_id, label.dimension), [label.unit_kind, label.case_id, []])[2].append(
            (label.annotator, int(label.value))
        )
    rows = []
    for (uid, dim), (kind, case_id, vs) in votes.items():
        yes = sum(v for _, v in vs)
        no = len(vs) - yes
        if not yes or not no:
            continue
        adj = adjudicated.get((uid, dim))
        if adj is not None and not include_adjudicated:
            continue
        unit = catalog.get(uid) if catalog is not None else None
        rows.append({"unit_id": uid, "unit_kind": kind, "case_id": case_id, "dimension": dim, "yes": yes, "no": no,
                     "status": "tie" if yes == no else "majority",
                     "majority": None if yes == no else int(yes > no),
                     "votes": ", ".join(f"{a}={v}" for a, v in sorted(vs)), "adjudicated": adj,
                     "text": getattr(unit, "text", "") if unit is not None else "",
                     "link": "" if link_base is None else dataset_link(case_id, dataset, link_base)})
    cols = ["unit_id", "unit_kind", "case_id", "dimension", "yes", "no", "status", "majority", "votes", "adjudicated",
            "text", "link"]
    rows.sort(
        key=lambda r: (r["adjudicated"] is not None, r["status"] != "tie", r["unit_id"], _dim_key(r["dimension"]))
    )
    frame = pd.DataFrame(rows, columns=cols)
    for c in ("majority", "adjudicated"):
        frame[c] = frame[c].astype(object)
    return frame


def adjudicate(store: Any, unit: Any, dimension: str, value: int | None, adjudicator: str) -> Any:
    """Settle a disagreement: write ``value`` as the ``consensus`` label of ``unit`` on ``dimension``.

    ``adjudicator`` must be a non-empty name other than ``consensus``.  The
    label is stored under the store's reserved name ``consensus`` (which
    never votes), in one transaction; ``value=None`` withdraws an
    adjudication.  Returns the store's event (None when nothing changed).
    The adjudicator's name is recorded in the event's note
    (``adjudicated by NAME``), so the history shows who settled it.  A store
    with its own ``adjudicate(unit, dimension, value, adjudicator)`` does it
    instead (the store decides where the adjudication lives).
    """
    if not isinstance(adjudicator, str) or not adjudicator.strip():
        raise ValueError("an adjudication needs the adjudicator's name")
    return store.adjudicate(unit, dimension, value, adjudicator)  # the store checks the name (reserved ones refused)


def accuracy_against_key(labels: Any, key: HumanLabelling, *, by: str | None = None,
                         confidence: float = 0.95) -> pd.DataFrame:
    """For teaching: each annotator's labels against the answer key (the authored variants' intended labels).

    ``labels``: label objects (``annotator, unit_id, dimension, value``), a
    list of :class:`HumanLabelling`, or ``{annotator: {(unit_id, dimension): 0/1}}``.
    One row per annotator and dimension (and per ``by`` value, e.g.
    ``"variant"``, a column of the key): ``n`` compared, ``correct``,
    ``accuracy`` with its Wilson interval, kappa with the key.
    """
    if isinstance(labels, (list, tuple)) and labels and isinstance(labels[0], HumanLabelling):
        by_ann = {hl.name: {(u, d): int(v) for u, d, v in zip(hl.frame["unit_id"], hl.frame["dimension"],
                                                               hl.frame["value"], strict=True)} for hl in labels}
    else:
        by_ann = _by_annotator(labels, None)
    kf = key.frame
    keyed = {(u, d): int(v) for u, d, v in zip(kf["unit_id"], kf["dimension"], kf["value"], strict=True)}
    extra = {(u, d): g for u, d, g in zip(kf["unit_id"], kf["dimension"], kf[by], strict=True)} if by else {}
    groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
    for ann in sorted(by_ann):
        for item, v in sorted(by_ann[ann].items()):
            if item not in keyed:
                continue
            g = (ann, item[1]) + ((extra[item],) if by else ())
            groups.setdefault(g, []).append((keyed[item], v))
    rows = []
    for g in sorted(groups, key=lambda g: (g[0], _dim_key(g[1]), *g[2:])):
        pairs = groups[g]
        ref = [a for a, _ in pairs]
        mine = [b for _, b in pairs]
        correct = sum(a == b for a, b in pairs)
        ci = wilson_interval(correct, len(pairs), confidence)
        assert ci is not None  # pairs is not empty
        k = cohens_kappa(ref, mine, confidence)
        row = {"annotator": g[0], "dimension": g[1]}
        if by:
            row[by] = g[2]
        row.update({"n": len(pairs), "correct": correct, "accuracy": _r(correct / len(pairs)),
                    "low": _r(ci[0]), "high": _r(ci[1]), "kappa": _r(k.kappa), "note": k.reason or k.note})
        rows.append(row)
    cols = (
        ["annotator", "dimension"] + ([by] if by else []) + ["n", "correct", "accuracy", "low", "high", "kappa", "note"]
    )
    return pd.DataFrame(rows, columns=cols)
