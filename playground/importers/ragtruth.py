"""Import a RAGTruth claim file as playground cases, responses, passages, claim units and human labels.

``playground import ragtruth FILE [--db STORE]`` (or ``--out DIR`` for a data set file, no store).

The file is read and validated by :func:`playground.ragtruth.load_ragtruth`
(every malformed line is reported with its line number; a bad file imports
nothing: no data set file, no label).  A good file becomes an
:class:`ImportedDataset`:

=============  ==========================================  ====================================
what           id                                          from
=============  ==========================================  ====================================
case           ``RT-S<source_id>``                         one RAGTruth source (question or
                                                           article); ``case_type``
                                                           ``ragtruth_qa`` / ``ragtruth_summary``
response       ``RT-<response_id>``                        one generated response (its claims
                                                           joined by spaces; the original text
                                                           is not in the file)
passage        ``RT-P<hash12 of the text>``                an evidence string (deduplicated)
claim unit     ``RT-<response_id>:c<claim_index>:<hash8>`` one claim; dimension ``supported``
                                                           only (RAGTruth labels nothing else)
=============  ==========================================  ====================================

The claim unit id is :attr:`playground.model.Claim.claim_id` of the response
``RT-<response_id>`` (same scheme as the golden set).  Its ``text_hash`` covers
the claim and its evidence, since the judgement rests on both.  The human
label is ``supported = not label`` (RAGTruth's ``label`` is *hallucinated*),
filed under the annotator :data:`HUMAN_ANNOTATOR`.

Passages are stored as evidence of the claims, not as units: the claim file
carries neither the question nor relevance labels, so there is nothing to
judge a passage's relevance against.

Cases of an imported data set are not golden-set cases (``model.CASE_TYPES``
is the golden set's list); they exist only in the label store (the dataset
``ragtruth``, stored in the same transaction as its labels) or in a data set
file ``DIR/ragtruth.dataset.json``, written with deterministic bytes (sorted keys,
stable orders, no timestamps, no absolute paths) so that importing the same
file twice gives the same bytes.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import write_atomic
from ..model import Claim, Label, Unit, short_hash
from ..ragtruth import RagTruthError, RagTruthRecord, RagTruthSample, load_ragtruth

__all__ = [
    "CASE_TYPES",
    "DATASET_FILE",
    "FORMAT",
    "HUMAN_ANNOTATOR",
    "ImportResult",
    "ImportedDataset",
    "RagTruthError",
    "build_dataset",
    "case_id_of",
    "claim_unit",
    "claim_unit_id",
    "import_ragtruth",
    "imported_from_payload",
    "load_imported",
    "passage_id_of",
    "payload_of",
    "response_id_of",
]

#: Annotator name of RAGTruth's human labels in the label store.
HUMAN_ANNOTATOR = "ragtruth-human"
#: File name of the imported data set inside ``--out``.
DATASET_FILE = "ragtruth.dataset.json"
#: Format tag written into the data set file.
FORMAT = "rag-label-playground/imported-dataset"
FORMAT_VERSION = 1
#: Case type per RAGTruth task type.
CASE_TYPES: dict[str, str] = {"QA": "ragtruth_qa", "Summary": "ragtruth_summary", "Data2txt": "ragtruth_data2txt"}


def case_id_of(source_id: str) -> str:
    """``RT-S<source_id>``: one case per RAGTruth source."""
    return f"RT-S{source_id}"


def response_id_of(response_id: str) -> str:
    """``RT-<response_id>``."""
    return f"RT-{response_id}"


def passage_id_of(text: str) -> str:
    """``RT-P<first 12 hex digits of SHA-256(text)>``."""
    return f"RT-P{short_hash(text, 12)}"


def claim_unit_id(record: RagTruthRecord) -> str:
    """``RT-<response_id>:c<claim_index>:<hash8 of the claim text>``."""
    return Claim(response_id_of(record.response_id), record.claim_index, record.claim,
                 record.claim_start, record.claim_end).claim_id


def claim_text_hash(record: RagTruthRecord) -> str:
    """Hash of what the judgement rests on: the claim and its non-empty evidence."""
    return short_hash(record.claim + "\n" + "\n\n".join(record.context), 12)


def claim_unit(record: RagTruthRecord) -> Unit:
    """The claim as a labellable unit (dimension ``supported`` only)."""
    return Unit("claim", claim_unit_id(record), case_id_of(record.source_id), response_id_of(record.response_id),
                ("supported",), record.claim, claim_text_hash(record))


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
    """Read a data set file written by earlier versions of :func:`import_ragtruth` (``ragtruth.dataset.json``)."""
    return imported_from_payload(json.loads(Path(path).read_text(encoding="utf-8")), str(path))


def payload_of(dataset: ImportedDataset) -> dict[str, Any]:
    """The stored form: the data set file's JSON plus ``summary`` (cases, units) for the store's catalog."""
    data: dict[str, Any] = json.loads(dataset.to_json())
    data["summary"] = {"cases": len(dataset.cases), "units": len(dataset.units)}
    return data


def build_dataset(sample: RagTruthSample | Sequence[RagTruthRecord], *, source_file: str = "",
                  source_sha256: str = "", annotator: str = HUMAN_ANNOTATOR) -> ImportedDataset:
    """Convert validated records (file order) into an :class:`ImportedDataset`."""
    records = list(sample.records if isinstance(sample, RagTruthSample) else sample)
    cases: dict[str, dict[str, Any]] = {}
    responses: dict[str, dict[str, Any]] = {}
    passages: dict[str, str] = {}
    units: list[Unit] = []
    labels: list[Label] = []
    claims: dict[str, dict[str, Any]] = {}
    by_response: dict[str, list[RagTruthRecord]] = {}
    for r in records:
        by_response.setdefault(r.response_id, []).append(r)
    for r in records:
        cid = case_id_of(r.source_id)
        rid = response_id_of(r.response_id)
        case = cases.setdefault(cid, {
            "case_id": cid, "case_type": CASE_TYPES.get(r.task_type, "ragtruth_" + r.task_type.lower()),
            "tenant": "ragtruth", "source_id": r.source_id, "task_type": r.task_type, "source_name": r.source_name,
            "query": f"RAGTruth {r.task_type} ({r.source_name}) source {r.source_id}: "
                     "the question or article is not part of the claim file, only the evidence of each claim",
            "responses": [],
        })
        if rid not in responses:
            case["responses"].append(rid)
            mine = sorted(by_response[r.response_id], key=lambda x: x.claim_index)
            responses[rid] = {
                "response_id": rid, "case_id": cid, "ragtruth_response_id": r.response_id, "origin": "model",
                "variant": "ragtruth", "generator_model": r.generator_model, "temperature": r.temperature,
                "text": " ".join(x.claim for x in mine),
                "claims": [claim_unit_id(x) for x in mine],
                "hallucinated_claims": sum(x.label for x in mine),
            }
        evidence_ids = []
        for text in r.evidence:
            if text:
                pid = passage_id_of(text)
                passages.setdefault(pid, text)
                evidence_ids.append(pid)
        unit = claim_unit(r)
        units.append(unit)
        labels.append(Label(annotator, "claim", unit.unit_id, "supported", int(r.supported)))
        claims[unit.unit_id] = {
            "example_id": r.example_id, "source_id": r.source_id, "claim_index": r.claim_index,
            "claim_start": r.claim_start, "claim_end": r.claim_end, "evidence": evidence_ids,
            "hallucinated": r.label, "label_types": list(r.label_types), "implicit_true": r.implicit_true,
            "due_to_null": r.due_to_null, "task_type": r.task_type, "line": r.line,
        }
    for case in cases.values():
        case["responses"].sort()
    return ImportedDataset("ragtruth", source_file, source_sha256, cases, responses, passages, tuple(units),
                           tuple(labels), claims, annotator)


@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_ragtruth` did."""

    dataset: ImportedDataset
    path: Path | None
    labels_changed: int = 0
    labels_unchanged: int = 0
    store: str = ""

    def summary(self) -> str:
        c = self.dataset.counts()
        text = (f"RAGTruth: {c['claims']} claims ({c['hallucinated']} hallucinated) in {c['responses']} responses "
                f"of {c['cases']} sources, {c['passages']} distinct evidence passages")
        if self.path is not None:
            text += f"\n  data set written to {self.path}"
        if self.store:
            text += (f"\n  dataset and {c['labels']} human labels under '{self.dataset.human_annotator}' "
                     f"in {self.store} (one transaction)")
        return text


