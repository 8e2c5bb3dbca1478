"""Human labellings from the label store: one annotator's labels, or the consensus.

Rule of the consensus of a (unit, dimension): the adjudicated label (stored
under the reserved annotator :data:`~.labellings.CONSENSUS`) where there is
one; else the majority of the annotators' current labels; a tie without
adjudication is left out.  With a catalog (``unit_id -> Unit``) stale labels
are left out and each label gets its unit's response id.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .labellings import CONSENSUS, HumanLabelling, _human_frame, human_from_labels

__all__ = ["human_consensus", "human_from_store"]


def _current(store: Any, catalog: Mapping[str, Any] | None, annotator: str | None = None) -> list[Any]:
    if catalog is None:
        return list(store.labels(annotator=annotator))
    return list(store.current_labels(catalog, annotator))


def human_from_store(store: Any, annotator: str, catalog: Mapping[str, Any] | None = None) -> HumanLabelling:
    """``annotator``'s current labels from the label store (with a ``catalog``, stale labels are left out)."""
    labels = _current(store, catalog, annotator)
    return human_from_labels(_with_response(labels, catalog), annotator, "annotator",
                             "" if catalog is not None else "stale labels not checked (no catalog)")


def _with_response(labels: Iterable[Any], catalog: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    out = []
    for label in labels:
        unit = catalog.get(label.unit_id) if catalog is not None else None
        out.append({"unit_id": label.unit_id, "unit_kind": label.unit_kind, "case_id": label.case_id,
                    "response_id": getattr(unit, "response_id", "") if unit is not None else "",
                    "dimension": label.dimension, "value": int(label.value)})
    return out


def human_consensus(store: Any, catalog: Mapping[str, Any] | None = None) -> HumanLabelling:
    """The store's consensus: an adjudicated label (annotator ``consensus``) where there is one, else the
    majority of the annotators' current labels; ties without adjudication are left out."""
    adjudicated = {(label.unit_id, label.dimension): label for label in _current(store, catalog, CONSENSUS)}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for c in store.consensus(catalog=catalog):
        if c.value is not None:
            rows[(c.unit_id, c.dimension)] = {"unit_id": c.unit_id, "unit_kind": c.unit_kind, "case_id": c.case_id,
                                              "response_id": "", "dimension": c.dimension, "value": int(c.value)}
    for key, label in adjudicated.items():
        rows[key] = {
            "unit_id": label.unit_id,
            "unit_kind": label.unit_kind,
            "case_id": label.case_id,
            "response_id": "",
            "dimension": label.dimension,
            "value": int(label.value),
        }
    if catalog is not None:
        for r in rows.values():
            unit = catalog.get(r["unit_id"])
            r["response_id"] = getattr(unit, "response_id", "") if unit is not None else ""
    return HumanLabelling(CONSENSUS, _human_frame(rows.values()), "consensus",
                          f"majority of annotators; {len(adjudicated)} adjudicated; ties left out")
