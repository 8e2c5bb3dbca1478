"""The stored form of an imported RAGTruth data set: :class:`ImportedDataset` and its JSON.

:func:`playground.importers.ragtruth.build_dataset` makes one from validated
claim records; :meth:`ImportedDataset.to_json` writes it with deterministic
bytes (sorted keys, stable orders, no timestamps, no absolute paths), the
format tag :data:`FORMAT` and version :data:`FORMAT_VERSION`;
:func:`imported_from_payload` reads it back (a data set file's content or a
label store's payload) and refuses another format or version.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Label, Unit

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "HUMAN_ANNOTATOR",
    "ImportedDataset",
    "imported_from_payload",
    "load_imported",
    "payload_of",
]

#: Annotator name of RAGTruth's human labels in the label store.
HUMAN_ANNOTATOR = "ragtruth-human"
#: Format tag written into the data set file.
FORMAT = "rag-label-playground/imported-dataset"
#: Version of that format this playground writes and reads.
FORMAT_VERSION = 1


@dataclass(frozen=True)
class ImportedDataset:
    """An imported data set: cases, responses, passages, claim units and human labels.

    ``cases``/``responses``/``passages`` are plain dicts keyed by id (JSON
    ready); ``units`` the claim units in file order; ``labels`` the human
    labels (one per unit); ``claims`` per-unit RAGTruth detail (example id,
    span, evidence passage ids, hallucination types, line).
    """

    name: str
    source_file: str
    source_sha256: str
    cases: dict[str, dict[str, Any]]
    responses: dict[str, dict[str, Any]]
    passages: dict[str, str]
    units: tuple[Unit, ...]
    labels: tuple[Label, ...]
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)
    human_annotator: str = HUMAN_ANNOTATOR

    def catalog(self) -> dict[str, Unit]:
        """``unit_id -> Unit`` (for the label store's imports and stale checks)."""
        return {u.unit_id: u for u in self.units}

    def counts(self) -> dict[str, int]:
        return {
            "cases": len(self.cases), "responses": len(self.responses), "passages": len(self.passages),
            "claims": len(self.units), "labels": len(self.labels),
            "supported": sum(lab.value for lab in self.labels),
            "hallucinated": sum(1 - lab.value for lab in self.labels),
        }

    def evidence(self, unit_id: str) -> list[str]:
        """The evidence passages' texts of one claim unit."""
        return [self.passages[p] for p in self.claims[unit_id]["evidence"]]

    def to_json(self) -> str:
        """Deterministic JSON text (sorted keys, 1-space indent, UTF-8, trailing newline)."""
        data = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "name": self.name,
            "source": {"file": self.source_file, "sha256": self.source_sha256},
            "human_annotator": self.human_annotator,
            "counts": self.counts(),
            "cases": [self.cases[k] for k in sorted(self.cases)],
            "responses": [self.responses[k] for k in sorted(self.responses)],
            "passages": [{"passage_id": k, "text": self.passages[k]} for k in sorted(self.passages)],
            "units": [
                {"unit_kind": u.unit_kind, "unit_id": u.unit_id, "case_id": u.case_id, "response_id": u.response_id,
                 "dimensions": list(u.dimensions), "text": u.text, "text_hash": u.text_hash,
                 **self.claims.get(u.unit_id, {})}
                for u in self.units
            ],
            "labels": [{"annotator": lab.annotator, "unit_kind": lab.unit_kind, "unit_id": lab.unit_id,
                        "dimension": lab.dimension, "value": lab.value} for lab in self.labels],
        }
        return json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1) + "\n"


_UNIT_KEYS = {"unit_kind", "unit_id", "case_id", "response_id", "dimensions", "text", "text_hash"}


def imported_from_payload(data: Any, where: str = "the stored dataset") -> ImportedDataset:
    """An :class:`ImportedDataset` from its JSON form (a data set file's content, or a stored payload)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{where}: not an imported data set (format {FORMAT!r} expected)")
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"{where}: data set format version {data.get('version')!r}, "
                         f"this playground reads {FORMAT_VERSION}")
    units, claims = [], {}
    for u in data["units"]:
        units.append(Unit(u["unit_kind"], u["unit_id"], u["case_id"], u["response_id"], tuple(u["dimensions"]),
                          u["text"], u["text_hash"]))
        claims[u["unit_id"]] = {k: v for k, v in u.items() if k not in _UNIT_KEYS}
    labels = tuple(Label(lab["annotator"], lab["unit_kind"], lab["unit_id"], lab["dimension"], int(lab["value"]))
                   for lab in data["labels"])
    return ImportedDataset(
        name=data["name"], source_file=data["source"]["file"], source_sha256=data["source"]["sha256"],
        cases={c["case_id"]: c for c in data["cases"]}, responses={r["response_id"]: r for r in data["responses"]},
        passages={p["passage_id"]: p["text"] for p in data["passages"]}, units=tuple(units), labels=labels,
        claims=claims, human_annotator=data.get("human_annotator", HUMAN_ANNOTATOR),
    )


def load_imported(path: str | os.PathLike[str]) -> ImportedDataset:
    """Read a data set file (``ragtruth.dataset.json``) written by
    :func:`playground.importers.ragtruth.import_ragtruth` with ``--out``.

    Within the bounds of :mod:`.limits` (a ValueError naming the file, the field and the bound): a
    regular file of at most ``MAX_FILE_BYTES``, each cell and nesting within its limit (the file's
    object is level 1), at most ``MAX_ROWS`` claim units.
    """
    from .. import limits

    try:
        limits.check_file(path)
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        limits.check_value(data)
    except limits.LimitExceeded as exc:
        raise ValueError(f"{path}: {exc.field + ': ' if exc.field else ''}{exc}") from None
    units = data.get("units") if isinstance(data, dict) else None
    if isinstance(units, list) and len(units) > limits.MAX_ROWS:
        raise ValueError(f"{path}: {limits.too_many_rows(len(units), limits.MAX_ROWS)}")
    return imported_from_payload(data, str(path))


def payload_of(dataset: ImportedDataset) -> dict[str, Any]:
    """The stored form: the data set file's JSON plus ``summary`` (cases, units) for the store's catalog."""
    data: dict[str, Any] = json.loads(dataset.to_json())
    data["summary"] = {"cases": len(dataset.cases), "units": len(dataset.units)}
    return data