def _write_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file beside it, fsynced, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)


def import_ragtruth(path: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, store: Any = None, *,
                    annotator: str = HUMAN_ANNOTATOR, name: str = "ragtruth", replace: bool = True,
                    sample: Any = None) -> ImportResult:
    """Validate ``path`` and import it: into ``store`` (the dataset and its labels), or as a file in ``out_dir``.

    All or nothing whatever step fails: the file is validated completely first
    (:class:`~playground.ragtruth.RagTruthError` lists every bad line, and
    nothing is written); into a store, the dataset (:func:`payload_of`) and
    its human labels go in ONE transaction
    (:meth:`playground.store.LabelStore.put_dataset`); into ``out_dir`` the
    data set file (the older layout, still read by
    :func:`playground.units.load_catalog`) is written to a temporary file and
    renamed.  Exactly one of ``store`` and ``out_dir`` is given.  ``sample``: what
    :func:`~playground.ragtruth.load_ragtruth` returned for ``path``, when the
    caller has validated it already (the file is then parsed once).
    """

    if (store is None) == (out_dir is None):
        raise ValueError("import_ragtruth: give a label store or an output folder (exactly one)")
    path = Path(path)
    raw = path.read_bytes()
    if sample is None:
        sample = load_ragtruth(path)  # raises with every problem; nothing written yet
    dataset = build_dataset(sample, source_file=path.name, source_sha256=hashlib.sha256(raw).hexdigest(),
                            annotator=annotator)
    if store is None:
        target = Path(out_dir) / DATASET_FILE  # type: ignore[arg-type]
        _write_file(target, dataset.to_json())
        return ImportResult(dataset, target)
    catalog = dataset.catalog()
    rows = [(lab.annotator, catalog[lab.unit_id], lab.dimension, lab.value) for lab in dataset.labels]
    store.put_dataset(name, "ragtruth", payload_of(dataset), label_rows=rows, replace=replace)
    return ImportResult(dataset, None, len(rows), 0, store.url)
