"""An import's stored form made sample by sample: its canonical JSON text, its unit count, the units asked for.

:func:`.core.build_payload` gives the payload as one dict and
:func:`.load.payload_units` every unit of it (a million at 100,000 samples);
an import that held both, and the payload's JSON text, peaked at 1.63 GiB.
:func:`stream_payload` makes the same things one sample at a time, letting go
of each sample once it is written:

* the text is the canonical JSON of the payload (:func:`playground.store.checks.canonical_json`:
  sorted keys, no spaces, UTF-8 kept), assembled from each sample row's own
  canonical JSON: with sorted keys the top level reads ``format, kind, name,
  samples, source, summary, [text_kind,] version``, so the text is the
  canonical JSON of the keys before ``samples``, the rows joined by ``,``, and
  that of the keys after — the same bytes, and its SHA-256 taken piece by piece;
* the number of units is counted, not built: per case, its contexts (passage
  units), the claims of its response (:func:`playground.claims.split_claims`)
  and its facts — what :meth:`playground.golden.Dataset.units` lists for it;
  a case id given twice counts once, its last row's units (as the dataset built
  from the payload keeps its last row);
* units are built only for the cases of ``wanted`` unit ids (labels, a label
  history, the labels already in the store), and only those units are kept:
  the catalog the labels are checked against, every unit id of the file
  matching as before.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..claims import split_claims
from ..model import Unit
from ..store.checks import canonical_json
from ..verdicts import response_units
from .core import Sample, build_dataset, response_id_of, sample_rows

__all__ = ["StreamedPayload", "case_of", "count_units", "drain", "row_unit_count", "row_units", "stream_payload"]


def case_of(unit_id: str) -> str:
    """The case id a unit id of an imported dataset starts with: ``<dataset>:<sample id>``.

    Passage ids are ``<case id>::…``, response, claim and fact ids ``<case id>/R…``;
    neither a dataset name nor a sample id holds ``:`` or ``/``.
    """
    return unit_id.split("/", 1)[0].split("::", 1)[0]


def row_units(name: str, row: dict[str, Any]) -> list[Unit]:
    """Every unit of one payload row: passages, claims, facts (the golden order), then its verdict unit."""
    dataset, passages = build_dataset({"name": name, "samples": [row]}, Path("."))
    return [*dataset.units(passages), *response_units(dataset)]


def row_unit_count(row: dict[str, Any]) -> int:
    """``len`` of a row's units without the verdict unit: contexts + claims of the response + facts."""
    claims = split_claims(row["response"], response_id_of(row["case_id"]))
    return len(row["contexts"]) + len(claims) + len(row["facts"])


def count_units(name: str, samples: Iterable[Sample]) -> int:
    """The number of units of ``samples`` imported under ``name`` (what :func:`stream_payload` counts)."""
    return sum({row["case_id"]: row_unit_count(row) for row in sample_rows(name, samples)}.values())


def drain(samples: list[Sample]) -> Iterator[Sample]:
    """The samples in order, each dropped from ``samples`` as it is given (the list ends empty)."""
    samples.reverse()
    while samples:
        yield samples.pop()


@dataclass
class StreamedPayload:
    """The stored form of an import: canonical JSON ``text`` and its ``sha256``, the counts, the units asked for."""

    text: str
    sha256: str
    summary: dict[str, int]
    catalog: dict[str, Unit] = field(default_factory=dict)


def _split_head(head: dict[str, Any]) -> tuple[str, str]:
    """The canonical JSON of ``head`` around a ``samples`` key: ``('{…,"samples":[', '],…}')``."""
    before = canonical_json({k: v for k, v in head.items() if k < "samples"})
    after = canonical_json({k: v for k, v in head.items() if k > "samples"})
    return before[:-1] + ',"samples":[', "]," + after[1:]


def _assemble(head: dict[str, Any], fragments: list[str]) -> tuple[str, str]:
    """``(text, sha256)`` of ``head`` with the rows ``fragments`` as its samples; ``fragments`` is consumed.

    The digest is taken piece by piece and the rows joined once, so the text is
    never held twice beside its parts.
    """
    prefix, suffix = _split_head(head)
    digest = hashlib.sha256(prefix.encode("utf-8"))
    for i, part in enumerate(fragments):
        if i:
            digest.update(b",")
        digest.update(part.encode("utf-8"))
    digest.update(suffix.encode("utf-8"))
    if not fragments:
        return prefix + suffix, digest.hexdigest()
    fragments[0] = prefix + fragments[0]
    fragments[-1] = fragments[-1] + suffix
    text = ",".join(fragments)
    fragments.clear()
    return text, digest.hexdigest()


def stream_payload(head: dict[str, Any], samples: Iterable[Sample], wanted: Iterable[str] = ()) -> StreamedPayload:
    """The stored form of ``samples`` under ``head`` (:func:`.core.payload_head`, its summary filled in here).

    ``wanted``: unit ids whose units the catalog must hold (when they are units of the file).
    Pass :func:`drain` of a list to let go of each sample as it is written.
    """
    name = head["name"]
    wanted = set(wanted)
    cases = {case_of(u) for u in wanted}
    counts: dict[str, int] = {}
    kept: dict[str, list[Unit]] = {}
    fragments: list[str] = []
    for row in sample_rows(name, samples):
        cid = row["case_id"]
        counts[cid] = row_unit_count(row)
        if cid in cases:
            kept[cid] = [u for u in row_units(name, row) if u.unit_id in wanted]
        fragments.append(canonical_json(row))
    summary = {"cases": len(fragments), "units": sum(counts.values())}
    text, digest = _assemble({**head, "summary": summary}, fragments)
    return StreamedPayload(text, digest, summary, {u.unit_id: u for units in kept.values() for u in units})
