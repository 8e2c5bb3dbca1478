"""The golden-set export: labels written back as ``golden/responses/*.yaml`` response files.

A response is written only when every one of its claims has ``supported`` and
``correct`` and every reference fact has ``covered``, each decided by current
(not stale) labels: with ``annotator=None`` the adjudicated value where there
is one, else the majority of the fresh 1/0 labels (:func:`~.core.majority`; a
tie leaves the response out); with a name, that person's labels.  Every other
response is listed with the reason it was skipped.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..files import write_atomic
from ..model import Unit
from .core import CONSENSUS_ANNOTATOR, RESERVED_ANNOTATORS, LabelStore

__all__ = ["GoldenExport", "export_golden"]


@dataclass(frozen=True)
class GoldenExport:
    """Which responses went into the golden-set file, and which were skipped and why."""

    path: str
    written: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]


def export_golden(store: LabelStore, dataset: Any, path: str | os.PathLike[str] | IO[str], annotator: str | None = None
                  ) -> GoldenExport:
    """Write the labels as a golden-set response file (``golden/responses/*.yaml`` format).

    ``annotator=None`` uses the consensus of all annotators — the adjudicated
    value where there is one, else the majority (a tie leaves the response
    out); a name uses that person's labels.  Unsure answers never count.  A response is written
    only when every one of its claims has ``supported`` and ``correct`` and
    every reference fact has ``covered``, all current (not stale); the others
    are listed in :attr:`GoldenExport.skipped` with the reason.  Passage
    relevance has no place in that format and is not exported.  ``dataset``
    needs ``cases`` and ``responses`` mappings (a :class:`playground.golden.Dataset`).
    """
    import yaml

    from ..golden import response_units

    by_unit, settled = _labels_by_unit(store, annotator)
    written, skipped, out = [], [], []
    for rid in sorted(dataset.responses):
        response = dataset.responses[rid]
        case = dataset.cases.get(response.case_id)
        if case is None:
            skipped.append((rid, f"case {response.case_id} is not in the dataset"))
            continue
        units = response_units(case, response)
        values, problems = _unit_values(units, by_unit, settled)
        if problems:
            skipped.append((rid, "; ".join(problems)))
            continue
        out.append(_response_entry(rid, response, case, units, values))
        written.append(rid)
    who = "consensus of all annotators" if annotator is None else f"annotator {annotator}"
    header = f"# Golden-set responses exported from the label store ({who}).\n"
    text = header + yaml.safe_dump({"responses": out}, sort_keys=False, allow_unicode=True, width=100)
    if hasattr(path, "write"):
        path.write(text)
        target = getattr(path, "name", "<stream>")
    else:
        write_atomic(Path(path), text)
        target = str(path)
    return GoldenExport(str(target), tuple(written), tuple(skipped))


def _labels_by_unit(store: LabelStore, annotator: str | None
                    ) -> tuple[dict[str, list[Any]], dict[tuple[str, str], Any]]:
    """``({unit_id: [votes]}, {(unit_id, dimension): adjudication})``: ``annotator``'s labels, or every person's
    (reserved names never vote) with the adjudications apart."""
    by_unit: dict[str, list[Any]] = {}
    settled: dict[tuple[str, str], Any] = {}
    for label in store.labels(annotator=annotator):
        if annotator is None and label.annotator == CONSENSUS_ANNOTATOR:
            settled[(label.unit_id, label.dimension)] = label
            continue
        if annotator is None and label.annotator in RESERVED_ANNOTATORS:
            continue
        by_unit.setdefault(label.unit_id, []).append(label)
    return by_unit, settled


def _unit_values(units: list[Unit], by_unit: dict[str, list[Any]], settled: dict[tuple[str, str], Any]
                 ) -> tuple[dict[tuple[str, str], int], list[str]]:
    """``({(unit_id, dimension): value}, problems)`` of one response's units; any problem skips the response.

    A current adjudication decides; else the majority of the fresh labels.  Stale
    labels alone, a tie, or no label at all are problems.
    """
    from .core import majority

    values: dict[tuple[str, str], int] = {}
    problems: list[str] = []
    unlabelled: list[str] = []
    for unit in units:
        for dim in unit.dimensions:
            adjudicated = settled.get((unit.unit_id, dim))
            if adjudicated is not None and adjudicated.text_hash == unit.text_hash:
                values[(unit.unit_id, dim)] = int(adjudicated.value)
                continue
            labels = [lb for lb in by_unit.get(unit.unit_id, ()) if lb.dimension == dim]
            fresh = [lb for lb in labels if lb.text_hash == unit.text_hash]
            if not fresh:
                if labels:
                    problems.append(f"stale label(s) on {unit.unit_id} {dim} (its text changed)")
                else:
                    unlabelled.append(f"{unit.unit_id} {dim}")
                continue
            yes = sum(lb.value == 1 for lb in fresh)
            value, _status = majority(yes, len(fresh) - yes)
            if value is None:
                problems.append(f"tie on {unit.unit_id} {dim} ({yes} yes, {len(fresh) - yes} no)")
            else:
                values[(unit.unit_id, dim)] = value
    if unlabelled:
        problems.append(f"{len(unlabelled)} unlabelled: {', '.join(unlabelled[:5])}"
                        + (" ..." if len(unlabelled) > 5 else ""))
    return values, problems


def _response_entry(rid: str, response: Any, case: Any, units: list[Unit], values: dict[tuple[str, str], int]
                    ) -> dict[str, Any]:
    """The YAML entry of one fully labelled response (claims in order, facts by id, text only when it differs)."""
    claims = [u for u in units if u.unit_kind == "claim"]
    entry: dict[str, Any] = {
        "response_id": rid, "case_id": response.case_id, "variant": response.variant,
        "claims": [{"text": u.text, "supported": bool(values[(u.unit_id, "supported")]),
                    "correct": bool(values[(u.unit_id, "correct")])} for u in claims],
        "facts": {f.fact_id: bool(values[(u.unit_id, "covered")])
                  for f, u in zip(case.reference_facts, [u for u in units if u.unit_kind == "fact"],
                                  strict=False)},
        "notes": response.notes,
    }
    if response.text != " ".join(u.text for u in claims):
        entry["text"] = response.text
    if getattr(response, "origin", "authored") != "authored":
        entry["origin"] = response.origin
    return entry
